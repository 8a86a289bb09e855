package timestamp

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	_ "crypto/sha1" // ESS signing-certificate (v1) identifiers are SHA-1 hashes
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"fmt"
	"math/big"
)

// This file verifies the CMS SignedData of a time-stamp token itself, over
// the signed attributes exactly as the TSA sent them. github.com/digitorus/pkcs7
// re-encodes the attributes in DER order before checking the signature, which
// fails for TSAs whose attributes are not sorted (DigiCert's SHA2 Timestamp
// Responder, 2018): the signature covers the bytes received (RFC 5652 §5.4),
// and OpenSSL and .NET check those bytes too.

// Signature and public-key algorithm identifiers accepted in a SignerInfo.
var (
	oidRSAEncryption   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 1}
	oidSHA256WithRSA   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 11}
	oidSHA384WithRSA   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 12}
	oidSHA512WithRSA   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 13}
	oidSHA1WithRSA     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 1, 5}
	oidECPublicKey     = asn1.ObjectIdentifier{1, 2, 840, 10045, 2, 1}
	oidECDSAWithSHA1   = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 1}
	oidECDSAWithSHA256 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 2}
	oidECDSAWithSHA384 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 3}
	oidECDSAWithSHA512 = asn1.ObjectIdentifier{1, 2, 840, 10045, 4, 3, 4}
	oidEd25519         = asn1.ObjectIdentifier{1, 3, 101, 112}
	oidMessageDigest   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 4}
	oidMD5             = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 5}
)

// signedData is SignedData of RFC 5652 §5.1, with the parts svc checks kept
// raw.
type signedData struct {
	Version          int
	DigestAlgorithms asn1.RawValue
	EncapContentInfo encapContentInfo
	Certificates     asn1.RawValue `asn1:"optional,tag:0"`
	CRLs             asn1.RawValue `asn1:"optional,tag:1"`
	SignerInfos      []signerInfo  `asn1:"set"`
}

// signerInfo is SignerInfo of RFC 5652 §5.3. SignedAttrs keeps the bytes as
// received, with their [0] IMPLICIT tag.
type signerInfo struct {
	Version            int
	SID                asn1.RawValue
	DigestAlgorithm    pkix.AlgorithmIdentifier
	SignedAttrs        asn1.RawValue `asn1:"optional,tag:0"`
	SignatureAlgorithm pkix.AlgorithmIdentifier
	Signature          []byte
	UnsignedAttrs      asn1.RawValue `asn1:"optional,tag:1"`
}

// issuerAndSerial is IssuerAndSerialNumber of RFC 5652 §10.2.4.
type issuerAndSerial struct {
	Issuer asn1.RawValue
	Serial *big.Int
}

// attribute is one signed attribute; Values is the raw SET OF values.
type attribute struct {
	Type   asn1.ObjectIdentifier
	Values asn1.RawValue
}

// parseCertificates parses the [0] IMPLICIT CertificateSet of a SignedData.
func parseCertificates(raw asn1.RawValue) ([]*x509.Certificate, error) {
	if len(raw.FullBytes) == 0 {
		return nil, nil
	}
	if !raw.IsCompound {
		return nil, malformed("SignedData certificates are not a SET")
	}
	certs, err := x509.ParseCertificates(raw.Bytes)
	if err != nil {
		return nil, malformed("SignedData certificates: %v", err)
	}
	return certs, nil
}

// findSigner returns the certificate among certs that the signer identifier
// names (issuer and serial number, or subject key identifier), or nil.
func findSigner(si *signerInfo, certs []*x509.Certificate) *x509.Certificate {
	sid := si.SID
	if sid.Class == asn1.ClassContextSpecific && sid.Tag == 0 && !sid.IsCompound {
		for _, c := range certs {
			if len(c.SubjectKeyId) > 0 && bytes.Equal(c.SubjectKeyId, sid.Bytes) {
				return c
			}
		}
		return nil
	}
	var is issuerAndSerial
	if rest, err := asn1.Unmarshal(sid.FullBytes, &is); err != nil || len(rest) > 0 || is.Serial == nil {
		return nil
	}
	for _, c := range certs {
		if bytes.Equal(c.RawIssuer, is.Issuer.FullBytes) && c.SerialNumber.Cmp(is.Serial) == 0 {
			return c
		}
	}
	return nil
}

// signedAttributes parses the signed attributes as received. It refuses
// duplicate attribute types among those svc relies on.
func signedAttributes(raw asn1.RawValue) (map[string][]asn1.RawValue, error) {
	attrs := map[string][]asn1.RawValue{}
	rest := raw.Bytes
	for len(rest) > 0 {
		var a attribute
		var err error
		rest, err = asn1.Unmarshal(rest, &a)
		if err != nil {
			return nil, fmt.Errorf("%w: signed attributes: %v", ErrBadSignature, err)
		}
		if a.Values.Class != asn1.ClassUniversal || a.Values.Tag != asn1.TagSet || !a.Values.IsCompound {
			return nil, fmt.Errorf("%w: signed attribute %v: values are not a SET", ErrBadSignature, a.Type)
		}
		key := a.Type.String()
		if _, dup := attrs[key]; dup {
			return nil, fmt.Errorf("%w: signed attribute %v appears twice", ErrBadSignature, a.Type)
		}
		var vals []asn1.RawValue
		vrest := a.Values.Bytes
		for len(vrest) > 0 {
			var v asn1.RawValue
			vrest, err = asn1.Unmarshal(vrest, &v)
			if err != nil {
				return nil, fmt.Errorf("%w: signed attribute %v: %v", ErrBadSignature, a.Type, err)
			}
			vals = append(vals, v)
		}
		attrs[key] = vals
	}
	return attrs, nil
}

// singleValue returns the only value of a signed attribute.
func singleValue(attrs map[string][]asn1.RawValue, oid asn1.ObjectIdentifier, name string) (asn1.RawValue, error) {
	vals, ok := attrs[oid.String()]
	if !ok {
		return asn1.RawValue{}, fmt.Errorf("%w: no %s signed attribute", ErrBadSignature, name)
	}
	if len(vals) != 1 {
		return asn1.RawValue{}, fmt.Errorf("%w: the %s signed attribute has %d values, want 1", ErrBadSignature, name, len(vals))
	}
	return vals[0], nil
}

// acceptedHash maps a digest algorithm to SHA-256, SHA-384 or SHA-512. SHA-1
// and MD5 are refused with ErrUnsupportedHash, anything else with
// ErrUnsupportedHash too (unknown algorithm). what names the use, for the
// message.
func acceptedHash(alg pkix.AlgorithmIdentifier, what string) (crypto.Hash, error) {
	if p := alg.Parameters; len(p.FullBytes) != 0 && !bytes.Equal(p.FullBytes, asn1.NullBytes) {
		return 0, fmt.Errorf("%w: %s hash algorithm %v has unexpected parameters", ErrUnsupportedHash, what, alg.Algorithm)
	}
	switch h := hashForOID(alg.Algorithm); h {
	case crypto.SHA256, crypto.SHA384, crypto.SHA512:
		return h, nil
	case crypto.SHA1:
		return 0, fmt.Errorf("%w: %s uses SHA-1, which is refused (collisions are practical); accepted: SHA-256, SHA-384, SHA-512", ErrUnsupportedHash, what)
	}
	if alg.Algorithm.Equal(oidMD5) {
		return 0, fmt.Errorf("%w: %s uses MD5, which is refused; accepted: SHA-256, SHA-384, SHA-512", ErrUnsupportedHash, what)
	}
	return 0, fmt.Errorf("%w: %s uses unknown hash algorithm %v; accepted: SHA-256, SHA-384, SHA-512", ErrUnsupportedHash, what, alg.Algorithm)
}

// checkSignerInfo verifies the SignerInfo of a token: its digest algorithm,
// the signature over the signed attributes as received, the content-type
// and message-digest attributes, and the ESS signing-certificate attribute
// binding signer. Errors wrap ErrBadSignature (and ErrUnsupportedHash for a
// refused digest algorithm).
func checkSignerInfo(si *signerInfo, econtent []byte, signer *x509.Certificate) error {
	if len(si.SignedAttrs.FullBytes) == 0 {
		return fmt.Errorf("%w: no signed attributes", ErrBadSignature)
	}
	h, err := acceptedHash(si.DigestAlgorithm, "the CMS signature's digest algorithm")
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadSignature, err)
	}
	// RFC 5652 §5.4: the signature covers the signed attributes with an
	// EXPLICIT SET OF tag instead of the [0] IMPLICIT tag; everything else
	// is taken exactly as received.
	signed := append([]byte(nil), si.SignedAttrs.FullBytes...)
	signed[0] = 0x31
	if err := verifySignature(signer, si.SignatureAlgorithm, h, signed, si.Signature); err != nil {
		return err
	}

	attrs, err := signedAttributes(si.SignedAttrs)
	if err != nil {
		return err
	}
	ctv, err := singleValue(attrs, oidContentType, "content-type")
	if err != nil {
		return err
	}
	var ct asn1.ObjectIdentifier
	if rest, err := asn1.Unmarshal(ctv.FullBytes, &ct); err != nil || len(rest) > 0 {
		return fmt.Errorf("%w: malformed content-type signed attribute", ErrBadSignature)
	}
	if !ct.Equal(oidTSTInfo) {
		return fmt.Errorf("%w: content-type signed attribute is %v, want id-ct-TSTInfo", ErrBadSignature, ct)
	}
	mdv, err := singleValue(attrs, oidMessageDigest, "message-digest")
	if err != nil {
		return err
	}
	var md []byte
	if rest, err := asn1.Unmarshal(mdv.FullBytes, &md); err != nil || len(rest) > 0 {
		return fmt.Errorf("%w: malformed message-digest signed attribute", ErrBadSignature)
	}
	d := h.New()
	d.Write(econtent)
	if !bytes.Equal(d.Sum(nil), md) {
		return fmt.Errorf("%w: the message-digest attribute does not match the TSTInfo", ErrBadSignature)
	}
	return checkESS(attrs, signer)
}

// verifySignature checks sig over signed with signer's public key. The
// signature algorithm may name the hash; it must then be the SignerInfo's
// digest algorithm h.
func verifySignature(signer *x509.Certificate, alg pkix.AlgorithmIdentifier, h crypto.Hash, signed, sig []byte) error {
	named := map[string]crypto.Hash{
		oidSHA256WithRSA.String(): crypto.SHA256, oidSHA384WithRSA.String(): crypto.SHA384, oidSHA512WithRSA.String(): crypto.SHA512,
		oidECDSAWithSHA256.String(): crypto.SHA256, oidECDSAWithSHA384.String(): crypto.SHA384, oidECDSAWithSHA512.String(): crypto.SHA512,
	}
	a := alg.Algorithm
	if nh, ok := named[a.String()]; ok && nh != h {
		return fmt.Errorf("%w: signature algorithm %v disagrees with digest algorithm %v", ErrBadSignature, a, h)
	}
	if a.Equal(oidSHA1WithRSA) || a.Equal(oidECDSAWithSHA1) {
		return fmt.Errorf("%w: %w: the CMS signature uses SHA-1", ErrBadSignature, ErrUnsupportedHash)
	}
	isRSA := a.Equal(oidRSAEncryption) || a.Equal(oidSHA256WithRSA) || a.Equal(oidSHA384WithRSA) || a.Equal(oidSHA512WithRSA)
	isECDSA := a.Equal(oidECPublicKey) || a.Equal(oidECDSAWithSHA256) || a.Equal(oidECDSAWithSHA384) || a.Equal(oidECDSAWithSHA512)
	switch pub := signer.PublicKey.(type) {
	case *rsa.PublicKey:
		if !isRSA {
			break
		}
		if len(alg.Parameters.FullBytes) != 0 && !bytes.Equal(alg.Parameters.FullBytes, asn1.NullBytes) {
			return fmt.Errorf("%w: RSA signature algorithm with parameters", ErrBadSignature)
		}
		d := h.New()
		d.Write(signed)
		if err := rsa.VerifyPKCS1v15(pub, h, d.Sum(nil), sig); err != nil {
			return fmt.Errorf("%w: %v", ErrBadSignature, err)
		}
		return nil
	case *ecdsa.PublicKey:
		if !isECDSA {
			break
		}
		d := h.New()
		d.Write(signed)
		if !ecdsa.VerifyASN1(pub, d.Sum(nil), sig) {
			return fmt.Errorf("%w: ECDSA signature does not verify", ErrBadSignature)
		}
		return nil
	case ed25519.PublicKey:
		if !a.Equal(oidEd25519) {
			break
		}
		if !ed25519.Verify(pub, signed, sig) {
			return fmt.Errorf("%w: Ed25519 signature does not verify", ErrBadSignature)
		}
		return nil
	}
	return fmt.Errorf("%w: unsupported signature algorithm %v for a %T key (supported: RSA PKCS #1 v1.5, ECDSA, Ed25519)", ErrBadSignature, a, signer.PublicKey)
}

// checkESS checks the ESS signing-certificate (v2, or v1) attribute.
func checkESS(attrs map[string][]asn1.RawValue, signer *x509.Certificate) error {
	if _, ok := attrs[oidSigningCert2.String()]; ok {
		v, err := singleValue(attrs, oidSigningCert2, "signing-certificate-v2")
		if err != nil {
			return err
		}
		var sc signingCertificateV2
		if rest, err := asn1.Unmarshal(v.FullBytes, &sc); err != nil || len(rest) > 0 || len(sc.Certs) == 0 {
			return fmt.Errorf("%w: malformed signing-certificate-v2 attribute", ErrBadSignature)
		}
		id := sc.Certs[0]
		h := crypto.SHA256
		if len(id.HashAlgorithm.Algorithm) > 0 {
			h = hashForOID(id.HashAlgorithm.Algorithm)
			if h != crypto.SHA256 && h != crypto.SHA384 && h != crypto.SHA512 {
				return fmt.Errorf("%w: signing-certificate-v2 uses unsupported hash %v", ErrBadSignature, id.HashAlgorithm.Algorithm)
			}
		}
		return checkESSCertID(signer, h, id.CertHash, id.IssuerSerial)
	}
	if _, ok := attrs[oidSigningCert.String()]; ok {
		v, err := singleValue(attrs, oidSigningCert, "signing-certificate")
		if err != nil {
			return err
		}
		var sc signingCertificate
		if rest, err := asn1.Unmarshal(v.FullBytes, &sc); err != nil || len(rest) > 0 || len(sc.Certs) == 0 {
			return fmt.Errorf("%w: malformed signing-certificate attribute", ErrBadSignature)
		}
		return checkESSCertID(signer, crypto.SHA1, sc.Certs[0].CertHash, sc.Certs[0].IssuerSerial)
	}
	return fmt.Errorf("%w: no ESS signing-certificate attribute binding the TSA certificate", ErrBadSignature)
}
