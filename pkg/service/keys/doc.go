// Package keys opens svc's signing keys wherever they are held and signs with
// them through one type, [*Signer], which is a [crypto.Signer].
//
// A key is named by a key URI:
//
//	file:///etc/svc/signing-key.pem                 PKCS#8 PEM on disk (the default custody)
//	pkcs11:token=svc;object=vpec?module-path=...    an HSM or token through PKCS#11 (RFC 7512)
//	hashivault://svc-vpec                           HashiCorp Vault or OpenBao transit
//	awskms:///alias/svc-tsa                         AWS KMS
//	gcpkms://projects/P/locations/L/keyRings/R/cryptoKeys/K/cryptoKeyVersions/1
//
// Two algorithms are supported: Ed25519 (VPECs, profiles, circuit entries,
// log checkpoints) and ECDSA P-256 with SHA-256 (the built-in timestamp
// authority). Which provider signs which is in docs/KEYS.md and in
// [Providers].
//
// [Open] loads the public key, derives the key id (the first 16 hex
// characters of SHA-256 over the SubjectPublicKeyInfo DER, as
// pkg/core/signing does) and signs one probe message, so a key that cannot sign
// fails when the service starts, not at its first VPEC. Every signature a
// provider outside the process returns is verified against that public key
// before it is handed out. A failure is an error naming the key URI; there
// is never a fallback to another key.
//
// The package reads no environment variable itself: the caller passes
// [Options.Getenv] (os.Getenv in a command) for the names a URI or a
// provider refers to (pin-source=env:NAME, VAULT_ADDR, VAULT_TOKEN). The AWS
// SDK and Google's application default credentials read their own standard
// variables and files.
//
// PKCS#11 needs cgo; a binary built with CGO_ENABLED=0 (svc-verify never
// imports this package) reports [ErrPKCS11Unavailable] for pkcs11: URIs.
package keys
