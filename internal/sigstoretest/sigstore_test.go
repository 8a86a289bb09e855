package sigstoretest_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	sigsig "github.com/sigstore/sigstore/pkg/signature"

	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	svcverify "github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

const vectorsDir = "../../testdata/vectors"

// fixture is the test vectors' trust bundle and valid VPECs.
type fixture struct {
	trust *signing.Bundle
	vpecs map[string][]byte // file name -> document
}

func load(t testing.TB) fixture {
	t.Helper()
	m, err := testvectors.Load(vectorsDir)
	if err != nil {
		t.Fatal(err)
	}
	trust, err := signing.LoadBundle(filepath.Join(vectorsDir, m.TrustBundle))
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{trust: trust, vpecs: map[string][]byte{}}
	for _, v := range m.Vectors {
		if v.Kind == "vpec" && v.Valid {
			doc, err := os.ReadFile(filepath.Join(vectorsDir, v.File))
			if err != nil {
				t.Fatal(err)
			}
			f.vpecs[v.Name] = doc
		}
	}
	if len(f.vpecs) == 0 {
		t.Fatal("no valid VPEC vectors")
	}
	return f
}

func (f fixture) clean(t testing.TB) []byte {
	t.Helper()
	doc, ok := f.vpecs["clean"]
	if !ok {
		t.Fatal("no vector named clean")
	}
	return doc
}

// sigstoreVerify verifies a bundle and its artifact with sigstore-go: the
// trusted root (timestamp authorities) from trustedRoot, the service keys
// of trust looked up by the bundle's key hint, one signed timestamp
// required, no transparency log.
func sigstoreVerify(t testing.TB, bundleJSON, artifact, trustedRoot []byte, trust map[string]ed25519.PublicKey) (*verify.VerificationResult, error) {
	t.Helper()
	return sigstoreVerifyOpts(t, bundleJSON, artifact, trustedRoot, trust)
}

// sigstoreVerifyOpts is sigstoreVerify with more verifier options (a
// transparency log entry required).
func sigstoreVerifyOpts(t testing.TB, bundleJSON, artifact, trustedRoot []byte, trust map[string]ed25519.PublicKey, opts ...verify.VerifierOption) (*verify.VerificationResult, error) {
	t.Helper()
	var b bundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		return nil, err
	}
	tr, err := root.NewTrustedRootFromJSON(trustedRoot)
	if err != nil {
		t.Fatalf("sigstore-go refuses the trusted root: %v", err)
	}
	keys := map[string]*root.ExpiringKey{}
	for id, pub := range trust {
		v, err := sigsig.LoadED25519Verifier(pub)
		if err != nil {
			t.Fatal(err)
		}
		keys[id] = root.NewExpiringKey(v, time.Time{}, time.Time{})
	}
	tm := root.TrustedMaterialCollection{tr, root.NewTrustedPublicKeyMaterialFromMapping(keys)}
	v, err := verify.NewVerifier(tm, append([]verify.VerifierOption{verify.WithSignedTimestamps(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return v.Verify(&b, verify.NewPolicy(verify.WithArtifact(bytes.NewReader(artifact)), verify.WithKey()))
}

// keysOf returns the service keys of a trust bundle by key id.
func keysOf(t testing.TB, trust *signing.Bundle) map[string]ed25519.PublicKey {
	t.Helper()
	keys := map[string]ed25519.PublicKey{}
	for _, id := range trust.KeyIDs() {
		pub, err := trust.Key(id)
		if err != nil {
			t.Fatal(err)
		}
		keys[id] = pub
	}
	return keys
}

func trustedRoot(t testing.TB, trust *signing.Bundle) []byte {
	t.Helper()
	tr, err := sigstore.TrustedRoot(trust)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestExportVerifiesWithSigstoreGo: every valid test vector, exported,
// verifies with sigstore-go against the trusted root built from the
// vectors' trust bundle, and the verified time is the VPEC's timestamp.
func TestExportVerifiesWithSigstoreGo(t *testing.T) {
	f := load(t)
	tr := trustedRoot(t, f.trust)
	for name, doc := range f.vpecs {
		t.Run(name, func(t *testing.T) {
			ex, err := sigstore.ExportBundle(doc)
			if err != nil {
				t.Fatal(err)
			}
			want, err := vpec.SignedBytes(doc)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(ex.Artifact, want) {
				t.Fatal("artifact is not the VPEC signed bytes")
			}
			var v struct {
				SigningKeyID string `json:"signing_key_id"`
				IssuedAt     string `json:"issued_at"`
			}
			if err := json.Unmarshal(doc, &v); err != nil {
				t.Fatal(err)
			}
			if ex.KeyID != v.SigningKeyID {
				t.Errorf("KeyID %q, want %q", ex.KeyID, v.SigningKeyID)
			}
			res, err := sigstoreVerify(t, ex.Bundle, ex.Artifact, tr, keysOf(t, f.trust))
			if err != nil {
				t.Fatalf("sigstore-go: %v\n%s", err, ex.Bundle)
			}
			if len(res.VerifiedTimestamps) != 1 || res.VerifiedTimestamps[0].Type != "TimestampAuthority" {
				t.Fatalf("verified timestamps %+v, want one from a timestamp authority", res.VerifiedTimestamps)
			}
			issued, err := time.Parse(time.RFC3339, v.IssuedAt)
			if err != nil {
				t.Fatal(err)
			}
			if d := res.VerifiedTimestamps[0].Timestamp.Sub(issued).Abs(); d > svcverify.MaxTimestampSkew {
				t.Errorf("timestamp %v is %v from issued_at %v", res.VerifiedTimestamps[0].Timestamp, d, issued)
			}
		})
	}
}

// editBundle decodes an exported bundle, applies edit and re-encodes it.
func editBundle(t testing.TB, b []byte, edit func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func member(m map[string]any, path ...string) map[string]any {
	for _, p := range path {
		m = m[p].(map[string]any)
	}
	return m
}

func flipB64(t testing.TB, s any) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s.(string))
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)/2] ^= 1
	return base64.StdEncoding.EncodeToString(raw)
}

// TestTamperingFailsWithSigstoreGo: every change to the artifact, the
// bundle or the trust material makes sigstore-go refuse the bundle.
func TestTamperingFailsWithSigstoreGo(t *testing.T) {
	f := load(t)
	doc := f.clean(t)
	ex, err := sigstore.ExportBundle(doc)
	if err != nil {
		t.Fatal(err)
	}
	tr := trustedRoot(t, f.trust)
	// A timestamp over another VPEC's signature, by the same trusted TSA.
	var other []byte
	for _, d := range f.vpecs {
		if !bytes.Equal(d, doc) {
			o, err := sigstore.ExportBundle(d)
			if err != nil {
				t.Fatal(err)
			}
			other = o.Bundle
			break
		}
	}
	if other == nil {
		t.Fatal("need two valid VPECs")
	}
	var otherTS any
	editBundle(t, other, func(m map[string]any) {
		otherTS = member(m, "verificationMaterial", "timestampVerificationData")["rfc3161Timestamps"]
	})
	otherRoot := signing.NewBundle()
	otherRoot.AddRoot(mustCert(t, filepath.Join(vectorsDir, "keys", "TEST-ONLY-other-tsa", "root.pem")))
	otherKey := signing.NewBundle()
	otherPub := mustKey(t, filepath.Join(vectorsDir, "keys", "TEST-ONLY-other-key.pem"))
	otherKeyID := otherKey.AddKey(otherPub)

	tampered := replaceOnce(t, ex.Artifact, `"is_clean":true`, `"is_clean":false`)
	cases := []struct {
		name        string
		bundle, art []byte
		root        []byte
		keys        map[string]ed25519.PublicKey
	}{
		{name: "artifact changed", art: tampered},
		{name: "artifact with a trailing newline", art: append(append([]byte{}, ex.Artifact...), '\n')},
		{name: "artifact empty", art: []byte{}},
		{name: "signature flipped", bundle: editBundle(t, ex.Bundle, func(m map[string]any) {
			ms := member(m, "messageSignature")
			ms["signature"] = flipB64(t, ms["signature"])
		})},
		{name: "digest flipped", bundle: editBundle(t, ex.Bundle, func(m map[string]any) {
			d := member(m, "messageSignature", "messageDigest")
			d["digest"] = flipB64(t, d["digest"])
		})},
		{name: "timestamp of another signature", bundle: editBundle(t, ex.Bundle, func(m map[string]any) {
			member(m, "verificationMaterial", "timestampVerificationData")["rfc3161Timestamps"] = otherTS
		})},
		{name: "timestamp removed", bundle: editBundle(t, ex.Bundle, func(m map[string]any) {
			member(m, "verificationMaterial", "timestampVerificationData")["rfc3161Timestamps"] = []any{}
		})},
		{name: "timestamp bytes flipped", bundle: editBundle(t, ex.Bundle, func(m map[string]any) {
			ts := member(m, "verificationMaterial", "timestampVerificationData")["rfc3161Timestamps"].([]any)[0].(map[string]any)
			ts["signedTimestamp"] = flipB64(t, ts["signedTimestamp"])
		})},
		{name: "hint names a key the verifier does not hold", bundle: editBundle(t, ex.Bundle, func(m map[string]any) {
			member(m, "verificationMaterial", "publicKey")["hint"] = otherKeyID
		})},
		{name: "another key under the service key's id", keys: map[string]ed25519.PublicKey{ex.KeyID: otherPub}},
		{name: "timestamp authority not trusted", root: trustedRoot(t, otherRoot)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, art, r, keys := ex.Bundle, ex.Artifact, tr, keysOf(t, f.trust)
			if c.bundle != nil {
				b = c.bundle
			}
			if c.art != nil {
				art = c.art
			}
			if c.root != nil {
				r = c.root
			}
			if c.keys != nil {
				keys = c.keys
			}
			if _, err := sigstoreVerify(t, b, art, r, keys); err == nil {
				t.Fatal("sigstore-go verified a tampered bundle")
			} else {
				t.Logf("refused: %v", err)
			}
		})
	}
}

func mustCert(t testing.TB, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("%s: no CERTIFICATE block", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

func mustKey(t testing.TB, path string) ed25519.PublicKey {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := signing.ParsePrivateKeyPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	return priv.Public().(ed25519.PublicKey)
}

func TestExportRefusesWhatIsNotAVPEC(t *testing.T) {
	f := load(t)
	doc := f.clean(t)
	cases := map[string][]byte{
		"empty":              {},
		"not JSON":           []byte("not json"),
		"array":              []byte("[]"),
		"duplicate key":      append([]byte(`{"schema":"x",`), doc[1:]...),
		"missing member":     replaceOnce(t, doc, `"is_clean"`, `"is_dirty"`),
		"bad signature form": replaceOnce(t, doc, `"signature": "Ed25519:`, `"signature": "Ed448:`),
		"null gaps":          replaceOnce(t, doc, `"gaps": []`, `"gaps": null`),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := sigstore.ExportBundle(in)
			if !errors.Is(err, sigstore.ErrNotVPEC) {
				t.Fatalf("err = %v, want ErrNotVPEC", err)
			}
			if testing.Verbose() {
				t.Logf("refused: %v", err)
			}
		})
	}
}

// replaceOnce replaces the one occurrence of old in doc, failing the test
// when there is none: a tampering case must change something.
func replaceOnce(t testing.TB, doc []byte, old, new string) []byte {
	t.Helper()
	if n := bytes.Count(doc, []byte(old)); n != 1 {
		t.Fatalf("%q occurs %d times, want once", old, n)
	}
	return bytes.Replace(doc, []byte(old), []byte(new), 1)
}

// TestBareTokenIsWrapped: a VPEC whose timestamp_rfc3161 holds a bare
// TimeStampToken (which svc's verifier accepts; it lies outside the signed
// bytes) exports as a granted TimeStampResp around the same token, and
// sigstore-go verifies it.
func TestBareTokenIsWrapped(t *testing.T) {
	f := load(t)
	doc := f.clean(t)
	var v struct {
		TS string `json:"timestamp_rfc3161"`
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	resp, err := base64.StdEncoding.DecodeString(v.TS)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Status asn1.RawValue
		Token  asn1.RawValue
	}
	if _, err := asn1.Unmarshal(resp, &r); err != nil {
		t.Fatal(err)
	}
	bare := replaceOnce(t, doc, v.TS, base64.StdEncoding.EncodeToString(r.Token.FullBytes))
	if rep, err := svcverify.Verify(bare, svcverify.Options{Trust: f.trust}); err != nil || !rep.Valid {
		t.Fatalf("svc does not accept the VPEC with a bare token: %s", rep.Verdict)
	}
	ex, err := sigstore.ExportBundle(bare)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sigstoreVerify(t, ex.Bundle, ex.Artifact, trustedRoot(t, f.trust), keysOf(t, f.trust)); err != nil {
		t.Fatalf("sigstore-go: %v", err)
	}
}

// TestPinnedTSACertificate: a trust bundle may pin the TSA certificate
// itself rather than its root; the trusted root lists it as leaf and root,
// and sigstore-go verifies with it.
func TestPinnedTSACertificate(t *testing.T) {
	f := load(t)
	pinned := signing.NewBundle()
	pinned.AddRoot(mustCert(t, filepath.Join(vectorsDir, "keys", "TEST-ONLY-tsa", "tsa.pem")))
	ex, err := sigstore.ExportBundle(f.clean(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sigstoreVerify(t, ex.Bundle, ex.Artifact, trustedRoot(t, pinned), keysOf(t, f.trust)); err != nil {
		t.Fatalf("sigstore-go: %v", err)
	}
}
