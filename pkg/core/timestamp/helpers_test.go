package timestamp

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"math/big"
	"sync"
	"testing"
	"time"
)

// allSentinels lists every sentinel error of the package.
var allSentinels = []error{
	ErrMalformed, ErrNotGranted, ErrImprintMismatch, ErrBadSignature,
	ErrUntrustedTSA, ErrEKU, ErrNonceMismatch, ErrNoCertificate, ErrUnsupportedHash,
}

// matchesSentinel reports whether err matches at least one sentinel.
func matchesSentinel(err error) bool {
	for _, s := range allSentinels {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}

// fakeClock is a settable clock for AuthorityOptions.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func digestOf(s string) []byte {
	d := sha256.Sum256([]byte(s))
	return d[:]
}

// memAuthority builds an in-memory authority, optionally with tampered
// certificate templates.
func memAuthority(t testing.TB, opts AuthorityOptions, mutate func(root, leaf *x509.Certificate)) *Authority {
	t.Helper()
	a, err := newAuthority(opts, mutate)
	if err != nil {
		t.Fatalf("newAuthority: %v", err)
	}
	return a
}

// respond builds a request and answers it with a.
func respond(t testing.TB, a *Authority, digest []byte, nonce *big.Int, certReq bool) []byte {
	t.Helper()
	req, err := NewRequest(digest, nonce, certReq)
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	resp, err := a.Respond(req)
	if err != nil {
		t.Fatalf("Respond: %v", err)
	}
	return resp
}

// tokenOf extracts the bare TimeStampToken from a TimeStampResp.
func tokenOf(t testing.TB, resp []byte) []byte {
	t.Helper()
	var r timeStampResp
	if _, err := asn1.Unmarshal(resp, &r); err != nil {
		t.Fatalf("unmarshal response: %v", err)
	}
	return r.TimeStampToken.FullBytes
}

// flipAt returns a copy of b with the byte at the last occurrence of needle
// plus offset flipped.
func flipAt(t testing.TB, b, needle []byte, offset int) []byte {
	t.Helper()
	i := bytes.LastIndex(b, needle)
	if i < 0 || len(needle) == 0 {
		t.Fatalf("needle not found")
	}
	out := append([]byte(nil), b...)
	out[i+offset] ^= 0x01
	return out
}

// parsedToken parses resp for tests.
func parsedToken(t testing.TB, resp []byte) *token {
	t.Helper()
	tok, err := parseAny(resp)
	if err != nil {
		t.Fatalf("parseAny: %v", err)
	}
	return tok
}

// signingTimeOf reads the signing-time signed attribute of tok.
func signingTimeOf(tok *token, st *time.Time) error {
	attrs, err := signedAttributes(tok.signer.SignedAttrs)
	if err != nil {
		return err
	}
	v, err := singleValue(attrs, oidSigningTime, "signing-time")
	if err != nil {
		return err
	}
	_, err = asn1.Unmarshal(v.FullBytes, st)
	return err
}
