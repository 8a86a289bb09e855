package webverify_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/verifycmd"
	"github.com/svc-gov/svc/pkg/app/webverify"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// vectors is the test vector corpus (testdata/vectors): the proofs VPEC,
// its two circuit entries (a 16-8-2 mlp_head and a threshold_check) and
// the entry of the threshold circuit signed by a key outside the bundle.
const vectors = "../../../testdata/vectors"

const (
	headEntry      = "circuit/mlp-head-16-8-2.json"
	thresholdEntry = "circuit/threshold-check.json"
	foreignEntry   = "circuit/invalid-threshold-other-key.json"
	proofsVPEC     = "vpec/valid/proofs.json"
	flippedVPEC    = "vpec/invalid/proof-flipped-class.json"
	trustBundle    = "keys/trust-bundle.pem"
	aProfile       = "profile/pii-detection-v1.0.0.json"
)

func vector(t testing.TB, rel string) webverify.File {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectors, rel))
	if err != nil {
		t.Fatal(err)
	}
	return webverify.File{Name: filepath.Base(rel), Data: b}
}

func circuitID(t testing.TB, rel string) string {
	t.Helper()
	e, err := zkverify.ParseEntry(vector(t, rel).Data)
	if err != nil {
		t.Fatal(err)
	}
	return e.CircuitID
}

// cliVerify runs svc-verify verify in process on the files (written to a
// directory under their names) with --circuit for each circuit entry and
// an empty circuit and profile cache, and returns its exit code and JSON
// report (nil when it printed none).
func cliVerify(t *testing.T, in webverify.Input) (int, *verify.Report, string) {
	t.Helper()
	dir := t.TempDir()
	write := func(f webverify.File) string {
		p := filepath.Join(dir, f.Name)
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := filepath.Join(dir, "empty-cache")
	args := []string{"verify", write(in.VPEC), "--trust-root", write(in.Trust), "--output", "json", "--profile-dir", empty, "--circuit-dir", empty}
	for _, c := range in.Circuits {
		args = append(args, "--circuit", write(c))
	}
	var out, errb bytes.Buffer
	code := verifycmd.Main(args, &clicore.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	if out.Len() == 0 {
		return code, nil, errb.String()
	}
	var r verify.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("svc-verify printed %q: %v", out.String(), err)
	}
	return code, &r, errb.String()
}

// TestProofs: the page verifies the zero-knowledge proofs of a VPEC
// against the circuit entries the user chose, loaded and checked as svc
// verify loads and checks its --circuit files: the same exit code, the
// same checks and (where no file is named) the same messages; a missing
// entry is named with what to add on the page, not with a flag.
func TestProofs(t *testing.T) {
	trust := vector(t, trustBundle)
	head, threshold, foreign := vector(t, headEntry), vector(t, thresholdEntry), vector(t, foreignEntry)
	headID, thresholdID := circuitID(t, headEntry), circuitID(t, thresholdEntry)
	// The head entry re-indented: the same circuit id, other bytes.
	var reindented bytes.Buffer
	if err := json.Indent(&reindented, head.Data, "", "\t"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		in       webverify.Input
		code     int
		verdict  string
		zk       verify.Status
		message  []string // substrings of the zk_proofs message (or of Error)
		notIn    string   // a substring the message must not carry
		warnings int
		sameText bool // the CLI's report has the same messages
	}{
		{name: "entries chosen as files", in: webverify.Input{VPEC: vector(t, proofsVPEC), Circuits: []webverify.File{head, threshold}},
			code: webverify.ExitValid, verdict: "VALID", zk: verify.Pass, message: []string{"ZK proofs valid (2 proofs, circuit ids ", "setup contributors: "}, sameText: true},
		{name: "the same entry chosen twice", in: webverify.Input{VPEC: vector(t, proofsVPEC), Circuits: []webverify.File{head, threshold, head}},
			code: webverify.ExitValid, verdict: "VALID", zk: verify.Pass, message: []string{"ZK proofs valid (2 proofs"}, sameText: true},
		{name: "entries in a chosen folder", in: webverify.Input{VPEC: vector(t, proofsVPEC), CircuitFolder: []webverify.File{
			{Name: "circuits/" + head.Name, Data: head.Data}, {Name: "circuits/" + threshold.Name, Data: threshold.Data},
			{Name: "circuits/vpec.json", Data: vector(t, proofsVPEC).Data}, {Name: "circuits/notes.txt", Data: []byte("not JSON")},
			{Name: "circuits/profile.json", Data: vector(t, aProfile).Data}}},
			code: webverify.ExitValid, verdict: "VALID", zk: verify.Pass, message: []string{"ZK proofs valid (2 proofs"}, warnings: 2},
		{name: "a proof that does not verify", in: webverify.Input{VPEC: vector(t, flippedVPEC), Circuits: []webverify.File{head, threshold}},
			code: webverify.ExitInvalid, verdict: "INVALID — ZK PROOF INVALID", zk: verify.Fail, message: []string{"groth16 verify", "toxicity_head"}, sameText: true},
		{name: "no circuit entries", in: webverify.Input{VPEC: vector(t, proofsVPEC)},
			code: webverify.ExitTrust, verdict: "UNVERIFIED — CIRCUIT NOT AVAILABLE", zk: verify.Fail, message: []string{headID, webverify.CircuitAdvice}, notIn: "--circuit"},
		{name: "one entry missing", in: webverify.Input{VPEC: vector(t, proofsVPEC), Circuits: []webverify.File{head}},
			code: webverify.ExitTrust, verdict: "UNVERIFIED — CIRCUIT NOT AVAILABLE", zk: verify.Fail, message: []string{thresholdID, "add its signed circuit entry under Circuit entries"}, notIn: "--circuit"},
		{name: "an entry signed by another key", in: webverify.Input{VPEC: vector(t, proofsVPEC), Circuits: []webverify.File{head, foreign}},
			code: webverify.ExitInvalid, verdict: "INVALID — ZK PROOF INVALID", zk: verify.Fail, message: []string{"circuit entry file " + foreign.Name + ": circuit entry signature or schema"}, notIn: "--circuit"},
		{name: "a profile chosen as a circuit entry", in: webverify.Input{VPEC: vector(t, proofsVPEC), Circuits: []webverify.File{head, threshold, vector(t, aProfile)}},
			code: webverify.ExitUsage, message: []string{"pii-detection-v1.0.0.json is a model profile, not a signed circuit entry", "choose it as a profile"}},
		{name: "two entries with one circuit id", in: webverify.Input{VPEC: vector(t, proofsVPEC), Circuits: []webverify.File{head, {Name: "copy.json", Data: reindented.Bytes()}}},
			code: webverify.ExitUsage, message: []string{"ambiguous circuit entry", "copy.json", "choose each circuit entry once"}},
		{name: "an entry too large", in: webverify.Input{VPEC: vector(t, proofsVPEC), Circuits: []webverify.File{{Name: "huge.json", Data: make([]byte, zkverify.MaxEntryBytes+1)}}},
			code: webverify.ExitTrust, message: []string{"huge.json", "larger than"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.in.Trust = trust
			res := webverify.Verify(c.in)
			if res.ExitCode != c.code {
				t.Fatalf("exit %d, want %d: %s", res.ExitCode, c.code, res.JSON())
			}
			if len(res.Warnings) != c.warnings {
				t.Errorf("warnings %q, want %d", res.Warnings, c.warnings)
			}
			msg := res.Error
			if c.verdict != "" {
				if res.Report == nil || res.Report.Verdict != c.verdict {
					t.Fatalf("verdict of %s, want %q", res.JSON(), c.verdict)
				}
				zk := res.Report.Check(verify.CheckZK)
				if zk.Status != c.zk {
					t.Errorf("zk_proofs %s, want %s: %s", zk.Status, c.zk, zk.Message)
				}
				msg = zk.Message + "\n" + strings.Join(zk.Details, "\n")
			} else if res.Report != nil {
				t.Fatalf("a report for an input that cannot be verified: %s", res.JSON())
			}
			for _, m := range c.message {
				if !strings.Contains(msg, m) {
					t.Errorf("%q does not carry %q", msg, m)
				}
			}
			if c.notIn != "" && strings.Contains(msg, c.notIn) {
				t.Errorf("%q carries %q (advice the page user cannot follow)", msg, c.notIn)
			}
			if len(c.in.CircuitFolder) > 0 {
				return // the CLI reads a folder from disk: TestFolderLikeCircuitDir
			}
			code, want, stderr := cliVerify(t, c.in)
			if code != res.ExitCode {
				t.Fatalf("svc-verify exits %d, the page %d (stderr %q)", code, res.ExitCode, stderr)
			}
			if want == nil {
				return
			}
			// The same missing entry, each surface's advice: svc-verify's names its flags.
			if cliMsg := want.Check(verify.CheckZK).Message; c.code == webverify.ExitTrust && (!strings.Contains(cliMsg, "--circuit") || strings.Contains(cliMsg, webverify.CircuitAdvice)) {
				t.Errorf("svc-verify's advice %q", cliMsg)
			}
			if want.Verdict != res.Report.Verdict || len(want.Checks) != len(res.Report.Checks) {
				t.Fatalf("svc-verify %q with %d checks, the page %q with %d", want.Verdict, len(want.Checks), res.Report.Verdict, len(res.Report.Checks))
			}
			for i, w := range want.Checks {
				g := res.Report.Checks[i]
				if g.Name != w.Name || g.Status != w.Status || (c.sameText && g.Message != w.Message) {
					t.Errorf("check %d: page %s %s %q, svc-verify %s %s %q", i, g.Name, g.Status, g.Message, w.Name, w.Status, w.Message)
				}
			}
		})
	}
}

// TestFolderLikeCircuitDir: a chosen folder is read as svc verify reads
// --circuit-dir: its .json circuit entries are used, other .json files
// are skipped with a warning, and the verdicts agree.
func TestFolderLikeCircuitDir(t *testing.T) {
	dir := t.TempDir()
	var folder []webverify.File
	for _, rel := range []string{headEntry, thresholdEntry, aProfile} {
		f := vector(t, rel)
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
		folder = append(folder, f)
	}
	in := webverify.Input{VPEC: vector(t, proofsVPEC), Trust: vector(t, trustBundle), CircuitFolder: folder}
	res := webverify.Verify(in)
	if res.ExitCode != webverify.ExitValid || len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "pii-detection-v1.0.0.json") {
		t.Fatalf("page: exit %d, warnings %q", res.ExitCode, res.Warnings)
	}
	var out, errb bytes.Buffer
	trust := filepath.Join(t.TempDir(), "trust-bundle.pem")
	os.WriteFile(trust, in.Trust.Data, 0o644)
	vp := filepath.Join(t.TempDir(), "vpec.json")
	os.WriteFile(vp, in.VPEC.Data, 0o644)
	code := verifycmd.Main([]string{"verify", vp, "--trust-root", trust, "--circuit-dir", dir, "--profile-dir", t.TempDir(), "--output", "json"},
		&clicore.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }})
	var want verify.Report
	if err := json.Unmarshal(out.Bytes(), &want); err != nil || code != res.ExitCode || want.Verdict != res.Report.Verdict ||
		want.Check(verify.CheckZK).Message != res.Report.Check(verify.CheckZK).Message {
		t.Errorf("svc-verify --circuit-dir: exit %d %q (%v), the page %d %q", code, want.Verdict, err, res.ExitCode, res.Report.Verdict)
	}
	if strings.Count(errb.String(), "skipping cached circuit entry") != 1 {
		t.Errorf("svc-verify warned %q, the page %q", errb.String(), res.Warnings)
	}
}

// FuzzVerifyCircuits: whatever circuit entries are chosen, the page never
// says VALID without a valid report, and a proof is VALID only with the
// entries that prove it.
func FuzzVerifyCircuits(f *testing.F) {
	doc, trust := vector(f, proofsVPEC).Data, vector(f, trustBundle).Data
	head, threshold := vector(f, headEntry).Data, vector(f, thresholdEntry).Data
	f.Add(head, threshold)
	f.Add(head, vector(f, foreignEntry).Data)
	f.Add([]byte(`{"circuit_id":"sha256:00"}`), []byte{})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		res := webverify.Verify(webverify.Input{VPEC: webverify.File{Name: "v.json", Data: doc}, Trust: webverify.File{Data: trust},
			Circuits: []webverify.File{{Name: "a.json", Data: a}}, CircuitFolder: []webverify.File{{Name: "b.json", Data: b}}})
		if res.Report == nil && res.Error == "" {
			t.Fatal("neither report nor error")
		}
		if res.ExitCode == webverify.ExitValid && (res.Report == nil || !res.Report.Valid || res.Report.Check(verify.CheckZK).Status != verify.Pass) {
			t.Fatalf("exit 0 without valid proofs: %s", res.JSON())
		}
		if res.ExitCode == webverify.ExitValid && !(bytes.Equal(a, head) || bytes.Equal(b, head)) {
			t.Fatalf("VALID without the head's entry: %s", res.JSON())
		}
	})
}
