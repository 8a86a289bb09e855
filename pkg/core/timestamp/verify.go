package timestamp

import (
	"bytes"
	"crypto"
	_ "crypto/sha512" // SHA-384 and SHA-512 for ESS certificate identifiers
	"crypto/subtle"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// Info describes a time-stamp token. [Verify] returns it only for a token
// that passed every check; [ParseResponse] returns it untrusted, for
// display.
type Info struct {
	// GenTime is the time the TSA vouches for, in UTC.
	GenTime time.Time
	// SerialNumber is the token's serial number, unique per TSA.
	SerialNumber *big.Int
	// Policy is the TSA policy under which the token was issued.
	Policy asn1.ObjectIdentifier
	// Nonce is the nonce echoed from the request, or nil.
	Nonce *big.Int
	// HashAlgorithm is the message imprint's hash algorithm (0 if unknown).
	HashAlgorithm crypto.Hash
	// Signer is the TSA certificate that signed the token. ParseResponse
	// sets it only if the token embeds it.
	Signer *x509.Certificate
	// Accuracy is the accuracy the TSA claims for GenTime (0 if absent).
	Accuracy time.Duration
}

// VerifyOptions configures [Verify].
type VerifyOptions struct {
	// Roots are the trusted TSA root certificates. Required: without any,
	// Verify fails with ErrUntrustedTSA. A TSA certificate listed here
	// is trusted directly (pinned).
	Roots []*x509.Certificate
	// Intermediates are extra certificates used to find the signer and build
	// the chain, for example the TSA certificate when the token does not
	// embed it. They are not trusted by themselves.
	Intermediates []*x509.Certificate
	// Nonce, if non-nil, must equal the token's nonce.
	Nonce *big.Int
}

// recoverPanics makes Verify and ParseResponse turn a panic in a parser into
// ErrMalformed. The fuzz tests switch it off so that they see panics.
var recoverPanics = true

// token is a parsed, not yet verified, time-stamp token.
type token struct {
	certs    []*x509.Certificate // the certificates the token embeds
	signer   signerInfo
	econtent []byte // the DER TSTInfo, as signed
	tst      tstInfo
	imprint  messageImprint
}

// Verify checks a DER-encoded RFC 3161 TimeStampResp, or a bare
// TimeStampToken (a CMS ContentInfo; the kind is detected), against digest:
// the digest of the time-stamped data under the token's imprint hash
// algorithm (SHA-256, SHA-384 or SHA-512; 32, 48 or 64 bytes). Use
// [VerifyData] when you have the data itself: the imprint may use any of
// the three algorithms, and only VerifyData can check all of them. Verify
// checks, in order:
//
//   - the structure, and that the status is granted or grantedWithMods
//     (ErrMalformed, ErrNotGranted);
//   - that the imprint's hash algorithm is SHA-256, SHA-384 or SHA-512
//     (ErrUnsupportedHash, which also matches ErrImprintMismatch: SHA-1
//     and MD5 are refused);
//   - that the signer's certificate is embedded or among
//     opts.Intermediates (ErrNoCertificate);
//   - the RFC 3161 §2.3 rules for the TSA certificate itself: extended key
//     usage extension present, critical and exactly id-kp-timeStamping, key
//     usage (if present) only digitalSignature and/or nonRepudiation, not a
//     CA (ErrEKU);
//   - that the certificate chains to one of opts.Roots, every signature and
//     validity period checked at the token's genTime; extended key usages of
//     the CA certificates are not required to include timeStamping (RFC 3161
//     puts the requirement on the TSA certificate only) (ErrUntrustedTSA);
//   - the CMS signature over the signed attributes exactly as received
//     (SHA-256/384/512 with RSA PKCS #1 v1.5, ECDSA or Ed25519), the
//     content-type and message-digest signed attributes, and the ESS
//     signing-certificate attribute binding the signer certificate
//     (ErrBadSignature; a SHA-1 signature also matches ErrUnsupportedHash);
//   - that the imprint equals digest, compared in constant time
//     (ErrImprintMismatch);
//   - the nonce, if opts.Nonce is set (ErrNonceMismatch).
//
// It never panics, whatever the input.
func Verify(resp []byte, digest []byte, opts VerifyOptions) (info *Info, err error) {
	return verify(resp, nil, digest, opts)
}

// VerifyData is [Verify] given the time-stamped data instead of its digest:
// the imprint must equal H(data), H being the token's imprint algorithm
// (SHA-256, SHA-384 or SHA-512). For a VPEC, data is the 64 raw signature
// bytes.
func VerifyData(resp []byte, data []byte, opts VerifyOptions) (info *Info, err error) {
	if data == nil {
		data = []byte{}
	}
	return verify(resp, data, nil, opts)
}

// verify implements Verify (data nil) and VerifyData.
func verify(resp, data, digest []byte, opts VerifyOptions) (info *Info, err error) {
	defer func() {
		if !recoverPanics {
			return
		}
		if r := recover(); r != nil {
			info, err = nil, fmt.Errorf("timestamp: verify: %w: parser failure: %v", ErrMalformed, r)
		}
	}()
	tok, err := parseAny(resp)
	if err != nil {
		return nil, fmt.Errorf("timestamp: verify: %w", err)
	}
	genTime := tok.tst.GenTime

	h, err := acceptedHash(tok.imprint.HashAlgorithm, "the message imprint")
	if err != nil {
		return nil, fmt.Errorf("timestamp: verify: %w: %w", ErrImprintMismatch, err)
	}
	if data != nil {
		d := h.New()
		d.Write(data)
		digest = d.Sum(nil)
	} else if len(digest) != h.Size() {
		return nil, fmt.Errorf("timestamp: verify: %w: the token's imprint is %v (%d bytes) but the digest given is %d bytes; pass the data to VerifyData", ErrImprintMismatch, h, h.Size(), len(digest))
	}

	// Find the signer among the embedded and the supplied certificates.
	extra := make([]*x509.Certificate, 0, len(tok.certs)+len(opts.Intermediates))
	extra = append(extra, tok.certs...)
	for _, c := range opts.Intermediates {
		if c != nil {
			extra = append(extra, c)
		}
	}
	signer := findSigner(&tok.signer, extra)
	if signer == nil {
		return nil, fmt.Errorf("timestamp: verify: %w: the token embeds no certificate matching its signer and none was supplied; pass the TSA certificate in VerifyOptions.Intermediates", ErrNoCertificate)
	}

	if err := checkTSACertificate(signer); err != nil {
		return nil, fmt.Errorf("timestamp: verify: TSA certificate %q: %w", signer.Subject.CommonName, err)
	}

	roots := x509.NewCertPool()
	nroots := 0
	for _, c := range opts.Roots {
		if c != nil {
			roots.AddCert(c)
			nroots++
		}
	}
	if nroots == 0 {
		return nil, fmt.Errorf("timestamp: verify: %w: no trusted TSA root certificate supplied", ErrUntrustedTSA)
	}
	inter := x509.NewCertPool()
	for _, c := range extra {
		if c != signer {
			inter.AddCert(c)
		}
	}
	// The TSA certificate's own usage was checked above (RFC 3161 §2.3);
	// the chain is checked for signatures, validity at genTime, basic
	// constraints and name constraints, without requiring timeStamping in
	// the CAs' extended key usages (x509's EKU nesting): GlobalSign's "TSA
	// for Adobe CDS" is issued by a CA whose EKU holds only an Adobe usage.
	if _, err := signer.Verify(x509.VerifyOptions{
		Roots:         roots,
		Intermediates: inter,
		CurrentTime:   genTime,
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageAny},
	}); err != nil {
		return nil, fmt.Errorf("timestamp: verify: %w: TSA certificate %q at genTime %s: %v", ErrUntrustedTSA, signer.Subject.CommonName, genTime.Format(time.RFC3339), err)
	}

	if err := checkSignerInfo(&tok.signer, tok.econtent, signer); err != nil {
		return nil, fmt.Errorf("timestamp: verify: %w", err)
	}

	if subtle.ConstantTimeCompare(tok.imprint.HashedMessage, digest) != 1 {
		return nil, fmt.Errorf("timestamp: verify: %w: the token time-stamps other data", ErrImprintMismatch)
	}

	if opts.Nonce != nil {
		if tok.tst.Nonce == nil {
			return nil, fmt.Errorf("timestamp: verify: %w: the token carries no nonce", ErrNonceMismatch)
		}
		if tok.tst.Nonce.Cmp(opts.Nonce) != 0 {
			return nil, fmt.Errorf("timestamp: verify: %w: the token's nonce differs from the request's", ErrNonceMismatch)
		}
	}

	info = tok.info()
	info.Signer = signer
	return info, nil
}

// ParseResponse parses a DER-encoded TimeStampResp or bare TimeStampToken
// without checking any signature, certificate or imprint: use it for
// display only, and [Verify] before trusting anything. Info.Signer is set if
// the token embeds the signer's certificate. Errors match ErrMalformed (and
// ErrNotGranted for a response that was not granted).
func ParseResponse(resp []byte) (info *Info, err error) {
	defer func() {
		if !recoverPanics {
			return
		}
		if r := recover(); r != nil {
			info, err = nil, fmt.Errorf("timestamp: parse: %w: parser failure: %v", ErrMalformed, r)
		}
	}()
	tok, err := parseAny(resp)
	if err != nil {
		return nil, fmt.Errorf("timestamp: parse: %w", err)
	}
	info = tok.info()
	info.Signer = findSigner(&tok.signer, tok.certs)
	return info, nil
}

func (t *token) info() *Info {
	return &Info{
		GenTime:       t.tst.GenTime.UTC(),
		SerialNumber:  t.tst.SerialNumber,
		Policy:        t.tst.Policy,
		Nonce:         t.tst.Nonce,
		HashAlgorithm: hashForOID(t.imprint.HashAlgorithm.Algorithm),
		Accuracy:      t.tst.Accuracy.duration(),
	}
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
}

// AsResponse returns der as a TimeStampResp: a response is returned
// unchanged, byte for byte; a bare TimeStampToken (a CMS SignedData
// ContentInfo) is wrapped in a response of status granted (0), which adds
// nothing a verifier relies on (PKIStatusInfo lies outside the token's
// signature). Anything else is an error matching ErrMalformed. Nothing is
// verified.
func AsResponse(der []byte) ([]byte, error) {
	var resp timeStampResp
	if rest, err := asn1.Unmarshal(der, &resp); err == nil && len(rest) == 0 {
		if len(resp.TimeStampToken.FullBytes) == 0 {
			return nil, malformed("a response of status %d without a token", resp.Status.Status)
		}
		return der, nil
	}
	var ci contentInfo
	if rest, err := asn1.Unmarshal(der, &ci); err != nil || len(rest) != 0 || !ci.ContentType.Equal(oidSignedData) {
		return nil, malformed("neither a TimeStampResp nor a CMS SignedData token")
	}
	out, err := asn1.Marshal(timeStampResp{Status: pkiStatusInfo{Status: 0}, TimeStampToken: asn1.RawValue{FullBytes: der}})
	if err != nil {
		return nil, malformed("wrap token: %v", err)
	}
	return out, nil
}

// parseAny parses a TimeStampResp or a bare TimeStampToken.
func parseAny(der []byte) (*token, error) {
	if len(der) == 0 {
		return nil, malformed("empty input")
	}
	var outer asn1.RawValue
	rest, err := asn1.Unmarshal(der, &outer)
	if err != nil {
		return nil, malformed("not DER: %v", err)
	}
	if len(rest) > 0 {
		return nil, malformed("%d bytes of trailing data", len(rest))
	}
	if outer.Class != asn1.ClassUniversal || outer.Tag != asn1.TagSequence || !outer.IsCompound {
		return nil, malformed("not a SEQUENCE")
	}
	var first asn1.RawValue
	if _, err := asn1.Unmarshal(outer.Bytes, &first); err != nil {
		return nil, malformed("empty or invalid SEQUENCE: %v", err)
	}
	if first.Class == asn1.ClassUniversal && first.Tag == asn1.TagOID {
		return parseToken(der)
	}
	var resp timeStampResp
	if _, err := asn1.Unmarshal(der, &resp); err != nil {
		return nil, malformed("neither a TimeStampResp nor a TimeStampToken: %v", err)
	}
	if st := resp.Status.Status; st != 0 && st != 1 {
		return nil, fmt.Errorf("%w: %w: %s", ErrNotGranted, ErrMalformed, describeStatus(resp.Status))
	}
	if len(resp.TimeStampToken.FullBytes) == 0 {
		return nil, malformed("status granted but no TimeStampToken")
	}
	return parseToken(resp.TimeStampToken.FullBytes)
}

// describeStatus renders a PKIStatusInfo for error messages.
func describeStatus(s pkiStatusInfo) string {
	names := map[int]string{0: "granted", 1: "grantedWithMods", 2: "rejection", 3: "waiting", 4: "revocationWarning", 5: "revocationNotification"}
	var b strings.Builder
	if n, ok := names[s.Status]; ok {
		fmt.Fprintf(&b, "status %s (%d)", n, s.Status)
	} else {
		fmt.Fprintf(&b, "status %d (unknown)", s.Status)
	}
	fails := map[int]string{0: "badAlg", 2: "badRequest", 5: "badDataFormat", 14: "timeNotAvailable", 15: "unacceptedPolicy", 16: "unacceptedExtension", 17: "addInfoNotAvailable", 25: "systemFailure"}
	var fi []string
	for i := 0; i < s.FailInfo.BitLength && i < 64; i++ {
		if s.FailInfo.At(i) == 1 {
			if n, ok := fails[i]; ok {
				fi = append(fi, n)
			} else {
				fi = append(fi, fmt.Sprintf("bit%d", i))
			}
		}
	}
	if len(fi) > 0 {
		fmt.Fprintf(&b, ", failure info %s", strings.Join(fi, ","))
	}
	var texts []string
	for _, v := range s.StatusString {
		if v.Class == asn1.ClassUniversal && !v.IsCompound && len(v.Bytes) <= 256 {
			texts = append(texts, fmt.Sprintf("%q", v.Bytes))
		}
	}
	if len(texts) > 0 {
		fmt.Fprintf(&b, ", status text %s", strings.Join(texts, " "))
	}
	return b.String()
}

// parseToken parses a TimeStampToken: a CMS ContentInfo holding SignedData
// whose encapsulated content is a DER TSTInfo.
func parseToken(der []byte) (*token, error) {
	var ci contentInfo
	rest, err := asn1.Unmarshal(der, &ci)
	if err != nil {
		return nil, malformed("TimeStampToken: %v", err)
	}
	if len(rest) > 0 {
		return nil, malformed("TimeStampToken: trailing data")
	}
	if !ci.ContentType.Equal(oidSignedData) {
		return nil, malformed("TimeStampToken content type is %v, want signedData", ci.ContentType)
	}
	sdRaw, ok := explicitInner(ci.Content)
	if !ok {
		return nil, malformed("TimeStampToken: bad content")
	}
	var sd signedData
	if rest, err := asn1.Unmarshal(sdRaw.FullBytes, &sd); err != nil || len(rest) > 0 {
		if err == nil {
			err = fmt.Errorf("trailing data")
		}
		return nil, malformed("SignedData: %v", err)
	}
	if !sd.EncapContentInfo.EContentType.Equal(oidTSTInfo) {
		return nil, malformed("encapsulated content type is %v, want id-ct-TSTInfo", sd.EncapContentInfo.EContentType)
	}
	ec, ok := explicitInner(sd.EncapContentInfo.EContent)
	if !ok || ec.Class != asn1.ClassUniversal || ec.Tag != asn1.TagOctetString || ec.IsCompound || len(ec.Bytes) == 0 {
		return nil, malformed("missing or non-DER encapsulated TSTInfo")
	}
	if len(sd.SignerInfos) != 1 {
		return nil, malformed("token has %d signers, want exactly 1", len(sd.SignerInfos))
	}
	certs, err := parseCertificates(sd.Certificates)
	if err != nil {
		return nil, err
	}
	tok := &token{certs: certs, signer: sd.SignerInfos[0], econtent: ec.Bytes}
	rest, err = asn1.Unmarshal(ec.Bytes, &tok.tst)
	if err != nil {
		return nil, malformed("TSTInfo: %v", err)
	}
	if len(rest) > 0 {
		return nil, malformed("TSTInfo: trailing data")
	}
	if tok.tst.Version != 1 {
		return nil, malformed("TSTInfo version %d, want 1", tok.tst.Version)
	}
	if tok.tst.SerialNumber == nil || len(tok.tst.Policy) == 0 {
		return nil, malformed("TSTInfo lacks serial number or policy")
	}
	rest, err = asn1.Unmarshal(tok.tst.MessageImprint.FullBytes, &tok.imprint)
	if err != nil || len(rest) > 0 {
		return nil, malformed("TSTInfo message imprint")
	}
	for _, ext := range tok.tst.Extensions {
		if ext.Critical {
			return nil, malformed("TSTInfo has unsupported critical extension %v", ext.Id)
		}
	}
	return tok, nil
}

// checkTSACertificate applies the RFC 3161 section 2.3 rules to the TSA
// certificate. Errors wrap ErrEKU.
func checkTSACertificate(c *x509.Certificate) error {
	var found int
	var critical bool
	var value []byte
	for _, e := range c.Extensions {
		if e.Id.Equal(oidExtKeyUsage) {
			found++
			critical = e.Critical
			value = e.Value
		}
	}
	if found == 0 {
		return fmt.Errorf("%w: no extended key usage extension (RFC 3161 requires a critical id-kp-timeStamping)", ErrEKU)
	}
	if found > 1 {
		return fmt.Errorf("%w: duplicate extended key usage extension", ErrEKU)
	}
	if !critical {
		return fmt.Errorf("%w: the extended key usage extension is not critical", ErrEKU)
	}
	var oids []asn1.ObjectIdentifier
	if rest, err := asn1.Unmarshal(value, &oids); err != nil || len(rest) > 0 {
		return fmt.Errorf("%w: malformed extended key usage extension", ErrEKU)
	}
	if len(oids) != 1 || !oids[0].Equal(oidKPTimeStamping) {
		return fmt.Errorf("%w: extended key usage is %v, want only id-kp-timeStamping (%v)", ErrEKU, oids, oidKPTimeStamping)
	}
	if c.IsCA || c.KeyUsage&(x509.KeyUsageCertSign|x509.KeyUsageCRLSign) != 0 {
		return fmt.Errorf("%w: the TSA certificate is a CA certificate", ErrEKU)
	}
	const allowed = x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment
	if c.KeyUsage != 0 && (c.KeyUsage&^allowed != 0 || c.KeyUsage&allowed == 0) {
		return fmt.Errorf("%w: key usage %#x, want only digitalSignature and/or nonRepudiation", ErrEKU, c.KeyUsage)
	}
	return nil
}

// checkESSCertID checks that an ESS certificate identifier designates c.
func checkESSCertID(c *x509.Certificate, h crypto.Hash, certHash []byte, is issuerSerial) error {
	if !h.Available() {
		return fmt.Errorf("%w: signing-certificate hash %v unavailable", ErrBadSignature, h)
	}
	d := h.New()
	d.Write(c.Raw)
	if !bytes.Equal(d.Sum(nil), certHash) {
		return fmt.Errorf("%w: the signing-certificate attribute designates another certificate", ErrBadSignature)
	}
	if is.Serial == nil {
		return nil
	}
	if is.Serial.Cmp(c.SerialNumber) != 0 {
		return fmt.Errorf("%w: the signing-certificate attribute names another serial number", ErrBadSignature)
	}
	for _, gn := range is.Issuer {
		if gn.Class == asn1.ClassContextSpecific && gn.Tag == 4 && bytes.Equal(gn.Bytes, c.RawIssuer) {
			return nil
		}
	}
	return fmt.Errorf("%w: the signing-certificate attribute names another issuer", ErrBadSignature)
}
