package logwriter_test

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/client/logmonitor"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/logwriter"
)

// The test binary re-executed as one appending process: it opens the log
// in directory $SVC_TLOG_APPEND_DIR or MySQL database $SVC_TLOG_APPEND_DSN,
// appends $SVC_TLOG_APPEND_N entries of prefix $SVC_TLOG_APPEND_PREFIX and
// prints one JSON line per entry (vpec id, index, receipt). It exits with
// status 3 if the log is busy (ErrLogBusy).
const (
	helperDir    = "SVC_TLOG_APPEND_DIR"
	helperDSN    = "SVC_TLOG_APPEND_DSN"
	helperPrefix = "SVC_TLOG_APPEND_PREFIX"
	helperN      = "SVC_TLOG_APPEND_N"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(killDir); dir != "" {
		if err := appendUntilKilled(dir, os.Getenv(helperPrefix)); err != nil {
			fmt.Fprintln(os.Stderr, "append process:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if dir, dsn := os.Getenv(helperDir), os.Getenv(helperDSN); dir != "" || dsn != "" {
		if err := appendProcess(dir, dsn, os.Getenv(helperPrefix), os.Getenv(helperN)); err != nil {
			fmt.Fprintln(os.Stderr, "append process:", err)
			if errors.Is(err, logwriter.ErrLogBusy) {
				os.Exit(3)
			}
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

type appended struct {
	VPECID  string          `json:"vpec_id"`
	Index   uint64          `json:"index"`
	Receipt json.RawMessage `json:"receipt"`
}

func appendProcess(dir, dsn, prefix, count string) error {
	n, err := strconv.Atoi(count)
	if err != nil {
		return err
	}
	ctx := context.Background()
	cfg := logwriter.Config{Dir: dir, Origin: tlogtest.Origin, Signer: tlogtest.Key("log"), CheckpointInterval: logwriter.MinCheckpointInterval}
	if dsn != "" {
		db, err := sql.Open("mysql", dsn)
		if err != nil {
			return err
		}
		defer db.Close()
		cfg.DB, cfg.CheckpointInterval = db, logwriter.MinCheckpointIntervalMySQL
	}
	l, err := logwriter.Open(ctx, cfg)
	if err != nil {
		return err
	}
	key, err := tlog.DeriveOrgKey(tlogtest.Secret, "org-"+prefix)
	if err != nil {
		return err
	}
	leaf := func(i int) (tlog.Leaf, error) {
		return tlog.NewLeaf(key, tlogtest.Entry(prefix, i, "org-"+prefix, "wf", i%2 == 0))
	}
	out := make([]appended, n)
	first, err := leaf(0)
	if err != nil {
		return err
	}
	a, err := l.Append(ctx, first)
	if err != nil {
		return err
	}
	out[0] = appended{VPECID: first.VPECID, Index: a.Index}
	// Go on only once the other process has appended too, so the two
	// processes' entries interleave whatever the scheduling.
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := l.AwaitReceipt(wctx, 1); err != nil {
		return fmt.Errorf("waiting for the other process's first entry: %w", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1 + w; i < n; i += 8 {
				lf, err := leaf(i)
				if err == nil {
					var got logwriter.Appended
					got, err = l.Append(ctx, lf)
					out[i] = appended{VPECID: lf.VPECID, Index: got.Index}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	for i := range out {
		r, err := l.AwaitReceipt(wctx, out[i].Index)
		if err != nil {
			return err
		}
		out[i].Receipt = r.JSON
		if err := enc.Encode(out[i]); err != nil {
			return err
		}
	}
	return l.Close(wctx)
}

// startAppenders runs one appending process per prefix on the log given
// by env and returns what each reported.
func startAppenders(t *testing.T, env string, n int, prefixes ...string) ([][]appended, []error) {
	t.Helper()
	results := make([][]appended, len(prefixes))
	errs := make([]error, len(prefixes))
	var wg sync.WaitGroup
	for k, prefix := range prefixes {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), env, helperPrefix+"="+prefix, helperN+"="+strconv.Itoa(n))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr := new(syncWriter)
		cmd.Stderr = stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := bufio.NewScanner(stdout)
			sc.Buffer(nil, 1<<20)
			for sc.Scan() {
				var a appended
				if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
					errs[k] = err
				}
				results[k] = append(results[k], a)
			}
			io.Copy(io.Discard, stdout)
			if err := cmd.Wait(); err != nil {
				errs[k] = &processError{prefix: prefix, err: err, stderr: stderr.String()}
			}
		}()
	}
	wg.Wait()
	return results, errs
}

type processError struct {
	prefix, stderr string
	err            error
}

func (e *processError) Error() string {
	return fmt.Sprintf("process %s: %v\n%s", e.prefix, e.err, e.stderr)
}

// TestTwoProcesses: two OS processes append concurrently to one log on
// the MySQL backend (MariaDB, scripts/mariadb.sh). The resulting tree,
// served by a third process's Handler and read by the monitor, holds
// exactly the entries both reported, each once, at the indexes they were
// told, and hashes to the final checkpoint; the receipts both processes
// were given verify and are consistent with the final checkpoint.
func TestTwoProcesses(t *testing.T) {
	db, dsn := tlogtest.MariaDB(t)
	const n = 300
	procs := []string{"p", "q"}
	results, errs := startAppenders(t, helperDSN+"="+dsn, n, procs...)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	l := tlogtest.OpenLog(t, "", "log", func(c *logwriter.Config) {
		c.DB, c.CheckpointInterval = db, logwriter.MinCheckpointIntervalMySQL
	})
	srv := httptest.NewServer(http.StripPrefix("/log", l.Handler()))
	defer srv.Close()
	src, err := logmonitor.HTTPSource(srv.URL+"/log/", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	v := tlogtest.Verifier(t, "log", "quorum none\n")
	var keys []tlog.OrgKey
	for _, p := range procs {
		keys = append(keys, tlogtest.OrgKey(t, "org-"+p))
	}
	res, err := logmonitor.Run(ctx, src, logmonitor.Options{Verifier: v, Keys: keys})
	if err != nil {
		t.Fatalf("the tree both processes wrote: %v", err)
	}
	final := res.To
	if final.Size != 2*n || res.Scanned != 2*n || len(res.Entries) != 2*n {
		t.Fatalf("final checkpoint of %d entries, %d read, %d listed; want %d", final.Size, res.Scanned, len(res.Entries), 2*n)
	}
	byIndex := map[uint64]string{}
	got := map[string]bool{}
	for _, e := range res.Entries {
		if e.Duplicate || got[e.VPECID] {
			t.Errorf("%s is in the log twice (again at %d)", e.VPECID, e.Index)
		}
		got[e.VPECID] = true
		byIndex[e.Index] = e.VPECID
	}
	for _, prefix := range procs {
		for i := range n {
			if !got[tlogtest.VPECID(prefix, i)] {
				t.Errorf("%s is not in the log", tlogtest.VPECID(prefix, i))
			}
		}
	}

	for k, res := range results {
		if len(res) != n {
			t.Fatalf("process %s reported %d entries, want %d", procs[k], len(res), n)
		}
		lo, hi := uint64(1<<63), uint64(0)
		for _, a := range res {
			lo, hi = min(lo, a.Index), max(hi, a.Index)
			if byIndex[a.Index] != a.VPECID {
				t.Errorf("process %s was told %s is at %d, the log has %s there", procs[k], a.VPECID, a.Index, byIndex[a.Index])
			}
			got, err := v.VerifyReceipt(a.Receipt, tlog.Subject{VPECID: a.VPECID, Digest: tlogtest.Digest(a.VPECID)})
			if err != nil {
				t.Fatalf("process %s, receipt of %s: %v", procs[k], a.VPECID, err)
			}
			p, err := logmonitor.ConsistencyProof(ctx, src, got.Checkpoint.Size, final.Size)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.VerifyConsistency(got.Checkpoint, final, p); err != nil {
				t.Errorf("process %s, receipt of %s: %v", procs[k], a.VPECID, err)
			}
		}
		// Each process's first entry is among the first two, and it went on
		// only after the other's: their appends interleave.
		if lo > 1 || hi < 2 {
			t.Errorf("process %s holds indexes %d..%d: the processes did not interleave", procs[k], lo, hi)
		}
	}
}

// TestOneWriterPerDirectory: a POSIX log directory is written by one
// process: a second Open, in this process or another, fails with
// ErrLogBusy (two Tessera POSIX appenders on one directory can crash:
// see lockWriter), and once the first closes, the directory opens again.
func TestOneWriterPerDirectory(t *testing.T) {
	dir := t.TempDir()
	l := tlogtest.OpenLog(t, dir, "log", nil)
	_, idx := appendN(t, l, "w", 2)
	await(t, l, idx[1])
	if _, err := logwriter.Open(context.Background(), logwriter.Config{Dir: dir, Origin: tlogtest.Origin, Signer: tlogtest.Key("log")}); !errors.Is(err, logwriter.ErrLogBusy) {
		t.Errorf("a second Open in this process: %v, want ErrLogBusy", err)
	}
	_, errs := startAppenders(t, helperDir+"="+dir, 1, "x")
	var pe *processError
	var ee *exec.ExitError
	if !errors.As(errs[0], &pe) || !errors.As(pe.err, &ee) || ee.ExitCode() != 3 {
		t.Errorf("another process opening the directory: %v, want exit status 3 (ErrLogBusy)", errs[0])
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	again := tlogtest.OpenLog(t, dir, "log", nil)
	a, err := again.Append(context.Background(), tlogtest.Leaf(t, tlogtest.Entry("w", 2, "org-a", "wf", true)))
	if err != nil || a.Index != 2 {
		t.Errorf("append after reopening: %+v, %v; want index 2", a, err)
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  []byte
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b = append(s.b, p...)
	return len(p), nil
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.b)
}
