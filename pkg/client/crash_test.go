package client_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Environment of the child process of TestCrashSafety.
const (
	childEnv      = "SVC_CLIENT_CHILD"
	childKeyEnv   = "SVC_CLIENT_CHILD_KEY"
	childURLEnv   = "SVC_CLIENT_CHILD_URL"
	childQueueEnv = "SVC_CLIENT_CHILD_QUEUE"
	childRecords  = 100000
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		childMain()
		return
	}
	os.Exit(m.Run())
}

// childMain is the host process of TestCrashSafety: it records against an
// unreachable service, printing each record id once Record has returned
// Queued, and never exits on its own.
func childMain() {
	p, err := client.NewPipeline(client.Options{APIKey: os.Getenv(childKeyEnv), BaseURL: os.Getenv(childURLEnv),
		QueuePath: os.Getenv(childQueueEnv), WorkflowID: "crash", Timeout: time.Second, RetryInterval: time.Hour})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	run, err := p.Open(context.Background(), "")
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	fmt.Println("run", run.ID())
	for i := range childRecords {
		res, err := run.Record(context.Background(), "c", manifest, vpec.ResultPass, fmt.Appendf(nil, "input %d", i))
		if err != nil || !res.Queued {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("rec", res.RecordID) // os.Stdout is unbuffered
	}
	select {}
}

// Crash safety: every record reported Queued survives SIGKILL of the host.
// The test binary runs itself as the host, which records against a closed
// port; it is killed mid-stream; a new Pipeline on its queue file delivers
// every record it reported to a real service, and the run closes VALID.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	e := newEnv(t)
	qpath := filepath.Join(t.TempDir(), "queue.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1", childKeyEnv+"="+e.key, childURLEnv+"="+closedURL(t), childQueueEnv+"="+qpath)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	sc := bufio.NewScanner(out)
	var runID string
	var ids []string
	const k = 300
	for len(ids) < k && sc.Scan() {
		kind, val, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "run":
			runID = val
		case "rec":
			ids = append(ids, val)
		default:
			t.Fatalf("child: %s", sc.Text())
		}
		if len(ids) == 50 {
			// While the child holds the queue, nobody else may open it.
			if _, err := client.NewPipeline(client.Options{APIKey: e.key, QueuePath: qpath}); !errors.Is(err, client.ErrQueueLocked) {
				t.Fatalf("second process on the queue: %v", err)
			}
		}
	}
	if len(ids) < k {
		t.Fatalf("child printed %d ids: %v", len(ids), sc.Err())
	}
	// Mid-stream: the child is recording as fast as it can.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed = true
	cmd.Wait()
	// The ids printed after the k-th are lost with the pipe; read what the
	// pipe still holds to know the last acknowledged one.
	for sc.Scan() {
		if kind, val, _ := strings.Cut(sc.Text(), " "); kind == "rec" {
			ids = append(ids, val)
		}
	}

	p := e.pipeline(func(o *client.Options) { o.QueuePath = qpath; o.BaseURL = e.url; o.Timeout = 30 * time.Second })
	pending, _ := p.PendingQueueCount()
	if pending < len(ids)+1 {
		t.Fatalf("queue holds %d entries, the child acknowledged %d records", pending, len(ids))
	}
	start := time.Now()
	n, err := p.FlushQueue(ctx)
	if err != nil || n != pending {
		t.Fatalf("flush %d of %d: %v", n, pending, err)
	}
	t.Logf("child acknowledged %d records before SIGKILL; the queue held %d entries; flushed in %s", len(ids), pending, time.Since(start))
	run, err := p.ResumeRun(ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	v, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(v, int64(pending-1))
	got := map[string]bool{}
	for _, r := range v.VPEC.Records {
		got[r.RecordID] = true
	}
	for _, id := range ids {
		if !got[id] {
			t.Fatalf("record %s was reported queued but is not in the VPEC", id)
		}
	}
}
