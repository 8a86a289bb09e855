package tlog_test

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"golang.org/x/mod/sumdb/note"
)

// seedReceipt returns a valid receipt of the example leaf as the only
// entry of a log (no proof hashes), its checkpoint cosigned by w1, and
// the verifier for it (log key, policy wanting w1).
func seedReceipt(tb testing.TB) ([]byte, *tlog.Verifier) {
	tb.Helper()
	leaf, err := tlog.ParseLeaf([]byte(exampleLeaf))
	if err != nil {
		tb.Fatal(err)
	}
	ns, err := tlog.NewNoteSigner(tlogtest.Origin, tlogtest.Key("log"))
	if err != nil {
		tb.Fatal(err)
	}
	root := leaf.Hash()
	cp, err := note.Sign(&note.Note{Text: tlogtest.Origin + "\n1\n" + base64.StdEncoding.EncodeToString(root[:]) + "\n"}, ns)
	if err != nil {
		tb.Fatal(err)
	}
	w1 := tlogtest.NewWitness(tb, "witness.test/w1")
	r := &tlog.Receipt{LogIndex: 0, Leaf: leaf, Checkpoint: w1.Cosign(tb, cp), InclusionProof: [][32]byte{}}
	doc, err := r.Marshal()
	if err != nil {
		tb.Fatal(err)
	}
	return doc, tlogtest.Verifier(tb, "log", w1.PolicyLine("w1")+"quorum w1\n")
}

// FuzzParseLeaf: ParseLeaf never panics, and what it accepts is exactly
// what Marshal writes back.
func FuzzParseLeaf(f *testing.F) {
	f.Add([]byte(exampleLeaf))
	f.Add([]byte("svc.tlog.leaf/v1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := tlog.ParseLeaf(data)
		if err != nil {
			return
		}
		if !bytes.Equal(l.Marshal(), data) {
			t.Fatalf("accepted %q, which re-encodes as %q", data, l.Marshal())
		}
	})
}

// FuzzParseReceipt: ParseReceipt and VerifyReceipt never panic; an
// accepted receipt re-encodes to the same bytes.
func FuzzParseReceipt(f *testing.F) {
	doc, v := seedReceipt(f)
	f.Add(doc)
	f.Add([]byte(`{"schema":"svc.tlog.receipt/v1"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := tlog.ParseReceipt(data)
		if err == nil {
			back, err := r.Marshal()
			if err != nil || !bytes.Equal(back, data) {
				t.Fatalf("accepted %q, which re-encodes as %q (%v)", data, back, err)
			}
		}
		if res, err := v.VerifyReceipt(data, tlog.Subject{VPECID: "vpec_00000000-0000-4000-8000-00000000c1ea", Digest: tlog.Digest([]byte("x"))}); err == nil && res == nil {
			t.Fatal("no result and no error")
		}
	})
}

// FuzzParseCheckpoint: verifying arbitrary bytes as a checkpoint never
// panics; sorting the signature lines of an accepted note is idempotent
// and keeps it verifiable.
func FuzzParseCheckpoint(f *testing.F) {
	doc, v := seedReceipt(f)
	r, err := tlog.ParseReceipt(doc)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(r.Checkpoint)
	f.Add([]byte("svc.test/log\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n\u2014 svc.test/log AAAAAAA=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cp, verr := v.VerifyCheckpoint(data)
		sorted, err := tlog.SortSignatures(data)
		if err != nil {
			if verr == nil {
				t.Fatalf("verified %q, which SortSignatures refuses: %v", data, err)
			}
			return
		}
		again, err := tlog.SortSignatures(sorted)
		if err != nil || !bytes.Equal(again, sorted) {
			t.Fatalf("SortSignatures is not idempotent on %q", data)
		}
		if verr == nil {
			if _, err := v.VerifyCheckpoint(sorted); err != nil || cp == nil {
				t.Fatalf("%q verifies, sorted it does not: %v", data, err)
			}
		}
	})
}

// FuzzParseWitnessPolicy: policy parsing never panics.
func FuzzParseWitnessPolicy(f *testing.F) {
	w := tlogtest.NewWitness(f, "witness.test/w1")
	f.Add([]byte(w.PolicyLine("w1") + "group g 1 w1\nquorum g\n"))
	f.Add([]byte("quorum none\n"))
	f.Add([]byte(w.PolicyLine("w1") + "group g 0 w1\nquorum g\n"))
	f.Add([]byte(w.PolicyLine("w1") + "quorum w1\nquorum none\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := tlog.ParseWitnessPolicy(data)
		if err != nil {
			return
		}
		quorums := 0
		for _, line := range strings.Split(string(data), "\n") {
			line, _, _ = strings.Cut(line, "#")
			if f := strings.Fields(line); len(f) > 0 && f[0] == "quorum" {
				quorums++
			}
		}
		if quorums != 1 {
			t.Fatalf("policy %q with %d quorum lines accepted", data, quorums)
		}
		for _, w := range p.Witnesses() {
			if w.Name == "" {
				t.Fatalf("policy %q has a witness without a name", data)
			}
		}
	})
}

// FuzzParseKeys: monitoring keys, log keys and proofs round-trip through
// their text forms.
func FuzzParseKeys(f *testing.F) {
	f.Add(exampleOrgKey)
	f.Add(tlogtest.LogKey(f, "log").String())
	f.Add("FNkpU+ddSHhbWV76K+U6JMII8JiK2R+56ot0tZSjcDw=\n")
	f.Fuzz(func(t *testing.T, s string) {
		if k, err := tlog.ParseOrgKey(s); err == nil && k.String() != s {
			t.Fatalf("org key %q re-encodes as %q", s, k)
		}
		if k, err := tlog.ParseLogKey(s); err == nil && k.String() != s {
			t.Fatalf("log key %q re-encodes as %q", s, k)
		}
		if p, err := tlog.ParseProof([]byte(s)); err == nil && string(tlog.MarshalProof(p)) != s {
			t.Fatalf("proof %q re-encodes as %q", s, tlog.MarshalProof(p))
		}
	})
}
