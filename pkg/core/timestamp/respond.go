package timestamp

import (
	"bytes"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
	"sort"
	"time"

	"github.com/digitorus/pkcs7"
	dts "github.com/digitorus/timestamp"
)

// PKIFailureInfo bit numbers of RFC 3161 section 2.4.2.
const (
	failBadAlg              = 0
	failBadRequest          = 2
	failBadDataFormat       = 5
	failTimeNotAvailable    = 14
	failUnacceptedPolicy    = 15
	failUnacceptedExtension = 16
	failSystemFailure       = 25
)

// requestError is returned by Respond; it records the PKIFailureInfo bit a
// rejection should carry.
type requestError struct {
	failInfo int
	err      error
}

func (e *requestError) Error() string { return e.err.Error() }
func (e *requestError) Unwrap() error { return e.err }

func rejectf(failInfo int, format string, args ...any) error {
	return &requestError{failInfo: failInfo, err: fmt.Errorf("timestamp: respond: "+format, args...)}
}

// Respond answers a DER-encoded TimeStampReq with a DER-encoded
// TimeStampResp whose status is granted. The token echoes the request's
// message imprint and nonce, embeds the TSA certificate if the request sets
// certReq, carries a random positive 128-bit serial number, the current time
// (UTC, second precision) as genTime with an accuracy of one second, and the
// authority's policy.
//
// Malformed requests, hash algorithms other than SHA-256, SHA-384 and
// SHA-512, a requested policy other than the authority's, critical request
// extensions, and a clock outside the TSA certificate's validity are
// errors; pass such an error to [RejectionResponse] to answer the client.
func (a *Authority) Respond(req []byte) ([]byte, error) {
	if a == nil || a.leaf == nil || a.root == nil || a.key == nil || a.now == nil {
		return nil, &requestError{failInfo: failSystemFailure, err: errors.New("timestamp: respond: authority not initialised; use InitAuthority or LoadAuthority")}
	}
	var raw timeStampReq
	rest, err := asn1.Unmarshal(req, &raw)
	if err != nil {
		return nil, rejectf(failBadDataFormat, "malformed TimeStampReq: %w", err)
	}
	if len(rest) > 0 {
		return nil, rejectf(failBadDataFormat, "malformed TimeStampReq: %d bytes of trailing data", len(rest))
	}
	if raw.Version != 1 {
		return nil, rejectf(failBadDataFormat, "unsupported TimeStampReq version %d", raw.Version)
	}
	var imprint messageImprint
	if rest, err := asn1.Unmarshal(raw.MessageImprint.FullBytes, &imprint); err != nil || len(rest) > 0 {
		return nil, rejectf(failBadDataFormat, "malformed message imprint")
	}
	hash := hashForOID(imprint.HashAlgorithm.Algorithm)
	switch hash {
	case crypto.SHA256, crypto.SHA384, crypto.SHA512:
	default:
		return nil, rejectf(failBadAlg, "unsupported message imprint hash algorithm %v (want SHA-256, SHA-384 or SHA-512)", imprint.HashAlgorithm.Algorithm)
	}
	if len(imprint.HashedMessage) != hash.Size() {
		return nil, rejectf(failBadDataFormat, "message imprint is %d bytes, want %d for %v", len(imprint.HashedMessage), hash.Size(), hash)
	}
	parsed, err := dts.ParseRequest(req)
	if err != nil {
		return nil, rejectf(failBadDataFormat, "malformed TimeStampReq: %w", err)
	}
	if len(parsed.TSAPolicyOID) > 0 && !parsed.TSAPolicyOID.Equal(a.policy) {
		return nil, rejectf(failUnacceptedPolicy, "requested policy %v is not this TSA's policy %v", parsed.TSAPolicyOID, a.policy)
	}
	for _, ext := range parsed.Extensions {
		if ext.Critical {
			return nil, rejectf(failUnacceptedExtension, "unsupported critical request extension %v", ext.Id)
		}
	}

	genTime := a.now().UTC().Truncate(time.Second)
	if !a.allowExpired {
		for _, c := range []struct {
			what string
			nb   time.Time
			na   time.Time
		}{{"TSA certificate", a.leaf.NotBefore, a.leaf.NotAfter}, {"root certificate", a.root.NotBefore, a.root.NotAfter}} {
			if genTime.Before(c.nb) || genTime.After(c.na) {
				return nil, rejectf(failSystemFailure, "the %s is valid from %s to %s but the time is %s; initialise a new authority in an empty directory",
					c.what, c.nb.Format(time.RFC3339), c.na.Format(time.RFC3339), genTime.Format(time.RFC3339))
			}
		}
	}

	token, err := a.sign(raw.MessageImprint.FullBytes, parsed.Nonce, parsed.Certificates, genTime)
	if err != nil {
		return nil, &requestError{failInfo: failSystemFailure, err: err}
	}
	out, err := asn1.Marshal(timeStampResp{
		Status:         pkiStatusInfo{Status: int(dts.Granted)},
		TimeStampToken: asn1.RawValue{FullBytes: token},
	})
	if err != nil {
		return nil, &requestError{failInfo: failSystemFailure, err: fmt.Errorf("timestamp: respond: encode TimeStampResp: %w", err)}
	}
	return out, nil
}

// Timestamp time-stamps a SHA-256 digest (32 bytes): it builds a request with
// a fresh nonce and certReq set, answers it with [Authority.Respond], checks
// that the answer echoes the nonce and returns the DER TimeStampResp. It
// signs locally and does not block; a ctx already done returns ctx.Err()
// (wrapped) without signing.
func (a *Authority) Timestamp(ctx context.Context, digest []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("timestamp: %w", err)
	}
	nonce, err := NewNonce()
	if err != nil {
		return nil, err
	}
	req, err := NewRequest(digest, nonce, true)
	if err != nil {
		return nil, err
	}
	resp, err := a.Respond(req)
	if err != nil {
		return nil, err
	}
	info, err := ParseResponse(resp)
	if err != nil {
		return nil, fmt.Errorf("timestamp: parse own response: %w", err)
	}
	if info.Nonce == nil || info.Nonce.Cmp(nonce) != 0 {
		return nil, fmt.Errorf("timestamp: own response does not echo the nonce: %w", ErrNonceMismatch)
	}
	return resp, nil
}

// sign builds the TSTInfo and wraps it in a CMS SignedData signed by the TSA
// key: content type id-ct-TSTInfo, SHA-256 digest, ESS signing-certificate-v2
// attribute binding the TSA certificate, and a signing-time attribute equal
// to genTime.
func (a *Authority) sign(imprint []byte, nonce *big.Int, certReq bool, genTime time.Time) ([]byte, error) {
	serial, err := randomPositive(128)
	if err != nil {
		return nil, err
	}
	tsaName, err := generalNameDirectory(a.leaf.RawSubject)
	if err != nil {
		return nil, err
	}
	tst := tstInfo{
		Version:        1,
		Policy:         a.policy,
		MessageImprint: asn1.RawValue{FullBytes: imprint},
		SerialNumber:   serial,
		GenTime:        genTime,
		Accuracy:       accuracy{Seconds: 1},
		TSA:            asn1.RawValue{FullBytes: tsaName},
		Nonce:          nonce,
	}
	content, err := asn1.Marshal(tst)
	if err != nil {
		return nil, fmt.Errorf("timestamp: respond: encode TSTInfo: %w", err)
	}

	certHash := sha256.Sum256(a.leaf.Raw)
	issuer := asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 4, IsCompound: true, Bytes: a.leaf.RawIssuer}
	ess, err := asn1.Marshal(signingCertificateV2{Certs: []essCertIDv2{{
		CertHash:     certHash[:],
		IssuerSerial: issuerSerial{Issuer: []asn1.RawValue{issuer}, Serial: a.leaf.SerialNumber},
	}}})
	if err != nil {
		return nil, fmt.Errorf("timestamp: respond: encode signing certificate attribute: %w", err)
	}

	sd, err := pkcs7.NewSignedData(content)
	if err != nil {
		return nil, fmt.Errorf("timestamp: respond: %w", err)
	}
	sd.SetDigestAlgorithm(pkcs7.OIDDigestAlgorithmSHA256)
	sd.SetContentType(oidTSTInfo)
	sd.GetSignedData().Version = 3
	cfg := pkcs7.SignerInfoConfig{
		ExtraSignedAttributes: []pkcs7.Attribute{{Type: oidSigningCert2, Value: asn1.RawValue{FullBytes: ess}}},
		SkipCertificates:      !certReq,
	}
	// pkcs7 signs the attributes with its own signing time; setSigningTime
	// replaces that time and signs them again. The first signature would
	// be thrown away (and with a key in an HSM, cost a second operation):
	// pkcs7 gets a signer that only names the key.
	if err := sd.AddSigner(a.leaf, keyOnly{a.key.Public()}, cfg); err != nil {
		return nil, fmt.Errorf("timestamp: respond: sign token: %w", err)
	}
	if err := setSigningTime(sd, genTime, a.key); err != nil {
		return nil, err
	}
	token, err := sd.Finish()
	if err != nil {
		return nil, fmt.Errorf("timestamp: respond: encode token: %w", err)
	}
	return token, nil
}

// keyOnly stands for the TSA key while pkcs7 builds the signer info: it
// names the key (pkcs7 picks the signature algorithm from it) and makes
// no signature; setSigningTime makes the one the token carries.
type keyOnly struct{ pub crypto.PublicKey }

// Public returns the TSA key's public key.
func (k keyOnly) Public() crypto.PublicKey { return k.pub }

// Sign returns no signature.
func (keyOnly) Sign(io.Reader, []byte, crypto.SignerOpts) ([]byte, error) { return nil, nil }

// setSigningTime replaces the signing-time attribute that pkcs7 fills from
// the wall clock with t (so that tokens made with a test clock are
// consistent) and re-signs the signed attributes.
func setSigningTime(sd *pkcs7.SignedData, t time.Time, key crypto.Signer) error {
	s := sd.GetSignedData()
	if len(s.SignerInfos) != 1 {
		return fmt.Errorf("timestamp: respond: expected one signer, have %d", len(s.SignerInfos))
	}
	si := &s.SignerInfos[0]
	tv, err := asn1.Marshal(t.UTC()) // UTCTime before 2050, GeneralizedTime after (RFC 5652 11.3)
	if err != nil {
		return fmt.Errorf("timestamp: respond: encode signing time: %w", err)
	}
	attrs := si.AuthenticatedAttributes
	for i := range attrs {
		if attrs[i].Type.Equal(oidSigningTime) {
			attrs[i].Value = asn1.RawValue{Tag: asn1.TagSet, IsCompound: true, Bytes: tv}
		}
	}
	// Re-establish DER SET OF order, then sign the DER SET.
	encs := make([][]byte, len(attrs))
	for i := range attrs {
		if encs[i], err = asn1.Marshal(attrs[i]); err != nil {
			return fmt.Errorf("timestamp: respond: encode signed attributes: %w", err)
		}
	}
	idx := make([]int, len(attrs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(x, y int) bool { return bytes.Compare(encs[idx[x]], encs[idx[y]]) < 0 })
	sorted := attrs[:0:0]
	var set []byte
	for _, i := range idx {
		sorted = append(sorted, attrs[i])
		set = append(set, encs[i]...)
	}
	si.AuthenticatedAttributes = sorted
	setDER, err := asn1.Marshal(asn1.RawValue{Tag: asn1.TagSet, IsCompound: true, Bytes: set})
	if err != nil {
		return fmt.Errorf("timestamp: respond: encode signed attributes: %w", err)
	}
	sum := sha256.Sum256(setDER)
	sig, err := key.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		return fmt.Errorf("timestamp: respond: sign attributes: %w", err)
	}
	si.EncryptedDigest = sig
	return nil
}

// generalNameDirectory encodes tsa [0] GeneralName with a directoryName.
func generalNameDirectory(rawName []byte) ([]byte, error) {
	dn, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 4, IsCompound: true, Bytes: rawName})
	if err != nil {
		return nil, fmt.Errorf("timestamp: respond: encode TSA name: %w", err)
	}
	out, err := asn1.Marshal(asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: dn})
	if err != nil {
		return nil, fmt.Errorf("timestamp: respond: encode TSA name: %w", err)
	}
	return out, nil
}

// RejectionResponse returns a DER TimeStampResp with status rejection for an
// error returned by [Authority.Respond]. Its failInfo names the cause
// (badAlg, badDataFormat, unacceptedPolicy, unacceptedExtension or
// systemFailure) and its status string a short description. A TSA server
// sends it instead of a token when Respond fails.
func RejectionResponse(err error) ([]byte, error) {
	failInfo := failSystemFailure
	var re *requestError
	if errors.As(err, &re) {
		failInfo = re.failInfo
	}
	text := map[int]string{
		failBadAlg:              "unsupported hash algorithm",
		failBadRequest:          "transaction not permitted or supported",
		failBadDataFormat:       "malformed request",
		failTimeNotAvailable:    "time source not available",
		failUnacceptedPolicy:    "requested policy not supported",
		failUnacceptedExtension: "requested extension not supported",
		failSystemFailure:       "system failure",
	}[failInfo]
	return rejection(int(dts.Rejection), failInfo, text)
}

// rejection encodes a TimeStampResp without token.
func rejection(status, failInfo int, text string) ([]byte, error) {
	bits := asn1.BitString{Bytes: make([]byte, failInfo/8+1), BitLength: failInfo + 1}
	bits.Bytes[failInfo/8] |= 0x80 >> uint(failInfo%8)
	str, err := asn1.MarshalWithParams(text, "utf8")
	if err != nil {
		return nil, fmt.Errorf("timestamp: encode rejection: %w", err)
	}
	out, err := asn1.Marshal(timeStampResp{Status: pkiStatusInfo{
		Status:       status,
		StatusString: []asn1.RawValue{{FullBytes: str}},
		FailInfo:     bits,
	}})
	if err != nil {
		return nil, fmt.Errorf("timestamp: encode rejection: %w", err)
	}
	return out, nil
}
