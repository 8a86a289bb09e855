// Package timestamp implements the RFC 3161 Time-Stamp Protocol parts that svc
// needs to make VPEC credentials provable offline: a request builder
// ([NewRequest]), a small built-in time-stamping authority ([Authority]) and a
// verifier ([Verify]) that checks a token completely.
//
// A VPEC credential is Ed25519-signed and then time-stamped; the message
// imprint of its time-stamp token is SHA-256 over the raw 64 signature bytes.
//
// The underlying libraries (github.com/digitorus/timestamp and
// github.com/digitorus/pkcs7) only check the CMS signature, and only when a
// certificate is embedded. [Verify] therefore performs every check itself:
// response status, CMS signature and signed attributes (content type, message
// digest, ESS signing-certificate binding), message imprint, certificate
// chain to a trusted root at the token's genTime, the RFC 3161 extended key
// usage rules for the TSA certificate, and the nonce.
//
// Every failure returned by [Verify] and [ParseResponse] matches one of the
// sentinel errors of this package with [errors.Is].
package timestamp
