package timestamp_test

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"os"
	"path/filepath"

	"github.com/svc-gov/svc/pkg/core/timestamp"
)

// A credential's signature is time-stamped by the built-in authority and
// the token is verified offline against the authority's root.
func Example() {
	dir, err := os.MkdirTemp("", "tsa-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	tsa, err := timestamp.LoadOrInitAuthority(filepath.Join(dir, "tsa"), timestamp.AuthorityOptions{})
	if err != nil {
		panic(err)
	}
	signature := make([]byte, 64) // the raw Ed25519 signature bytes of a VPEC
	digest := sha256.Sum256(signature)
	resp, err := tsa.Timestamp(context.Background(), digest[:])
	if err != nil {
		panic(err)
	}

	info, err := timestamp.Verify(resp, digest[:], timestamp.VerifyOptions{
		Roots: []*x509.Certificate{tsa.Root()},
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("verified, policy", info.Policy)
	// Output: verified, policy 1.3.6.1.4.1.32473.1
}
