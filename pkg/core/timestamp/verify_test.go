package timestamp

import (
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	dts "github.com/digitorus/timestamp"
)

// badAuthority returns an authority whose TSA certificate template was
// altered by mutate.
func badAuthority(t *testing.T, mutate func(leaf *x509.Certificate)) *Authority {
	return memAuthority(t, AuthorityOptions{}, func(_, leaf *x509.Certificate) { mutate(leaf) })
}

func ekuExtension(t *testing.T, critical bool, oids ...asn1.ObjectIdentifier) pkix.Extension {
	v, err := asn1.Marshal(oids)
	if err != nil {
		t.Fatal(err)
	}
	return pkix.Extension{Id: oidExtKeyUsage, Critical: critical, Value: v}
}

func TestVerify(t *testing.T) {
	a := memAuthority(t, AuthorityOptions{}, nil)
	other := memAuthority(t, AuthorityOptions{}, nil)
	roots := []*x509.Certificate{a.Root()}
	d := digestOf("the signature")

	nonce := big.NewInt(0x1234567890)
	resp := respond(t, a, d, nonce, true)
	tok := tokenOf(t, resp)
	noCert := respond(t, a, d, nil, false)
	parsed := parsedToken(t, resp)

	// Tampering inside the CMS structure.
	sig := parsed.signer.Signature
	badSig := flipAt(t, resp, sig, len(sig)-1)
	contentDigest := sha256.Sum256(parsed.econtent)
	badAttr := flipAt(t, resp, contentDigest[:], 7)
	badContent := flipAt(t, resp, parsed.tst.SerialNumber.Bytes(), 3)

	// An expired TSA certificate at genTime.
	clock := &fakeClock{t: time.Now().Add(-72 * time.Hour)}
	expiring := memAuthority(t, AuthorityOptions{Now: clock.Now, Validity: time.Hour}, nil)
	expiring.allowExpired = true
	clock.Set(time.Now().Add(-70 * time.Hour))
	expired := respond(t, expiring, d, nil, true)
	clock.Set(time.Now().Add(-75 * time.Hour))
	notYetValid := respond(t, expiring, d, nil, true)

	// Authorities whose TSA certificate breaks RFC 3161 section 2.3.
	nonCritical := badAuthority(t, func(l *x509.Certificate) {
		l.ExtraExtensions = nil
		l.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}
	})
	extraEKU := badAuthority(t, func(l *x509.Certificate) {
		l.ExtraExtensions = []pkix.Extension{ekuExtension(t, true, oidKPTimeStamping, asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 3})}
	})
	otherEKU := badAuthority(t, func(l *x509.Certificate) {
		l.ExtraExtensions = []pkix.Extension{ekuExtension(t, true, asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 3})}
	})
	noEKU := badAuthority(t, func(l *x509.Certificate) { l.ExtraExtensions = nil })
	leafCA := badAuthority(t, func(l *x509.Certificate) {
		l.IsCA = true
		l.KeyUsage |= x509.KeyUsageCertSign
	})
	leafCAFlagOnly := badAuthority(t, func(l *x509.Certificate) { l.IsCA = true })
	keyEncipherment := badAuthority(t, func(l *x509.Certificate) { l.KeyUsage |= x509.KeyUsageKeyEncipherment })

	// Rejections, one from each encoder.
	ours, err := rejection(2, failBadAlg, "unsupported hash algorithm")
	if err != nil {
		t.Fatal(err)
	}
	digitorus, err := dts.CreateErrorResponse(dts.Rejection, dts.SystemFailure)
	if err != nil {
		t.Fatal(err)
	}
	waiting, _ := asn1.Marshal(timeStampResp{Status: pkiStatusInfo{Status: 3}})
	unknownStatus, _ := asn1.Marshal(timeStampResp{Status: pkiStatusInfo{Status: 77}})
	grantedNoToken, _ := asn1.Marshal(timeStampResp{Status: pkiStatusInfo{Status: 0}})
	grantedWithMods := append([]byte(nil), resp...)
	if i := bytes.Index(grantedWithMods, []byte{0x30, 0x03, 0x02, 0x01, 0x00}); i < 0 || i > 8 {
		t.Fatal("status not found")
	} else {
		grantedWithMods[i+4] = 1
	}
	integer, _ := asn1.Marshal(42)
	req, _ := NewRequest(d, nil, true)
	sha512Req, _ := (&dts.Request{HashAlgorithm: crypto.SHA512, HashedMessage: make([]byte, 64), Certificates: true}).Marshal()
	sha512Resp, err := a.Respond(sha512Req)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		resp   []byte
		digest []byte
		opts   VerifyOptions
		want   error // nil: success
		msg    string
	}{
		{"valid response", resp, d, VerifyOptions{Roots: roots}, nil, ""},
		{"valid bare token", tok, d, VerifyOptions{Roots: roots}, nil, ""},
		{"valid with nonce", resp, d, VerifyOptions{Roots: roots, Nonce: nonce}, nil, ""},
		{"granted with mods", grantedWithMods, d, VerifyOptions{Roots: roots}, nil, ""},
		{"several roots", resp, d, VerifyOptions{Roots: []*x509.Certificate{other.Root(), nil, a.Root()}}, nil, ""},
		// A TSA certificate may be pinned: trusted directly as a root.
		{"pinned TSA certificate", resp, d, VerifyOptions{Roots: []*x509.Certificate{a.Certificate()}}, nil, ""},
		{"leaf supplied", noCert, d, VerifyOptions{Roots: roots, Intermediates: []*x509.Certificate{a.Certificate()}}, nil, ""},

		{"other data", resp, digestOf("other data"), VerifyOptions{Roots: roots}, ErrImprintMismatch, "other data"},
		{"short digest", resp, d[:16], VerifyOptions{Roots: roots}, ErrImprintMismatch, "32 bytes"},
		{"sha512 imprint, 32-byte digest", sha512Resp, make([]byte, 32), VerifyOptions{Roots: roots}, ErrImprintMismatch, "64 bytes"},
		{"sha512 imprint, other 64-byte digest", sha512Resp, bytes.Repeat([]byte{1}, 64), VerifyOptions{Roots: roots}, ErrImprintMismatch, "other data"},

		{"flipped signature byte", badSig, d, VerifyOptions{Roots: roots}, ErrBadSignature, ""},
		{"flipped message-digest attribute", badAttr, d, VerifyOptions{Roots: roots}, ErrBadSignature, ""},
		{"flipped TSTInfo byte", badContent, d, VerifyOptions{Roots: roots}, ErrBadSignature, "message-digest attribute"},

		{"other authority's root", resp, d, VerifyOptions{Roots: []*x509.Certificate{other.Root()}}, ErrUntrustedTSA, "genTime"},
		{"no roots", resp, d, VerifyOptions{}, ErrUntrustedTSA, "no trusted"},
		{"nil root", resp, d, VerifyOptions{Roots: []*x509.Certificate{nil}}, ErrUntrustedTSA, ""},
		{"expired at genTime", expired, d, VerifyOptions{Roots: []*x509.Certificate{expiring.Root()}}, ErrUntrustedTSA, "expired"},
		{"not yet valid at genTime", notYetValid, d, VerifyOptions{Roots: []*x509.Certificate{expiring.Root()}}, ErrUntrustedTSA, ""},

		{"non-critical EKU", respond(t, nonCritical, d, nil, true), d, VerifyOptions{Roots: []*x509.Certificate{nonCritical.Root()}}, ErrEKU, "not critical"},
		{"extra EKU", respond(t, extraEKU, d, nil, true), d, VerifyOptions{Roots: []*x509.Certificate{extraEKU.Root()}}, ErrEKU, "only"},
		{"other EKU", respond(t, otherEKU, d, nil, true), d, VerifyOptions{Roots: []*x509.Certificate{otherEKU.Root()}}, ErrEKU, "only"},
		{"no EKU", respond(t, noEKU, d, nil, true), d, VerifyOptions{Roots: []*x509.Certificate{noEKU.Root()}}, ErrEKU, "no extended key usage"},
		{"leaf is CA", respond(t, leafCA, d, nil, true), d, VerifyOptions{Roots: []*x509.Certificate{leafCA.Root()}}, ErrEKU, "CA"},
		{"leaf has CA flag", respond(t, leafCAFlagOnly, d, nil, true), d, VerifyOptions{Roots: []*x509.Certificate{leafCAFlagOnly.Root()}}, ErrEKU, "CA"},
		{"leaf key usage", respond(t, keyEncipherment, d, nil, true), d, VerifyOptions{Roots: []*x509.Certificate{keyEncipherment.Root()}}, ErrEKU, "key usage"},

		{"nonce differs", resp, d, VerifyOptions{Roots: roots, Nonce: big.NewInt(7)}, ErrNonceMismatch, "differs"},
		{"nonce missing", noCert, d, VerifyOptions{Roots: roots, Intermediates: []*x509.Certificate{a.Certificate()}, Nonce: nonce}, ErrNonceMismatch, "no nonce"},

		{"no certificate", noCert, d, VerifyOptions{Roots: roots}, ErrNoCertificate, ""},
		{"wrong certificate supplied", noCert, d, VerifyOptions{Roots: roots, Intermediates: []*x509.Certificate{other.Certificate(), nil}}, ErrNoCertificate, ""},

		{"rejection (ours)", ours, d, VerifyOptions{Roots: roots}, ErrNotGranted, "badAlg"},
		{"rejection (digitorus)", digitorus, d, VerifyOptions{Roots: roots}, ErrNotGranted, "systemFailure"},
		{"waiting", waiting, d, VerifyOptions{Roots: roots}, ErrNotGranted, "waiting"},
		{"unknown status", unknownStatus, d, VerifyOptions{Roots: roots}, ErrNotGranted, "77"},

		{"granted without token", grantedNoToken, d, VerifyOptions{Roots: roots}, ErrMalformed, "no TimeStampToken"},
		{"empty", nil, d, VerifyOptions{Roots: roots}, ErrMalformed, "empty"},
		{"garbage", []byte("this is not DER at all"), d, VerifyOptions{Roots: roots}, ErrMalformed, ""},
		{"truncated response", resp[:len(resp)/2], d, VerifyOptions{Roots: roots}, ErrMalformed, ""},
		{"truncated token", tok[:len(tok)-1], d, VerifyOptions{Roots: roots}, ErrMalformed, ""},
		{"one byte", resp[:1], d, VerifyOptions{Roots: roots}, ErrMalformed, ""},
		{"trailing data", append(append([]byte(nil), resp...), 0), d, VerifyOptions{Roots: roots}, ErrMalformed, "trailing"},
		{"integer", integer, d, VerifyOptions{Roots: roots}, ErrMalformed, ""},
		{"a certificate", a.Root().Raw, d, VerifyOptions{Roots: roots}, ErrMalformed, ""},
		{"a request", req, d, VerifyOptions{Roots: roots}, ErrMalformed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			info, err := Verify(tc.resp, tc.digest, tc.opts)
			if tc.want == nil {
				if err != nil || info == nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify: %v, want %v", err, tc.want)
			}
			if info != nil {
				t.Fatalf("Info returned with an error")
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("error %q does not mention %q", err, tc.msg)
			}
			for _, s := range allSentinels {
				if s != tc.want && errors.Is(err, s) && !(tc.want == ErrNotGranted && s == ErrMalformed) {
					t.Errorf("error %q also matches %v", err, s)
				}
			}
		})
	}
}

func TestParseResponse(t *testing.T) {
	clock := &fakeClock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	a := memAuthority(t, AuthorityOptions{Now: clock.Now}, nil)
	d := digestOf("x")
	nonce := big.NewInt(99)
	resp := respond(t, a, d, nonce, true)
	for _, in := range [][]byte{resp, tokenOf(t, resp)} {
		info, err := ParseResponse(in)
		if err != nil {
			t.Fatal(err)
		}
		if !info.GenTime.Equal(clock.Now()) || info.Nonce.Cmp(nonce) != 0 || info.HashAlgorithm != crypto.SHA256 ||
			!info.Policy.Equal(defaultPolicy) || info.Signer == nil || !info.Signer.Equal(a.Certificate()) || info.Accuracy != time.Second {
			t.Errorf("ParseResponse: %+v", info)
		}
	}
	info, err := ParseResponse(respond(t, a, d, nil, false))
	if err != nil || info.Signer != nil || info.Nonce != nil {
		t.Errorf("ParseResponse without certificate: %+v %v", info, err)
	}
	// Untrusting: a token of another authority parses.
	if _, err := ParseResponse(respond(t, memAuthority(t, AuthorityOptions{}, nil), d, nil, true)); err != nil {
		t.Error(err)
	}
	rej, _ := rejection(2, failBadDataFormat, "malformed request")
	if _, err := ParseResponse(rej); !errors.Is(err, ErrNotGranted) || !errors.Is(err, ErrMalformed) {
		t.Errorf("ParseResponse(rejection): %v", err)
	}
	for _, bad := range [][]byte{nil, {}, {0x30}, {0x30, 0x00}, []byte("junk"), resp[:100]} {
		if _, err := ParseResponse(bad); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseResponse(%x): %v", bad, err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	a := memAuthority(b, AuthorityOptions{}, nil)
	d := digestOf("bench")
	resp, err := a.Timestamp(context.Background(), d)
	if err != nil {
		b.Fatal(err)
	}
	opts := VerifyOptions{Roots: []*x509.Certificate{a.Root()}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Verify(resp, d, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTimestamp(b *testing.B) {
	a := memAuthority(b, AuthorityOptions{}, nil)
	d := digestOf("bench")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Timestamp(context.Background(), d); err != nil {
			b.Fatal(err)
		}
	}
}
