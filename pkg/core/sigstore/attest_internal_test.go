package sigstore

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
)

// TestWriteAttestationEncoding: WriteAttestation streams exactly the bytes
// json.MarshalIndent gives for the whole bundle (the encoding Attest had
// before it was split into a seal and a writer), and writing again from
// the same seal gives the same bytes without signing or time-stamping.
func TestWriteAttestationEncoding(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "testdata", "vectors")
	doc, err := os.ReadFile(filepath.Join(dir, "vpec", "valid", "clean.json"))
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, "keys", "TEST-ONLY-service-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	priv, err := signing.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := signing.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	tsa, err := timestamp.LoadAuthority(filepath.Join(dir, "keys", "TEST-ONLY-tsa"))
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingTSA{next: tsa}
	seal, err := SealAttestation(context.Background(), doc, signer, counting)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := json.Marshal(statement{
		Type:          StatementType,
		Subject:       []subject{{Name: seal.VPECID, Digest: map[string]string{"sha256": hex.EncodeToString(seal.SubjectDigest[:])}}},
		PredicateType: PredicateTypeVPEC,
		Predicate:     json.RawMessage(doc),
	})
	if err != nil {
		t.Fatal(err)
	}
	if streamed, err := statementPAE(doc, seal); err != nil || !bytes.Equal(streamed, PAE(PayloadTypeInToto, payload)) || cap(streamed) != len(streamed) {
		t.Fatalf("the streamed statement's PAE differs from PAE of json.Marshal's, or was grown (%v)", err)
	}
	want, err := json.MarshalIndent(dsseBundle{
		MediaType: BundleMediaType,
		VerificationMaterial: verificationMaterial{
			PublicKey:   publicKeyIdentifier{Hint: signer.KeyID()},
			TlogEntries: []tlogEntry{},
			TimestampVerificationData: timestampVerificationData{
				RFC3161Timestamps: []rfc3161SignedTimestamp{{SignedTimestamp: seal.Timestamp}},
			},
		},
		DSSEEnvelope: envelope{Payload: payload, PayloadType: PayloadTypeInToto, Signatures: []dsseSignature{{Sig: seal.Signature}}},
	}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	for i := range 2 {
		var got bytes.Buffer
		if err := WriteAttestation(&got, doc, seal); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("write %d: WriteAttestation differs from the MarshalIndent encoding (%d vs %d bytes)", i, got.Len(), len(want))
		}
	}
	if counting.n != 1 {
		t.Errorf("%d timestamp requests for one seal and two writes, want 1", counting.n)
	}
	if !ed25519.Verify(signer.PublicKey(), PAE(PayloadTypeInToto, payload), seal.Signature) {
		t.Errorf("the seal's signature does not verify over the payload's PAE")
	}
}

type countingTSA struct {
	next interface {
		Timestamp(context.Context, []byte) ([]byte, error)
	}
	n int
}

func (c *countingTSA) Timestamp(ctx context.Context, d []byte) ([]byte, error) {
	c.n++
	return c.next.Timestamp(ctx, d)
}

// FuzzCompactHTML: compactHTML writes valid JSON exactly as json.Marshal
// writes it as a json.RawMessage (compacted, HTML-escaped), whatever the
// whitespace, strings, escapes and characters; for invalid input it need
// only not panic.
func FuzzCompactHTML(f *testing.F) {
	for _, s := range []string{
		`{}`, ` [ 1 , 2 ]
`, `{"a" : "<b> & </b>", "c": [true, null, -1.5e3]}`, "\"\u2028 \xe2\x80\xa8 \xe2\x80\xa9 \xe2\x80\"", `"\"\\ \t"`,
		`{"k": "v\\", "l" : "\\\" <"}`, "{\n  \"records\": [\n    {\"x\":\"a b\"}\n  ]\n}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var got bytes.Buffer
		if err := compactHTML(&got, doc); err != nil {
			t.Fatal(err)
		}
		if !json.Valid(doc) {
			return
		}
		want, err := json.Marshal(json.RawMessage(doc))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("compactHTML(%q) = %q, json.Marshal gives %q", doc, got.Bytes(), want)
		}
	})
}
