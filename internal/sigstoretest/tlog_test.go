package sigstoretest_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cyberphone/json-canonicalization/go/src/webpki.org/jsoncanonicalizer"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	rekortilespb "github.com/sigstore/rekor-tiles/v2/pkg/generated/protobuf"
	rnote "github.com/sigstore/rekor-tiles/v2/pkg/note"
	rverify "github.com/sigstore/rekor-tiles/v2/pkg/verify"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgtlog "github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore-go/pkg/verify"
	sigsig "github.com/sigstore/sigstore/pkg/signature"
	"github.com/transparency-dev/merkle/rfc6962"
	"github.com/transparency-dev/merkle/testonly"
	"golang.org/x/mod/sumdb/note"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/svc-gov/svc/internal/svctest"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// logged is a VPEC a real service sealed and logged, with its receipt
// and the trust material a verifier is given.
type logged struct {
	doc, receipt []byte
	trust        *signing.Bundle // the service's trust bundle and log key
	logKey       tlog.LogKey
}

// closeLogged starts a service in process (SQLite, on 127.0.0.1) that
// logs every VPEC in a real Tessera log, closes two runs through the Go
// client and fetches the second VPEC's receipt from GET /api/v1/vpecs/{id}/receipt.
func closeLogged(t *testing.T) logged {
	t.Helper()
	withLog, l := svctest.WithLog(t)
	s := svctest.New(t, nil, withLog)
	p := s.Pipeline(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Two runs, the first in the log before the second closes (a close
	// answers before its leaf is appended, and leaves of one batch are
	// in no set order): the second VPEC's inclusion proof has a hash.
	var res *client.VPECResult
	var receipt []byte
	for range 2 {
		run, err := p.Open(ctx, "pp_2026q4")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := run.Record(ctx, "pii_scan", "sha256:"+hex.EncodeToString(make([]byte, 32)), vpec.ResultPass, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if res, err = run.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if receipt, err = p.GetReceipt(ctx, res.VPEC.VPECID, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	// A copy of the service's trust bundle, with the log's key (as the
	// trust bundle svc serve publishes holds it).
	trust, err := signing.ParseBundle(s.Material.Trust.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	trust.AddLogKey(l.Key())
	return logged{doc: res.Raw, receipt: receipt, trust: trust, logKey: l.Key()}
}

// protoEntry reads an exported bundle's tlog entry with the Sigstore
// protobuf definitions (protojson refuses unknown members and wrong
// types), without sigstore-go's validation.
func protoEntry(t *testing.T, b []byte) *protorekor.TransparencyLogEntry {
	t.Helper()
	var pb protobundle.Bundle
	if err := protojson.Unmarshal(b, &pb); err != nil {
		t.Fatalf("the bundle is not a Sigstore bundle message: %v", err)
	}
	es := pb.GetVerificationMaterial().GetTlogEntries()
	if len(es) != 1 {
		t.Fatalf("%d tlog entries, want 1", len(es))
	}
	return es[0]
}

// noteVerifier is the checkpoint verifier Sigstore builds for a Rekor v2
// log (rekor-tiles pkg/note), from the trusted root's key of the log.
func noteVerifier(t *testing.T, tr *root.TrustedRoot, origin string, keyID []byte) note.Verifier {
	t.Helper()
	l, ok := tr.RekorLogs()[hex.EncodeToString(keyID)]
	if !ok {
		t.Fatalf("the trusted root has no tlog with key id %x", keyID)
	}
	v, err := sigsig.LoadED25519Verifier(l.PublicKey.(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	nv, err := rnote.NewNoteVerifier(origin, v)
	if err != nil {
		t.Fatal(err)
	}
	return nv
}

// TestLoggedBundleWithSigstore: a VPEC a real service logged, exported
// with its receipt. Sigstore's own code agrees with every member of the
// entry: the trusted root's tlog parses with the log's key under the
// log id rekor-tiles computes, and rekor-tiles' Rekor v2 entry check
// (checkpoint signature by the log key under its origin, inclusion of
// SHA-256(0x00 || canonicalizedBody) at logIndex) passes, and fails when a
// proof hash or the checkpoint changes. But sigstore-go refuses the bundle
// as a whole: it parses canonicalizedBody as a Rekor entry, and svc's leaf
// is not one (docs/FORMATS.md, "Sigstore bundle"). Without the entry the
// same bundle verifies, and requiring a log entry then fails on the count.
func TestLoggedBundleWithSigstore(t *testing.T) {
	lg := closeLogged(t)
	ex, err := sigstore.ExportWithReceipt(lg.doc, lg.receipt, lg.trust)
	if err != nil {
		t.Fatal(err)
	}
	trJSON, err := sigstore.TrustedRoot(lg.trust)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := root.NewTrustedRootFromJSON(trJSON)
	if err != nil {
		t.Fatalf("sigstore-go refuses the trusted root: %v", err)
	}
	// The log id, by rekor-tiles' implementation.
	hash, id, err := rnote.KeyHash(lg.logKey.Origin(), lg.logKey.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	if want := sigstore.LogID(lg.logKey); !bytes.Equal(id, want[:]) || hash != lg.logKey.Verifier().KeyHash() {
		t.Fatalf("rekor-tiles' log id %x (key hash %08x), svc's %x (%08x)", id, hash, want, lg.logKey.Verifier().KeyHash())
	}
	tle := protoEntry(t, ex.Bundle)
	if !bytes.Equal(tle.GetLogId().GetKeyId(), id) {
		t.Fatalf("entry logId %x, want %x", tle.GetLogId().GetKeyId(), id)
	}
	nv := noteVerifier(t, tr, lg.logKey.Origin(), id)
	if err := rverify.VerifyLogEntry(tle, nv); err != nil {
		t.Fatalf("rekor-tiles VerifyLogEntry: %v", err)
	}
	// The same check fails when the entry is tampered with.
	for name, edit := range map[string]func(e *protorekor.TransparencyLogEntry){
		"a proof hash flipped": func(e *protorekor.TransparencyLogEntry) { e.InclusionProof.Hashes[0][0] ^= 1 },
		"another leaf":         func(e *protorekor.TransparencyLogEntry) { e.CanonicalizedBody[len(e.CanonicalizedBody)-2] ^= 1 },
		"another index":        func(e *protorekor.TransparencyLogEntry) { e.LogIndex++ },
		"checkpoint size changed": func(e *protorekor.TransparencyLogEntry) {
			cp := e.InclusionProof.Checkpoint.Envelope
			e.InclusionProof.Checkpoint.Envelope = cp[:len(lg.logKey.Origin())+1] + "9" + cp[len(lg.logKey.Origin())+1:]
		},
	} {
		e := protoEntry(t, ex.Bundle)
		if len(e.InclusionProof.Hashes) == 0 {
			t.Fatal("a proof with no hashes: the log holds one entry")
		}
		edit(e)
		if err := rverify.VerifyLogEntry(e, nv); err == nil {
			t.Errorf("%s: rekor-tiles verified it", name)
		}
	}

	// sigstore-go: the entry is not a Rekor entry, so the bundle is not a
	// valid bundle, tlog required or not.
	if _, err := sgtlog.ParseTransparencyLogEntry(tle); err == nil {
		t.Fatal("sigstore-go parsed svc's leaf as a Rekor entry: the leaf can now be verified by sigstore-go; update docs/FORMATS.md and this test")
	} else {
		t.Logf("sigstore-go tlog.ParseTransparencyLogEntry: %v", err)
	}
	var b bundle.Bundle
	err = b.UnmarshalJSON(ex.Bundle)
	if !errors.Is(err, bundle.ErrValidation) {
		t.Fatalf("sigstore-go on the bundle with the entry: %v, want bundle.ErrValidation", err)
	}
	t.Logf("sigstore-go bundle.UnmarshalJSON: %v", err)

	// Without the entry: the bundle verifies, with svc's log in the
	// trusted root; requiring a log entry fails on the count.
	plain, err := sigstore.ExportBundle(lg.doc)
	if err != nil {
		t.Fatal(err)
	}
	keys := keysOf(t, lg.trust)
	if _, err := sigstoreVerify(t, plain.Bundle, plain.Artifact, trJSON, keys); err != nil {
		t.Fatalf("sigstore-go, bundle without the entry: %v", err)
	}
	if _, err := sigstoreVerifyOpts(t, plain.Bundle, plain.Artifact, trJSON, keys, verify.WithTransparencyLog(1)); err == nil {
		t.Fatal("sigstore-go verified a bundle without a log entry under WithTransparencyLog(1)")
	} else {
		t.Logf("sigstore-go WithTransparencyLog(1), no entry: %v", err)
	}
}

// TestRekorLeafCounterfactual pins what sigstore-go's Rekor v2 path
// (VerifyTlogEntry) requires of a log, with a log built here, in memory,
// whose leaf is what that path hashes: the Rekor v2 hashedrekord v0.0.2
// entry it reconstructs from the bundle (for an Ed25519 key it writes
// keyDetails PKIX_ED25519_PH and data algorithm SHA2_512 around the
// bundle's SHA-256 digest, an entry Rekor v2 itself would refuse for a
// pure Ed25519 signature). With that leaf, svc's other members (logId,
// trusted root tlog, checkpoint signed by an svc log key) verify under
// WithTransparencyLog(1), provided the log's origin is the host name of
// the tlog's baseUrl (sigstore-go names the checkpoint verifier so); with
// svc's leaf at the same index the inclusion check fails; with an origin
// holding a path the checkpoint check fails.
func TestRekorLeafCounterfactual(t *testing.T) {
	f := load(t)
	doc := f.clean(t)
	plain, err := sigstore.ExportBundle(doc)
	if err != nil {
		t.Fatal(err)
	}
	var hdr struct {
		SigningKeyID string `json:"signing_key_id"`
		Signature    string `json:"signature"`
	}
	if err := json.Unmarshal(doc, &hdr); err != nil {
		t.Fatal(err)
	}
	sig, err := signing.ParseSignature(hdr.Signature)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := f.trust.Key(hdr.SigningKeyID)
	if err != nil {
		t.Fatal(err)
	}
	rekorBody := hashedRekordV002(t, pub, sig, sha256.Sum256(plain.Artifact))
	svcLeaf := []byte(tlog.LeafSchema + "\n") // any bytes other than the Rekor entry

	_, logPriv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, origin string
		leaf         []byte
		kind         *protorekor.KindVersion
		ok           bool
	}{
		{"Rekor leaf, host-name origin", "log.svc.test", rekorBody, &protorekor.KindVersion{Kind: "hashedrekord", Version: "0.0.2"}, true},
		{"svc leaf in the log, Rekor body in the bundle", "log.svc.test", svcLeaf, &protorekor.KindVersion{Kind: "hashedrekord", Version: "0.0.2"}, false},
		{"Rekor leaf, origin with a path", "svc.test/log", rekorBody, &protorekor.KindVersion{Kind: "hashedrekord", Version: "0.0.2"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, err := tlog.NewLogKey(c.origin, logPriv.Public().(ed25519.PublicKey))
			if err != nil {
				t.Fatal(err)
			}
			signer, err := tlog.NewNoteSigner(c.origin, logPriv)
			if err != nil {
				t.Fatal(err)
			}
			// The log: another entry, then the leaf at index 1.
			tree := testonly.New(rfc6962.DefaultHasher)
			tree.AppendData([]byte("another entry\n"), c.leaf)
			proof, err := tree.InclusionProof(1, 2)
			if err != nil {
				t.Fatal(err)
			}
			cp, err := note.Sign(&note.Note{Text: fmt.Sprintf("%s\n2\n%s\n", c.origin, base64.StdEncoding.EncodeToString(tree.Hash()))}, signer)
			if err != nil {
				t.Fatal(err)
			}
			id := sigstore.LogID(key)
			entry := &protorekor.TransparencyLogEntry{
				LogIndex:    1,
				LogId:       &protocommon.LogId{KeyId: id[:]},
				KindVersion: c.kind,
				InclusionProof: &protorekor.InclusionProof{LogIndex: 1, RootHash: tree.Hash(), TreeSize: 2, Hashes: proof,
					Checkpoint: &protorekor.Checkpoint{Envelope: string(cp)}},
				CanonicalizedBody: rekorBody,
			}
			withEntry := withTlogEntry(t, plain.Bundle, entry)
			trust, err := signing.ParseBundle(f.trust.Marshal())
			if err != nil {
				t.Fatal(err)
			}
			trust.AddLogKey(key)
			tr, err := sigstore.TrustedRoot(trust)
			if err != nil {
				t.Fatal(err)
			}
			_, err = sigstoreVerifyOpts(t, withEntry, plain.Artifact, tr, keysOf(t, f.trust), verify.WithTransparencyLog(1))
			if c.ok && err != nil {
				t.Fatalf("sigstore-go: %v", err)
			}
			if !c.ok {
				if err == nil {
					t.Fatal("sigstore-go verified it")
				}
				t.Logf("sigstore-go: %v", err)
			}
		})
	}
}

// hashedRekordV002 is the canonical JSON of the Rekor v2 hashedrekord
// v0.0.2 entry sigstore-go v1.3.0 reconstructs for an Ed25519 key
// (verify.reconstructV2EntryHash, rekor-tiles hashedrekord.ToEntryHash).
func hashedRekordV002(t *testing.T, pub ed25519.PublicKey, sig []byte, digest [32]byte) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	e := &rekortilespb.Entry{Kind: "hashedrekord", ApiVersion: "0.0.2", Spec: &rekortilespb.Spec{Spec: &rekortilespb.Spec_HashedRekordV002{
		HashedRekordV002: &rekortilespb.HashedRekordLogEntryV002{
			Data: &protocommon.HashOutput{Digest: digest[:], Algorithm: protocommon.HashAlgorithm_SHA2_512},
			Signature: &rekortilespb.Signature{Content: sig, Verifier: &rekortilespb.Verifier{
				Verifier:   &rekortilespb.Verifier_PublicKey{PublicKey: &rekortilespb.PublicKey{RawBytes: der}},
				KeyDetails: protocommon.PublicKeyDetails_PKIX_ED25519_PH,
			}},
		},
	}}}
	j, err := protojson.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	c, err := jsoncanonicalizer.Transform(j)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// withTlogEntry returns the bundle with e as its one tlog entry.
func withTlogEntry(t *testing.T, b []byte, e *protorekor.TransparencyLogEntry) []byte {
	t.Helper()
	var pb protobundle.Bundle
	if err := protojson.Unmarshal(b, &pb); err != nil {
		t.Fatal(err)
	}
	pb.VerificationMaterial.TlogEntries = []*protorekor.TransparencyLogEntry{e}
	out, err := protojson.Marshal(&pb)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoggedBundleWithCosign: cosign v2.6.5 (on sigstore-go v1.1.4; make
// interop puts it on PATH; --new-bundle-format, else a bundle cosign cannot
// parse is read as the old format) with svc's log in the trusted root. Without
// --insecure-ignore-tlog it refuses the bundle without an entry (no log
// entry) and the bundle with svc's entry (not a Rekor entry: refused at
// parse, so also with --insecure-ignore-tlog); the bundle without the
// entry verifies with --insecure-ignore-tlog, the trusted root's tlog
// changing nothing.
func TestLoggedBundleWithCosign(t *testing.T) {
	cosign, err := exec.LookPath("cosign")
	if err != nil {
		t.Skip("cosign is not on PATH: make interop installs it (scripts/install-cosign.sh)")
	}
	lg := closeLogged(t)
	logged, err := sigstore.ExportWithReceipt(lg.doc, lg.receipt, lg.trust)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := sigstore.ExportBundle(lg.doc)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := sigstore.PublicKeyPEM(lg.trust, plain.KeyID)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"vpec.signed.json": plain.Artifact, "plain.sigstore.json": plain.Bundle, "logged.sigstore.json": logged.Bundle,
		"service.pub": pub, "trusted_root.json": trustedRoot(t, lg.trust),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		bundle     string
		ignoreTlog bool
		want       string // what cosign prints: the reason it gives
	}{
		{"plain.sigstore.json", true, "Verified OK"},
		{"plain.sigstore.json", false, "not enough verified log entries from transparency log: 0 < 1"},
		{"logged.sigstore.json", false, "entry body is not a recognizable Rekor v1 or Rekor v2 type"},
		{"logged.sigstore.json", true, "entry body is not a recognizable Rekor v1 or Rekor v2 type"},
	} {
		args := []string{"verify-blob", "vpec.signed.json", "--bundle", c.bundle, "--key", "service.pub",
			"--trusted-root", "trusted_root.json", "--use-signed-timestamps", "--new-bundle-format"}
		if c.ignoreTlog {
			args = append(args, "--insecure-ignore-tlog")
		}
		cmd := exec.Command(cosign, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		t.Logf("cosign %s (--insecure-ignore-tlog %v): %v\n%s", c.bundle, c.ignoreTlog, err, out)
		if ok := c.want == "Verified OK"; (err == nil) != ok || !bytes.Contains(out, []byte(c.want)) {
			t.Errorf("cosign %s, --insecure-ignore-tlog %v: verified %v, want %v saying %q", c.bundle, c.ignoreTlog, err == nil, ok, c.want)
		}
	}
}
