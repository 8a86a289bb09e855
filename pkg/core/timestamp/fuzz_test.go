package timestamp

import (
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"testing"
)

// fuzzSeeds returns an authority, the digest its seed tokens time-stamp and
// the seed corpus: a valid response, a bare token, a response without
// certificate, a rejection and garbage.
func fuzzSeeds(f *testing.F) (*Authority, []byte, *big.Int) {
	a := memAuthority(f, AuthorityOptions{}, nil)
	d := digestOf("fuzz")
	nonce := big.NewInt(12345)
	resp := respond(f, a, d, nonce, true)
	f.Add(resp)
	f.Add(tokenOf(f, resp))
	f.Add(respond(f, a, d, nil, false))
	rej, err := rejection(2, failBadAlg, "unsupported hash algorithm")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(rej)
	f.Add([]byte("garbage"))
	f.Add([]byte{})
	f.Add([]byte{0x30, 0x80, 0x00, 0x00})
	f.Add(resp[:len(resp)/3])
	// Real authorities' tokens (RSA, ECDSA, SHA-384/512 imprints, unsorted
	// signed attributes, responses without certificates).
	for _, tc := range realTokens {
		if b, err := os.ReadFile(filepath.Join(realDir, tc.file)); err == nil {
			f.Add(b)
		}
	}
	return a, d, nonce
}

// disablePanicRecovery lets the fuzzer see panics that Verify and
// ParseResponse would otherwise turn into ErrMalformed.
func disablePanicRecovery(f *testing.F) {
	recoverPanics = false
	f.Cleanup(func() { recoverPanics = true })
}

func FuzzVerify(f *testing.F) {
	a, d, nonce := fuzzSeeds(f)
	disablePanicRecovery(f)
	opts := []VerifyOptions{
		{Roots: []*x509.Certificate{a.Root()}, Nonce: nonce},
		{Roots: []*x509.Certificate{a.Root()}, Intermediates: []*x509.Certificate{a.Certificate()}},
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, o := range opts {
			for _, verify := range []func() (*Info, error){
				func() (*Info, error) { return Verify(data, d, o) },
				func() (*Info, error) { return VerifyData(data, []byte("hello"), o) },
			} {
				info, err := verify()
				if err == nil && info == nil {
					t.Fatal("nil Info without error")
				}
				if err != nil && (info != nil || !matchesSentinel(err)) {
					t.Fatalf("error %q matches no sentinel (or Info returned)", err)
				}
			}
		}
	})
}

func FuzzParseResponse(f *testing.F) {
	fuzzSeeds(f)
	disablePanicRecovery(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := ParseResponse(data)
		if err == nil && (info == nil || info.GenTime.IsZero() && info.SerialNumber == nil) {
			t.Fatal("nil or empty Info without error")
		}
		if err != nil && (info != nil || !matchesSentinel(err)) {
			t.Fatalf("error %q matches no sentinel (or Info returned)", err)
		}
	})
}

// FuzzSignerInfo fuzzes the parsers that run after the CMS signature has
// verified (so FuzzVerify rarely reaches them with odd shapes): the signed
// attributes, the ESS signing-certificate attribute, the certificate set and
// the signer identifier. Seeds are the real tokens' SignerInfos.
func FuzzSignerInfo(f *testing.F) {
	a := memAuthority(f, AuthorityOptions{}, nil)
	resp := respond(f, a, digestOf("fuzz"), nil, true)
	seeds := [][]byte{resp}
	for _, tc := range realTokens {
		if b, err := os.ReadFile(filepath.Join(realDir, tc.file)); err == nil {
			seeds = append(seeds, b)
		}
	}
	for _, s := range seeds {
		tok, err := parseAny(s)
		if err != nil {
			continue
		}
		f.Add(tok.signer.SignedAttrs.FullBytes, tok.signer.SID.FullBytes)
	}
	f.Add([]byte{0xa0, 0x00}, []byte{0x80, 0x00})
	f.Add([]byte{0xa0, 0x04, 0x30, 0x02, 0x06, 0x00}, []byte{0x30, 0x00})
	certs := []*x509.Certificate{a.Certificate(), a.Root()}
	f.Fuzz(func(t *testing.T, attrs, sid []byte) {
		var raw, rawSID asn1.RawValue
		if rest, err := asn1.Unmarshal(attrs, &raw); err == nil && len(rest) == 0 {
			m, err := signedAttributes(raw)
			if err == nil {
				if err := checkESS(m, a.Certificate()); err != nil && !errors.Is(err, ErrBadSignature) {
					t.Fatalf("ESS error %v is not ErrBadSignature", err)
				}
				for _, oid := range []asn1.ObjectIdentifier{oidContentType, oidMessageDigest} {
					if _, err := singleValue(m, oid, "x"); err != nil && !errors.Is(err, ErrBadSignature) {
						t.Fatalf("singleValue error %v", err)
					}
				}
			} else if !errors.Is(err, ErrBadSignature) {
				t.Fatalf("signedAttributes error %v is not ErrBadSignature", err)
			}
			if _, err := parseCertificates(raw); err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("parseCertificates error %v", err)
			}
		}
		if rest, err := asn1.Unmarshal(sid, &rawSID); err == nil && len(rest) == 0 {
			findSigner(&signerInfo{SID: rawSID}, certs)
		}
	})
}
