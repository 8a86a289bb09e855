package docs_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestThreeVerifiersOnIDsAndOpenedAt: svc-verify (pkg/core/verify), the Python
// second implementation and the by-hand recipe give the same verdict on
// signed VPECs at the edges of two rules of docs/FORMATS.md: a record_id
// is a prefixed id of 128 bytes at most in all (found: FORMATS.md and the
// Python verifier allowed rec_ and 128 more, 132 in all, pkg/core/verify and the
// recipe 128, and both took "rec_" alone); and no record is dated more
// than 5 minutes before the VPEC's opened_at (found: recorded_at had no
// lower bound: a record of year 1 verified VALID).
func TestThreeVerifiersOnIDsAndOpenedAt(t *testing.T) {
	requireTools(t)
	python3(t)
	dir := t.TempDir()
	mat, err := server.LoadMaterial(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	bundleFile := filepath.Join(dir, "trust-bundle.pem")
	if err := os.WriteFile(bundleFile, mat.Trust.Marshal(), 0o600); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC()
	at := func(d time.Duration) string { return vpec.FormatTime(now.Add(d)) }
	const runID = "run_00000000-0000-4000-8000-00000000001d"
	seal := func(recordID, opened, recorded string) []byte {
		rec := vpec.Record{RecordID: recordID, Sequence: 1, Check: "pii", ManifestID: "m", CheckResult: vpec.ResultPass,
			ProofLevel: vpec.Execution, CommitmentAlgorithm: "sha256", CommitmentHash: "sha256:" + strings.Repeat("ab", 32),
			Visibility: vpec.Opaque, RecordedAt: recorded}
		v := &vpec.VPEC{VPECID: names.NewID("vpec_"), RunID: runID, WorkflowID: "test", OrgID: "org_test", OpenedAt: opened,
			Environment: vpec.Production, APIKeyID: "pk_live_test", Records: []vpec.Record{rec}, IssuedAt: vpec.FormatTime(now)}
		if _, err := issue.Chain(vpec.Genesis(runID), v.Records); err != nil {
			t.Fatal(err)
		}
		jcs, err := issue.RecordsJCS(v.Records)
		if err != nil {
			t.Fatal(err)
		}
		v.Gaps = issue.Gaps(runID, v.Records, jcs, v.IssuedAt)
		issue.Finish(v, jcs)
		if err := issue.Seal(context.Background(), v, mat.Signer, mat.TSA); err != nil {
			t.Fatal(err)
		}
		doc, err := document.MarshalIndent(v)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	id := func(n int) string { return "rec_" + strings.Repeat("c", n-4) }
	const (
		valid  = "VALID"
		schema = "INVALID — SCHEMA ERROR"
		timeV  = "INVALID — TIME VIOLATION"
	)
	cases := []struct {
		name, want string
		doc        []byte
		byHand     bool
	}{
		{"record_id 128 bytes", valid, seal(id(128), "", at(-time.Minute)), true},
		{"record_id 129 bytes", schema, seal(id(129), "", at(-time.Minute)), true},
		{"record_id 131 bytes", schema, seal(id(131), "", at(-time.Minute)), false},
		{"record_id 132 bytes", schema, seal(id(132), "", at(-time.Minute)), true},
		{"record_id 133 bytes", schema, seal(id(133), "", at(-time.Minute)), false},
		{"record_id rec_ alone", schema, seal("rec_", "", at(-time.Minute)), true},
		{"record_id rec_-x", schema, seal("rec_-x", "", at(-time.Minute)), false},
		{"opened_at, record after it", valid, seal(id(40), at(-time.Hour), at(-time.Minute)), false},
		{"opened_at, record 4 min before it", valid, seal(id(40), at(-time.Hour), at(-time.Hour-4*time.Minute)), true},
		{"opened_at, record 6 min before it", timeV, seal(id(40), at(-time.Hour), at(-time.Hour-6*time.Minute)), true},
		{"opened_at, record of year 1", timeV, seal(id(40), at(-time.Hour), "0001-01-01T00:00:00.000Z"), false},
		{"opened_at after the timestamp", timeV, seal(id(40), at(time.Hour), at(-time.Minute)), true},
		{"no opened_at, record of year 1", valid, seal(id(40), "", "0001-01-01T00:00:00.000Z"), true},
	}
	var jobs []pyJob
	var files []string
	for i, c := range cases {
		f := filepath.Join(dir, "case"+string(rune('a'+i))+".json")
		if err := os.WriteFile(f, c.doc, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		jobs = append(jobs, pyJob{File: f, TrustRoot: bundleFile})
	}
	py := runSecondImpl(t, jobs)
	for i, c := range cases {
		rep, _ := verify.Verify(c.doc, verify.Options{Trust: mat.Trust})
		if rep == nil || !strings.HasPrefix(rep.Verdict, c.want) {
			t.Errorf("%s: svc-verify says %v, docs say %s", c.name, rep.Verdict, c.want)
		}
		if !strings.HasPrefix(py[i].Verdict, c.want) {
			t.Errorf("%s: the second implementation says %q, docs say %s\n  %+v", c.name, py[i].Verdict, c.want, py[i].Checks)
		}
	}
	// The recipe (a few seconds a run) on the edges only, in parallel.
	for i, c := range cases {
		if !c.byHand {
			continue
		}
		t.Run("by hand/"+c.name, func(t *testing.T) {
			t.Parallel()
			out, code := runScript(t, files[i], bundleFile)
			if wantCode := map[bool]int{true: 0, false: 1}[c.want == valid]; code != wantCode {
				t.Errorf("by hand: exit %d, want %d\n%s", code, wantCode, out)
			}
		})
	}
}
