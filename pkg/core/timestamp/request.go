package timestamp

import (
	"crypto"
	"crypto/rand"
	_ "crypto/sha512" // SHA-384 and SHA-512 requests
	"errors"
	"fmt"
	"math/big"

	dts "github.com/digitorus/timestamp"
)

// NewRequest builds a DER-encoded RFC 3161 TimeStampReq for a SHA-256
// digest, which must be exactly 32 bytes. nonce may be nil; when given it
// must be positive. certReq asks the TSA to embed its certificate in the
// token.
func NewRequest(digest []byte, nonce *big.Int, certReq bool) ([]byte, error) {
	return NewRequestHash(crypto.SHA256, digest, nonce, certReq)
}

// NewRequestHash is [NewRequest] for a digest by h, which must be SHA-256,
// SHA-384 or SHA-512 (the imprint algorithms [Verify] accepts); digest must
// be h.Size() bytes.
func NewRequestHash(h crypto.Hash, digest []byte, nonce *big.Int, certReq bool) ([]byte, error) {
	if h != crypto.SHA256 && h != crypto.SHA384 && h != crypto.SHA512 {
		return nil, fmt.Errorf("timestamp: new request: %w: %v; accepted: SHA-256, SHA-384, SHA-512", ErrUnsupportedHash, h)
	}
	if len(digest) != h.Size() {
		return nil, fmt.Errorf("timestamp: new request: digest must be a %d-byte %v digest, got %d bytes", h.Size(), h, len(digest))
	}
	if nonce != nil && nonce.Sign() <= 0 {
		return nil, errors.New("timestamp: new request: nonce must be positive")
	}
	req := dts.Request{
		HashAlgorithm: h,
		HashedMessage: append([]byte(nil), digest...),
		Certificates:  certReq,
	}
	if nonce != nil {
		req.Nonce = new(big.Int).Set(nonce)
	}
	der, err := req.Marshal()
	if err != nil {
		return nil, fmt.Errorf("timestamp: new request: encode TimeStampReq: %w", err)
	}
	return der, nil
}

// NewNonce returns a random positive nonce of at most 64 bits, drawn from
// crypto/rand.
func NewNonce() (*big.Int, error) {
	return randomPositive(64)
}

// randomPositive returns a uniformly random integer in [1, 2^bits).
func randomPositive(bits uint) (*big.Int, error) {
	limit := new(big.Int).Lsh(big.NewInt(1), bits)
	for {
		n, err := rand.Int(rand.Reader, limit)
		if err != nil {
			return nil, fmt.Errorf("timestamp: read random number: %w", err)
		}
		if n.Sign() > 0 {
			return n, nil
		}
	}
}
