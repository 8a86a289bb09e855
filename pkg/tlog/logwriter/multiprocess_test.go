package logwriter_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/tlog"
	"github.com/svc-gov/svc/pkg/tlog/logwriter"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/tessera/client"
)

// The test binary re-executed as one appending process: it opens the log
// in $SVC_TLOG_APPEND_DIR, appends $SVC_TLOG_APPEND_N entries of prefix
// $SVC_TLOG_APPEND_PREFIX and prints one JSON line per entry (vpec id,
// index, receipt).
const (
	helperDir    = "SVC_TLOG_APPEND_DIR"
	helperPrefix = "SVC_TLOG_APPEND_PREFIX"
	helperN      = "SVC_TLOG_APPEND_N"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperDir); dir != "" {
		if err := appendProcess(dir, os.Getenv(helperPrefix), os.Getenv(helperN)); err != nil {
			fmt.Fprintln(os.Stderr, "append process:", err)
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

func appendProcess(dir, prefix, count string) error {
	n, err := strconv.Atoi(count)
	if err != nil {
		return err
	}
	ctx := context.Background()
	l, err := logwriter.Open(ctx, logwriter.Config{Dir: dir, Origin: tlogtest.Origin, Signer: tlogtest.Key("log"), CheckpointInterval: logwriter.MinCheckpointInterval})
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
					a, err = l.Append(ctx, lf)
					out[i] = appended{VPECID: lf.VPECID, Index: a.Index}
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

// TestTwoProcesses: two OS processes append concurrently to one log
// directory (the POSIX backend, serialised by its advisory locks). The
// resulting tree holds exactly the entries both reported, each once, at
// the indexes they reported, its root recomputed from the entries equals
// the final checkpoint's, and the receipts both processes were given
// verify and are consistent with the final checkpoint.
func TestTwoProcesses(t *testing.T) {
	const n = 300
	dir := t.TempDir()
	procs := []string{"p", "q"}
	results := make([][]appended, len(procs))
	var wg sync.WaitGroup
	errs := make([]error, len(procs))
	for k, prefix := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), helperDir+"="+dir, helperPrefix+"="+prefix, helperN+"="+strconv.Itoa(n))
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
				errs[k] = fmt.Errorf("process %s: %v\n%s", prefix, err, stderr.String())
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	v := tlogtest.Verifier(t, "log", "quorum none\n")
	ctx := context.Background()
	src := client.FileFetcher{Root: dir}
	raw, err := src.ReadCheckpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	final, err := v.VerifyCheckpoint(raw)
	if err != nil {
		t.Fatal(err)
	}
	if final.Size != 2*n {
		t.Fatalf("final checkpoint has %d entries, want %d", final.Size, 2*n)
	}

	// Every entry of the tree, in order, and the root they hash to.
	byIndex := map[uint64]string{}
	rf := compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	rng := rf.NewEmptyRange(0)
	for b := uint64(0); b*256 < final.Size; b++ {
		bundle, err := client.GetEntryBundle(ctx, src.ReadEntryBundle, b, final.Size)
		if err != nil {
			t.Fatal(err)
		}
		for i, e := range bundle.Entries {
			leaf, err := tlog.ParseLeaf(e)
			if err != nil {
				t.Fatalf("entry %d: %v", b*256+uint64(i), err)
			}
			byIndex[b*256+uint64(i)] = leaf.VPECID
			h := tlog.LeafHash(e)
			if err := rng.Append(h[:], nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	root, err := rng.GetRootHash(nil)
	if err != nil {
		t.Fatal(err)
	}
	if rng.End() != final.Size || string(root) != string(final.Root[:]) {
		t.Fatalf("the %d entries read hash to %x, the checkpoint says %d entries with root %x", rng.End(), root, final.Size, final.Root)
	}

	want := map[string]bool{}
	for _, prefix := range procs {
		for i := range n {
			want[tlogtest.VPECID(prefix, i)] = true
		}
	}
	got := map[string]bool{}
	for i, id := range byIndex {
		if got[id] {
			t.Errorf("%s is in the log twice (again at %d)", id, i)
		}
		got[id] = true
		if !want[id] {
			t.Errorf("entry %d is %s, which neither process appended", i, id)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the log holds %d distinct entries, want %d", len(got), len(want))
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
			pb, err := client.NewProofBuilder(ctx, final.Size, src.ReadTile)
			if err != nil {
				t.Fatal(err)
			}
			p, err := pb.ConsistencyProof(ctx, got.Checkpoint.Size, final.Size)
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
