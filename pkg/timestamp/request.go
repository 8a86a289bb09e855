package timestamp

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
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
	if len(digest) != sha256.Size {
		return nil, fmt.Errorf("timestamp: new request: digest must be a %d-byte SHA-256 digest, got %d bytes", sha256.Size, len(digest))
	}
	if nonce != nil && nonce.Sign() <= 0 {
		return nil, errors.New("timestamp: new request: nonce must be positive")
	}
	req := dts.Request{
		HashAlgorithm: crypto.SHA256,
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
