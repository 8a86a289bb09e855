// Package sigstore maps VPECs onto the Sigstore formats, so that an auditor
// who has only the Sigstore tools (cosign, sigstore-go) can check a VPEC's
// signature and timestamp with them.
//
// A VPEC already holds what a Sigstore bundle v0.3 carries for a message
// signature: an Ed25519 signature over the VPEC's canonical signed bytes,
// and an RFC 3161 response whose message imprint is SHA-256 of the raw
// signature bytes, which is what Sigstore requires a signed timestamp to
// cover. Export therefore re-encodes; it never signs anything and needs no
// key or network: any holder of a VPEC can run it. TrustedRoot turns svc's
// trust bundle into the Sigstore trusted root a verifier is given.
//
// The mapping is specified in docs/FORMATS.md ("Sigstore bundle"). The
// package writes the bundle's JSON itself and links no Sigstore code; the
// tests verify its output with github.com/sigstore/sigstore-go and cosign.
package sigstore

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
)

// Media types of the documents this package writes.
const (
	// BundleMediaType is the Sigstore bundle v0.3 media type.
	BundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// TrustedRootMediaType is the Sigstore trusted root v0.1 media type.
	TrustedRootMediaType = "application/vnd.dev.sigstore.trustedroot+json;version=0.1"
)

// Errors. Every error this package returns wraps one of them.
var (
	// ErrNotVPEC: the input is not a schema-valid v1 VPEC (the same strict
	// reading as the verifier's schema check).
	ErrNotVPEC = errors.New("not a schema-valid VPEC")
	// ErrTimestamp: timestamp_rfc3161 is neither a TimeStampResp nor a
	// bare TimeStampToken.
	ErrTimestamp = errors.New("timestamp_rfc3161 is not an RFC 3161 response or token")
	// ErrUnknownKey: the trust bundle does not hold the key asked for.
	ErrUnknownKey = signing.ErrUnknownKey
	// ErrNoTSARoot: the trust bundle holds no certificate, so there is no
	// timestamp authority to put in a trusted root.
	ErrNoTSARoot = errors.New("the trust bundle holds no timestamp authority certificate")
	// ErrReceipt: the receipt given to ExportWithReceipt does not prove
	// that this VPEC is in a log of the trust bundle. The error also wraps
	// the pkg/core/tlog sentinel of the failed check (tlog.ErrWrongVPEC,
	// tlog.ErrWrongLog, tlog.ErrLogSignature, tlog.ErrInclusion, ...).
	ErrReceipt = errors.New("the receipt does not prove this VPEC is in a trusted log")
)

// The kind and version of the transparency log entry an exported bundle
// carries: svc's leaf (pkg/core/tlog, docs/FORMATS.md), not a Rekor kind.
const (
	// TlogEntryKind is kindVersion.kind.
	TlogEntryKind = "svc.tlog.leaf"
	// TlogEntryVersion is kindVersion.version.
	TlogEntryVersion = "v1"
)

// Export is a VPEC mapped onto a Sigstore bundle.
type Export struct {
	// Bundle is the Sigstore bundle v0.3, JSON (protobuf JSON mapping),
	// ending in a newline.
	Bundle []byte
	// Artifact is the message the bundle's signature is over: the VPEC
	// signed bytes, JCS of the VPEC without signature and timestamp_rfc3161.
	Artifact []byte
	// KeyID is the VPEC's signing_key_id, the bundle's public key hint.
	KeyID string

	digest [sha256.Size]byte // SHA-256 of Artifact, computed once
}

// The Sigstore bundle v0.3 in its protobuf JSON form, reduced to the
// members an exported VPEC fills. []byte members encode as standard padded
// base64, as protobuf JSON writes bytes.
type bundle struct {
	MediaType            string               `json:"mediaType"`
	VerificationMaterial verificationMaterial `json:"verificationMaterial"`
	MessageSignature     messageSignature     `json:"messageSignature"`
}

type verificationMaterial struct {
	PublicKey                 publicKeyIdentifier       `json:"publicKey"`
	TlogEntries               []tlogEntry               `json:"tlogEntries"`
	TimestampVerificationData timestampVerificationData `json:"timestampVerificationData"`
}

// tlogEntry is a TransparencyLogEntry (dev.sigstore.rekor.v1) in its
// protobuf JSON form: int64 members are strings, bytes padded base64.
// integratedTime is absent (0): svc's log signs no integration time.
type tlogEntry struct {
	LogIndex          string         `json:"logIndex"`
	LogID             logID          `json:"logId"`
	KindVersion       kindVersion    `json:"kindVersion"`
	InclusionProof    inclusionProof `json:"inclusionProof"`
	CanonicalizedBody []byte         `json:"canonicalizedBody"`
}

type logID struct {
	KeyID []byte `json:"keyId"`
}

type kindVersion struct {
	Kind    string `json:"kind"`
	Version string `json:"version"`
}

type inclusionProof struct {
	LogIndex   string     `json:"logIndex"`
	RootHash   []byte     `json:"rootHash"`
	TreeSize   string     `json:"treeSize"`
	Hashes     [][]byte   `json:"hashes"`
	Checkpoint checkpoint `json:"checkpoint"`
}

type checkpoint struct {
	Envelope string `json:"envelope"`
}

type publicKeyIdentifier struct {
	Hint string `json:"hint"`
}

type timestampVerificationData struct {
	RFC3161Timestamps []rfc3161SignedTimestamp `json:"rfc3161Timestamps"`
}

type rfc3161SignedTimestamp struct {
	SignedTimestamp []byte `json:"signedTimestamp"`
}

type messageSignature struct {
	MessageDigest hashOutput `json:"messageDigest"`
	Signature     []byte     `json:"signature"`
}

type hashOutput struct {
	Algorithm string `json:"algorithm"`
	Digest    []byte `json:"digest"`
}

// ExportBundle maps a VPEC document onto a Sigstore bundle v0.3 and its
// artifact. The VPEC must pass the verifier's schema check; its signature
// and timestamp are carried over as they are, not checked: a VPEC whose
// signature does not verify gives a bundle that does not verify either.
func ExportBundle(doc []byte) (*Export, error) {
	b, ex, _, err := mapVPEC(doc)
	if err != nil {
		return nil, err
	}
	if err := ex.encode(b); err != nil {
		return nil, err
	}
	return ex, nil
}

// ExportWithReceipt is ExportBundle with the VPEC's transparency log
// entry: the bundle's verificationMaterial.tlogEntries holds the entry of
// receipt (a v1 receipt, as svc vpec get writes it) in the Sigstore form,
// with svc's leaf as canonicalizedBody (docs/FORMATS.md, "Sigstore
// bundle"). The receipt must verify for this VPEC against a log key of
// trust (its leaf records the VPEC, its checkpoint is signed by the log
// key, its inclusion proof leads to the checkpoint's root; witness
// cosignatures are carried, not checked); otherwise the error wraps
// ErrReceipt and the tlog sentinel of the check that failed.
//
// Sigstore's verifiers (sigstore-go v1.3.0, cosign v2.6.5) refuse such a
// bundle as a whole: they read canonicalizedBody only as a Rekor entry.
func ExportWithReceipt(doc, receipt []byte, trust *signing.Bundle) (*Export, error) {
	b, ex, vpecID, err := mapVPEC(doc)
	if err != nil {
		return nil, err
	}
	entry, err := entryOf(receipt, tlog.Subject{VPECID: vpecID, Digest: ex.digest}, trust) // tlog.Digest is SHA-256 of the signed bytes
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	b.VerificationMaterial.TlogEntries = []tlogEntry{*entry}
	if err := ex.encode(b); err != nil {
		return nil, err
	}
	return ex, nil
}

// mapVPEC maps a VPEC onto a bundle without log entries. The schema
// check's one read of doc gives everything: the signed bytes (the
// artifact), the decoded signature and token, the key and VPEC ids.
func mapVPEC(doc []byte) (*bundle, *Export, string, error) {
	d, err := verify.ValidateSchema(doc)
	if err != nil {
		msg := err.Error()
		var ve *verify.VerificationError
		if errors.As(err, &ve) && ve.Check != nil {
			msg = ve.Check.Message
		}
		return nil, nil, "", fmt.Errorf("export: %w: %s", ErrNotVPEC, msg)
	}
	resp, err := AsTimeStampResp(d.Token)
	if err != nil {
		return nil, nil, "", fmt.Errorf("export: %w", err)
	}
	signed := d.Signed()
	digest := sha256.Sum256(signed)
	keyID := d.VPEC.SigningKeyID
	b := &bundle{
		MediaType: BundleMediaType,
		VerificationMaterial: verificationMaterial{
			PublicKey:   publicKeyIdentifier{Hint: keyID},
			TlogEntries: []tlogEntry{},
			TimestampVerificationData: timestampVerificationData{
				RFC3161Timestamps: []rfc3161SignedTimestamp{{SignedTimestamp: resp}},
			},
		},
		MessageSignature: messageSignature{
			MessageDigest: hashOutput{Algorithm: "SHA2_256", Digest: digest[:]},
			Signature:     d.Signature,
		},
	}
	return b, &Export{Artifact: signed, KeyID: keyID, digest: digest}, d.VPEC.VPECID, nil
}

// encode sets ex.Bundle to b's JSON.
func (ex *Export) encode(b *bundle) error {
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("export: encode bundle: %w", err)
	}
	ex.Bundle = append(out, '\n')
	return nil
}

// entryOf verifies receipt for s against the trust bundle's log keys and
// maps it onto a Sigstore transparency log entry.
func entryOf(receipt []byte, s tlog.Subject, trust *signing.Bundle) (*tlogEntry, error) {
	if _, err := tlog.ParseReceipt(receipt); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReceipt, err)
	}
	keys := trust.LogKeys()
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: %w: the trust bundle holds no TRANSPARENCY LOG KEY", ErrReceipt, tlog.ErrWrongLog)
	}
	none, err := tlog.ParseWitnessPolicy([]byte("quorum none\n"))
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	var lastErr error
	for _, k := range keys {
		v, err := tlog.NewVerifier(k, none)
		if err != nil {
			return nil, fmt.Errorf("receipt: %w", err)
		}
		got, err := v.VerifyReceipt(receipt, s)
		if errors.Is(err, tlog.ErrWrongLog) {
			lastErr = err
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrReceipt, err)
		}
		r, err := tlog.ParseReceipt(receipt)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrReceipt, err)
		}
		id := LogID(k)
		hashes := make([][]byte, len(r.InclusionProof))
		for i := range r.InclusionProof {
			hashes[i] = r.InclusionProof[i][:]
		}
		index := strconv.FormatUint(got.Index, 10)
		return &tlogEntry{
			LogIndex:    index,
			LogID:       logID{KeyID: id[:]},
			KindVersion: kindVersion{Kind: TlogEntryKind, Version: TlogEntryVersion},
			InclusionProof: inclusionProof{
				LogIndex:   index,
				RootHash:   got.Checkpoint.Root[:],
				TreeSize:   strconv.FormatUint(got.Checkpoint.Size, 10),
				Hashes:     hashes,
				Checkpoint: checkpoint{Envelope: string(r.Checkpoint)},
			},
			CanonicalizedBody: r.Leaf.Marshal(),
		}, nil
	}
	return nil, fmt.Errorf("%w: %w (the trust bundle's log keys are not the receipt's log's)", ErrReceipt, lastErr)
}

// LogID returns the key id Sigstore gives a transparency log with an
// Ed25519 checkpoint key (rekor-tiles pkg/note.KeyHash, the logId of a
// Rekor v2 log): SHA-256(origin || "\n" || 0x01 || public key), whose
// first four bytes are the C2SP signed-note key hash of the log's
// checkpoint signatures.
func LogID(k tlog.LogKey) [32]byte {
	h := sha256.New()
	h.Write([]byte(k.Origin() + "\n"))
	h.Write([]byte{0x01})
	h.Write(k.PublicKey())
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// AsTimeStampResp returns der as a DER TimeStampResp, the form a Sigstore
// bundle's signedTimestamp holds (timestamp.AsResponse: a response byte for
// byte, a bare TimeStampToken wrapped in a response of status granted).
// Anything else wraps ErrTimestamp.
func AsTimeStampResp(der []byte) ([]byte, error) {
	out, err := timestamp.AsResponse(der)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrTimestamp, err)
	}
	return out, nil
}

// The Sigstore trusted root v0.1 in its protobuf JSON form, reduced to
// timestamp authorities and transparency logs: svc has no certificate
// authority (Fulcio) or CT log to trust.
type trustedRoot struct {
	MediaType              string                 `json:"mediaType"`
	Tlogs                  []tlogInstance         `json:"tlogs"`
	CertificateAuthorities []struct{}             `json:"certificateAuthorities"`
	Ctlogs                 []struct{}             `json:"ctlogs"`
	TimestampAuthorities   []certificateAuthority `json:"timestampAuthorities"`
}

// tlogInstance is a TransparencyLogInstance.
type tlogInstance struct {
	BaseURL       string    `json:"baseUrl"`
	HashAlgorithm string    `json:"hashAlgorithm"`
	PublicKey     publicKey `json:"publicKey"`
	LogID         logID     `json:"logId"`
}

type publicKey struct {
	RawBytes   []byte    `json:"rawBytes"`
	KeyDetails string    `json:"keyDetails"`
	ValidFor   timeRange `json:"validFor"`
}

// LogKeyValidFrom is the validFor.start of a transparency log key in a
// trusted root: a trust bundle records no time for a log key, so a log
// key is valid from the Unix epoch for as long as the trust bundle lists
// it (a retired key leaves the bundle).
const LogKeyValidFrom = "1970-01-01T00:00:00Z"

type certificateAuthority struct {
	Subject   distinguishedName `json:"subject"`
	CertChain certChain         `json:"certChain"`
	ValidFor  timeRange         `json:"validFor"`
}

type distinguishedName struct {
	Organization string `json:"organization,omitempty"`
	CommonName   string `json:"commonName,omitempty"`
}

type certChain struct {
	Certificates []x509Cert `json:"certificates"`
}

type x509Cert struct {
	RawBytes []byte `json:"rawBytes"`
}

type timeRange struct {
	Start string `json:"start"`
	End   string `json:"end,omitempty"`
}

// TrustedRoot returns the Sigstore trusted root (JSON, ending in a newline)
// equivalent to the timestamp authority certificates and transparency log
// keys of trust. Each log key is a tlog: baseUrl https://<origin>, SHA-256
// Merkle tree, its Ed25519 key (PKIX_ED25519) valid from LogKeyValidFrom,
// logId LogID. Each certificate is a timestamp authority: one
// timestamp authority per CERTIFICATE block, valid from the certificate's
// notBefore. A CA certificate is the authority's root; the TSA certificate
// and any intermediates come from the token, as svc's verifier takes them.
// A certificate that is not a CA (a TSA certificate pinned directly, which
// svc's trust bundle allows) is listed as both leaf and root: Sigstore's
// chain is leaf first and always ends in a root. Service keys have no place
// in a trusted root: give the key to the verifier (cosign --key), see
// PublicKeyPEM.
func TrustedRoot(trust *signing.Bundle) ([]byte, error) { return TrustedRootFor(trust, nil) }

// TrustedRootFor is TrustedRoot with each log key's validity taken from
// root, the trust root trust was read from (verify.TrustFor and
// LogKeysOf): validFor.start is the log-checkpoint key's valid_from and
// validFor.end its valid_until or compromised_at, whichever is earlier.
// A log key root does not date (a legacy PEM bundle's, valid forever, or
// root nil) starts at LogKeyValidFrom with no end.
func TrustedRootFor(trust *signing.Bundle, root *trustroot.Root) ([]byte, error) {
	roots := trust.Roots()
	if len(roots) == 0 {
		return nil, fmt.Errorf("trusted root: %w", ErrNoTSARoot)
	}
	tr := trustedRoot{MediaType: TrustedRootMediaType, Tlogs: []tlogInstance{}, CertificateAuthorities: []struct{}{}, Ctlogs: []struct{}{}}
	for _, k := range trust.LogKeys() {
		der, err := x509.MarshalPKIXPublicKey(k.PublicKey())
		if err != nil {
			return nil, fmt.Errorf("trusted root: log key %s: %w", k.Origin(), err)
		}
		id := LogID(k)
		tr.Tlogs = append(tr.Tlogs, tlogInstance{
			BaseURL:       "https://" + k.Origin(),
			HashAlgorithm: "SHA2_256",
			PublicKey:     publicKey{RawBytes: der, KeyDetails: "PKIX_ED25519", ValidFor: logValidity(root, k)},
			LogID:         logID{KeyID: id[:]},
		})
	}
	for _, c := range roots {
		chain := []x509Cert{{RawBytes: c.Raw}}
		if !c.IsCA {
			chain = append(chain, x509Cert{RawBytes: c.Raw})
		}
		tr.TimestampAuthorities = append(tr.TimestampAuthorities, certificateAuthority{
			Subject:   subjectOf(c),
			CertChain: certChain{Certificates: chain},
			ValidFor:  timeRange{Start: c.NotBefore.UTC().Format(time.RFC3339)},
		})
	}
	out, err := json.MarshalIndent(tr, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("trusted root: encode: %w", err)
	}
	return append(out, '\n'), nil
}

// logValidity is the validity of log key k in root.
func logValidity(root *trustroot.Root, k tlog.LogKey) timeRange {
	r := timeRange{Start: LogKeyValidFrom}
	if root == nil {
		return r
	}
	for _, e := range root.Keys {
		if e.Purpose != trustroot.PurposeLog || e.NoteVerifier != k.String() || e.Window.Forever || e.Window.From.IsZero() {
			continue
		}
		r.Start = e.Window.From.UTC().Format(time.RFC3339)
		end := e.Window.Until
		if c := e.Window.CompromisedAt; !c.IsZero() && (end.IsZero() || c.Before(end)) {
			end = c
		}
		if !end.IsZero() {
			r.End = end.UTC().Format(time.RFC3339)
		}
		return r
	}
	return r
}

// LogKeysOf adds the log-checkpoint keys of root to trust (which
// verify.TrustFor leaves out: they sign no VPEC), so that TrustedRootFor
// lists them and ExportWithReceipt finds a receipt's log.
func LogKeysOf(trust *signing.Bundle, root *trustroot.Root) error {
	if root == nil {
		return nil
	}
	for _, e := range root.Keys {
		if e.Purpose != trustroot.PurposeLog {
			continue
		}
		k, err := tlog.ParseLogKey(e.NoteVerifier)
		if err != nil {
			return fmt.Errorf("trust root log key %s: %w", e.KeyID, err)
		}
		trust.AddLogKey(k)
	}
	return nil
}

func subjectOf(c *x509.Certificate) distinguishedName {
	dn := distinguishedName{CommonName: c.Subject.CommonName}
	if len(c.Subject.Organization) > 0 {
		dn.Organization = c.Subject.Organization[0]
	}
	return dn
}

// PublicKeyPEM returns the trust bundle's key keyID as a PEM PUBLIC KEY
// block, the form cosign's --key reads. It wraps ErrUnknownKey when the
// bundle does not hold the key.
func PublicKeyPEM(trust *signing.Bundle, keyID string) ([]byte, error) {
	pub, err := trust.Key(keyID)
	if err != nil {
		return nil, fmt.Errorf("public key %s: %w", keyID, err)
	}
	return signing.MarshalPublicKeyPEM(pub)
}
