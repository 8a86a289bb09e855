package signing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/svc-gov/svc/pkg/core/tlog"
)

// ErrEmptyBundle reports a trust bundle with no usable content.
var ErrEmptyBundle = errors.New("trust bundle holds no keys or certificates")

// ErrMalformedBundle reports a trust bundle that cannot be parsed.
var ErrMalformedBundle = errors.New("malformed trust bundle")

// Bundle is a trust bundle: the Ed25519 public keys that may sign VPECs and
// profiles, and the root certificates of trusted timestamp authorities.
// On disk it is one PEM file of "PUBLIC KEY" and "CERTIFICATE" blocks,
// and "TRANSPARENCY LOG KEY" blocks for the transparency logs it trusts
// (LogKeyBlock).
type Bundle struct {
	keys  map[string]ed25519.PublicKey
	roots []*x509.Certificate
	logs  []tlog.LogKey // transparency log keys (logkey.go)
}

// NewBundle returns an empty bundle.
func NewBundle() *Bundle { return &Bundle{keys: map[string]ed25519.PublicKey{}} }

// AddKey adds an Ed25519 public key and returns its key id.
func (b *Bundle) AddKey(pub ed25519.PublicKey) string {
	id := KeyID(pub)
	b.keys[id] = pub
	return id
}

// AddRoot adds a trusted timestamp authority root certificate.
func (b *Bundle) AddRoot(c *x509.Certificate) {
	for _, r := range b.roots {
		if bytes.Equal(r.Raw, c.Raw) {
			return
		}
	}
	b.roots = append(b.roots, c)
}

// Key returns the public key with the given id.
func (b *Bundle) Key(id string) (ed25519.PublicKey, error) {
	k, ok := b.keys[id]
	if !ok {
		return nil, fmt.Errorf("%w: key id %q", ErrUnknownKey, id)
	}
	return k, nil
}

// KeyIDs returns the ids of the bundle's keys, sorted.
func (b *Bundle) KeyIDs() []string {
	ids := make([]string, 0, len(b.keys))
	for id := range b.keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Roots returns the trusted timestamp authority roots.
func (b *Bundle) Roots() []*x509.Certificate { return append([]*x509.Certificate(nil), b.roots...) }

// Verify checks sig (a "Ed25519:" signature string) over msg with the key
// named keyID.
func (b *Bundle) Verify(keyID string, msg []byte, sig string) error {
	return b.VerifyParts(keyID, [][]byte{msg}, sig)
}

// Marshal encodes the bundle as PEM: keys sorted by id, then roots.
func (b *Bundle) Marshal() []byte {
	var out bytes.Buffer
	for _, id := range b.KeyIDs() {
		p, _ := MarshalPublicKeyPEM(b.keys[id])
		fmt.Fprintf(&out, "# svc signing key %s\n", id)
		out.Write(p)
	}
	for _, r := range b.roots {
		fmt.Fprintf(&out, "# timestamp authority root: %s\n", r.Subject.String())
		out.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Raw}))
	}
	b.marshalLogKeys(&out)
	return out.Bytes()
}

// ParseBundle reads a PEM trust bundle. Text between blocks is ignored;
// blocks other than PUBLIC KEY and CERTIFICATE, keys that are not Ed25519
// and certificates that do not parse are errors, so a damaged bundle is
// never half-trusted.
func ParseBundle(data []byte) (*Bundle, error) {
	b := NewBundle()
	rest := data
	n := 0
	for {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		n++
		switch block.Type {
		case "PUBLIC KEY":
			pub, err := ParsePublicKeyDER(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: block %d: %w", ErrMalformedBundle, n, err)
			}
			b.AddKey(pub)
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("%w: block %d: certificate: %v", ErrMalformedBundle, n, err)
			}
			b.AddRoot(c)
		case LogKeyBlock:
			k, err := parseLogKeyBlock(block)
			if err != nil {
				return nil, fmt.Errorf("%w: block %d (%s): %w", ErrMalformedBundle, n, LogKeyBlock, err)
			}
			b.AddLogKey(k)
		default:
			return nil, fmt.Errorf("%w: block %d has type %q; a trust bundle holds only PUBLIC KEY, CERTIFICATE and %s blocks", ErrMalformedBundle, n, block.Type, LogKeyBlock)
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no PEM blocks found", ErrMalformedBundle)
	}
	return b, nil
}

// LoadBundle reads and parses the trust bundle at path.
func LoadBundle(path string) (*Bundle, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read trust bundle: %w", err)
	}
	b, err := ParseBundle(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
