package timestamp

import (
	"crypto"
	"crypto/x509/pkix"
	"encoding/asn1"
	"math/big"
	"time"
)

// Object identifiers used by RFC 3161, RFC 5035 and RFC 5652.
var (
	oidSHA1   = asn1.ObjectIdentifier{1, 3, 14, 3, 2, 26}
	oidSHA256 = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 1}
	oidSHA384 = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 2}
	oidSHA512 = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 2, 3}

	oidSignedData   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 7, 2}
	oidTSTInfo      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 4}
	oidContentType  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 3}
	oidSigningTime  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 5}
	oidSigningCert  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 12}
	oidSigningCert2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 47}

	oidExtKeyUsage       = asn1.ObjectIdentifier{2, 5, 29, 37}
	oidKPTimeStamping    = asn1.ObjectIdentifier{1, 3, 6, 1, 5, 5, 7, 3, 8}
	defaultPolicy        = asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 32473, 1}
	defaultAuthorityName = "svc built-in TSA"
)

// hashForOID maps a digest algorithm OID to its crypto.Hash (0 if unknown).
func hashForOID(oid asn1.ObjectIdentifier) crypto.Hash {
	switch {
	case oid.Equal(oidSHA256):
		return crypto.SHA256
	case oid.Equal(oidSHA384):
		return crypto.SHA384
	case oid.Equal(oidSHA512):
		return crypto.SHA512
	case oid.Equal(oidSHA1):
		return crypto.SHA1
	}
	return 0
}

// messageImprint is MessageImprint of RFC 3161 section 2.4.1.
type messageImprint struct {
	HashAlgorithm pkix.AlgorithmIdentifier
	HashedMessage []byte
}

// timeStampReq mirrors TimeStampReq; MessageImprint is kept raw so that a
// response can echo it byte for byte, as RFC 3161 section 2.4.2 asks.
type timeStampReq struct {
	Version        int
	MessageImprint asn1.RawValue
}

// pkiStatusInfo is PKIStatusInfo of RFC 3161 section 2.4.2. The status
// strings are kept raw so that an oddly encoded PKIFreeText does not hide the
// status itself.
type pkiStatusInfo struct {
	Status       int
	StatusString []asn1.RawValue `asn1:"optional"`
	FailInfo     asn1.BitString  `asn1:"optional"`
}

// timeStampResp is TimeStampResp of RFC 3161 section 2.4.2.
type timeStampResp struct {
	Status         pkiStatusInfo
	TimeStampToken asn1.RawValue `asn1:"optional"`
}

// contentInfo is the CMS ContentInfo wrapping a TimeStampToken.
type contentInfo struct {
	ContentType asn1.ObjectIdentifier
	Content     asn1.RawValue `asn1:"tag:0"`
}

// encapContentInfo is EncapsulatedContentInfo of RFC 5652.
type encapContentInfo struct {
	EContentType asn1.ObjectIdentifier
	EContent     asn1.RawValue `asn1:"optional,tag:0"`
}

// accuracy is Accuracy of RFC 3161 section 2.4.2.
type accuracy struct {
	Seconds int64 `asn1:"optional"`
	Millis  int64 `asn1:"tag:0,optional"`
	Micros  int64 `asn1:"tag:1,optional"`
}

// tstInfo is TSTInfo of RFC 3161 section 2.4.2.
type tstInfo struct {
	Version        int
	Policy         asn1.ObjectIdentifier
	MessageImprint asn1.RawValue
	SerialNumber   *big.Int
	GenTime        time.Time        `asn1:"generalized"`
	Accuracy       accuracy         `asn1:"optional"`
	Ordering       bool             `asn1:"optional,default:false"`
	Nonce          *big.Int         `asn1:"optional"`
	TSA            asn1.RawValue    `asn1:"tag:0,optional"`
	Extensions     []pkix.Extension `asn1:"tag:1,optional"`
}

// essCertID is ESSCertID of RFC 2634 (SHA-1 certificate hash).
type essCertID struct {
	CertHash     []byte
	IssuerSerial issuerSerial `asn1:"optional"`
}

// essCertIDv2 is ESSCertIDv2 of RFC 5035. An absent hash algorithm means
// SHA-256.
type essCertIDv2 struct {
	HashAlgorithm pkix.AlgorithmIdentifier `asn1:"optional"`
	CertHash      []byte
	IssuerSerial  issuerSerial `asn1:"optional"`
}

// issuerSerial is IssuerSerial of RFC 5035: GeneralNames and a serial.
type issuerSerial struct {
	Issuer []asn1.RawValue
	Serial *big.Int
}

// signingCertificate is SigningCertificate of RFC 2634.
type signingCertificate struct {
	Certs []essCertID
}

// signingCertificateV2 is SigningCertificateV2 of RFC 5035.
type signingCertificateV2 struct {
	Certs []essCertIDv2
}

// accuracyDuration converts an Accuracy to a duration, saturating instead of
// overflowing on absurd values.
func (a accuracy) duration() time.Duration {
	const maxSeconds = int64(1<<62) / int64(time.Second)
	if a.Seconds < 0 || a.Millis < 0 || a.Micros < 0 || a.Seconds > maxSeconds ||
		a.Millis > maxSeconds || a.Micros > maxSeconds {
		return 0
	}
	return time.Duration(a.Seconds)*time.Second +
		time.Duration(a.Millis)*time.Millisecond +
		time.Duration(a.Micros)*time.Microsecond
}

// explicitInner returns the single element inside an explicitly tagged
// [0] value.
func explicitInner(rv asn1.RawValue) (asn1.RawValue, bool) {
	var inner asn1.RawValue
	if rv.Class != asn1.ClassContextSpecific || rv.Tag != 0 || !rv.IsCompound {
		return inner, false
	}
	rest, err := asn1.Unmarshal(rv.Bytes, &inner)
	if err != nil || len(rest) > 0 {
		return inner, false
	}
	return inner, true
}
