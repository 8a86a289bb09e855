package zkverify

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/trustroot"
)

// EntrySchema is the schema of a v1 circuit entry.
const EntrySchema = "svc.circuit/v1"

// MaxContributors bounds the contributors an entry lists.
const MaxContributors = 64

// MaxContributorBytes bounds one contributor's name.
const MaxContributorBytes = 128

// Errors of circuit entries, matchable with errors.Is.
var (
	// ErrEntryInvalid reports an entry whose fields break the v1 rules.
	ErrEntryInvalid = errors.New("invalid circuit entry")
	// ErrEntryUnsigned reports an entry without a signature.
	ErrEntryUnsigned = errors.New("circuit entry is not signed")
)

// Entry is a circuit entry of the registry: the verifying key of one
// circuit, bound to the model it proves (for mlp_head), to the hash of its
// proving key and to the setup ceremony that made the keys, signed by the
// service (docs/FORMATS.md, "Circuit entries").
type Entry struct {
	Schema    string `json:"schema"`
	CircuitID string `json:"circuit_id"`
	Circuit   string `json:"circuit"`
	System    string `json:"system"`
	// ONNXModelHash is the model an mlp_head circuit proves (its weights
	// are constants of the circuit); empty for condition circuits.
	ONNXModelHash string `json:"onnx_model_hash,omitempty"`
	// VerifyingKey is the standard base64 of the key's canonical bytes;
	// CircuitID is the sha256 of those bytes.
	VerifyingKey string `json:"verifying_key"`
	// ProvingKeyHash is "sha256:" of the proving key's bytes (gnark's
	// compressed encoding): a prover checks the key it loads against it.
	ProvingKeyHash   string   `json:"proving_key_hash"`
	Ceremony         Ceremony `json:"ceremony"`
	PublishedAt      string   `json:"published_at"`
	SignedBy         string   `json:"signed_by,omitempty"`
	SigningKeyID     string   `json:"signing_key_id,omitempty"`
	CircuitSignature string   `json:"circuit_signature,omitempty"`
}

// Ceremony names the setup that made a circuit's keys: the hash of its
// transcript and who contributed randomness, in order. The proofs are
// sound if at least one contributor discarded theirs.
type Ceremony struct {
	TranscriptHash string   `json:"transcript_hash"`
	Contributors   []string `json:"contributors" maxitems:"64"`
}

// signatureField is the one field outside the entry signature.
const signatureField = "circuit_signature"

// VerifyingKeyBytes returns the decoded verifying key bytes.
func (e *Entry) VerifyingKeyBytes() ([]byte, error) {
	b, err := signing.DecodeBase64(e.VerifyingKey)
	if err != nil {
		return nil, fmt.Errorf("%w: verifying_key: %v", ErrEntryInvalid, err)
	}
	return b, nil
}

// Validate checks every field against the v1 rules (including that
// circuit_id is the hash of the verifying key and that the key decodes)
// and returns all problems joined, each naming its field.
func (e *Entry) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrEntryInvalid, field, fmt.Sprintf(format, a...)))
	}
	sha := func(field, v string, required bool) {
		if v == "" && !required {
			return
		}
		if h, err := commitment.Parse(v); err != nil || h.Algorithm != commitment.SHA256 {
			bad(field, "%q is not a sha256:<64 hex> hash", v)
		}
	}
	if e.Schema != EntrySchema {
		bad("schema", "is %q, want %q", e.Schema, EntrySchema)
	}
	switch e.Circuit {
	case CircuitMLPHead:
		sha("onnx_model_hash", e.ONNXModelHash, true)
	case CircuitThreshold, CircuitTruncation, CircuitBelowThreshold:
		if e.ONNXModelHash != "" {
			bad("onnx_model_hash", "a %s circuit proves no model: omit it", e.Circuit)
		}
	default:
		bad("circuit", "%q is not one of %s, %s, %s, %s", e.Circuit, CircuitMLPHead, CircuitThreshold, CircuitTruncation, CircuitBelowThreshold)
	}
	if e.System != System {
		bad("system", "is %q, want %s", e.System, System)
	}
	sha("circuit_id", e.CircuitID, true)
	if vk, err := e.VerifyingKeyBytes(); err != nil {
		bad("verifying_key", "is not standard base64")
	} else if _, err := ParseVerifyingKey(vk); err != nil {
		bad("verifying_key", "%v", err)
	} else if id := CircuitID(vk); id != e.CircuitID {
		bad("circuit_id", "is %s, but the verifying key hashes to %s", e.CircuitID, id)
	}
	sha("proving_key_hash", e.ProvingKeyHash, true)
	sha("ceremony.transcript_hash", e.Ceremony.TranscriptHash, true)
	if len(e.Ceremony.Contributors) == 0 {
		bad("ceremony.contributors", "is empty: name who contributed to the setup")
	}
	seen := map[string]bool{}
	for i, c := range e.Ceremony.Contributors {
		field := fmt.Sprintf("ceremony.contributors[%d]", i)
		if c == "" || len(c) > MaxContributorBytes {
			bad(field, "must be 1-%d bytes", MaxContributorBytes)
		} else if err := names.ValidName(c); err != nil {
			bad(field, "%v", err)
		}
		if seen[c] {
			bad(field, "%q is listed twice", c)
		}
		seen[c] = true
	}
	if _, err := time.Parse(time.RFC3339, e.PublishedAt); err != nil || len(e.PublishedAt) == 0 || e.PublishedAt[len(e.PublishedAt)-1] != 'Z' {
		bad("published_at", "%q is not an RFC 3339 UTC time (…Z)", e.PublishedAt)
	}
	return errors.Join(errs...)
}

// Sign validates e, then signs it with signer; signedBy is the locator of
// the public key, as on profiles.
func Sign(e *Entry, signer *signing.Signer, signedBy string) error {
	e.Schema = EntrySchema
	e.SignedBy = signedBy
	e.SigningKeyID = signer.KeyID()
	e.CircuitSignature = ""
	if err := e.Validate(); err != nil {
		return fmt.Errorf("sign circuit entry: %w", err)
	}
	msg, err := document.MarshalSignedBytes(e, signatureField)
	if err != nil {
		return fmt.Errorf("sign circuit entry: %w", err)
	}
	sig, err := signer.Sign(msg)
	if err != nil {
		return fmt.Errorf("sign circuit entry: %w", err)
	}
	e.CircuitSignature = signing.FormatSignature(sig)
	return nil
}

// ParseEntry decodes an entry strictly (no duplicate keys, no unknown,
// missing or mistyped fields) and validates it. It does not check the
// signature.
func ParseEntry(doc []byte) (*Entry, error) {
	e, _, err := parseEntry(doc)
	return e, err
}

func parseEntry(doc []byte) (*Entry, *canonical.Value, error) {
	var e Entry
	tree, err := document.ParseWith(doc, &e, document.Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("circuit entry: %w", err)
	}
	if err := e.Validate(); err != nil {
		return nil, nil, fmt.Errorf("circuit entry: %w", err)
	}
	return &e, tree, nil
}

// VerifyEntryWithRoot is VerifyEntry, then, with a trust root that is not
// a legacy PEM bundle, EntryKey: the entry's key must be trusted for
// circuit-signing at its published_at.
func VerifyEntryWithRoot(doc []byte, trust *signing.Bundle, root *trustroot.Root) (*Entry, error) {
	e, err := VerifyEntry(doc, trust)
	if err != nil && e != nil && errors.Is(err, signing.ErrUnknownKey) && root != nil && !root.Legacy() {
		// A key the trust bundle given lacks may be in the root for
		// another purpose: if it made the signature, the refusal is named
		// by EntryKey (CIRCUIT KEY WRONG PURPOSE), never "unknown key".
		if pub := rootKey(root, e.SigningKeyID); pub != nil {
			b := signing.NewBundle()
			b.AddKey(pub)
			if _, again := VerifyEntry(doc, b); again == nil {
				err = nil
			}
		}
	}
	if err != nil {
		return e, err
	}
	if err := EntryKey(root, e); err != nil {
		return e, fmt.Errorf("circuit entry %s: %w", e.CircuitID, err)
	}
	return e, nil
}

// EntryKey checks, with a trust root, that the key that signed e is
// trusted for circuit-signing at its signed published_at, and that it was
// never compromised: an entry carries no timestamp, so a compromised key
// refuses every entry whatever its date (docs/KEYS.md, "Which time a
// window is checked against"), as a profile's does. The error is a
// *trustroot.KeyError naming the key and its window. Nil without a root
// or for a legacy PEM bundle (valid forever).
func EntryKey(root *trustroot.Root, e *Entry) error {
	if root == nil || root.Legacy() {
		return nil
	}
	at, err := time.Parse(time.RFC3339, e.PublishedAt)
	if err != nil {
		return fmt.Errorf("%w: published_at %q: %v", ErrEntryInvalid, e.PublishedAt, err)
	}
	k, err := root.KeyFor(trustroot.PurposeCircuit, e.SigningKeyID, at)
	if err != nil {
		return err
	}
	if !k.Window.CompromisedAt.IsZero() {
		return fmt.Errorf("an untimestamped circuit entry is refused whatever its published_at once its key is marked compromised: %w",
			&trustroot.KeyError{KeyID: k.KeyID, Purpose: k.Purpose, At: at, Window: k.Window, Err: trustroot.ErrCompromised})
	}
	return nil
}

// VerifyEntry parses doc and checks its signature against the trust
// bundle. Any change to any signed byte makes it fail.
func VerifyEntry(doc []byte, trust *signing.Bundle) (*Entry, error) {
	e, tree, err := parseEntry(doc)
	if err != nil {
		return nil, err
	}
	if e.CircuitSignature == "" || e.SigningKeyID == "" {
		return e, fmt.Errorf("circuit entry %s: %w", e.CircuitID, ErrEntryUnsigned)
	}
	if trust == nil {
		return e, fmt.Errorf("circuit entry %s: no trust bundle to check its signature", e.CircuitID)
	}
	if err := trust.Verify(e.SigningKeyID, tree.Canonical(signatureField), e.CircuitSignature); err != nil {
		return e, fmt.Errorf("circuit entry %s: %w", e.CircuitID, err)
	}
	return e, nil
}

// rootKey is the Ed25519 key of id in root, whatever its purpose, or nil.
func rootKey(root *trustroot.Root, id string) ed25519.PublicKey {
	for _, k := range root.Keys {
		if k.KeyID == id && k.PublicKey != nil {
			return k.PublicKey
		}
	}
	return nil
}
