package logmonitor_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/client/logmonitor"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/logwriter"
)

// appendAll appends the entries in order (concurrently from the 16th
// on) and waits until a checkpoint covers them all.
func appendAll(t *testing.T, l *logwriter.Log, entries ...tlog.Entry) {
	t.Helper()
	ctx := context.Background()
	idx := make([]uint64, len(entries))
	var wg sync.WaitGroup
	errs := make(chan error, len(entries))
	for i, e := range entries {
		leaf := tlogtest.Leaf(t, e)
		app := func() {
			a, err := l.Append(ctx, leaf)
			if err != nil {
				errs <- err
			}
			idx[i] = a.Index
		}
		if i < 16 {
			app()
			continue
		}
		wg.Add(1)
		go func() { defer wg.Done(); app() }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	last := slices.Max(idx)
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := l.AwaitReceipt(wctx, last); err != nil {
		t.Fatal(err)
	}
}

func ids(es []logmonitor.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.VPECID)
	}
	return out
}

// TestHiddenDirtyVPEC: an organisation closes two runs, gets a dirty and
// a clean VPEC, and shows its auditor only the clean one. The auditor,
// given the organisation's monitoring key, lists every VPEC of the
// organisation in the log (over HTTP, as served) and finds the dirty one;
// another organisation's entries are neither listed nor linkable.
func TestHiddenDirtyVPEC(t *testing.T) {
	dir := t.TempDir()
	l := tlogtest.OpenLog(t, dir, "log", nil)
	dirty := tlogtest.Entry("a", 1, "org-a", "claims", false)
	clean := tlogtest.Entry("a", 2, "org-a", "claims", true)
	appendAll(t, l,
		tlogtest.Entry("b", 1, "org-b", "claims", false),
		dirty,
		tlogtest.Entry("b", 2, "org-b", "onboarding", true),
		clean,
		tlogtest.Entry("a", 3, "org-a", "onboarding", true),
	)
	srv := httptest.NewServer(http.StripPrefix("/log", l.Handler()))
	defer srv.Close()
	src, err := logmonitor.HTTPSource(srv.URL+"/log/", srv.Client())
	if err != nil {
		t.Fatal(err)
	}
	v := tlogtest.Verifier(t, "log", "quorum none\n")
	ctx := context.Background()

	res, err := logmonitor.Run(ctx, src, logmonitor.Options{Verifier: v, Keys: []tlog.OrgKey{tlogtest.OrgKey(t, "org-a")}, Workflows: []string{"claims"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Scanned != 5 || res.To.Size != 5 || res.From != nil {
		t.Errorf("scanned %d of a checkpoint of %d from %v, want 5 of 5 from the start", res.Scanned, res.To.Size, res.From)
	}
	if got := ids(res.Entries); len(got) != 2 || got[0] != dirty.VPECID || got[1] != clean.VPECID {
		t.Fatalf("org-a's claims VPECs: %v, want %s and %s", got, dirty.VPECID, clean.VPECID)
	}
	shown := map[string]bool{clean.VPECID: true} // what the organisation showed
	var hidden []logmonitor.Entry
	for _, e := range res.Entries {
		if !shown[e.VPECID] {
			hidden = append(hidden, e)
		}
	}
	if len(hidden) != 1 || hidden[0].Clean || hidden[0].VPECID != dirty.VPECID || hidden[0].Workflow != "claims" ||
		hidden[0].Environment != "production" || hidden[0].Digest != dirty.Digest || !hidden[0].IssuedAt.Equal(dirty.IssuedAt) || hidden[0].Org != "org-a" {
		t.Errorf("the auditor finds %+v, want the dirty %s", hidden, dirty.VPECID)
	}
	if res.OtherWorkflows != 1 {
		t.Errorf("org-a's entries of other workflows: %d, want 1 (onboarding)", res.OtherWorkflows)
	}

	// Without a workflow filter: all of org-a's, and only those.
	all, err := logmonitor.Run(ctx, src, logmonitor.Options{Verifier: v, Keys: []tlog.OrgKey{tlogtest.OrgKey(t, "org-a")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(all.Entries); len(got) != 3 {
		t.Errorf("org-a's VPECs: %v, want 3", got)
	}
	for _, e := range all.Entries {
		if e.Workflow != "" {
			t.Errorf("%s: workflow %q opened without candidates", e.VPECID, e.Workflow)
		}
	}
	// A key of an organisation with no entries finds none.
	none, err := logmonitor.Run(ctx, src, logmonitor.Options{Verifier: v, Keys: []tlog.OrgKey{tlogtest.OrgKey(t, "org-c")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(none.Entries) != 0 {
		t.Errorf("org-c's key lists %v", ids(none.Entries))
	}
}

// TestIncremental: a second run from the first run's checkpoint reads and
// lists only what was appended since, and checks it extends the tree the
// first run verified.
func TestIncremental(t *testing.T) {
	dir := t.TempDir()
	l := tlogtest.OpenLog(t, dir, "log", nil)
	v := tlogtest.Verifier(t, "log", "quorum none\n")
	keys := []tlog.OrgKey{tlogtest.OrgKey(t, "org-a")}
	var entries []tlog.Entry
	for i := range 300 { // more than one entry bundle
		entries = append(entries, tlogtest.Entry("a", i, "org-a", "wf", i%7 != 0))
	}
	appendAll(t, l, entries[:270]...)
	ctx := context.Background()
	first, err := logmonitor.Run(ctx, logmonitor.DirSource(dir), logmonitor.Options{Verifier: v, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	appendAll(t, l, entries[270:]...)
	second, err := logmonitor.Run(ctx, logmonitor.DirSource(dir), logmonitor.Options{Verifier: v, Keys: keys, Since: first.To.Note})
	if err != nil {
		t.Fatal(err)
	}
	if second.From.Size != first.To.Size || second.To.Size != 300 || second.Scanned != 300-first.To.Size {
		t.Errorf("second run: from %d to %d, scanned %d; first ended at %d", second.From.Size, second.To.Size, second.Scanned, first.To.Size)
	}
	if n := len(first.Entries) + len(second.Entries); n != 300 {
		t.Errorf("the two runs list %d entries, want 300", n)
	}
	if len(second.Entries) > 0 && second.Entries[0].Index != first.To.Size {
		t.Errorf("the second run starts at index %d, want %d", second.Entries[0].Index, first.To.Size)
	}
	// Nothing new: an empty run that still checks the tree.
	again, err := logmonitor.Run(ctx, logmonitor.DirSource(dir), logmonitor.Options{Verifier: v, Keys: keys, Since: second.To.Note})
	if err != nil || again.Scanned != 0 {
		t.Errorf("a run with nothing new: scanned %v, %v", again, err)
	}
}

// TestForkAndShrink: a log that shows the monitor another history than the
// one it verified before is caught: more entries on another tree, the same
// size with another root, fewer entries, or an entry bundle rewritten on
// disk.
func TestForkAndShrink(t *testing.T) {
	v := tlogtest.Verifier(t, "log", "quorum none\n")
	ctx := context.Background()
	mk := func(prefix string, n int) (string, *logwriter.Log) {
		dir := t.TempDir()
		l := tlogtest.OpenLog(t, dir, "log", nil)
		var es []tlog.Entry
		for i := range n {
			es = append(es, tlogtest.Entry(prefix, i, "org-a", "wf", true))
		}
		appendAll(t, l, es...)
		return dir, l
	}
	dirA, _ := mk("a", 5)
	seen, err := logmonitor.Run(ctx, logmonitor.DirSource(dirA), logmonitor.Options{Verifier: v})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		prefix string
		n      int
		want   error
	}{
		{"a longer other history", "b", 8, tlog.ErrInconsistent},
		{"same size, other root", "c", 5, tlog.ErrInconsistent},
		{"a shorter history", "d", 3, tlog.ErrLogShrank},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := mk(c.prefix, c.n)
			_, err := logmonitor.Run(ctx, logmonitor.DirSource(dir), logmonitor.Options{Verifier: v, Since: seen.To.Note})
			if !errors.Is(err, c.want) {
				t.Errorf("monitor on %s: %v, want %v", c.name, err, c.want)
			}
		})
	}
	t.Run("entry rewritten", func(t *testing.T) {
		dir, l := mk("e", 5)
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		bundle := filepath.Join(dir, "tile", "entries", "000.p", "5")
		b, err := os.ReadFile(bundle)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-2] ^= 1 // a hex digit of the last entry's state_tag
		if err := os.WriteFile(bundle, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := logmonitor.Run(ctx, logmonitor.DirSource(dir), logmonitor.Options{Verifier: v}); !errors.Is(err, tlog.ErrInconsistent) {
			t.Errorf("monitor on a rewritten entry: %v, want ErrInconsistent", err)
		}
	})
	t.Run("another log", func(t *testing.T) {
		other := tlogtest.Verifier(t, "other key", "quorum none\n")
		if _, err := logmonitor.Run(ctx, logmonitor.DirSource(dirA), logmonitor.Options{Verifier: other}); !errors.Is(err, tlog.ErrLogSignature) {
			t.Errorf("monitor trusting another key: %v, want ErrLogSignature", err)
		}
	})
}
