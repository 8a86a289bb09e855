package sigstore

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
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

// AttestationSeal is what an attestation of a VPEC holds beside the VPEC
// itself: its subject (vpec_id, SHA-256 of the VPEC signed bytes), the
// DSSE signature over the statement and the RFC 3161 response over that
// signature. It is small, and for one VPEC and one key it never changes
// (Ed25519 is deterministic): a service seals once per VPEC
// (SealAttestation, which signs and asks the timestamp authority) and
// writes the attestation from the seal as often as it is asked
// (WriteAttestation, which does neither).
type AttestationSeal struct {
	VPECID        string
	KeyID         string
	SubjectDigest [sha256.Size]byte
	Signature     []byte
	// Timestamp is the DER TimeStampResp over SHA-256 of Signature.
	Timestamp []byte
}

// Attest is what the service issues beside a VPEC it signed: an in-toto
// Statement v1 whose subject is the VPEC signed bytes (named by vpec_id,
// digest SHA-256) and whose predicate (type PredicateTypeVPEC) is the VPEC
// document, in a DSSE envelope signed by signer (Ed25519 over the PAE),
// time-stamped by tsa over SHA-256 of the DSSE signature bytes, as a
// Sigstore bundle v0.3. Unlike ExportBundle it signs: only the service, or
// whoever holds its key, can issue it. The VPEC must be schema-valid and
// signed by signer's key. It is SealAttestation then WriteAttestation.
func Attest(ctx context.Context, doc []byte, signer *signing.Signer, tsa timestamp.Timestamper) ([]byte, error) {
	seal, err := SealAttestation(ctx, doc, signer, tsa)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := WriteAttestation(&buf, doc, seal); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SealAttestation checks doc as Attest does and makes its attestation's
// seal: one Ed25519 signature and one timestamp request.
func SealAttestation(ctx context.Context, doc []byte, signer *signing.Signer, tsa timestamp.Timestamper) (*AttestationSeal, error) {
	_, ex, vpecID, err := mapVPEC(doc)
	if err != nil {
		return nil, fmt.Errorf("attest: %w", err)
	}
	if ex.KeyID != signer.KeyID() {
		return nil, fmt.Errorf("attest: %w: the VPEC is signed by key %s, the signer is %s", ErrUnknownKey, ex.KeyID, signer.KeyID())
	}
	seal := &AttestationSeal{VPECID: vpecID, KeyID: signer.KeyID(), SubjectDigest: ex.digest}
	ex = nil
	pae, err := statementPAE(doc, seal)
	if err != nil {
		return nil, err
	}
	if seal.Signature, err = signer.Sign(pae); err != nil {
		return nil, fmt.Errorf("attest: %w", err)
	}
	pae = nil
	if seal.Timestamp, err = tsa.Timestamp(ctx, issue.TimestampImprint(seal.Signature)); err != nil {
		return nil, fmt.Errorf("attest: timestamp signature: %w", err)
	}
	return seal, nil
}

// statementPAE is what the DSSE signature covers: PAE of the in-toto
// statement of doc (writeStatement), built in one buffer of its exact
// size (the statement is written once to count it): the payload is never
// held apart from its PAE.
func statementPAE(doc []byte, seal *AttestationSeal) ([]byte, error) {
	var n byteCount
	if err := writeStatement(&n, doc, seal); err != nil {
		return nil, err
	}
	head := "DSSEv1 " + strconv.Itoa(len(PayloadTypeInToto)) + " " + PayloadTypeInToto + " " + strconv.Itoa(int(n)) + " "
	buf := bytes.NewBuffer(make([]byte, 0, len(head)+int(n)))
	buf.WriteString(head)
	if err := writeStatement(buf, doc, seal); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// byteCount is an io.Writer that counts what is written to it.
type byteCount int64

func (c *byteCount) Write(p []byte) (int, error) {
	*c += byteCount(len(p))
	return len(p), nil
}

// writeStatement writes the DSSE payload to w without holding it: the
// bytes json.Marshal gives for statement, its predicate (doc, valid JSON)
// compacted as Marshal compacts a json.RawMessage (compactHTML).
func writeStatement(w io.Writer, doc []byte, seal *AttestationSeal) error {
	frame, err := json.Marshal(statement{
		Type:          StatementType,
		Subject:       []subject{{Name: seal.VPECID, Digest: map[string]string{"sha256": hex.EncodeToString(seal.SubjectDigest[:])}}},
		PredicateType: PredicateTypeVPEC,
		Predicate:     json.RawMessage("0"),
	})
	if err != nil {
		return fmt.Errorf("attest: encode statement: %w", err)
	}
	head, ok := bytes.CutSuffix(frame, []byte("0}"))
	if !ok {
		return fmt.Errorf("attest: encode statement: the predicate is not last")
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	if err := compactHTML(w, doc); err != nil {
		return err
	}
	_, err = w.Write([]byte("}"))
	return err
}

// compactHTML writes the JSON text doc as encoding/json writes a
// json.RawMessage: without the whitespace between tokens, with <, > and &
// written \u003c, \u003e, \u0026 and U+2028, U+2029 written \u2028,
// \u2029 (HTML-safe). doc must be valid JSON (it is not checked: the VPEC
// passed the schema check when its attestation was sealed); it is written
// in runs, never copied whole.
func compactHTML(w io.Writer, doc []byte) error {
	var inString, escaped bool
	start := 0
	flush := func(i int, with string) error {
		if start < i {
			if _, err := w.Write(doc[start:i]); err != nil {
				return err
			}
		}
		if with != "" {
			if _, err := io.WriteString(w, with); err != nil {
				return err
			}
		}
		return nil
	}
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		var with string
		switch {
		case c == '<':
			with = `\u003c`
		case c == '>':
			with = `\u003e`
		case c == '&':
			with = `\u0026`
		case c == 0xE2 && i+2 < len(doc) && doc[i+1] == 0x80 && doc[i+2]&^1 == 0xA8:
			with = `\u202` + string(rune('8'+doc[i+2]&1))
			if err := flush(i, with); err != nil {
				return err
			}
			i += 2
			start = i + 1
			escaped = false
			continue
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		case c == '"':
			inString = true
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			continue
		}
		if err := flush(i, with); err != nil {
			return err
		}
		start = i + 1
		escaped = false
	}
	return flush(len(doc), "")
}

// payloadMark stands for the payload in the bundle encoded without it:
// WriteAttestation writes the bundle around it. It is not base64, so it
// cannot occur in the encoding of the other members.
const payloadMark = "!payload!"

// WriteAttestation writes the attestation of doc sealed by seal, the bytes
// Attest returns, without signing or time-stamping: the statement is
// encoded again as it is streamed to w in base64, so the attestation of a
// large VPEC costs little memory beyond the VPEC itself. seal must be doc's
// (SealAttestation of the same bytes); it is not checked again.
func WriteAttestation(w io.Writer, doc []byte, seal *AttestationSeal) error {
	b := dsseBundle{
		MediaType: BundleMediaType,
		VerificationMaterial: verificationMaterial{
			PublicKey:   publicKeyIdentifier{Hint: seal.KeyID},
			TlogEntries: []tlogEntry{},
			TimestampVerificationData: timestampVerificationData{
				RFC3161Timestamps: []rfc3161SignedTimestamp{{SignedTimestamp: seal.Timestamp}},
			},
		},
		DSSEEnvelope: envelope{
			PayloadType: PayloadTypeInToto,
			Signatures:  []dsseSignature{{Sig: seal.Signature}},
		},
	}
	frame, err := json.MarshalIndent(struct {
		dsseBundle
		DSSEEnvelope markedEnvelope `json:"dsseEnvelope"`
	}{b, markedEnvelope{payloadMark, b.DSSEEnvelope.PayloadType, b.DSSEEnvelope.Signatures}}, "", "  ")
	if err != nil {
		return fmt.Errorf("attest: encode bundle: %w", err)
	}
	head, tail, ok := bytes.Cut(frame, []byte(payloadMark))
	if !ok {
		return fmt.Errorf("attest: encode bundle: no payload member")
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	enc := base64.NewEncoder(base64.StdEncoding, bw)
	if err := writeStatement(enc, doc, seal); err != nil {
		return fmt.Errorf("attest: write: %w", err)
	}
	enc.Close()
	bw.Write(tail)
	bw.WriteByte('\n')
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("attest: write: %w", err)
	}
	return nil
}

// markedEnvelope is envelope with its payload replaced by payloadMark.
type markedEnvelope struct {
	Payload     string          `json:"payload"`
	PayloadType string          `json:"payloadType"`
	Signatures  []dsseSignature `json:"signatures"`
}
