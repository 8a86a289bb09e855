package sigstore_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strconv"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/logwriter"
)

// logged is a real log (Tessera, POSIX backend) holding VPECs' leaves.
type logged struct {
	log      *logwriter.Log
	receipts map[string][]byte // vector name -> receipt
}

// logVectors appends the leaves of the named vectors to a new log signed
// by Key(seed) and returns their receipts.
func logVectors(t testing.TB, seed string, names ...string) logged {
	t.Helper()
	l := tlogtest.OpenLog(t, t.TempDir(), seed, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := logged{log: l, receipts: map[string][]byte{}}
	for _, name := range names {
		doc := readVector(t, name)
		var v struct {
			VPECID      string `json:"vpec_id"`
			OrgID       string `json:"org_id"`
			WorkflowID  string `json:"workflow_id"`
			Environment string `json:"environment"`
			IssuedAt    string `json:"issued_at"`
			IsClean     bool   `json:"is_clean"`
		}
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		signed, err := vpec.SignedBytes(doc)
		if err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339, v.IssuedAt)
		if err != nil {
			t.Fatal(err)
		}
		leaf := tlogtest.Leaf(t, tlog.Entry{VPECID: v.VPECID, Digest: tlog.Digest(signed), OrgID: v.OrgID, WorkflowID: v.WorkflowID,
			Environment: v.Environment, IssuedAt: at, Clean: v.IsClean})
		a, err := l.Append(ctx, leaf)
		if err != nil {
			t.Fatal(err)
		}
		r, err := l.AwaitReceipt(ctx, a.Index)
		if err != nil {
			t.Fatal(err)
		}
		out.receipts[name] = r.JSON
	}
	return out
}

// trustWithLog is the vectors' trust bundle plus the log keys.
func trustWithLog(t testing.TB, keys ...tlog.LogKey) *signing.Bundle {
	t.Helper()
	b := trustBundle(t)
	for _, k := range keys {
		b.AddLogKey(k)
	}
	return b
}

// wireEntry is what a test reads of a bundle's tlog entry; its members
// are raw so that a member the export should not write shows.
type wireEntry map[string]json.RawMessage

func tlogEntries(t testing.TB, bundle []byte) []wireEntry {
	t.Helper()
	var b struct {
		VerificationMaterial struct {
			TlogEntries []wireEntry `json:"tlogEntries"`
		} `json:"verificationMaterial"`
	}
	if err := json.Unmarshal(bundle, &b); err != nil {
		t.Fatal(err)
	}
	return b.VerificationMaterial.TlogEntries
}

// TestExportWithReceipt: the bundle carries the receipt's entry in the
// Sigstore v0.3 form (log index, log id, kind svc.tlog.leaf v1, the
// inclusion proof with root, size, hashes and the checkpoint as signed
// note, svc's leaf as canonicalized body, no integrated time), and
// otherwise the same members as ExportBundle's.
func TestExportWithReceipt(t *testing.T) {
	lg := logVectors(t, "sigbundle", "valid/with-gaps.json", "valid/clean.json")
	doc := readVector(t, "valid/clean.json")
	trust := trustWithLog(t, lg.log.Key())
	ex, err := sigstore.ExportWithReceipt(doc, lg.receipts["valid/clean.json"], trust)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tlog.ParseReceipt(lg.receipts["valid/clean.json"])
	if err != nil {
		t.Fatal(err)
	}
	if r.LogIndex != 1 {
		t.Fatalf("clean.json is at index %d, want 1 (the second append)", r.LogIndex)
	}
	entries := tlogEntries(t, ex.Bundle)
	if len(entries) != 1 {
		t.Fatalf("%d tlog entries, want 1", len(entries))
	}
	e := entries[0]
	if _, ok := e["integratedTime"]; ok {
		t.Errorf("integratedTime is present: svc's log signs no integration time")
	}
	var got struct {
		LogIndex    string                 `json:"logIndex"`
		LogID       struct{ KeyID []byte } `json:"logId"`
		KindVersion struct{ Kind, Version string }
		Proof       struct {
			LogIndex   string `json:"logIndex"`
			RootHash   []byte `json:"rootHash"`
			TreeSize   string `json:"treeSize"`
			Hashes     [][]byte
			Checkpoint struct{ Envelope string }
		} `json:"inclusionProof"`
		Body []byte `json:"canonicalizedBody"`
	}
	raw, _ := json.Marshal(e)
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	// The key id, computed here as the C2SP key hash is: its first four
	// bytes are the note verifier key's hash (golang.org/x/mod's).
	k := lg.log.Key()
	nv, err := note.NewVerifier(k.String())
	if err != nil {
		t.Fatal(err)
	}
	want := sigstore.LogID(k)
	if !bytes.Equal(got.LogID.KeyID, want[:]) || binary.BigEndian.Uint32(got.LogID.KeyID) != nv.KeyHash() {
		t.Errorf("logId.keyId %x, want %x with key hash %08x", got.LogID.KeyID, want, nv.KeyHash())
	}
	if got.LogIndex != "1" || got.Proof.LogIndex != "1" {
		t.Errorf("log indexes %q, %q, want \"1\" (protobuf JSON writes int64 as a string)", got.LogIndex, got.Proof.LogIndex)
	}
	if got.KindVersion.Kind != sigstore.TlogEntryKind || got.KindVersion.Version != sigstore.TlogEntryVersion {
		t.Errorf("kindVersion %+v", got.KindVersion)
	}
	if !bytes.Equal(got.Body, r.Leaf.Marshal()) {
		t.Errorf("canonicalizedBody %q, want the receipt's leaf", got.Body)
	}
	if got.Proof.Checkpoint.Envelope != string(r.Checkpoint) {
		t.Errorf("checkpoint envelope %q, want the receipt's checkpoint", got.Proof.Checkpoint.Envelope)
	}
	cp, err := tlog.NewVerifier(k, tlogtest.Policy(t, "quorum none\n"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cp.VerifyCheckpoint(r.Checkpoint)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Proof.RootHash, c.Root[:]) || got.Proof.TreeSize != strconv.FormatUint(c.Size, 10) {
		t.Errorf("rootHash %x treeSize %s, want the checkpoint's %x %d", got.Proof.RootHash, got.Proof.TreeSize, c.Root, c.Size)
	}
	if len(got.Proof.Hashes) != len(r.InclusionProof) || len(got.Proof.Hashes) == 0 {
		t.Fatalf("%d hashes, want the receipt's %d", len(got.Proof.Hashes), len(r.InclusionProof))
	}
	for i, h := range got.Proof.Hashes {
		if !bytes.Equal(h, r.InclusionProof[i][:]) {
			t.Errorf("hash %d differs from the receipt's", i)
		}
	}
	// Everything else is ExportBundle's.
	plain, err := sigstore.ExportBundle(doc)
	if err != nil {
		t.Fatal(err)
	}
	strip := func(b []byte) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		delete(m["verificationMaterial"].(map[string]any), "tlogEntries")
		return m
	}
	a, _ := json.Marshal(strip(ex.Bundle))
	b, _ := json.Marshal(strip(plain.Bundle))
	if !bytes.Equal(a, b) || !bytes.Equal(ex.Artifact, plain.Artifact) || ex.KeyID != plain.KeyID {
		t.Errorf("the bundle with the receipt differs from ExportBundle's outside tlogEntries:\n%s\n%s", a, b)
	}
	if n := len(tlogEntries(t, plain.Bundle)); n != 0 {
		t.Errorf("ExportBundle wrote %d tlog entries, want none", n)
	}
}

// TestExportWithReceiptRefuses: a receipt that does not prove this VPEC is
// in a log of the trust bundle is refused with ErrReceipt and the tlog
// sentinel of the failed check; nothing is exported.
func TestExportWithReceiptRefuses(t *testing.T) {
	lg := logVectors(t, "sigbundle", "valid/with-gaps.json", "valid/clean.json")
	other := logVectors(t, "other", "valid/clean.json") // same origin, another key
	doc := readVector(t, "valid/clean.json")
	good := lg.receipts["valid/clean.json"]
	r, err := tlog.ParseReceipt(good)
	if err != nil {
		t.Fatal(err)
	}
	r.InclusionProof[0][0] ^= 1
	flipped, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		doc     []byte
		receipt []byte
		trust   *signing.Bundle
		want    []error
	}{
		{"receipt of another VPEC", doc, lg.receipts["valid/with-gaps.json"], trustWithLog(t, lg.log.Key()), []error{sigstore.ErrReceipt, tlog.ErrWrongVPEC}},
		{"trust bundle without a log key", doc, good, trustBundle(t), []error{sigstore.ErrReceipt, tlog.ErrWrongLog}},
		{"another key of the same origin", doc, good, trustWithLog(t, other.log.Key()), []error{sigstore.ErrReceipt, tlog.ErrLogSignature}},
		{"another log's receipt", doc, other.receipts["valid/clean.json"], trustWithLog(t, lg.log.Key()), []error{sigstore.ErrReceipt, tlog.ErrLogSignature}},
		{"not a receipt", doc, []byte(`{"schema":"svc.tlog.receipt/v1"}`), trustWithLog(t, lg.log.Key()), []error{sigstore.ErrReceipt, tlog.ErrMalformed}},
		{"a proof hash changed", doc, flipped, trustWithLog(t, lg.log.Key()), []error{sigstore.ErrReceipt, tlog.ErrInclusion}},
		{"not a VPEC", []byte("{}"), good, trustWithLog(t, lg.log.Key()), []error{sigstore.ErrNotVPEC}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex, err := sigstore.ExportWithReceipt(c.doc, c.receipt, c.trust)
			if ex != nil || err == nil {
				t.Fatalf("exported: %v", err)
			}
			for _, w := range c.want {
				if !errors.Is(err, w) {
					t.Errorf("err = %v, want %v", err, w)
				}
			}
			t.Logf("refused: %v", err)
		})
	}
}

// TestTrustedRootLogs: the trusted root lists each log key of the trust
// bundle as a tlog: https://<origin>, SHA2_256, its Ed25519 key (PKIX
// DER, PKIX_ED25519) valid from the trust root's valid_from (the epoch for
// a key without one), logId LogID; a bundle without log keys lists none.
func TestTrustedRootLogs(t *testing.T) {
	k := tlogtest.LogKey(t, "sigbundle")
	from := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	until := time.Date(2027, 3, 1, 0, 0, 0, 0, time.UTC)
	dated, err := trustroot.ConvertBundle(trustBundle(t), from, from)
	if err != nil {
		t.Fatal(err)
	}
	dated, err = trustroot.AddKeys(dated, from, trustroot.NewKey{Purpose: trustroot.PurposeLog, PublicKey: k.PublicKey(), NoteName: k.Origin(), From: from, Until: until})
	if err != nil {
		t.Fatal(err)
	}
	// The trust root's bundle, with the log keys LogKeysOf adds back.
	datedTrust := verify.TrustFor(dated)
	if err := sigstore.LogKeysOf(datedTrust, dated); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		trust *signing.Bundle
		root  *trustroot.Root
		want  int
		start string
		end   string
	}{
		{"no log key", trustBundle(t), nil, 0, "", ""},
		{"one log key", trustWithLog(t, k), nil, 1, sigstore.LogKeyValidFrom, ""},
		{"a PEM bundle's root: valid forever", trustWithLog(t, k), trustroot.FromBundle(trustWithLog(t, k)), 1, sigstore.LogKeyValidFrom, ""},
		{"a trust root: valid_from and valid_until", datedTrust, dated, 1, "2026-03-01T00:00:00Z", "2027-03-01T00:00:00Z"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr, err := sigstore.TrustedRootFor(c.trust, c.root)
			if err != nil {
				t.Fatal(err)
			}
			var root struct {
				Tlogs []struct {
					BaseURL       string `json:"baseUrl"`
					HashAlgorithm string `json:"hashAlgorithm"`
					PublicKey     struct {
						RawBytes   []byte `json:"rawBytes"`
						KeyDetails string `json:"keyDetails"`
						ValidFor   struct{ Start, End string }
					} `json:"publicKey"`
					LogID struct{ KeyID []byte } `json:"logId"`
				} `json:"tlogs"`
				TimestampAuthorities []json.RawMessage `json:"timestampAuthorities"`
			}
			if err := json.Unmarshal(tr, &root); err != nil {
				t.Fatal(err)
			}
			if len(root.Tlogs) != c.want || len(root.TimestampAuthorities) == 0 {
				t.Fatalf("%d tlogs and %d timestamp authorities, want %d and some", len(root.Tlogs), len(root.TimestampAuthorities), c.want)
			}
			if c.want == 0 {
				return
			}
			l := root.Tlogs[0]
			pub, err := x509.ParsePKIXPublicKey(l.PublicKey.RawBytes)
			if err != nil {
				t.Fatal(err)
			}
			id := sigstore.LogID(k)
			if l.BaseURL != "https://"+tlogtest.Origin || l.HashAlgorithm != "SHA2_256" || l.PublicKey.KeyDetails != "PKIX_ED25519" ||
				l.PublicKey.ValidFor.Start != c.start || l.PublicKey.ValidFor.End != c.end || !bytes.Equal(l.LogID.KeyID, id[:]) ||
				!k.PublicKey().Equal(pub.(ed25519.PublicKey)) {
				t.Errorf("tlog %+v", l)
			}
		})
	}
}

// FuzzExportWithReceipt: the receipt is untrusted input. Export never
// panics, refuses with ErrReceipt, and carries only a receipt that
// verifies: then the bundle's canonicalizedBody is the leaf of this VPEC.
func FuzzExportWithReceipt(f *testing.F) {
	lg := logVectors(f, "sigbundle", "valid/with-gaps.json", "valid/clean.json")
	doc := readVector(f, "valid/clean.json")
	trust := trustWithLog(f, lg.log.Key())
	for _, r := range lg.receipts {
		f.Add(r)
	}
	f.Add([]byte(`{"schema":"svc.tlog.receipt/v1"}`))
	f.Add([]byte(`null`))
	signed, err := vpec.SignedBytes(doc)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, receipt []byte) {
		ex, err := sigstore.ExportWithReceipt(doc, receipt, trust)
		if err != nil {
			if !errors.Is(err, sigstore.ErrReceipt) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		es := tlogEntries(t, ex.Bundle)
		if len(es) != 1 {
			t.Fatalf("%d tlog entries", len(es))
		}
		var body []byte
		if err := json.Unmarshal(es[0]["canonicalizedBody"], &body); err != nil {
			t.Fatal(err)
		}
		leaf, err := tlog.ParseLeaf(body)
		if err != nil || leaf.Digest != tlog.Digest(signed) || leaf.VPECID != "vpec_00000000-0000-4000-8000-00000000c1ea" {
			t.Fatalf("exported a leaf that is not this VPEC's (%v): %q", err, body)
		}
	})
}
