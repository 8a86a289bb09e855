package verify_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
)

// zkKeys are dev-setup keys of both condition circuits, made once: the
// tests only need real keys, not a ceremony.
var zkKeys = sync.OnceValues(func() (map[conditions.Kind]*zk.Keys, error) {
	out := map[conditions.Kind]*zk.Keys{}
	for _, k := range conditions.Kinds() {
		keys, err := zk.DevSetupCondition(k)
		if err != nil {
			return nil, err
		}
		out[k] = keys
	}
	return out, nil
})

type zkFixture struct {
	*fixture
	keys    map[conditions.Kind]*zk.Keys
	entries map[conditions.Kind][]byte
}

func newZKFixture(t *testing.T) *zkFixture {
	t.Helper()
	keys, err := zkKeys()
	if err != nil {
		t.Fatal(err)
	}
	f := &zkFixture{fixture: newFixture(t), keys: keys, entries: map[conditions.Kind][]byte{}}
	for k, ks := range keys {
		f.entries[k] = signedEntry(t, ks, f.signer)
	}
	return f
}

func signedEntry(t *testing.T, k *zk.Keys, signer *signing.Signer) []byte {
	t.Helper()
	e, err := zk.NewEntry(k, "", zk.Ceremony{TranscriptHash: zk.HashBytes([]byte("transcript")), Contributors: []string{"svc-operator", "acme-audit"}}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := zk.Sign(e, signer, "svc.example/trust"); err != nil {
		t.Fatal(err)
	}
	doc, err := document.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// condRecord is a mathematical record proving value against bound.
func (f *zkFixture) condRecord(t *testing.T, kind conditions.Kind, value, bound uint32) vpec.Record {
	t.Helper()
	salt, err := conditions.NewSalt()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := zk.ProveCondition(f.keys[kind], value, bound, salt)
	if err != nil {
		t.Fatal(err)
	}
	return vpec.Record{RecordID: names.NewID("rec_"), Check: string(kind), ManifestID: "sha256:" + strings.Repeat("ab", 32),
		CheckResult: cp.CheckResult, ProofLevel: vpec.Mathematical, CommitmentAlgorithm: "poseidon2", CommitmentHash: cp.CommitmentHash,
		Visibility: vpec.Opaque, RecordedAt: "2026-11-22T00:00:00.000Z", StagePart: stage.PartPost, ZKProof: cp.ZKProof}
}

func (f *zkFixture) issueRecs(t *testing.T, recs ...vpec.Record) []byte {
	t.Helper()
	for i := range recs {
		recs[i].Sequence = int64(i + 1)
	}
	return f.issue(t, recs, nil)
}

func (f *zkFixture) verifier(docs ...[]byte) *zk.Verifier {
	set := zk.NewSet()
	for _, d := range docs {
		if _, err := set.Add(d); err != nil {
			panic(err)
		}
	}
	return &zk.Verifier{Trust: f.trust, Circuits: set}
}

func (f *zkFixture) both() *zk.Verifier {
	return f.verifier(f.entries[conditions.Threshold], f.entries[conditions.Truncation])
}

func TestZKProofsValid(t *testing.T) {
	f := newZKFixture(t)
	doc := f.issueRecs(t,
		f.condRecord(t, conditions.Truncation, 120, 512),
		f.condRecord(t, conditions.Threshold, 700, 500),
		f.condRecord(t, conditions.Threshold, 300, 500), // a failed check, proved as failed
	)
	rep, err := verify.Verify(doc, verify.Options{Trust: f.trust, Proofs: f.both()})
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, dump(rep))
	}
	c := rep.Check(verify.CheckZK)
	// Two keys with the same contributors are named together.
	want := regexp.MustCompile(`^ZK proofs valid \(3 proofs, circuit ids sha256:[0-9a-f]{12}…, sha256:[0-9a-f]{12}… \(setup contributors: svc-operator, acme-audit\)\)$`)
	if c.Status != verify.Pass || !want.MatchString(c.Message) {
		t.Fatalf("zk check: %+v", c)
	}
	if rep.ProofLevelFloor != vpec.Mathematical {
		t.Fatalf("floor %s", rep.ProofLevelFloor)
	}
}

func dump(r *verify.Report) string {
	if r == nil {
		return "<nil report>"
	}
	var b strings.Builder
	for _, c := range r.Checks {
		fmt.Fprintf(&b, "%s %s %s %v\n", c.Name, c.Status, c.Message, c.Details)
	}
	return b.String()
}

// Each way a signed VPEC's proof can fail to be about what its record
// says fails the ZK check, naming the check.
func TestZKProofTampering(t *testing.T) {
	f := newZKFixture(t)
	other, _, _ := signing.GenerateKey()
	_ = other
	_, otherPriv, _ := signing.GenerateKey()
	otherSigner, _ := signing.NewSigner(otherPriv)
	unknownKeys, err := zk.DevSetupCondition(conditions.Threshold) // a key pair no signed entry has
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		rec     func() vpec.Record
		entries [][]byte
		code    string
		want    string
		missing bool
	}{
		{name: "proof of another input", rec: func() vpec.Record {
			r := f.condRecord(t, conditions.Threshold, 700, 500)
			r.CommitmentHash = f.condRecord(t, conditions.Threshold, 701, 500).CommitmentHash
			return r
		}, code: "ZK PROOF INVALID", want: "groth16 verify"},
		{name: "flipped result", rec: func() vpec.Record {
			r := f.condRecord(t, conditions.Threshold, 300, 500)
			r.CheckResult = vpec.ResultPass
			return r
		}, code: "ZK PROOF INVALID", want: "groth16 verify"},
		{name: "other threshold", rec: func() vpec.Record {
			r := f.condRecord(t, conditions.Threshold, 700, 500)
			lower := int64(800)
			r.ZKProof.Threshold = &lower
			return r
		}, code: "ZK PROOF INVALID", want: "groth16 verify"},
		{name: "other circuit's key", rec: func() vpec.Record {
			r := f.condRecord(t, conditions.Threshold, 700, 500)
			r.ZKProof.CircuitID = f.keys[conditions.Truncation].CircuitID
			return r
		}, code: "ZK PROOF INVALID", want: "circuit mismatch"},
		{name: "entry signed by an unknown key", rec: func() vpec.Record {
			return f.condRecord(t, conditions.Threshold, 700, 500)
		}, entries: [][]byte{signedEntry(t, f.keys[conditions.Threshold], otherSigner)}, code: "ZK PROOF INVALID", want: "circuit entry signature"},
		{name: "unsigned entry", rec: func() vpec.Record {
			return f.condRecord(t, conditions.Threshold, 700, 500)
		}, entries: [][]byte{unsign(t, f.entries[conditions.Threshold])}, code: "ZK PROOF INVALID", want: "not signed"},
		{name: "key from an unknown ceremony", rec: func() vpec.Record {
			salt, _ := conditions.NewSalt()
			cp, err := zk.ProveCondition(unknownKeys, 700, 500, salt)
			if err != nil {
				t.Fatal(err)
			}
			r := f.condRecord(t, conditions.Threshold, 700, 500)
			r.CommitmentHash, r.ZKProof = cp.CommitmentHash, cp.ZKProof
			return r
		}, code: "CIRCUIT NOT AVAILABLE", want: "circuit entry not found", missing: true},
		{name: "garbled proof", rec: func() vpec.Record {
			r := f.condRecord(t, conditions.Threshold, 700, 500)
			r.ZKProof.Proof = "A" + r.ZKProof.Proof[1:]
			return r
		}, code: "ZK PROOF INVALID", want: "zk:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := f.issueRecs(t, tc.rec())
			v := f.both()
			if tc.entries != nil {
				v = f.verifier(tc.entries...)
			}
			rep, err := verify.Verify(doc, verify.Options{Trust: f.trust, Proofs: v})
			if err == nil {
				t.Fatalf("verified:\n%s", dump(rep))
			}
			c := rep.Check(verify.CheckZK)
			if c.Status != verify.Fail || c.Code != tc.code || !strings.Contains(c.Message, tc.want) {
				t.Fatalf("zk check %+v, want %s naming %q", c, tc.code, tc.want)
			}
			if tc.missing != errors.Is(err, verify.ErrUnverified) {
				t.Fatalf("error %v: want trust material missing %v", err, tc.missing)
			}
			for _, other := range rep.Checks {
				if other.Name != verify.CheckZK && other.Status == verify.Fail {
					t.Errorf("check %s also failed: %s", other.Name, other.Message)
				}
			}
		})
	}
}

func unsign(t *testing.T, doc []byte) []byte {
	t.Helper()
	e, err := zk.ParseEntry(doc)
	if err != nil {
		t.Fatal(err)
	}
	e.CircuitSignature, e.SigningKeyID = "", ""
	out, _ := document.Marshal(e)
	return out
}

// The zk_proof is covered by the chain hash: changing it after issuance
// breaks the chain (and the signature).
func TestZKProofCoveredByChain(t *testing.T) {
	f := newZKFixture(t)
	doc := f.issueRecs(t, f.condRecord(t, conditions.Threshold, 700, 500))
	bad := strings.Replace(string(doc), `"threshold": 500`, `"threshold": 499`, 1)
	if bad == string(doc) {
		t.Fatalf("threshold not found in %s", doc)
	}
	rep, err := verify.Verify([]byte(bad), verify.Options{Trust: f.trust, Proofs: f.both()})
	if err == nil || rep.Check(verify.CheckChain).Status != verify.Fail || rep.Check(verify.CheckSignature).Status != verify.Fail {
		t.Fatalf("tampered threshold: %v\n%s", err, dump(rep))
	}
}

// Without circuit entries a proof is not checked: trust material missing.
func TestZKProofNoVerifier(t *testing.T) {
	f := newZKFixture(t)
	doc := f.issueRecs(t, f.condRecord(t, conditions.Truncation, 12, 512))
	rep, err := verify.Verify(doc, verify.Options{Trust: f.trust})
	if !errors.Is(err, verify.ErrUnverified) || rep.Check(verify.CheckZK).Code != "CIRCUIT NOT AVAILABLE" {
		t.Fatalf("err %v\n%s", err, dump(rep))
	}
}
