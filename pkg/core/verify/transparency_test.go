package verify_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

var trustVectorsDir = filepath.Join(vectorsDir, testvectors.TrustDir)

func readTrustFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(trustVectorsDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// trustOptions builds the library options of a trust vector as svc verify
// does from its flags; refusal is the trust root update's error.
func trustOptions(t *testing.T, v testvectors.Vector) (opts verify.Options, refusal error) {
	t.Helper()
	root, err := trustroot.Load(readTrustFile(t, v.TrustRoot))
	if err != nil {
		t.Fatal(err)
	}
	var updates []*trustroot.Root
	for _, u := range v.TrustRootUpdates {
		r, err := trustroot.Parse(readTrustFile(t, u))
		if err != nil {
			t.Fatal(err)
		}
		updates = append(updates, r)
	}
	if root, err = trustroot.VerifyChain(root, updates...); err != nil {
		return opts, err
	}
	opts = verify.Options{Root: root, RequireLog: v.RequireLog}
	if len(v.Circuits) > 0 {
		// As svc verify --circuit: the entries, signed by a key of the
		// root's circuit-signing entries, inside its window.
		set := zkverify.NewSet()
		for _, c := range v.Circuits {
			if err := set.AddExplicit(filepath.Join(trustVectorsDir, c)); err != nil {
				t.Fatal(err)
			}
		}
		opts.Proofs = &zkverify.Verifier{Trust: verify.TrustFor(root, trustroot.PurposeCircuit), Root: root, Circuits: set}
	}
	if v.Receipt != "" {
		opts.Receipt = readTrustFile(t, v.Receipt)
	}
	if v.WitnessPolicy != "" {
		if opts.WitnessPolicy, err = tlog.ParseWitnessPolicy(readTrustFile(t, v.WitnessPolicy)); err != nil {
			t.Fatal(err)
		}
	}
	if v.LogCheckpoint != "" {
		opts.NewerCheckpoint = readTrustFile(t, v.LogCheckpoint)
	}
	if v.ConsistencyProof != "" {
		if opts.ConsistencyProof, err = tlog.ParseProof(readTrustFile(t, v.ConsistencyProof)); err != nil {
			t.Fatal(err)
		}
	}
	return opts, nil
}

// TestTrustVectors runs the transparency log and trust root vectors
// through the library: the verdict and exactly the checks that fail, or
// the trust root update's refusal by its code.
func TestTrustVectors(t *testing.T) {
	m, err := testvectors.Load(trustVectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range m.Vectors {
		t.Run(v.Name, func(t *testing.T) {
			opts, refusal := trustOptions(t, v)
			if v.TrustRootRefusal != "" {
				if got := trustroot.Code(refusal); got != v.TrustRootRefusal {
					t.Fatalf("trust root update: %v (code %q), want code %q", refusal, got, v.TrustRootRefusal)
				}
				return
			}
			if refusal != nil {
				t.Fatal(refusal)
			}
			r := verifyDoc(t, readTrustFile(t, v.File), opts)
			var failed []string
			for _, c := range r.Checks {
				if c.Status == verify.Fail {
					failed = append(failed, string(c.Name))
				}
			}
			want := slices.Clone(v.Fails)
			slices.Sort(want)
			slices.Sort(failed)
			if r.Valid != v.Valid || r.Verdict != v.Verdict || !slices.Equal(failed, want) {
				t.Errorf("verdict %q failed %v, want %q %v", r.Verdict, failed, v.Verdict, want)
				for _, c := range r.Checks {
					t.Logf("  %s %s: %s", c.Status, c.Name, c.Message)
				}
			}
		})
	}
}

// TestTransparencyCheck covers what the vectors do not: how the check is
// reported without a receipt, receipts in another encoding, a newer
// checkpoint that is not the log's, and options that cannot verify.
func TestTransparencyCheck(t *testing.T) {
	root, err := trustroot.Load(readTrustFile(t, "trust-root.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc := readTrustFile(t, "logged.json")
	receipt := readTrustFile(t, "receipt.json")
	var indented bytes.Buffer
	indented.Write(bytes.Replace(receipt, []byte(`,"leaf"`), []byte(`, "leaf"`), 1))
	otherLogCP := func() []byte {
		// The checkpoint of receipt-other-log.json, as a "newer" one.
		r, err := tlog.ParseReceipt(readTrustFile(t, "receipt-other-log.json"))
		if err != nil {
			t.Fatal(err)
		}
		return r.Checkpoint
	}()
	cases := []struct {
		name    string
		opts    verify.Options
		status  verify.Status
		code    string
		optsErr bool
	}{
		{name: "no receipt: not applicable", opts: verify.Options{Root: root}, status: verify.NotApplicable},
		{name: "receipt, RequireLog", opts: verify.Options{Root: root, Receipt: receipt, RequireLog: true}, status: verify.Pass},
		{name: "receipt not in its one encoding", opts: verify.Options{Root: root, Receipt: indented.Bytes()}, status: verify.Fail, code: verify.CodeReceiptMalformed},
		{name: "empty receipt file", opts: verify.Options{Root: root, Receipt: []byte{}}, status: verify.Fail, code: verify.CodeReceiptMalformed},
		{name: "newer checkpoint of another log", opts: verify.Options{Root: root, Receipt: receipt, NewerCheckpoint: otherLogCP}, status: verify.Fail, code: verify.CodeNewerCheckpoint},
		{name: "same checkpoint as newer, no proof", opts: verify.Options{Root: root, Receipt: receipt, NewerCheckpoint: mustCheckpoint(t, receipt)}, status: verify.Pass},
		{name: "proof without a newer checkpoint", opts: verify.Options{Root: root, Receipt: receipt, ConsistencyProof: [][]byte{make([]byte, 32)}}, optsErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := verify.Verify(doc, tc.opts)
			if tc.optsErr {
				if !errors.Is(err, verify.ErrOptions) {
					t.Fatalf("error %v, want ErrOptions", err)
				}
				return
			}
			c := r.Check(verify.CheckTransparency)
			if c == nil || c.Status != tc.status || c.Code != tc.code {
				t.Fatalf("transparency check %+v, want status %s code %q", c, tc.status, tc.code)
			}
			if (tc.status == verify.Fail) == (err == nil) {
				t.Errorf("verdict %q with error %v", r.Verdict, err)
			}
		})
	}
}

func mustCheckpoint(t *testing.T, receipt []byte) []byte {
	t.Helper()
	r, err := tlog.ParseReceipt(receipt)
	if err != nil {
		t.Fatal(err)
	}
	return r.Checkpoint
}

// FuzzTransparencyReceipt feeds arbitrary receipts, newer checkpoints and
// consistency proofs to the transparency check of the trust vectors' VPEC:
// it must never panic, and never pass a receipt whose leaf is not this
// VPEC's or a newer checkpoint the proof does not reach.
func FuzzTransparencyReceipt(f *testing.F) {
	dir := trustVectorsDir
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	files, _ := filepath.Glob(filepath.Join(dir, "receipt*.json"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b, []byte(nil), []byte(nil))
		f.Add(b, read("checkpoint-newer.txt"), read("consistency-newer.txt"))
		f.Add(b, read("checkpoint-fork.txt"), read("consistency-fork.txt"))
	}
	root, err := trustroot.Load(read("trust-root.json"))
	if err != nil {
		f.Fatal(err)
	}
	doc := read("logged.json")
	f.Fuzz(func(t *testing.T, receipt, newer, proofText []byte) {
		opts := verify.Options{Root: root, Receipt: receipt}
		if len(newer) > 0 {
			opts.NewerCheckpoint = newer
			if p, err := tlog.ParseProof(proofText); err == nil {
				opts.ConsistencyProof = p
			}
		}
		r, err := verify.Verify(doc, opts)
		if err != nil && r == nil {
			return
		}
		c := r.Check(verify.CheckTransparency)
		if c == nil {
			t.Fatal("no transparency check in the report")
		}
		if c.Status != verify.Pass {
			return
		}
		rec, err := tlog.ParseReceipt(receipt)
		if err != nil {
			t.Fatalf("passed a receipt tlog cannot parse: %v", err)
		}
		if rec.Leaf.VPECID != r.VPECID {
			t.Fatalf("passed a receipt for %s on %s", rec.Leaf.VPECID, r.VPECID)
		}
	})
}
