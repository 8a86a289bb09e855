package timestamp

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	dts "github.com/digitorus/timestamp"
)

func TestRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tsa")
	a, err := InitAuthority(dir, AuthorityOptions{})
	if err != nil {
		t.Fatalf("InitAuthority: %v", err)
	}
	d := digestOf("vpec signature bytes")
	before := time.Now().UTC().Truncate(time.Second)
	resp, err := a.Timestamp(context.Background(), d)
	if err != nil {
		t.Fatalf("Timestamp: %v", err)
	}
	info, err := Verify(resp, d, VerifyOptions{Roots: []*x509.Certificate{a.Root()}})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if info.GenTime.Before(before) || info.GenTime.After(time.Now().Add(time.Second)) || info.GenTime.Location() != time.UTC {
		t.Errorf("GenTime %v not now in UTC", info.GenTime)
	}
	if !info.Policy.Equal(defaultPolicy) {
		t.Errorf("Policy = %v, want %v", info.Policy, defaultPolicy)
	}
	if info.HashAlgorithm != crypto.SHA256 {
		t.Errorf("HashAlgorithm = %v", info.HashAlgorithm)
	}
	if !info.Signer.Equal(a.Certificate()) {
		t.Errorf("Signer is not the TSA certificate")
	}
	if info.Accuracy != time.Second {
		t.Errorf("Accuracy = %v, want 1s", info.Accuracy)
	}
	if info.Nonce == nil || info.Nonce.Sign() <= 0 {
		t.Errorf("Nonce = %v, want a positive nonce", info.Nonce)
	}
	if info.SerialNumber.Sign() <= 0 || info.SerialNumber.BitLen() > 128 {
		t.Errorf("SerialNumber = %v, want positive 128-bit", info.SerialNumber)
	}

	// The authority's shape.
	root, leaf := a.Root(), a.Certificate()
	if !root.IsCA || root.CheckSignatureFrom(root) != nil {
		t.Errorf("root is not a self-signed CA")
	}
	if leaf.IsCA || leaf.KeyUsage != x509.KeyUsageDigitalSignature || leaf.CheckSignatureFrom(root) != nil {
		t.Errorf("leaf: IsCA=%v KeyUsage=%v", leaf.IsCA, leaf.KeyUsage)
	}
	if err := checkTSACertificate(leaf); err != nil {
		t.Errorf("leaf breaks RFC 3161 rules: %v", err)
	}
	if !strings.HasPrefix(root.Subject.CommonName, defaultAuthorityName) || !strings.HasPrefix(leaf.Subject.CommonName, defaultAuthorityName) {
		t.Errorf("names %q, %q", root.Subject.CommonName, leaf.Subject.CommonName)
	}
	if v := time.Until(leaf.NotAfter); v < 9*365*24*time.Hour || v > 11*365*24*time.Hour {
		t.Errorf("validity %v, want about 10 years", v)
	}

	// Files and modes.
	st, err := os.Stat(dir)
	if err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, %v", st.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if strings.Join(names, ",") != "root.pem,tsa-key.pem,tsa.pem" {
		t.Errorf("files %v, want exactly the three authority files", names)
	}
	for name, perm := range map[string]fs.FileMode{RootFile: 0o644, CertificateFile: 0o644, KeyFile: 0o600} {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.Mode().Perm() != perm {
			t.Errorf("%s mode %v (%v), want %v", name, st.Mode().Perm(), err, perm)
		}
	}
	keyPEM, _ := os.ReadFile(filepath.Join(dir, KeyFile))
	if block, _ := pem.Decode(keyPEM); block == nil || block.Type != "PRIVATE KEY" {
		t.Errorf("key file is not PKCS#8 PEM")
	}

	// Load gives the same authority, which still issues verifiable tokens.
	b, err := LoadAuthority(dir)
	if err != nil {
		t.Fatalf("LoadAuthority: %v", err)
	}
	if !b.Root().Equal(root) || !b.Certificate().Equal(leaf) || !b.Policy().Equal(a.Policy()) {
		t.Fatalf("loaded authority differs")
	}
	resp2, err := b.Timestamp(context.Background(), d)
	if err != nil {
		t.Fatalf("Timestamp after load: %v", err)
	}
	if _, err := Verify(resp2, d, VerifyOptions{Roots: []*x509.Certificate{root}}); err != nil {
		t.Fatalf("Verify after load: %v", err)
	}

	// Init refuses to overwrite, and the key is untouched.
	if _, err := InitAuthority(dir, AuthorityOptions{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second InitAuthority: %v, want fs.ErrExist", err)
	}
	keyAfter, _ := os.ReadFile(filepath.Join(dir, KeyFile))
	if !bytes.Equal(keyPEM, keyAfter) {
		t.Fatalf("key file changed")
	}
	// LoadOrInit loads the existing one.
	c, err := LoadOrInitAuthority(dir, AuthorityOptions{})
	if err != nil || !c.Root().Equal(root) {
		t.Fatalf("LoadOrInitAuthority on existing: %v", err)
	}
}

func TestInitRefusesPartialDirectory(t *testing.T) {
	for _, name := range []string{RootFile, CertificateFile, KeyFile} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, name), []byte("precious"), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := InitAuthority(dir, AuthorityOptions{})
			if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), name) {
				t.Fatalf("InitAuthority: %v, want fs.ErrExist naming %s", err, name)
			}
			got, _ := os.ReadFile(filepath.Join(dir, name))
			if string(got) != "precious" {
				t.Fatalf("file overwritten")
			}
			if _, err := LoadOrInitAuthority(dir, AuthorityOptions{}); err == nil {
				t.Fatalf("LoadOrInitAuthority accepted a partial authority")
			}
		})
	}
}

func TestAuthorityOptions(t *testing.T) {
	clock := &fakeClock{t: time.Date(2031, 5, 6, 7, 8, 9, 500_000_000, time.UTC)}
	policy := asn1.ObjectIdentifier{1, 3, 6, 1, 4, 1, 32473, 99}
	dir := t.TempDir()
	a, err := InitAuthority(dir, AuthorityOptions{Name: "Example TSA", Validity: 48 * time.Hour, Policy: policy, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(a.Root().Subject.CommonName, "Example TSA") || !strings.HasPrefix(a.Certificate().Subject.CommonName, "Example TSA") {
		t.Errorf("names %q %q", a.Root().Subject.CommonName, a.Certificate().Subject.CommonName)
	}
	if got := a.Certificate().NotAfter; !got.Equal(time.Date(2031, 5, 8, 7, 8, 9, 0, time.UTC)) {
		t.Errorf("NotAfter = %v", got)
	}
	clock.Set(clock.Now().Add(time.Hour))
	d := digestOf("x")
	resp, err := a.Timestamp(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	// A test clock far from the wall clock still yields verifiable tokens:
	// the CMS signing-time attribute follows genTime.
	info, err := Verify(resp, d, VerifyOptions{Roots: []*x509.Certificate{a.Root()}})
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if want := time.Date(2031, 5, 6, 8, 8, 9, 0, time.UTC); !info.GenTime.Equal(want) {
		t.Errorf("GenTime = %v, want %v", info.GenTime, want)
	}
	if !info.Policy.Equal(policy) {
		t.Errorf("Policy = %v", info.Policy)
	}
	var st time.Time
	if err := signingTimeOf(parsedToken(t, resp), &st); err != nil || !st.Equal(info.GenTime) {
		t.Errorf("signing time %v (%v), want genTime", st, err)
	}
	// The policy survives persistence (it lives in the TSA certificate).
	b, err := LoadOrInitAuthority(dir, AuthorityOptions{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if !b.Policy().Equal(policy) {
		t.Errorf("loaded policy %v", b.Policy())
	}
	resp, err = b.Timestamp(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := Verify(resp, d, VerifyOptions{Roots: []*x509.Certificate{a.Root()}}); err != nil || !info.Policy.Equal(policy) || !info.GenTime.Equal(time.Date(2031, 5, 6, 8, 8, 9, 0, time.UTC)) {
		t.Errorf("Verify after LoadOrInit: %+v %v", info, err)
	}

	if _, err := InitAuthority(t.TempDir(), AuthorityOptions{Validity: -time.Hour}); err == nil {
		t.Errorf("negative validity accepted")
	}
	fresh := filepath.Join(t.TempDir(), "new")
	if c, err := LoadOrInitAuthority(fresh, AuthorityOptions{}); err != nil || c == nil {
		t.Errorf("LoadOrInitAuthority on an empty directory: %v", err)
	}
}

// After 2049 the CMS signing time is a GeneralizedTime: the re-signed,
// re-sorted attributes must still verify.
func TestGenTimeAfter2049(t *testing.T) {
	clock := &fakeClock{t: time.Date(2049, 12, 31, 23, 0, 0, 0, time.UTC)}
	a := memAuthority(t, AuthorityOptions{Now: clock.Now}, nil)
	clock.Set(time.Date(2050, 6, 1, 0, 0, 0, 0, time.UTC))
	d := digestOf("future")
	resp, err := a.Timestamp(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(resp, d, VerifyOptions{Roots: []*x509.Certificate{a.Root()}}); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

func TestLoadAuthorityErrors(t *testing.T) {
	good := t.TempDir()
	if _, err := InitAuthority(good, AuthorityOptions{}); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if _, err := InitAuthority(other, AuthorityOptions{}); err != nil {
		t.Fatal(err)
	}
	read := func(dir, name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name    string
		setup   func(dir string)
		wantMsg []string
	}{
		{"missing directory", func(dir string) { os.RemoveAll(dir) }, []string{RootFile, "missing"}},
		{"missing key", func(dir string) { os.Remove(filepath.Join(dir, KeyFile)) }, []string{KeyFile, "missing"}},
		{"missing certificate", func(dir string) { os.Remove(filepath.Join(dir, CertificateFile)) }, []string{CertificateFile, "missing"}},
		{"garbage key", func(dir string) { os.WriteFile(filepath.Join(dir, KeyFile), []byte("junk"), 0o600) }, []string{KeyFile, "PRIVATE KEY"}},
		{"garbage root", func(dir string) { os.WriteFile(filepath.Join(dir, RootFile), []byte("junk"), 0o600) }, []string{RootFile, "no CERTIFICATE"}},
		{"key of another authority", func(dir string) {
			os.WriteFile(filepath.Join(dir, KeyFile), read(other, KeyFile), 0o600)
		}, []string{KeyFile, "does not match"}},
		{"root of another authority", func(dir string) {
			os.WriteFile(filepath.Join(dir, RootFile), read(other, RootFile), 0o600)
		}, []string{CertificateFile, "not issued by"}},
		{"two roots", func(dir string) {
			os.WriteFile(filepath.Join(dir, RootFile), append(read(dir, RootFile), read(other, RootFile)...), 0o600)
		}, []string{RootFile, "2 certificates"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tsa")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{RootFile, CertificateFile, KeyFile} {
				if err := os.WriteFile(filepath.Join(dir, n), read(good, n), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			tc.setup(dir)
			_, err := LoadAuthority(dir)
			if err == nil {
				t.Fatal("LoadAuthority succeeded")
			}
			for _, m := range tc.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %q", err, m)
				}
			}
		})
	}
}

func TestRespondErrors(t *testing.T) {
	a := memAuthority(t, AuthorityOptions{}, nil)
	d := digestOf("x")
	mk := func(r dts.Request) []byte {
		b, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	crit, _ := asn1.Marshal(asn1.NullRawValue)
	tests := []struct {
		name     string
		req      []byte
		failInfo int // -1: success expected
	}{
		{"sha256", mk(dts.Request{HashAlgorithm: crypto.SHA256, HashedMessage: d}), -1},
		{"sha384", mk(dts.Request{HashAlgorithm: crypto.SHA384, HashedMessage: make([]byte, 48)}), -1},
		{"sha512", mk(dts.Request{HashAlgorithm: crypto.SHA512, HashedMessage: make([]byte, 64)}), -1},
		{"own policy", mk(dts.Request{HashAlgorithm: crypto.SHA256, HashedMessage: d, TSAPolicyOID: defaultPolicy}), -1},
		{"non-critical extension", mk(dts.Request{HashAlgorithm: crypto.SHA256, HashedMessage: d,
			ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 2, 3, 4}, Value: crit}}}), -1},
		{"sha1", mk(dts.Request{HashAlgorithm: crypto.SHA1, HashedMessage: make([]byte, 20)}), failBadAlg},
		{"digest length", mk(dts.Request{HashAlgorithm: crypto.SHA256, HashedMessage: d[:20]}), failBadDataFormat},
		{"other policy", mk(dts.Request{HashAlgorithm: crypto.SHA256, HashedMessage: d, TSAPolicyOID: asn1.ObjectIdentifier{1, 2, 3}}), failUnacceptedPolicy},
		{"critical extension", mk(dts.Request{HashAlgorithm: crypto.SHA256, HashedMessage: d,
			ExtraExtensions: []pkix.Extension{{Id: asn1.ObjectIdentifier{1, 2, 3, 4}, Critical: true, Value: crit}}}), failUnacceptedExtension},
		{"garbage", []byte("GET / HTTP/1.1"), failBadDataFormat},
		{"empty", nil, failBadDataFormat},
		{"trailing data", append(mk(dts.Request{HashAlgorithm: crypto.SHA256, HashedMessage: d}), 0), failBadDataFormat},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := a.Respond(tc.req)
			if tc.failInfo < 0 {
				if err != nil {
					t.Fatalf("Respond: %v", err)
				}
				info, err := ParseResponse(resp)
				if err != nil {
					t.Fatalf("ParseResponse: %v", err)
				}
				if !bytes.Equal(parsedToken(t, resp).tst.MessageImprint.FullBytes, imprintOf(t, tc.req)) {
					t.Errorf("imprint not echoed byte for byte")
				}
				_ = info
				return
			}
			if err == nil {
				t.Fatalf("Respond accepted the request")
			}
			var re *requestError
			if !errors.As(err, &re) || re.failInfo != tc.failInfo {
				t.Fatalf("Respond: %v, want failInfo %d", err, tc.failInfo)
			}
			rej, err2 := RejectionResponse(err)
			if err2 != nil {
				t.Fatal(err2)
			}
			_, verr := Verify(rej, d, VerifyOptions{Roots: []*x509.Certificate{a.Root()}})
			if !errors.Is(verr, ErrNotGranted) || !strings.Contains(verr.Error(), "rejection") {
				t.Fatalf("Verify(rejection): %v", verr)
			}
			parsed, perr := dts.ParseResponse(rej)
			if perr == nil || parsed != nil {
				t.Fatalf("digitorus accepted our rejection")
			}
		})
	}
}

// imprintOf returns the raw MessageImprint of a request.
func imprintOf(t *testing.T, req []byte) []byte {
	var r timeStampReq
	if _, err := asn1.Unmarshal(req, &r); err != nil {
		t.Fatal(err)
	}
	return r.MessageImprint.FullBytes
}

func TestRespondRefusesOutsideValidity(t *testing.T) {
	clock := &fakeClock{t: time.Now()}
	a := memAuthority(t, AuthorityOptions{Now: clock.Now, Validity: time.Hour}, nil)
	d := digestOf("x")
	for _, at := range []time.Time{clock.Now().Add(2 * time.Hour), clock.Now().Add(-time.Hour)} {
		clock.Set(at)
		if _, err := a.Timestamp(context.Background(), d); err == nil || !strings.Contains(err.Error(), "valid from") {
			t.Errorf("Timestamp at %v: %v, want refusal", at, err)
		}
	}
}

func TestNewRequest(t *testing.T) {
	d := digestOf("x")
	nonce := big.NewInt(424242)
	for _, certReq := range []bool{false, true} {
		for _, n := range []*big.Int{nil, nonce} {
			der, err := NewRequest(d, n, certReq)
			if err != nil {
				t.Fatal(err)
			}
			r, err := dts.ParseRequest(der)
			if err != nil {
				t.Fatal(err)
			}
			if r.HashAlgorithm != crypto.SHA256 || !bytes.Equal(r.HashedMessage, d) || r.Certificates != certReq ||
				(n == nil) != (r.Nonce == nil) || (n != nil && r.Nonce.Cmp(n) != 0) {
				t.Errorf("round trip mismatch: %+v", r)
			}
		}
	}
	if _, err := NewRequest(d[:31], nil, true); err == nil {
		t.Error("short digest accepted")
	}
	if _, err := NewRequest(nil, nil, true); err == nil {
		t.Error("nil digest accepted")
	}
	if _, err := NewRequest(d, big.NewInt(-1), true); err == nil {
		t.Error("negative nonce accepted")
	}
	if _, err := NewRequest(d, big.NewInt(0), true); err == nil {
		t.Error("zero nonce accepted")
	}
}

func TestNewNonce(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		n, err := NewNonce()
		if err != nil {
			t.Fatal(err)
		}
		if n.Sign() <= 0 || n.BitLen() > 64 {
			t.Fatalf("nonce %v out of range", n)
		}
		seen[n.String()] = true
	}
	if len(seen) < 100 {
		t.Fatalf("nonces repeat")
	}
}

func TestPEMHelpers(t *testing.T) {
	a := memAuthority(t, AuthorityOptions{}, nil)
	other := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{0, 0, 0}})
	data := append(append(append([]byte("leading text\n"), EncodeCertificatePEM(a.Root())...), other...), EncodeCertificatePEM(a.Certificate())...)
	certs, err := ParseCertificatesPEM(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(certs) != 2 || !certs[0].Equal(a.Root()) || !certs[1].Equal(a.Certificate()) {
		t.Fatalf("got %d certificates", len(certs))
	}
	if _, err := ParseCertificatesPEM(other); err == nil {
		t.Error("no certificate accepted")
	}
	if _, err := ParseCertificatesPEM([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")); err == nil {
		t.Error("bad certificate accepted")
	}
	if EncodeCertificatePEM(nil) != nil {
		t.Error("EncodeCertificatePEM(nil) != nil")
	}
}

func TestZeroAuthority(t *testing.T) {
	var a Authority
	if _, err := a.Timestamp(context.Background(), digestOf("x")); err == nil {
		t.Fatal("zero Authority issued a token")
	}
}

// TestAuthorityTimestampDoneContext: the built-in authority does not sign
// for a caller that has gone away: a done ctx returns its error, wrapped.
func TestAuthorityTimestampDoneContext(t *testing.T) {
	a, err := InitAuthority(t.TempDir(), AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if tok, err := a.Timestamp(ctx, digestOf("x")); !errors.Is(err, context.Canceled) || tok != nil {
		t.Fatalf("cancelled: token %v, error %v; want context.Canceled", tok != nil, err)
	}
	if _, err := a.Timestamp(context.Background(), digestOf("x")); err != nil {
		t.Fatal(err)
	}
}

// countingSigner counts the signatures its key makes.
type countingSigner struct {
	crypto.Signer
	n int
}

func (c *countingSigner) Sign(rand io.Reader, digest []byte, opts crypto.SignerOpts) ([]byte, error) {
	c.n++
	return c.Signer.Sign(rand, digest, opts)
}

// TestOneSignaturePerToken: a token costs the TSA key one signature (with
// the key in an HSM, one operation), and that signature verifies.
func TestOneSignaturePerToken(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	cs := &countingSigner{Signer: key}
	a, err := InitAuthorityWithKey(filepath.Join(t.TempDir(), "tsa"), cs, AuthorityOptions{})
	if err != nil {
		t.Fatalf("InitAuthorityWithKey: %v", err)
	}
	for i := range 3 {
		cs.n = 0
		d := digestOf(fmt.Sprintf("vpec signature %d", i))
		resp, err := a.Timestamp(context.Background(), d)
		if err != nil {
			t.Fatalf("Timestamp: %v", err)
		}
		if cs.n != 1 {
			t.Errorf("token %d: the key signed %d times, want 1", i, cs.n)
		}
		if _, err := Verify(resp, d, VerifyOptions{Roots: []*x509.Certificate{a.Root()}}); err != nil {
			t.Errorf("token %d: Verify: %v", i, err)
		}
	}
}
