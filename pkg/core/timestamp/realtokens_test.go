package timestamp

import (
	"crypto/x509"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// realDir holds time-stamp tokens made by real authorities, with their
// certificates; testdata/timestamps/PROVENANCE.md says where each comes from.
const realDir = "../../../testdata/timestamps"

// realToken is one real-world token, its expected outcome with svc and with
// `openssl ts -verify` (the oracle), and why they differ where they do.
type realToken struct {
	name      string
	authority string
	file      string   // TimeStampResp (.tsr) or bare TimeStampToken (.tst)
	data      string   // file with the time-stamped data (VerifyData), or
	digest    string   // file with the raw digest (Verify) when the data is unpublished
	roots     []string // trusted certificates (PEM)
	untrusted []string // extra certificates (PEM), for tokens that do not embed the TSA's
	want      error    // nil: valid
	// opensslOK is the oracle's outcome with -attime genTime.
	opensslOK bool
	// opensslArgs are extra openssl flags (-partial_chain for a pinned
	// intermediate, as svc trusts any certificate it is given as a root).
	opensslArgs []string
	// differs justifies an outcome that is not openssl's.
	differs string
	// signer, if set, is the common name Info.Signer must have.
	signer string
}

var realTokens = []realToken{
	{name: "globalsign-g4", authority: "GlobalSign (TSA for Advanced - G4)", file: "globalsign-g4.tst", data: "notation.txt",
		roots: []string{"globalsign-root-r3.pem"}, opensslOK: true},
	{name: "globalsign-g4 other data", authority: "GlobalSign (TSA for Advanced - G4)", file: "globalsign-g4.tst", data: "test.txt",
		roots: []string{"globalsign-root-r3.pem"}, want: ErrImprintMismatch},
	{name: "globalsign-g4 untrusted root", authority: "GlobalSign (TSA for Advanced - G4)", file: "globalsign-g4.tst", data: "notation.txt",
		roots: []string{"digicert-assured-id-root.pem"}, want: ErrUntrustedTSA},
	{name: "globalsign-g4 imprint algorithm sha1WithRSAEncryption", authority: "GlobalSign (TSA for Advanced - G4), imprint algorithm rewritten by tspclient-go",
		file: "globalsign-g4-sha1-imprint.tst", data: "notation.txt", roots: []string{"globalsign-root-r3.pem"}, want: ErrUnsupportedHash},
	{name: "globalsign-adobe-cds", authority: "GlobalSign (TSA for Adobe CDS - G2)", file: "globalsign-adobe-cds.tsr", digest: "globalsign-adobe-cds.digest",
		roots: []string{"adobe-root.pem"}, opensslOK: true},
	{name: "globalsign-adobe-cds no embedded certificate", authority: "GlobalSign (TSA for Adobe CDS - G2)", file: "globalsign-adobe-cds-nocert.tsr",
		digest: "globalsign-adobe-cds.digest", roots: []string{"adobe-root.pem"},
		untrusted: []string{"globalsign-adobe-cds-tsa.pem", "globalsign-adobe-cds-ca.pem"}, opensslOK: true},
	{name: "globalsign-adobe-cds without its intermediate", authority: "GlobalSign (TSA for Adobe CDS - G2)", file: "globalsign-adobe-cds-nocert.tsr",
		digest: "globalsign-adobe-cds.digest", roots: []string{"adobe-root.pem"}, untrusted: []string{"globalsign-adobe-cds-tsa.pem"}, want: ErrUntrustedTSA},
	{name: "microsoft", authority: "Microsoft Public RSA Time Stamping Authority", file: "microsoft.tst", digest: "microsoft.digest",
		roots: []string{"microsoft-ts-ca-2020.pem"}, opensslArgs: []string{"-partial_chain"}, opensslOK: true},
	{name: "freetsa-2024-sha512", authority: "FreeTSA", file: "freetsa-2024-sha512.tsr", data: "test.txt",
		roots: []string{"freetsa-root.pem"}, opensslOK: true},
	{name: "freetsa-2017-sha384", authority: "FreeTSA", file: "freetsa-2017-sha384.tst", data: "this-is-a-test.txt",
		roots: []string{"freetsa-root.pem"}, untrusted: []string{"freetsa-tsa-2016.pem"}, want: ErrUnsupportedHash, opensslOK: true,
		differs: "the CMS signature is SHA-1 with RSA (digest algorithm SHA-1): svc refuses SHA-1 in the signature as in the imprint, openssl accepts it"},
	{name: "freetsa-2017-sha384 without the TSA certificate", authority: "FreeTSA", file: "freetsa-2017-sha384.tst", data: "this-is-a-test.txt",
		roots: []string{"freetsa-root.pem"}, want: ErrNoCertificate},
	{name: "digicert-2018 unsorted signed attributes", authority: "DigiCert SHA2 Timestamp Responder", file: "digicert-2018.tst", data: "digicert-2018.txt",
		roots: []string{"digicert-assured-id-root.pem"}, opensslOK: true},
	{name: "symantec-2017", authority: "Symantec SHA256 TimeStamping Signer - G2", file: "symantec-2017.tst", data: "hello-world.txt",
		roots: []string{"symantec-sha256-ts-ca.pem"}, opensslArgs: []string{"-partial_chain"}, opensslOK: true},
	{name: "symantec-2017 other data", authority: "Symantec SHA256 TimeStamping Signer - G2", file: "symantec-2017.tst", data: "hello.txt",
		roots: []string{"symantec-sha256-ts-ca.pem"}, want: ErrImprintMismatch},
	{name: "identrust-sha512", authority: "IdenTrust (TrustID Timestamp Authority)", file: "identrust-sha512.tsr", data: "hello.txt",
		roots: []string{"identrust-commercial-root-ca-1.pem"}, opensslOK: true},
	{name: "sigstage-sha256", authority: "Sigstore staging TSA (timestamp.sigstage.dev)", file: "sigstage-sha256.tsr", data: "hello.txt",
		roots: []string{"sigstage-root.pem"}, opensslOK: true},
	{name: "sigstage-sha384", authority: "Sigstore staging TSA (timestamp.sigstage.dev)", file: "sigstage-sha384.tsr", data: "hello.txt",
		roots: []string{"sigstage-root.pem"}, opensslOK: true},
	{name: "sigstage-sha512", authority: "Sigstore staging TSA (timestamp.sigstage.dev)", file: "sigstage-sha512.tsr", data: "hello.txt",
		roots: []string{"sigstage-root.pem"}, opensslOK: true},
	{name: "sigstage no embedded certificate", authority: "Sigstore staging TSA (timestamp.sigstage.dev)", file: "sigstage-nocert.tsr", data: "hello.txt",
		roots: []string{"sigstage-root.pem"}, untrusted: []string{"sigstage-tsa.pem"}, opensslOK: true},
	{name: "sigstore local TSA", authority: "local sigstore/timestamp-authority (rfc3161-client's test TSA)", file: "sigstore-local-tsa.tsr", data: "hello.txt",
		roots: []string{"sigstore-local-root.pem"}, untrusted: []string{"sigstore-local-intermediate.pem"}, opensslOK: true},
	// GHSA-3xxc-pwj6-jgrj: a spoofed "CN=Spoofed TSA" certificate injected
	// into the token's certificates; the signer is found by the SignerInfo's
	// issuer and serial number, and Info.Signer is the real TSA.
	{name: "sigstore local TSA with injected certificates", authority: "local sigstore/timestamp-authority (rfc3161-client's test TSA)",
		file: "sigstore-local-tsa-injected-certs.tsr", data: "hello.txt", roots: []string{"sigstore-local-root.pem"},
		untrusted: []string{"sigstore-local-intermediate.pem"}, opensslOK: true, signer: "Test TSA Timestamping"},
	{name: "sigstage invalid signature", authority: "Sigstore staging TSA (timestamp.sigstage.dev)", file: "sigstage-invalid-signature.tsr", data: "hello.txt",
		roots: []string{"sigstage-root.pem"}, want: ErrBadSignature},
}

func readReal(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(realDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func realCerts(t *testing.T, names []string) []*x509.Certificate {
	t.Helper()
	var out []*x509.Certificate
	for _, n := range names {
		cs, err := ParseCertificatesPEM(readReal(t, n))
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		out = append(out, cs...)
	}
	return out
}

// verifyReal runs svc's verifier on a real token.
func verifyReal(t *testing.T, tc realToken) (*Info, error) {
	t.Helper()
	opts := VerifyOptions{Roots: realCerts(t, tc.roots), Intermediates: realCerts(t, tc.untrusted)}
	if tc.digest != "" {
		return Verify(readReal(t, tc.file), readReal(t, tc.digest), opts)
	}
	return VerifyData(readReal(t, tc.file), readReal(t, tc.data), opts)
}

// TestRealTokens verifies tokens made by real authorities and checks each
// outcome against the table.
func TestRealTokens(t *testing.T) {
	for _, tc := range realTokens {
		t.Run(tc.name, func(t *testing.T) {
			info, err := verifyReal(t, tc)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Verify: %v, want valid", err)
				}
				if info.GenTime.IsZero() || info.Signer == nil {
					t.Fatalf("incomplete Info %+v", info)
				}
				if tc.signer != "" && info.Signer.Subject.CommonName != tc.signer {
					t.Fatalf("signer %q, want %q", info.Signer.Subject.CommonName, tc.signer)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("Verify: %v, want %v", err, tc.want)
			}
			if !matchesSentinel(err) {
				t.Fatalf("error %v matches no sentinel", err)
			}
		})
	}
}

// TestRealTokensOpenSSL runs the same table through `openssl ts -verify` at
// the token's genTime, and checks that svc agrees with it or that the table
// justifies the difference.
func TestRealTokensOpenSSL(t *testing.T) {
	requireOpenSSL(t)
	for _, tc := range realTokens {
		t.Run(tc.name, func(t *testing.T) {
			info, err := ParseResponse(readReal(t, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			abs, err := filepath.Abs(realDir)
			if err != nil {
				t.Fatal(err)
			}
			args := []string{"ts", "-verify", "-in", filepath.Join(abs, tc.file)}
			if strings.HasSuffix(tc.file, ".tst") {
				args = append(args, "-token_in")
			}
			if tc.digest != "" {
				args = append(args, "-digest", hex.EncodeToString(readReal(t, tc.digest)))
			} else {
				args = append(args, "-data", filepath.Join(abs, tc.data))
			}
			writeFile(t, dir, "openssl.cnf", []byte(opensslConfig))
			writeFile(t, dir, "roots.pem", pemOf(t, tc.roots))
			args = append(args, "-CAfile", "roots.pem")
			if len(tc.untrusted) > 0 {
				writeFile(t, dir, "untrusted.pem", pemOf(t, tc.untrusted))
				args = append(args, "-untrusted", "untrusted.pem")
			}
			args = append(args, "-attime", strconv.FormatInt(info.GenTime.Unix(), 10))
			args = append(args, tc.opensslArgs...)
			out, oerr := openssl(t, dir, args...)
			ok := oerr == nil && strings.Contains(out, "Verification: OK")
			if ok != tc.opensslOK {
				t.Fatalf("openssl ok=%v, table says %v:\n%s", ok, tc.opensslOK, out)
			}
			if svcOK := tc.want == nil; svcOK != ok && tc.differs == "" {
				t.Fatalf("svc valid=%v but openssl ok=%v, and the table gives no justification", svcOK, ok)
			}
			_, err = verifyReal(t, tc)
			if (err == nil) != (tc.want == nil) {
				t.Fatalf("svc: %v, table wants %v", err, tc.want)
			}
			t.Logf("%s | svc: %v | openssl: %v", tc.authority, errOrValid(err), ok)
		})
	}
}

func pemOf(t *testing.T, names []string) []byte {
	t.Helper()
	var b []byte
	for _, c := range realCerts(t, names) {
		b = append(b, EncodeCertificatePEM(c)...)
	}
	return b
}

// TestRealTokenAuthorities keeps the corpus broad: more than six distinct
// organisations, each with at least one valid token.
func TestRealTokenAuthorities(t *testing.T) {
	valid := map[string]bool{}
	for _, tc := range realTokens {
		org := strings.Fields(tc.authority)[0]
		if tc.want == nil && org != "local" {
			valid[org] = true
		}
	}
	if len(valid) < 7 {
		t.Fatalf("valid tokens from %d organisations (%v), want more than 6", len(valid), valid)
	}
}

func errOrValid(err error) string {
	if err == nil {
		return "valid"
	}
	return err.Error()
}
