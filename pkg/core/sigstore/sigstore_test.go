package sigstore_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/asn1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// The tests that verify exports with sigstore-go live in the module
// internal/sigstoretest; these check the mapping itself.

const vectorsDir = "../../../testdata/vectors"

func readVector(t testing.TB, name string) []byte {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(vectorsDir, "vpec", name))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func trustBundle(t testing.TB) *signing.Bundle {
	t.Helper()
	b, err := signing.LoadBundle(filepath.Join(vectorsDir, "keys", "trust-bundle.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBundleFields: the bundle carries exactly the VPEC's signature, the
// SHA-256 of the signed bytes, the key id as hint and the RFC 3161
// response byte for byte.
func TestBundleFields(t *testing.T) {
	doc := readVector(t, "valid/clean.json")
	ex, err := sigstore.ExportBundle(doc)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		SigningKeyID string `json:"signing_key_id"`
		Signature    string `json:"signature"`
		TS           string `json:"timestamp_rfc3161"`
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	var b struct {
		MediaType            string
		VerificationMaterial struct {
			PublicKey                 struct{ Hint string }
			TlogEntries               []any
			TimestampVerificationData struct {
				RFC3161Timestamps []struct{ SignedTimestamp string }
			}
		}
		MessageSignature struct {
			MessageDigest struct{ Algorithm, Digest string }
			Signature     string
		}
	}
	if err := json.Unmarshal(ex.Bundle, &b); err != nil {
		t.Fatal(err)
	}
	signed, err := vpec.SignedBytes(doc)
	if err != nil {
		t.Fatal(err)
	}
	digest := sha256.Sum256(signed)
	vm, ms := b.VerificationMaterial, b.MessageSignature
	checks := []struct{ name, got, want string }{
		{"mediaType", b.MediaType, "application/vnd.dev.sigstore.bundle.v0.3+json"},
		{"hint", vm.PublicKey.Hint, v.SigningKeyID},
		{"signature", "Ed25519:" + ms.Signature, v.Signature},
		{"digest algorithm", ms.MessageDigest.Algorithm, "SHA2_256"},
		{"digest", ms.MessageDigest.Digest, base64.StdEncoding.EncodeToString(digest[:])},
		{"artifact", string(ex.Artifact), string(signed)},
		{"key id", ex.KeyID, v.SigningKeyID},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if ts := vm.TimestampVerificationData.RFC3161Timestamps; len(ts) != 1 || ts[0].SignedTimestamp != v.TS {
		t.Errorf("rfc3161Timestamps = %+v, want the VPEC's response", ts)
	}
	if len(vm.TlogEntries) != 0 {
		t.Errorf("tlogEntries = %v, want none", vm.TlogEntries)
	}
}

// TestExportDoesNotJudgeTheSignature: export re-encodes; a VPEC whose
// signature is not valid still exports (the bundle then fails in every
// Sigstore verifier; internal/sigstoretest shows that).
func TestExportDoesNotJudgeTheSignature(t *testing.T) {
	doc := readVector(t, "invalid/tampered-field.json")
	if _, err := sigstore.ExportBundle(doc); err != nil {
		t.Fatalf("export of a schema-valid VPEC with a bad signature: %v", err)
	}
}

func TestAsTimeStampResp(t *testing.T) {
	var v struct {
		TS string `json:"timestamp_rfc3161"`
	}
	if err := json.Unmarshal(readVector(t, "valid/clean.json"), &v); err != nil {
		t.Fatal(err)
	}
	resp, err := base64.StdEncoding.DecodeString(v.TS)
	if err != nil {
		t.Fatal(err)
	}
	var parts struct{ Status, Token asn1.RawValue }
	if _, err := asn1.Unmarshal(resp, &parts); err != nil {
		t.Fatal(err)
	}
	rejection, err := asn1.Marshal(struct{ Status struct{ Status int } }{struct{ Status int }{2}})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		in      []byte
		want    []byte // nil: an error wrapping ErrTimestamp
		granted bool
	}{
		{name: "response unchanged", in: resp, want: resp},
		{name: "bare token wrapped", in: parts.Token.FullBytes, granted: true},
		{name: "rejection without token", in: rejection},
		{name: "empty", in: nil},
		{name: "garbage", in: []byte("not DER")},
		{name: "trailing bytes", in: append(append([]byte{}, resp...), 0)},
		{name: "other content type", in: mustMarshal(t, struct {
			OID asn1.ObjectIdentifier
			C   asn1.RawValue `asn1:"explicit,tag:0"`
		}{asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 1}, asn1.RawValue{Tag: asn1.TagNull}})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := sigstore.AsTimeStampResp(c.in)
			switch {
			case c.want != nil:
				if err != nil || !bytes.Equal(got, c.want) {
					t.Fatalf("got %x, %v; want the input unchanged", got, err)
				}
			case c.granted:
				if err != nil {
					t.Fatal(err)
				}
				var w struct {
					Status struct{ Status int }
					Token  asn1.RawValue
				}
				if rest, err := asn1.Unmarshal(got, &w); err != nil || len(rest) != 0 {
					t.Fatalf("wrapped response does not parse: %v", err)
				}
				if w.Status.Status != 0 || !bytes.Equal(w.Token.FullBytes, c.in) {
					t.Fatalf("wrapped response: status %d, token equal %v", w.Status.Status, bytes.Equal(w.Token.FullBytes, c.in))
				}
			default:
				if !errors.Is(err, sigstore.ErrTimestamp) {
					t.Fatalf("err = %v, want ErrTimestamp", err)
				}
			}
		})
	}
}

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := asn1.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTrustedRootAndKeyErrors(t *testing.T) {
	keysOnly := signing.NewBundle()
	for _, id := range trustBundle(t).KeyIDs() {
		pub, _ := trustBundle(t).Key(id)
		keysOnly.AddKey(pub)
	}
	if _, err := sigstore.TrustedRoot(keysOnly); !errors.Is(err, sigstore.ErrNoTSARoot) {
		t.Errorf("TrustedRoot without certificates: err = %v, want ErrNoTSARoot", err)
	}
	if _, err := sigstore.PublicKeyPEM(trustBundle(t), "0000000000000000"); !errors.Is(err, sigstore.ErrUnknownKey) {
		t.Errorf("PublicKeyPEM of an unknown key: err = %v, want ErrUnknownKey", err)
	}
	pemKey, err := sigstore.PublicKeyPEM(trustBundle(t), "992625da2c2d48bd")
	if err != nil {
		t.Fatal(err)
	}
	if pub, err := signing.ParsePublicKeyPEM(pemKey); err != nil || signing.KeyID(pub) != "992625da2c2d48bd" {
		t.Errorf("PublicKeyPEM: %v", err)
	}
	tr, err := sigstore.TrustedRoot(trustBundle(t))
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		MediaType            string
		TimestampAuthorities []struct {
			CertChain struct{ Certificates []struct{ RawBytes []byte } }
			ValidFor  struct{ Start string }
		}
	}
	if err := json.Unmarshal(tr, &root); err != nil {
		t.Fatal(err)
	}
	roots := trustBundle(t).Roots()
	if root.MediaType != sigstore.TrustedRootMediaType || len(root.TimestampAuthorities) != len(roots) {
		t.Fatalf("trusted root: %s", tr)
	}
	if c := root.TimestampAuthorities[0].CertChain.Certificates; len(c) != 1 || !bytes.Equal(c[0].RawBytes, roots[0].Raw) {
		t.Errorf("certChain of a CA root: %d certificates, want the root alone", len(c))
	}
}

// FuzzExportBundle: export never panics on any input, refuses with a typed
// error, and what it exports always carries the VPEC's own signed bytes.
func FuzzExportBundle(f *testing.F) {
	for _, name := range []string{"valid/clean.json", "valid/witnessed.json", "valid/details-null.json", "invalid/duplicate-key.json", "invalid/null-gaps-resigned.json"} {
		doc, err := os.ReadFile(filepath.Join(vectorsDir, "vpec", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(doc)
		if name == "valid/witnessed.json" {
			for _, d := range fuzzedge.Documents(doc, 300) { // integers at the documented maxima and int64 edges
				f.Add(d)
			}
		}
	}
	f.Add([]byte(`{"signature":null,"timestamp_rfc3161":null}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		ex, err := sigstore.ExportBundle(doc)
		if err != nil {
			if !errors.Is(err, sigstore.ErrNotVPEC) && !errors.Is(err, sigstore.ErrTimestamp) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		signed, err := vpec.SignedBytes(doc)
		if err != nil || !bytes.Equal(signed, ex.Artifact) {
			t.Fatalf("artifact is not the signed bytes (%v)", err)
		}
		if !json.Valid(ex.Bundle) {
			t.Fatal("bundle is not JSON")
		}
	})
}

// TestPAE: the DSSE specification's example.
func TestPAE(t *testing.T) {
	got := string(sigstore.PAE("http://example.com/HelloWorld", []byte("hello world")))
	if want := "DSSEv1 29 http://example.com/HelloWorld 11 hello world"; got != want {
		t.Fatalf("PAE = %q, want %q", got, want)
	}
}
