package client_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// offlineClosed closes a run of two records while the service is down and
// returns the run, its unsigned VPEC and the queue path.
func offlineClosed(t *testing.T, e *env) (*client.Run, *client.VPECResult, string) {
	t.Helper()
	qpath := filepath.Join(t.TempDir(), "q.jsonl")
	down := e.pipeline(func(o *client.Options) { o.BaseURL = closedURL(t); o.QueuePath = qpath })
	run, err := down.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{"a", "b"} {
		if _, err := run.Record(ctx, "c", manifest, vpec.ResultPass, []byte(in)); err != nil {
			t.Fatal(err)
		}
	}
	v, err := run.Close(ctx)
	if err != nil || !v.Offline {
		t.Fatalf("offline close: %v", err)
	}
	down.Close()
	return run, v, qpath
}

// The unsigned offline VPEC carries the marker, and the verifier says what
// it is (never VALID, never SCHEMA ERROR). Flush names the sealed run and
// its VPEC id; GetVPEC fetches it by run id and by VPEC id.
func TestOfflineVPECMarkerAndFlushReport(t *testing.T) {
	e := newEnv(t)
	run, v, qpath := offlineClosed(t, e)
	if v.VPEC.Schema != vpec.OfflineSchema || v.VPEC.Signature != "" || v.VPEC.SigningKeyID != "" || v.VPEC.TimestampRFC3161 != "" {
		t.Fatalf("offline VPEC schema %q signature %q", v.VPEC.Schema, v.VPEC.Signature)
	}
	rep := e.verify(v.Raw)
	want := "UNSIGNED OFFLINE VPEC: fetch the signed one with svc vpec get " + run.ID()
	if rep.Valid || rep.Verdict != want || rep.Check(verify.CheckSchema).Code != verify.CodeUnsignedOffline {
		t.Fatalf("verdict %q (valid %v), want %q", rep.Verdict, rep.Valid, want)
	}

	up := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	// GetVPEC by run id delivers the run's queued entries first.
	signed, err := up.GetVPEC(ctx, run.ID())
	if err != nil {
		t.Fatalf("GetVPEC before flush: %v", err)
	}
	e.mustValid(signed, 2)
	open, err := up.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := up.GetVPEC(ctx, open.ID()); !errors.Is(err, client.ErrNotIssued) {
		t.Fatalf("GetVPEC of an open run: %v, want ErrNotIssued", err)
	}
	res, err := up.Flush(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// FetchVPEC above delivered the run's entries: nothing is left.
	if res.Delivered != 0 || len(res.Sealed) != 0 {
		t.Fatalf("second flush %+v", res)
	}
}

// Flush reports each run whose close it delivered, with the VPEC id the
// service issued, and GetVPEC by that id returns the signed VPEC.
func TestFlushReportsSealedRuns(t *testing.T) {
	e := newEnv(t)
	run, _, qpath := offlineClosed(t, e)
	up := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	res, err := up.Flush(ctx)
	if err != nil || res.Delivered != 4 || len(res.Sealed) != 1 || res.Sealed[0].RunID != run.ID() ||
		!strings.HasPrefix(res.Sealed[0].VPECID, "vpec_") {
		t.Fatalf("flush %+v: %v", res, err)
	}
	byID, err := up.GetVPEC(ctx, res.Sealed[0].VPECID)
	if err != nil {
		t.Fatal(err)
	}
	e.mustValid(byID, 2)
	byRun, err := up.GetVPEC(ctx, run.ID())
	if err != nil || string(byRun.Raw) != string(byID.Raw) {
		t.Fatalf("by run: %v", err)
	}
}

// UnsignedCopy.Replace and ReplaceUnsigned write the signed VPEC over the
// unsigned copy only while the file is still that copy.
func TestReplaceUnsignedCopy(t *testing.T) {
	e := newEnv(t)
	run, v, qpath := offlineClosed(t, e)
	up := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	signed, err := up.FetchVPEC(ctx, run.ID())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	edited := append([]byte(nil), v.Raw...)
	edited = append(edited, ' ')
	other := strings.Replace(string(v.Raw), run.ID(), "run_other", -1)
	tests := []struct {
		name    string
		content []byte // nil: the file is removed
		byHash  bool
		want    error // nil: replaced
		signed  []byte
	}{
		{"copy unchanged", v.Raw, true, nil, signed.Raw},
		{"copy edited", edited, true, client.ErrNotUnsignedCopy, signed.Raw},
		{"copy removed", nil, true, client.ErrNotUnsignedCopy, signed.Raw},
		{"copy already replaced", signed.Raw, true, nil, signed.Raw},
		{"unsigned of the run", v.Raw, false, nil, signed.Raw},
		{"unsigned of the run, reformatted", edited, false, nil, signed.Raw},
		{"unsigned of another run", []byte(other), false, client.ErrNotUnsignedCopy, signed.Raw},
		{"a signed VPEC", signed.Raw, false, client.ErrNotUnsignedCopy, signed.Raw},
		{"not JSON", []byte("notes"), false, client.ErrNotUnsignedCopy, signed.Raw},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name := filepath.Join(dir, "v"+string(rune('a'+i))+".json")
			if tc.content != nil {
				name = write(filepath.Base(name), tc.content)
			}
			c, err := client.NewUnsignedCopy(run.ID(), name, v.Raw)
			if err != nil {
				t.Fatal(err)
			}
			if tc.byHash {
				err = c.Replace(tc.signed)
			} else {
				err = client.ReplaceUnsigned(name, run.ID(), tc.signed)
			}
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			got, rerr := os.ReadFile(name)
			switch {
			case tc.want == nil && string(got) != string(tc.signed):
				t.Fatal("not replaced by the signed VPEC")
			case tc.want != nil && tc.content == nil && !errors.Is(rerr, os.ErrNotExist):
				t.Fatal("a removed copy was written")
			case tc.want != nil && tc.content != nil && string(got) != string(tc.content):
				t.Fatal("a file that is not the unsigned copy was overwritten")
			}
		})
	}
	// Never write anything but a signed VPEC of the same run.
	p := write("x.json", v.Raw)
	if err := client.ReplaceUnsigned(p, run.ID(), v.Raw); err == nil {
		t.Fatal("wrote an unsigned VPEC over the copy")
	}
	if err := client.ReplaceUnsigned(p, "run_other", signed.Raw); err == nil {
		t.Fatal("wrote the VPEC of another run")
	}
}

// The state keeps the unsigned copies across RestoreRun, so that a record
// or close saved from a restored run does not forget them.
func TestRunStateKeepsUnsignedCopies(t *testing.T) {
	e := newEnv(t)
	p := e.pipeline()
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	st := run.State()
	c, err := client.NewUnsignedCopy("run_earlier", "vpec.json", []byte("{}"))
	if err != nil || !filepath.IsAbs(c.Path) || !strings.HasPrefix(c.SHA256, "sha256:") {
		t.Fatalf("%+v %v", c, err)
	}
	st.UnsignedCopies = []client.UnsignedCopy{c}
	restored, err := p.RestoreRun(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := restored.Record(ctx, "c", manifest, vpec.ResultPass, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if got := restored.State().UnsignedCopies; len(got) != 1 || got[0] != c {
		t.Fatalf("unsigned copies after restore and record: %+v", got)
	}
}

// ReplaceCopies writes each sealed run's signed VPEC over its copy, keeps
// the copies of runs without a VPEC yet, and drops changed copies.
func TestReplaceCopies(t *testing.T) {
	e := newEnv(t)
	run, v, qpath := offlineClosed(t, e)
	up := e.pipeline(func(o *client.Options) { o.QueuePath = qpath })
	open, err := up.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mk := func(runID, name string, data []byte) client.UnsignedCopy {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := client.NewUnsignedCopy(runID, p, v.Raw)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	sealed := mk(run.ID(), "sealed.json", v.Raw)
	pending := mk(open.ID(), "open.json", v.Raw)
	changed := mk(run.ID(), "changed.json", []byte("edited"))
	results, keep := up.ReplaceCopies(ctx, []client.UnsignedCopy{sealed, pending, changed})
	if len(results) != 3 || results[0].Err != nil || !strings.HasPrefix(results[0].VPECID, "vpec_") ||
		!errors.Is(results[1].Err, client.ErrNotIssued) || !errors.Is(results[2].Err, client.ErrNotUnsignedCopy) {
		t.Fatalf("results %+v", results)
	}
	if len(keep) != 1 || keep[0] != pending {
		t.Fatalf("keep %+v", keep)
	}
	b, _ := os.ReadFile(sealed.Path)
	if rep := e.verify(b); !rep.Valid {
		t.Fatalf("replaced copy: %s", rep.Verdict)
	}
	if b, _ := os.ReadFile(changed.Path); string(b) != "edited" {
		t.Fatal("a changed copy was overwritten")
	}
}
