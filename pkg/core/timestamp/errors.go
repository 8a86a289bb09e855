package timestamp

import "errors"

// Sentinel errors returned (wrapped, with context) by [Verify],
// [ParseResponse] and the other functions of this package. Match them with
// [errors.Is].
var (
	// ErrMalformed means the response or token cannot be parsed (it is not
	// the expected DER structure), or it carries no usable token. A response
	// whose status is not granted matches both ErrMalformed and
	// ErrNotGranted, because it holds no token.
	ErrMalformed = errors.New("malformed time-stamp response")

	// ErrNotGranted means the PKIStatus of the response is neither granted
	// nor grantedWithMods. The wrapping error text carries the status, the
	// failure information and any status strings the TSA sent.
	ErrNotGranted = errors.New("time-stamp request not granted")

	// ErrImprintMismatch means the message imprint in the token differs from
	// the digest of the data, or its hash algorithm is not one of SHA-256,
	// SHA-384 and SHA-512 (then the error matches ErrUnsupportedHash too).
	ErrImprintMismatch = errors.New("time-stamp message imprint mismatch")

	// ErrUnsupportedHash means the token uses a hash algorithm svc refuses:
	// SHA-1, MD5 or an unknown one, for the message imprint (the error also
	// matches ErrImprintMismatch) or for the CMS signature (the error also
	// matches ErrBadSignature). Accepted: SHA-256, SHA-384, SHA-512.
	ErrUnsupportedHash = errors.New("time-stamp hash algorithm refused")

	// ErrBadSignature means the CMS signature of the token, or one of its
	// signed attributes (content type, message digest, ESS signing
	// certificate), does not verify.
	ErrBadSignature = errors.New("time-stamp signature invalid")

	// ErrUntrustedTSA means the TSA certificate does not chain to one of the
	// trusted roots at the token's genTime (this includes a certificate that
	// was expired or not yet valid at genTime).
	ErrUntrustedTSA = errors.New("time-stamp authority not trusted")

	// ErrEKU means the TSA certificate violates the RFC 3161 rules: its
	// extended key usage extension must be present, critical and contain
	// only id-kp-timeStamping, and it must not be a CA certificate.
	ErrEKU = errors.New("time-stamp authority certificate usage invalid")

	// ErrNonceMismatch means a nonce was expected but the token carries none
	// or a different one.
	ErrNonceMismatch = errors.New("time-stamp nonce mismatch")

	// ErrNoCertificate means the token does not embed the signer's
	// certificate and none of the supplied certificates is the signer's.
	ErrNoCertificate = errors.New("time-stamp signer certificate not found")
)
