package timestamp

import (
	"crypto"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"math/big"
	"testing"
	"time"

	"github.com/digitorus/pkcs7"
)

// TestImprintHashPolicy checks which imprint hash algorithms Verify and
// VerifyData accept: SHA-256, SHA-384 and SHA-512, over the data itself;
// SHA-1, MD5 and unknown algorithms are refused with ErrUnsupportedHash
// (which also matches ErrImprintMismatch).
func TestImprintHashPolicy(t *testing.T) {
	a := memAuthority(t, AuthorityOptions{}, nil)
	data := []byte("the 64 raw signature bytes stand-in")
	leaf := a.Certificate()
	h256 := sha256.Sum256(leaf.Raw)
	ess := essV2(t, nil, h256[:], leaf.SerialNumber, leaf.RawIssuer)
	token := func(alg asn1.ObjectIdentifier, params asn1.RawValue, hashed []byte) []byte {
		imprint, err := asn1.Marshal(messageImprint{HashAlgorithm: pkix.AlgorithmIdentifier{Algorithm: alg, Parameters: params}, HashedMessage: hashed})
		if err != nil {
			t.Fatal(err)
		}
		tst, err := asn1.Marshal(tstInfo{Version: 1, Policy: defaultPolicy, MessageImprint: asn1.RawValue{FullBytes: imprint},
			SerialNumber: big.NewInt(9), GenTime: time.Now().UTC().Truncate(time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		return customToken(t, a, tst, oidTSTInfo, ess)
	}
	s256 := sha256.Sum256(data)
	s384 := sha512.Sum384(data)
	s512 := sha512.Sum512(data)
	sha1Of := []byte("twenty bytes of sha1")
	md5Of := []byte("sixteen bytes md")
	oidMD5 := asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 5}
	tests := []struct {
		name   string
		tok    []byte
		digest []byte // for Verify; VerifyData always gets data
		want   error
	}{
		{"SHA-256", token(oidSHA256, asn1.NullRawValue, s256[:]), s256[:], nil},
		{"SHA-256 without NULL parameters", token(oidSHA256, asn1.RawValue{}, s256[:]), s256[:], nil},
		{"SHA-384", token(oidSHA384, asn1.NullRawValue, s384[:]), s384[:], nil},
		{"SHA-512", token(oidSHA512, asn1.NullRawValue, s512[:]), s512[:], nil},
		{"SHA-1", token(oidSHA1, asn1.NullRawValue, sha1Of), sha1Of, ErrUnsupportedHash},
		{"MD5", token(oidMD5, asn1.NullRawValue, md5Of), md5Of, ErrUnsupportedHash},
		{"unknown algorithm", token(asn1.ObjectIdentifier{1, 2, 3, 4}, asn1.NullRawValue, s256[:]), s256[:], ErrUnsupportedHash},
		{"SHA-256 with parameters", token(oidSHA256, asn1.RawValue{FullBytes: []byte{2, 1, 0}}, s256[:]), s256[:], ErrUnsupportedHash},
		{"SHA-384 imprint over other data", token(oidSHA384, asn1.NullRawValue, s512[:48]), s384[:], ErrImprintMismatch},
	}
	opts := VerifyOptions{Roots: []*x509.Certificate{a.Root()}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errData := VerifyData(tc.tok, data, opts)
			_, errDigest := Verify(tc.tok, tc.digest, opts)
			for _, err := range []error{errData, errDigest} {
				if tc.want == nil {
					if err != nil {
						t.Fatalf("want valid: %v", err)
					}
					continue
				}
				if !errors.Is(err, tc.want) || !errors.Is(err, ErrImprintMismatch) {
					t.Fatalf("got %v, want %v (and ErrImprintMismatch)", err, tc.want)
				}
			}
		})
	}
	// A digest whose length is not the token's algorithm's is refused.
	if _, err := Verify(token(oidSHA384, asn1.NullRawValue, s384[:]), s256[:], opts); !errors.Is(err, ErrImprintMismatch) {
		t.Fatalf("SHA-256 digest for a SHA-384 token: %v", err)
	}
}

// TestSignedAttributeRules checks the signed-attribute rules of the CMS
// verification: a second message-digest attribute is refused, as is a
// signature over the attributes in another order than sent.
func TestSignedAttributeRules(t *testing.T) {
	a := memAuthority(t, AuthorityOptions{}, nil)
	d := digestOf("x")
	resp := respond(t, a, d, nil, true)
	tok := parsedToken(t, resp)
	leaf := a.Certificate()
	h256 := sha256.Sum256(leaf.Raw)
	ess := essV2(t, nil, h256[:], leaf.SerialNumber, leaf.RawIssuer)
	md, _ := asn1.Marshal(make([]byte, 32))
	dup := pkcs7.Attribute{Type: oidMessageDigest, Value: asn1.RawValue{FullBytes: md}}
	bad := customToken(t, a, tok.econtent, oidTSTInfo, ess, dup)
	if _, err := Verify(bad, d, VerifyOptions{Roots: []*x509.Certificate{a.Root()}}); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("duplicate message-digest attribute: %v", err)
	}
}

// TestRequestHashRoundTrip asks the built-in authority for SHA-384 and
// SHA-512 imprints over the same bytes, and verifies each with VerifyData;
// NewRequestHash refuses SHA-1 and wrong digest lengths.
func TestRequestHashRoundTrip(t *testing.T) {
	a := memAuthority(t, AuthorityOptions{}, nil)
	sig := make([]byte, 64)
	for i := range sig {
		sig[i] = byte(i)
	}
	opts := VerifyOptions{Roots: []*x509.Certificate{a.Root()}}
	for _, h := range []crypto.Hash{crypto.SHA256, crypto.SHA384, crypto.SHA512} {
		d := h.New()
		d.Write(sig)
		req, err := NewRequestHash(h, d.Sum(nil), big.NewInt(5), true)
		if err != nil {
			t.Fatalf("%v: %v", h, err)
		}
		resp, err := a.Respond(req)
		if err != nil {
			t.Fatalf("%v: %v", h, err)
		}
		info, err := VerifyData(resp, sig, opts)
		if err != nil {
			t.Fatalf("%v: VerifyData: %v", h, err)
		}
		if info.HashAlgorithm != h {
			t.Fatalf("HashAlgorithm %v, want %v", info.HashAlgorithm, h)
		}
		if _, err := VerifyData(resp, sig[1:], opts); !errors.Is(err, ErrImprintMismatch) {
			t.Fatalf("%v: other data: %v", h, err)
		}
	}
	if _, err := NewRequestHash(crypto.SHA1, make([]byte, 20), nil, true); !errors.Is(err, ErrUnsupportedHash) {
		t.Fatalf("SHA-1 request: %v", err)
	}
	if _, err := NewRequestHash(crypto.SHA384, make([]byte, 32), nil, true); err == nil {
		t.Fatal("SHA-384 request with a 32-byte digest accepted")
	}
}
