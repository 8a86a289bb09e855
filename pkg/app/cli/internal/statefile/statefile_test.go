package statefile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/app/cli/internal/statefile"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

var ctx = context.Background()

// mustValid requires a VALID, clean VPEC of n records.
func mustValid(t *testing.T, sv *service, res *client.VPECResult, n int64) {
	t.Helper()
	if res.Offline {
		t.Fatalf("VPEC is offline: %+v", res.VPEC.Gaps)
	}
	if rep := sv.verify(res.Raw); !rep.Valid {
		t.Fatalf("VPEC verdict %s: %+v", rep.Verdict, rep.FirstFailure())
	}
	if !res.VPEC.IsClean || !res.VPEC.ChainIntact || res.VPEC.TotalChecksRun != n {
		t.Fatalf("VPEC clean=%v intact=%v records=%d (want %d), gaps %+v", res.VPEC.IsClean, res.VPEC.ChainIntact, res.VPEC.TotalChecksRun, n, res.VPEC.Gaps)
	}
}

func TestStateFileLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path string
		want []error
		run  string
	}{
		{"missing", filepath.Join(dir, "none.json"), []error{statefile.ErrNoOpenRun, fs.ErrNotExist}, ""},
		{"not json", write("bad.json", "{run"), []error{statefile.ErrBadState}, ""},
		{"a directory", dir, []error{statefile.ErrBadState}, ""},
		{"a state", write("ok.json", `{"run_id":"run_1","workflow_id":"w","environment":"sandbox","sequence":2,"base_sequence":0,"chain_hash":"sha256:`+strings.Repeat("0", 64)+`","records":[],"sealed":false}`), nil, "run_1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, err := statefile.File{Path: tc.path}.Load()
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Errorf("err %v does not match %v", err, w)
				}
			}
			if tc.want == nil && (err != nil || st.RunID != tc.run) {
				t.Errorf("state %+v, err %v", st, err)
			}
		})
	}
}

// A shell script's run through its state file: open, a second open
// refused while it is open, record from another "process", a close that
// refuses an existing --out before closing anything, the close, and a new
// run opened on the same file.
func TestStateFileScript(t *testing.T) {
	sv := newService(t)
	dir := t.TempDir()
	sf := statefile.File{Path: filepath.Join(dir, "state.json")}
	newP := func() (*client.Pipeline, error) { return sv.pipeline(""), nil }
	forRun := func(string) (*client.Pipeline, error) { return sv.pipeline(""), nil }

	sr, err := sf.Open(ctx, newP, "")
	if err != nil {
		t.Fatal(err)
	}
	runID := sr.Run.ID()
	sr.Release()
	_, err = sf.Open(ctx, newP, "")
	var open *statefile.RunStillOpenError
	if !errors.Is(err, statefile.ErrRunStillOpen) || !errors.As(err, &open) || open.RunID != runID || !strings.Contains(err.Error(), "is still open") {
		t.Fatalf("second open: %v", err)
	}
	factoryErr := errors.New("no pipeline")
	if _, err := sf.Continue(func(string) (*client.Pipeline, error) { return nil, factoryErr }); !errors.Is(err, factoryErr) {
		t.Fatalf("continue with a failing factory: %v", err)
	}

	sr, err = sf.Continue(forRun)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sr.Run.Record(ctx, "pii", "m1", vpec.ResultPass, []byte("input")); err != nil {
		t.Fatal(err)
	}
	if err := sr.Save(); err != nil {
		t.Fatal(err)
	}
	sr.Release()

	out := filepath.Join(dir, "vpec.json")
	if err := os.WriteFile(out, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	sr, err = sf.Continue(forRun)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sr.CloseTo(ctx, out, false); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("close over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "keep me" {
		t.Fatalf("existing --out overwritten: %q", b)
	}
	res, err := sr.CloseTo(ctx, out, true)
	if err != nil {
		t.Fatal(err)
	}
	sr.Release()
	mustValid(t, sv, res, 1)
	if b, _ := os.ReadFile(out); !bytes.Equal(b, res.Raw) {
		t.Fatal("--out does not hold the VPEC")
	}
	st, err := sf.Load()
	if err != nil || !st.Sealed || st.RunID != runID || len(st.UnsignedCopies) != 0 {
		t.Fatalf("state after close: %+v %v", st, err)
	}
	sr, err = sf.Open(ctx, newP, "")
	if err != nil {
		t.Fatalf("open after close: %v", err)
	}
	if sr.Run.ID() == runID {
		t.Fatal("the new run has the old id")
	}
	sr.Release()
}

// An offline close writes the unsigned VPEC and remembers it; FlushState
// delivers the close and writes the signed VPEC over it; a copy that was
// changed meanwhile is left alone and forgotten.
func TestStateFileOfflineCloseAndFlush(t *testing.T) {
	sv := newService(t)
	dir := t.TempDir()
	queue := filepath.Join(dir, "queue.jsonl")
	pipe := func() *client.Pipeline { return sv.pipeline(queue) }
	forRun := func(string) (*client.Pipeline, error) { return pipe(), nil }

	closeOffline := func(state, out string) {
		t.Helper()
		sf := statefile.File{Path: state}
		sr, err := sf.Open(ctx, func() (*client.Pipeline, error) { return pipe(), nil }, "")
		if err != nil {
			t.Fatal(err)
		}
		sr.Release()
		sv.down.Store(true)
		defer sv.down.Store(false)
		sr, err = sf.Continue(forRun)
		if err != nil {
			t.Fatal(err)
		}
		defer sr.Release()
		if _, err := sr.Run.Record(ctx, "pii", "m1", vpec.ResultPass, []byte("input")); err != nil {
			t.Fatal(err)
		}
		res, err := sr.CloseTo(ctx, out, false)
		if err != nil || !res.Offline {
			t.Fatalf("offline close: %v", err)
		}
		st, _ := sf.Load()
		if len(st.UnsignedCopies) != 1 || st.UnsignedCopies[0].SHA256 != commitment.String(res.Raw) {
			t.Fatalf("state copies %+v", st.UnsignedCopies)
		}
	}
	kept, changed := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	stateA, stateB := filepath.Join(dir, "a.state"), filepath.Join(dir, "b.state")
	closeOffline(stateA, kept)
	closeOffline(stateB, changed)
	if err := os.WriteFile(changed, []byte("edited by hand"), 0o644); err != nil {
		t.Fatal(err)
	}

	p := pipe()
	f, err := statefile.File{Path: stateA}.Flush(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if f.Pending != 0 || len(f.Copies) != 1 || f.Copies[0].Err != nil || f.StateErr != nil {
		t.Fatalf("flush: %+v", f)
	}
	signed, _ := os.ReadFile(kept)
	if rep := sv.verify(signed); !rep.Valid {
		t.Fatalf("written VPEC: %s", rep.Verdict)
	}
	if st, _ := (statefile.File{Path: stateA}).Load(); len(st.UnsignedCopies) != 0 {
		t.Fatalf("copy still listed: %+v", st.UnsignedCopies)
	}
	f, err = statefile.File{Path: stateB}.Flush(ctx, p)
	if err != nil || len(f.Copies) != 1 || !errors.Is(f.Copies[0].Err, statefile.ErrNotUnsignedCopy) {
		t.Fatalf("flush of a changed copy: %+v %v", f, err)
	}
	if b, _ := os.ReadFile(changed); string(b) != "edited by hand" {
		t.Fatal("a changed copy was overwritten")
	}
	if st, _ := (statefile.File{Path: stateB}).Load(); len(st.UnsignedCopies) != 0 {
		t.Fatalf("changed copy still listed: %+v", st.UnsignedCopies)
	}
	if f, err := (statefile.File{Path: filepath.Join(dir, "none")}).Flush(ctx, p); err != nil || f.Copies != nil || f.StateErr != nil {
		t.Fatalf("flush without a state file: %+v %v", f, err)
	}
}

func TestWriteVPEC(t *testing.T) {
	sv := newService(t)
	p := sv.pipeline("")
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	res, err := run.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte("{}"), 0o644)
	tests := []struct {
		name  string
		path  string
		force bool
		want  error
		holds []byte
	}{
		{"new file", filepath.Join(dir, "new.json"), false, nil, res.Raw},
		{"another file", other, false, statefile.ErrNotUnsignedCopy, []byte("{}")},
		{"another file, forced", other, true, nil, res.Raw},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := statefile.WriteVPEC(tc.path, tc.force, res)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if b, _ := os.ReadFile(tc.path); !bytes.Equal(b, tc.holds) {
				t.Errorf("file holds %q", b)
			}
		})
	}
}

// The state file keeps its unsigned copies across Continue, so that a
// record saved from a continued run does not forget them; the file is one
// flat JSON object (the run's position and unsigned_copies beside it), as
// svc has always written it.
func TestStateKeepsUnsignedCopies(t *testing.T) {
	sv := newService(t)
	sf := statefile.File{Path: filepath.Join(t.TempDir(), "state.json")}
	sr, err := sf.Open(ctx, func() (*client.Pipeline, error) { return sv.pipeline(""), nil }, "")
	if err != nil {
		t.Fatal(err)
	}
	sr.Release()
	c, err := statefile.NewUnsignedCopy("run_earlier", "vpec.json", []byte("{}"))
	if err != nil || !filepath.IsAbs(c.Path) || !strings.HasPrefix(c.SHA256, "sha256:") {
		t.Fatalf("%+v %v", c, err)
	}
	st, err := sf.Load()
	if err != nil {
		t.Fatal(err)
	}
	st.UnsignedCopies = []statefile.UnsignedCopy{c}
	if err := sf.Save(st); err != nil {
		t.Fatal(err)
	}
	sr, err = sf.Continue(func(string) (*client.Pipeline, error) { return sv.pipeline(""), nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sr.Run.Record(ctx, "c", "m1", vpec.ResultPass, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := sr.Save(); err != nil {
		t.Fatal(err)
	}
	sr.Release()
	got, err := sf.Load()
	if err != nil || len(got.UnsignedCopies) != 1 || got.UnsignedCopies[0] != c || got.Sequence != 1 {
		t.Fatalf("state after continue and record: copies %+v, sequence %d, %v", got.UnsignedCopies, got.Sequence, err)
	}
	raw, err := os.ReadFile(sf.Path)
	if err != nil {
		t.Fatal(err)
	}
	var flat map[string]json.RawMessage
	if err := json.Unmarshal(raw, &flat); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"run_id", "base_url", "workflow_id", "environment", "sequence", "base_sequence", "chain_hash", "records", "sealed", "unsigned_copies"} {
		if _, ok := flat[k]; !ok {
			t.Errorf("state file has no top-level %q:\n%s", k, raw)
		}
	}
}
