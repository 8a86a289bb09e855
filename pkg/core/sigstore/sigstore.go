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
	"time"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
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
	TlogEntries               []struct{}                `json:"tlogEntries"`
	TimestampVerificationData timestampVerificationData `json:"timestampVerificationData"`
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

// sealFields are the VPEC members the bundle is built from.
type sealFields struct {
	SigningKeyID     string `json:"signing_key_id"`
	Signature        string `json:"signature"`
	TimestampRFC3161 string `json:"timestamp_rfc3161"`
}

// ExportBundle maps a VPEC document onto a Sigstore bundle v0.3 and its
// artifact. The VPEC must pass the verifier's schema check; its signature
// and timestamp are carried over as they are, not checked: a VPEC whose
// signature does not verify gives a bundle that does not verify either.
func ExportBundle(doc []byte) (*Export, error) {
	if err := verify.ValidateSchema(doc); err != nil {
		msg := err.Error()
		var ve *verify.VerificationError
		if errors.As(err, &ve) && ve.Check != nil {
			msg = ve.Check.Message
		}
		return nil, fmt.Errorf("export: %w: %s", ErrNotVPEC, msg)
	}
	var f sealFields
	// The schema check passed: the document is strict I-JSON with unique
	// member names, so the standard decoder reads these three exactly.
	if err := json.Unmarshal(doc, &f); err != nil {
		return nil, fmt.Errorf("export: %w: %v", ErrNotVPEC, err)
	}
	artifact, err := vpec.SignedBytes(doc)
	if err != nil {
		return nil, fmt.Errorf("export: signed bytes: %w: %v", ErrNotVPEC, err)
	}
	sig, err := signing.ParseSignature(f.Signature)
	if err != nil {
		return nil, fmt.Errorf("export: signature: %w: %v", ErrNotVPEC, err)
	}
	ts, err := signing.DecodeBase64(f.TimestampRFC3161)
	if err != nil {
		return nil, fmt.Errorf("export: %w: %v", ErrTimestamp, err)
	}
	resp, err := AsTimeStampResp(ts)
	if err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	digest := sha256.Sum256(artifact)
	b := bundle{
		MediaType: BundleMediaType,
		VerificationMaterial: verificationMaterial{
			PublicKey:   publicKeyIdentifier{Hint: f.SigningKeyID},
			TlogEntries: []struct{}{},
			TimestampVerificationData: timestampVerificationData{
				RFC3161Timestamps: []rfc3161SignedTimestamp{{SignedTimestamp: resp}},
			},
		},
		MessageSignature: messageSignature{
			MessageDigest: hashOutput{Algorithm: "SHA2_256", Digest: digest[:]},
			Signature:     sig,
		},
	}
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export: encode bundle: %w", err)
	}
	return &Export{Bundle: append(out, '\n'), Artifact: artifact, KeyID: f.SigningKeyID}, nil
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
// timestamp authorities: svc has no certificate authority (Fulcio),
// transparency log or CT log to trust.
type trustedRoot struct {
	MediaType              string                 `json:"mediaType"`
	Tlogs                  []struct{}             `json:"tlogs"`
	CertificateAuthorities []struct{}             `json:"certificateAuthorities"`
	Ctlogs                 []struct{}             `json:"ctlogs"`
	TimestampAuthorities   []certificateAuthority `json:"timestampAuthorities"`
}

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
}

// TrustedRoot returns the Sigstore trusted root (JSON, ending in a newline)
// equivalent to the timestamp authority certificates of trust: one
// timestamp authority per CERTIFICATE block, valid from the certificate's
// notBefore. A CA certificate is the authority's root; the TSA certificate
// and any intermediates come from the token, as svc's verifier takes them.
// A certificate that is not a CA (a TSA certificate pinned directly, which
// svc's trust bundle allows) is listed as both leaf and root: Sigstore's
// chain is leaf first and always ends in a root. Service keys have no place
// in a trusted root: give the key to the verifier (cosign --key), see
// PublicKeyPEM.
func TrustedRoot(trust *signing.Bundle) ([]byte, error) {
	roots := trust.Roots()
	if len(roots) == 0 {
		return nil, fmt.Errorf("trusted root: %w", ErrNoTSARoot)
	}
	tr := trustedRoot{MediaType: TrustedRootMediaType, Tlogs: []struct{}{}, CertificateAuthorities: []struct{}{}, Ctlogs: []struct{}{}}
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
