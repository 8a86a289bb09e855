// Package timestamp implements the RFC 3161 Time-Stamp Protocol parts that svc
// needs to make VPEC credentials provable offline: a request builder
// ([NewRequest]), a small built-in time-stamping authority ([Authority]) and a
// verifier ([Verify]) that checks a token completely.
//
// A VPEC credential is Ed25519-signed and then time-stamped over the raw 64
// signature bytes: svc requests the imprint SHA-256(signature), and
// [VerifyData] accepts an imprint by SHA-256, SHA-384 or SHA-512 of those
// bytes (SHA-1 and MD5 are refused with [ErrUnsupportedHash]).
//
// [Verify] performs every check itself: response status, the CMS signature
// over the signed attributes exactly as the TSA sent them (some TSAs do not
// sort them into DER order, and github.com/digitorus/pkcs7, which re-encodes
// them, cannot verify those), the content-type, message-digest and ESS
// signing-certificate attributes, the message imprint, the certificate chain
// to a trusted root at the token's genTime, the RFC 3161 extended key usage
// rules for the TSA certificate (on that certificate only, not its CAs), and
// the nonce. github.com/digitorus/timestamp and github.com/digitorus/pkcs7
// build requests and the built-in authority's tokens.
//
// Tokens from real authorities (GlobalSign, Microsoft, DigiCert, Symantec,
// FreeTSA, IdenTrust, the Sigstore staging TSA) are test vectors in
// testdata/timestamps, checked against openssl ts -verify.
//
// Every failure returned by [Verify] and [ParseResponse] matches one of the
// sentinel errors of this package with [errors.Is].
package timestamp
