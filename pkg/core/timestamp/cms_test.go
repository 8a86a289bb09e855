package timestamp

import (
	"crypto/sha1" //nolint:gosec // ESSCertID v1 uses SHA-1
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/digitorus/pkcs7"
)

// customToken signs content with a's TSA key, with the given encapsulated
// content type and extra signed attributes, and embeds a's certificate.
func customToken(t *testing.T, a *Authority, content []byte, contentType asn1.ObjectIdentifier, attrs ...pkcs7.Attribute) []byte {
	t.Helper()
	sd, err := pkcs7.NewSignedData(content)
	if err != nil {
		t.Fatal(err)
	}
	sd.SetDigestAlgorithm(pkcs7.OIDDigestAlgorithmSHA256)
	sd.SetContentType(contentType)
	sd.GetSignedData().Version = 3
	if err := sd.AddSigner(a.leaf, a.key, pkcs7.SignerInfoConfig{ExtraSignedAttributes: attrs}); err != nil {
		t.Fatal(err)
	}
	tok, err := sd.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func essV2(t *testing.T, hashAlg asn1.ObjectIdentifier, certHash []byte, serial *big.Int, issuer []byte) pkcs7.Attribute {
	t.Helper()
	id := essCertIDv2{CertHash: certHash}
	if hashAlg != nil {
		id.HashAlgorithm = pkix.AlgorithmIdentifier{Algorithm: hashAlg}
	}
	if serial != nil {
		id.IssuerSerial = issuerSerial{Issuer: []asn1.RawValue{{Class: asn1.ClassContextSpecific, Tag: 4, IsCompound: true, Bytes: issuer}}, Serial: serial}
	}
	b, err := asn1.Marshal(signingCertificateV2{Certs: []essCertIDv2{id}})
	if err != nil {
		t.Fatal(err)
	}
	return pkcs7.Attribute{Type: oidSigningCert2, Value: asn1.RawValue{FullBytes: b}}
}

func TestSignedAttributesAndContent(t *testing.T) {
	a := memAuthority(t, AuthorityOptions{}, nil)
	other := memAuthority(t, AuthorityOptions{}, nil)
	d := digestOf("data")
	imprint, _ := asn1.Marshal(messageImprint{HashAlgorithm: pkix.AlgorithmIdentifier{Algorithm: oidSHA256, Parameters: asn1.NullRawValue}, HashedMessage: d})
	tst := func(mod func(*tstInfo)) []byte {
		v := tstInfo{Version: 1, Policy: defaultPolicy, MessageImprint: asn1.RawValue{FullBytes: imprint},
			SerialNumber: big.NewInt(7), GenTime: time.Now().UTC().Truncate(time.Second)}
		if mod != nil {
			mod(&v)
		}
		b, err := asn1.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	leaf := a.Certificate()
	h256 := sha256.Sum256(leaf.Raw)
	h384 := sha512.Sum384(leaf.Raw)
	h1 := sha1.Sum(leaf.Raw) //nolint:gosec // ESSCertID v1
	otherHash := sha256.Sum256(other.Certificate().Raw)
	v1, _ := asn1.Marshal(signingCertificate{Certs: []essCertID{{CertHash: h1[:]}}})
	essV1 := pkcs7.Attribute{Type: oidSigningCert, Value: asn1.RawValue{FullBytes: v1}}
	good := essV2(t, nil, h256[:], leaf.SerialNumber, leaf.RawIssuer)

	tests := []struct {
		name string
		tok  []byte
		want error
		msg  string
	}{
		{"ESS v2, issuerSerial", customToken(t, a, tst(nil), oidTSTInfo, good), nil, ""},
		{"ESS v2, no issuerSerial", customToken(t, a, tst(nil), oidTSTInfo, essV2(t, nil, h256[:], nil, nil)), nil, ""},
		{"ESS v2, SHA-384", customToken(t, a, tst(nil), oidTSTInfo, essV2(t, oidSHA384, h384[:], nil, nil)), nil, ""},
		{"ESS v1", customToken(t, a, tst(nil), oidTSTInfo, essV1), nil, ""},
		{"no ESS attribute", customToken(t, a, tst(nil), oidTSTInfo), ErrBadSignature, "no ESS"},
		{"ESS names another certificate", customToken(t, a, tst(nil), oidTSTInfo, essV2(t, nil, otherHash[:], nil, nil)), ErrBadSignature, "another certificate"},
		{"ESS names another serial", customToken(t, a, tst(nil), oidTSTInfo, essV2(t, nil, h256[:], big.NewInt(1), leaf.RawIssuer)), ErrBadSignature, "another serial"},
		{"ESS names another issuer", customToken(t, a, tst(nil), oidTSTInfo, essV2(t, nil, h256[:], leaf.SerialNumber, leaf.RawSubject)), ErrBadSignature, "another issuer"},
		{"ESS with MD5-like unknown hash", customToken(t, a, tst(nil), oidTSTInfo, essV2(t, asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 5}, h256[:], nil, nil)), ErrBadSignature, "unsupported hash"},
		{"id-data content", customToken(t, a, tst(nil), pkcs7.OIDData, good), ErrMalformed, "id-ct-TSTInfo"},
		{"TSTInfo version 2", customToken(t, a, tst(func(v *tstInfo) { v.Version = 2 }), oidTSTInfo, good), ErrMalformed, "version"},
		{"critical TSTInfo extension", customToken(t, a, tst(func(v *tstInfo) {
			v.Extensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 2, 3}, Critical: true, Value: []byte{5, 0}}}
		}), oidTSTInfo, good), ErrMalformed, "critical extension"},
		{"non-critical TSTInfo extension", customToken(t, a, tst(func(v *tstInfo) {
			v.Extensions = []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 2, 3}, Value: []byte{5, 0}}}
		}), oidTSTInfo, good), nil, ""},
		{"TSTInfo not DER", customToken(t, a, []byte("hello"), oidTSTInfo, good), ErrMalformed, "TSTInfo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Verify(tc.tok, d, VerifyOptions{Roots: []*x509.Certificate{a.Root()}})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v", err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Verify: %v, want %v mentioning %q", err, tc.want, tc.msg)
			}
		})
	}
}
