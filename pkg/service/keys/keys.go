package keys

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Algorithm is a signature algorithm a key signs with.
type Algorithm string

// The algorithms svc signs with.
const (
	// Ed25519 is pure Ed25519 (RFC 8032) over the whole message: VPECs,
	// profiles, circuit entries and log checkpoints.
	Ed25519 Algorithm = "ed25519"
	// ECDSAP256 is ECDSA on P-256 over a SHA-256 digest, signatures in
	// ASN.1 DER: the built-in timestamp authority.
	ECDSAP256 Algorithm = "ecdsa-p256-sha256"
)

// KeyIDLength is the number of hex characters of a key id (as pkg/core/signing).
const KeyIDLength = 16

// Sentinel errors, matchable with errors.Is. An error from this package is
// a [*KeyError] naming the key URI and wrapping one of them.
var (
	// ErrBadURI reports a key URI that does not parse or names something
	// this package does not support.
	ErrBadURI = errors.New("malformed key URI")
	// ErrUnreachable reports a key that cannot be used: a module that does
	// not load, a token that is not there, a refused login, a service that
	// does not answer or refuses the credentials.
	ErrUnreachable = errors.New("key unreachable")
	// ErrKeyNotFound reports a key URI that names no key (or more than one).
	ErrKeyNotFound = errors.New("key not found")
	// ErrAlgorithm reports a key of an algorithm svc does not sign with, or
	// not the one the caller asked for.
	ErrAlgorithm = errors.New("unsupported key algorithm")
	// ErrSignerOpts reports crypto.SignerOpts the key cannot honour (a
	// hash function other than SHA-256 for ECDSA, Ed25519ph, a context).
	ErrSignerOpts = errors.New("unsupported signer options")
	// ErrMessageTooLarge reports a message longer than the provider signs
	// in one pure Ed25519 operation (AWS KMS: 4096 bytes).
	ErrMessageTooLarge = errors.New("message too large for the key's provider")
	// ErrSign reports a signing operation that failed or returned a
	// signature that does not verify under the key's public key.
	ErrSign = errors.New("signing failed")
	// ErrPKCS11Unavailable reports a pkcs11: URI in a binary built without
	// cgo.
	ErrPKCS11Unavailable = errors.New("PKCS#11 support not built in (this binary was built with CGO_ENABLED=0)")
	// ErrGenerate reports a key generation refused or failed (the key
	// exists, the provider does not generate keys through svc).
	ErrGenerate = errors.New("key generation failed")
	// ErrClosed reports use of a Signer after Close.
	ErrClosed = errors.New("signer closed")
)

// KeyError is the error of every operation on a key: which key, what was
// being done, and why.
type KeyError struct {
	// URI is the key URI as given (key URIs hold no secrets: a PIN is
	// referred to, never written in one).
	URI string
	// Op is "parse", "open", "sign", "generate" or "close".
	Op string
	// Err wraps one of the package's sentinel errors.
	Err error
}

// Error returns "key URI: op: reason".
func (e *KeyError) Error() string { return fmt.Sprintf("key %s: %s: %v", e.URI, e.Op, e.Err) }

// Unwrap returns the reason.
func (e *KeyError) Unwrap() error { return e.Err }

func keyErr(uri, op string, err error) error {
	var ke *KeyError
	if errors.As(err, &ke) && ke.URI == uri {
		return err
	}
	return &KeyError{URI: uri, Op: op, Err: err}
}

// Options configures [Open] and [Generate]. The zero value reads no
// environment, uses http.DefaultClient's transport for cloud providers and a
// 30 s timeout per remote call.
type Options struct {
	// Getenv resolves the environment variables a URI or a provider
	// refers to: pin-source=env:NAME, VAULT_ADDR, VAULT_TOKEN,
	// TRANSIT_SECRET_ENGINE_PATH. Commands pass os.Getenv; nil reads none.
	Getenv func(string) string
	// Want, if set, is the algorithm the caller needs; a key of another
	// algorithm is refused with ErrAlgorithm when it is opened.
	Want Algorithm
	// PKCS11Module is the module (shared library) used when a pkcs11: URI
	// has no module-path.
	PKCS11Module string
	// PKCS11PIN is the user PIN used when a pkcs11: URI has no pin-source.
	// Commands fill it from configuration, never from a flag.
	PKCS11PIN string
	// PKCS11Sessions bounds the sessions a PKCS#11 signer opens to sign
	// concurrently. Default 4.
	PKCS11Sessions int
	// VaultAddress and VaultToken override VAULT_ADDR and VAULT_TOKEN;
	// VaultTransitPath overrides TRANSIT_SECRET_ENGINE_PATH (default
	// "transit").
	VaultAddress, VaultToken, VaultTransitPath string
	// AWSRegion is the region when an awskms: URI holds no ARN; empty
	// leaves it to the AWS SDK's configuration chain.
	AWSRegion string
	// AWSEndpoint and GCPEndpoint replace the providers' public endpoints
	// (a private endpoint, or a test server). An awskms://HOST/ URI sets
	// the AWS endpoint to https://HOST.
	AWSEndpoint, GCPEndpoint string
	// GCPAccessToken, if set, supplies the OAuth 2.0 access token for
	// Cloud KMS; nil uses Google application default credentials.
	GCPAccessToken func(ctx context.Context) (string, error)
	// HTTPClient is the client for AWS KMS and Cloud KMS requests (Vault
	// uses its own, configured by VAULT_CACERT and friends). nil uses a
	// client with Timeout.
	HTTPClient *http.Client
	// Timeout bounds each remote signing call made through crypto.Signer's
	// Sign, which has no context. Default 30 s.
	Timeout time.Duration
	// NoProbe skips the probe signature Open makes. Only key generation
	// and listing use it; a server must probe.
	NoProbe bool
}

func (o Options) getenv(name string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(name)
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return 30 * time.Second
}

func (o Options) httpClient() *http.Client {
	if o.HTTPClient != nil {
		return o.HTTPClient
	}
	return &http.Client{Timeout: o.timeout()}
}

// backend is one provider's handle on a key.
type backend interface {
	// sign returns the raw 64-byte signature of msg (Ed25519) or the
	// ASN.1 DER ECDSA signature of a SHA-256 digest (ECDSAP256).
	sign(ctx context.Context, msgOrDigest []byte) ([]byte, error)
	close() error
}

// Signer signs with one key wherever it is held. It implements
// crypto.Signer: for an Ed25519 key, Sign takes the whole message and
// crypto.Hash(0); for an ECDSA P-256 key, a SHA-256 digest and
// crypto.SHA256, and returns ASN.1 DER. Its methods are safe for concurrent
// use.
type Signer struct {
	uri      string
	alg      Algorithm
	pub      crypto.PublicKey
	keyID    string
	b        backend
	remote   bool // verify every signature: the key is outside the process
	maxMsg   int  // 0: no limit
	provider string
	timeout  time.Duration
}

// URI returns the key URI the signer was opened from.
func (s *Signer) URI() string { return s.uri }

// Algorithm returns the key's algorithm.
func (s *Signer) Algorithm() Algorithm { return s.alg }

// KeyID returns the key id: the first 16 hex characters of SHA-256 over
// the public key's SubjectPublicKeyInfo DER.
func (s *Signer) KeyID() string { return s.keyID }

// Provider names where the key is held: "file", "pkcs11", "hashivault",
// "awskms", "gcpkms" or "memory".
func (s *Signer) Provider() string { return s.provider }

// Public returns the public key: ed25519.PublicKey or *ecdsa.PublicKey.
func (s *Signer) Public() crypto.PublicKey { return s.pub }

// Sign implements crypto.Signer. rand is ignored (the key's holder has its
// own randomness). Remote calls are bounded by Options.Timeout.
func (s *Signer) Sign(_ io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	return s.SignContext(ctx, digest, opts)
}

// SignContext is Sign bounded by ctx.
func (s *Signer) SignContext(ctx context.Context, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	if err := s.checkOpts(digest, opts); err != nil {
		return nil, keyErr(s.uri, "sign", err)
	}
	if s.b == nil {
		return nil, keyErr(s.uri, "sign", ErrClosed)
	}
	sig, err := s.b.sign(ctx, digest)
	if err != nil {
		if !errors.Is(err, ErrSign) && !errors.Is(err, ErrUnreachable) {
			err = fmt.Errorf("%w: %w", ErrSign, err)
		}
		return nil, keyErr(s.uri, "sign", err)
	}
	if s.remote {
		if err := verify(s.pub, digest, sig); err != nil {
			return nil, keyErr(s.uri, "sign", fmt.Errorf("%w: the signature returned does not verify under the public key of key id %s loaded when the key was opened (was the key replaced or rotated at the provider? rotate svc keys with a new trust root instead)", ErrSign, s.keyID))
		}
	}
	return sig, nil
}

func (s *Signer) checkOpts(digest []byte, opts crypto.SignerOpts) error {
	switch s.alg {
	case Ed25519:
		if opts == nil || opts.HashFunc() != 0 {
			return fmt.Errorf("%w: Ed25519 keys sign the whole message (pure Ed25519, crypto.Hash(0)); Ed25519ph is not supported", ErrSignerOpts)
		}
		if o, ok := opts.(*ed25519.Options); ok && o.Context != "" {
			return fmt.Errorf("%w: Ed25519ctx (a context string) is not supported", ErrSignerOpts)
		}
		if s.maxMsg > 0 && len(digest) > s.maxMsg {
			return fmt.Errorf("%w: %d bytes; %s signs at most %d bytes with pure Ed25519: hold this key in PKCS#11, Vault or a file instead", ErrMessageTooLarge, len(digest), s.provider, s.maxMsg)
		}
	case ECDSAP256:
		if opts == nil || opts.HashFunc() != crypto.SHA256 {
			return fmt.Errorf("%w: ECDSA P-256 keys sign SHA-256 digests (crypto.SHA256)", ErrSignerOpts)
		}
		if len(digest) != sha256.Size {
			return fmt.Errorf("%w: digest has %d bytes, want %d (SHA-256)", ErrSignerOpts, len(digest), sha256.Size)
		}
	}
	return nil
}

// SignMessage signs msg: Ed25519 over msg itself, ECDSA P-256 over its
// SHA-256 digest. This is what svc's document signatures call.
func (s *Signer) SignMessage(ctx context.Context, msg []byte) ([]byte, error) {
	if s.alg == ECDSAP256 {
		d := sha256.Sum256(msg)
		return s.SignContext(ctx, d[:], crypto.SHA256)
	}
	return s.SignContext(ctx, msg, crypto.Hash(0))
}

// Close releases the key's resources (PKCS#11 sessions, the module when
// no other signer uses it). Signing after Close fails with ErrClosed.
func (s *Signer) Close() error {
	if s.b == nil {
		return nil
	}
	err := s.b.close()
	s.b = nil
	if err != nil {
		return keyErr(s.uri, "close", err)
	}
	return nil
}

// KeyID returns svc's key id of pub (ed25519.PublicKey, *ecdsa.PublicKey
// or anything x509.MarshalPKIXPublicKey encodes): the first 16 hex
// characters of SHA-256 over its SubjectPublicKeyInfo DER. For Ed25519
// keys it equals pkg/core/signing's KeyID.
func KeyID(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", fmt.Errorf("%w: encode public key: %v", ErrAlgorithm, err)
	}
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])[:KeyIDLength], nil
}

// algorithmOf returns the algorithm of a public key svc signs with.
func algorithmOf(pub crypto.PublicKey) (Algorithm, error) {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		if len(k) != ed25519.PublicKeySize {
			return "", fmt.Errorf("%w: Ed25519 public key of %d bytes", ErrAlgorithm, len(k))
		}
		return Ed25519, nil
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return "", fmt.Errorf("%w: ECDSA key on %s; svc signs with P-256 only", ErrAlgorithm, k.Curve.Params().Name)
		}
		return ECDSAP256, nil
	default:
		return "", fmt.Errorf("%w: %T; svc signs with Ed25519 or ECDSA P-256", ErrAlgorithm, pub)
	}
}

// verify checks sig over msgOrDigest by pub.
func verify(pub crypto.PublicKey, msgOrDigest, sig []byte) error {
	switch k := pub.(type) {
	case ed25519.PublicKey:
		if len(sig) == ed25519.SignatureSize && ed25519.Verify(k, msgOrDigest, sig) {
			return nil
		}
	case *ecdsa.PublicKey:
		if ecdsa.VerifyASN1(k, msgOrDigest, sig) {
			return nil
		}
	}
	return ErrSign
}

// newSigner finishes a Signer for a backend that has found its public key:
// algorithm, key id, the caller's wanted algorithm, and the probe.
func newSigner(ctx context.Context, uri, provider string, pub crypto.PublicKey, b backend, remote bool, opts Options) (*Signer, error) {
	alg, err := algorithmOf(pub)
	if err != nil {
		return nil, err
	}
	if opts.Want != "" && alg != opts.Want {
		return nil, fmt.Errorf("%w: the key is %s, this use needs %s", ErrAlgorithm, alg, opts.Want)
	}
	id, err := KeyID(pub)
	if err != nil {
		return nil, err
	}
	s := &Signer{uri: uri, alg: alg, pub: pub, keyID: id, b: b, remote: remote, provider: provider, timeout: opts.timeout()}
	if provider == "awskms" && alg == Ed25519 {
		s.maxMsg = AWSMaxMessage
	}
	if !opts.NoProbe {
		if err := s.probe(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// probeMessage is what Open signs to prove the key can sign.
const probeMessage = "svc key probe: this key can sign; the signature is discarded"

// probe signs probeMessage and verifies the result, whatever the backend.
func (s *Signer) probe(ctx context.Context) error {
	sig, err := s.SignMessage(ctx, []byte(probeMessage))
	if err != nil {
		var ke *KeyError
		if errors.As(err, &ke) {
			err = ke.Err
		}
		return fmt.Errorf("probe signature: %w", err)
	}
	msg := []byte(probeMessage)
	if s.alg == ECDSAP256 {
		d := sha256.Sum256(msg)
		msg = d[:]
	}
	if verify(s.pub, msg, sig) != nil {
		return fmt.Errorf("%w: probe signature does not verify under the key's public key", ErrSign)
	}
	return nil
}

// FromPrivateKey returns a Signer for a key held in memory (an
// ed25519.PrivateKey or a P-256 *ecdsa.PrivateKey), named uri in errors.
// Tests and the file provider use it.
func FromPrivateKey(uri string, priv crypto.Signer) (*Signer, error) {
	b, err := newMemoryBackend(priv)
	if err != nil {
		return nil, keyErr(uri, "open", err)
	}
	s, err := newSigner(context.Background(), uri, "memory", priv.Public(), b, false, Options{NoProbe: true})
	if err != nil {
		return nil, keyErr(uri, "open", err)
	}
	return s, nil
}

// Open opens the key named by uri. It loads the public key, checks the
// algorithm (and opts.Want), and signs one probe message, so that a key
// that is unreachable, absent, of the wrong kind or not allowed to sign is
// an error here, naming the URI and why. The caller closes the Signer.
func Open(ctx context.Context, uri string, opts Options) (*Signer, error) {
	u, err := ParseURI(uri)
	if err != nil {
		return nil, err
	}
	var s *Signer
	switch u.Scheme {
	case SchemeFile:
		s, err = openFile(ctx, u, opts)
	case SchemePKCS11:
		s, err = openPKCS11(ctx, u, opts)
	case SchemeVault, SchemeOpenBao:
		s, err = openVault(ctx, u, opts)
	case SchemeAWS:
		s, err = openAWS(ctx, u, opts)
	case SchemeGCP:
		s, err = openGCP(ctx, u, opts)
	default:
		err = fmt.Errorf("%w: scheme %q", ErrBadURI, u.Scheme)
	}
	if err != nil {
		return nil, keyErr(uri, "open", err)
	}
	return s, nil
}
