// Package witnesstest runs a real C2SP tlog-witness for tests: the
// omniwitness of github.com/transparency-dev/witness, built once by
// scripts/install-witness.sh, on loopback, with explicit listen addresses
// and a logs file naming only the logs under test, so it makes no
// outbound call.
package witnesstest

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	fnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// Log is a log the witness is told about.
type Log struct {
	Origin string // checkpoint origin
	VKey   string // the log's note verifier key
}

// Witness is a running omniwitness.
type Witness struct {
	// Name is the witness's key name.
	Name string
	// URL is its base URL (add-checkpoint is below it).
	URL string
	// VKey is its tlog-cosignature/v1 verifier key.
	VKey string
	skey string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// Binary returns the omniwitness binary: $SVC_OMNIWITNESS, or the one
// scripts/install-witness.sh cached. Without one the test is skipped,
// unless SVC_REQUIRE_WITNESS=1 (make unit sets both), when it fails.
func Binary(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SVC_OMNIWITNESS"); p != "" {
		return p
	}
	if out, err := exec.Command(repoScript(t), "--print-if-installed").Output(); err == nil {
		if p := strings.TrimSpace(string(out)); p != "" {
			return p
		}
	}
	if os.Getenv("SVC_REQUIRE_WITNESS") == "1" {
		t.Fatal("omniwitness not found: run scripts/install-witness.sh (SVC_REQUIRE_WITNESS=1)")
	}
	t.Skip("omniwitness not found: run scripts/install-witness.sh and set SVC_OMNIWITNESS (make unit does)")
	return ""
}

func repoScript(t testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "scripts", "install-witness.sh")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "scripts/install-witness.sh"
		}
		dir = parent
	}
}

// Start runs a new omniwitness named name that witnesses logs, on a free
// loopback port, and stops it when the test ends.
func Start(t testing.TB, name string, logs ...Log) *Witness {
	t.Helper()
	w := New(t, name)
	w.Start(t, logs...)
	return w
}

// New makes a witness identity (key pair) and picks a free loopback
// address for it, without starting it: a policy can name it before it
// runs, as a witness that is down.
func New(t testing.TB, name string) *Witness {
	t.Helper()
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		t.Fatal(err)
	}
	cosig, err := fnote.VKeyToCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return &Witness{Name: name, URL: "http://" + freeAddr(t), VKey: cosig, skey: skey}
}

// Start runs the witness at its address, witnessing logs, until the test
// ends or Stop.
func (w *Witness) Start(t testing.TB, logs ...Log) {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "witness.key")
	if err := os.WriteFile(keyFile, []byte(w.skey), 0o600); err != nil {
		t.Fatal(err)
	}
	var y strings.Builder
	y.WriteString("Logs:\n")
	for _, l := range logs {
		fmt.Fprintf(&y, "  - Origin: %q\n    PublicKey: %q\n    URL: \"http://127.0.0.1:9/unused\"\n", l.Origin, l.VKey)
	}
	logsFile := filepath.Join(dir, "logs.yaml")
	if err := os.WriteFile(logsFile, []byte(y.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(w.URL, "http://")
	w.out, w.done = &syncBuffer{}, make(chan struct{})
	w.cmd = exec.Command(bin,
		"--listen="+addr,
		"--metrics_listen="+freeAddr(t),
		"--private_key_path="+keyFile,
		"--additional_logs="+logsFile,
		"--db_file="+filepath.Join(dir, "witness.db"),
		"--logtostderr", "--v=1")
	w.cmd.Stdout, w.cmd.Stderr = w.out, w.out
	if err := w.cmd.Start(); err != nil {
		t.Fatalf("start omniwitness: %v", err)
	}
	done := w.done
	go func() { _ = w.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		w.Stop()
		if t.Failed() {
			t.Logf("omniwitness %s output:\n%s", w.Name, w.Output())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Post(w.URL+"/add-checkpoint", "text/plain", strings.NewReader("old 0\n\n"))
		if err == nil {
			resp.Body.Close()
			break
		}
		select {
		case <-w.done:
			t.Fatalf("omniwitness exited: %s", w.Output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("omniwitness did not listen on %s: %v\n%s", addr, err, w.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// PolicyLine returns the policy line declaring this witness, named as the
// policy's component name.
func (w *Witness) PolicyLine(component string) string {
	return fmt.Sprintf("witness %s %s %s\n", component, w.VKey, w.URL)
}

// Stop stops the witness.
func (w *Witness) Stop() {
	if w.cmd == nil || w.cmd.Process == nil {
		return
	}
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Kill()
	<-w.done
}

// Output returns what the witness logged.
func (w *Witness) Output() string {
	if w.out == nil {
		return ""
	}
	return w.out.String()
}

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
