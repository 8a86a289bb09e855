package sigstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/svc-gov/svc/pkg/signing"
	"github.com/svc-gov/svc/pkg/vpec"
)

// In-toto and DSSE constants.
const (
	// StatementType is the in-toto Statement v1 type.
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateTypeVPEC names a VPEC v1 as an in-toto predicate: the
	// predicate is the VPEC document itself (docs/FORMATS.md, "in-toto
	// attestation").
	PredicateTypeVPEC = "https://github.com/svc-gov/svc/blob/main/docs/FORMATS.md#vpec"
	// PayloadTypeInToto is the DSSE payload type of an in-toto statement.
	PayloadTypeInToto = "application/vnd.in-toto+json"
)

type statement struct {
	Type          string          `json:"_type"`
	Subject       []subject       `json:"subject"`
	PredicateType string          `json:"predicateType"`
	Predicate     json.RawMessage `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name"`
	Digest map[string]string `json:"digest"`
}

type dsseBundle struct {
	MediaType            string               `json:"mediaType"`
	VerificationMaterial verificationMaterial `json:"verificationMaterial"`
	DSSEEnvelope         envelope             `json:"dsseEnvelope"`
}

type envelope struct {
	Payload     []byte          `json:"payload"`
	PayloadType string          `json:"payloadType"`
	Signatures  []dsseSignature `json:"signatures"`
}

type dsseSignature struct {
	Sig []byte `json:"sig"`
	// KeyID stays empty: DSSE verifiers (go-securesystemslib) skip a
	// signature whose keyid is not the SHA-256 of the key they hold, and
	// the bundle names the key by its hint already.
	KeyID string `json:"keyid,omitempty"`
}

// PAE is DSSE's pre-authentication encoding of a payload, the bytes a DSSE
// signature is over.
func PAE(payloadType string, payload []byte) []byte {
	b := []byte("DSSEv1 " + strconv.Itoa(len(payloadType)) + " " + payloadType + " " + strconv.Itoa(len(payload)) + " ")
	return append(b, payload...)
}

// Attest is what the service issues beside a VPEC it signed: an in-toto
// Statement v1 whose subject is the VPEC signed bytes (named by vpec_id,
// digest SHA-256) and whose predicate (type PredicateTypeVPEC) is the VPEC
// document, in a DSSE envelope signed by signer (Ed25519 over the PAE),
// time-stamped by tsa over SHA-256 of the DSSE signature bytes, as a
// Sigstore bundle v0.3. Unlike ExportBundle it signs: only the service, or
// whoever holds its key, can issue it. The VPEC must be schema-valid and
// signed by signer's key.
func Attest(ctx context.Context, doc []byte, signer *signing.Signer, tsa vpec.Timestamper) ([]byte, error) {
	ex, err := ExportBundle(doc)
	if err != nil {
		return nil, fmt.Errorf("attest: %w", err)
	}
	if ex.KeyID != signer.KeyID() {
		return nil, fmt.Errorf("attest: %w: the VPEC is signed by key %s, the signer is %s", ErrUnknownKey, ex.KeyID, signer.KeyID())
	}
	var id struct {
		VPECID string `json:"vpec_id"`
	}
	if err := json.Unmarshal(doc, &id); err != nil {
		return nil, fmt.Errorf("attest: %w: %v", ErrNotVPEC, err)
	}
	sum := sha256.Sum256(ex.Artifact)
	payload, err := json.Marshal(statement{
		Type:          StatementType,
		Subject:       []subject{{Name: id.VPECID, Digest: map[string]string{"sha256": hex.EncodeToString(sum[:])}}},
		PredicateType: PredicateTypeVPEC,
		Predicate:     json.RawMessage(doc),
	})
	if err != nil {
		return nil, fmt.Errorf("attest: encode statement: %w", err)
	}
	sig := signer.Sign(PAE(PayloadTypeInToto, payload))
	resp, err := tsa.Timestamp(ctx, vpec.TimestampImprint(sig))
	if err != nil {
		return nil, fmt.Errorf("attest: timestamp signature: %w", err)
	}
	b := dsseBundle{
		MediaType: BundleMediaType,
		VerificationMaterial: verificationMaterial{
			PublicKey:   publicKeyIdentifier{Hint: signer.KeyID()},
			TlogEntries: []struct{}{},
			TimestampVerificationData: timestampVerificationData{
				RFC3161Timestamps: []rfc3161SignedTimestamp{{SignedTimestamp: resp}},
			},
		},
		DSSEEnvelope: envelope{
			Payload:     payload,
			PayloadType: PayloadTypeInToto,
			Signatures:  []dsseSignature{{Sig: sig}},
		},
	}
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("attest: encode bundle: %w", err)
	}
	return append(out, '\n'), nil
}
