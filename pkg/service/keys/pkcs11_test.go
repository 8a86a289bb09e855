//go:build cgo

package keys

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/digitorus/pkcs7"
	"github.com/miekg/pkcs11"

	"github.com/svc-gov/svc/internal/softhsmtest"
	"github.com/svc-gov/svc/pkg/core/signing"
)

// TestPKCS11SoftHSM generates keys on a real SoftHSM2 token, signs through
// PKCS#11 and verifies with crypto/ed25519 and crypto/ecdsa, and shows the
// private key cannot be read out of the token.
func TestPKCS11SoftHSM(t *testing.T) {
	for _, alg := range []Algorithm{Ed25519, ECDSAP256} {
		t.Run(string(alg), func(t *testing.T) {
			tk := softhsmtest.NewToken(t, "svc-test")
			uri := tk.URI("signing-key")
			ctx := context.Background()
			g, err := Generate(ctx, uri, alg, Options{})
			if err != nil {
				t.Fatalf("Generate: %v", err)
			}
			s, err := Open(ctx, uri, Options{Want: alg})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			if s.KeyID() != g.KeyID || s.Algorithm() != alg || s.Provider() != "pkcs11" {
				t.Fatalf("opened key %s %s %s, generated %s %s", s.KeyID(), s.Algorithm(), s.Provider(), g.KeyID, g.Algorithm)
			}
			msg := []byte(`{"run_id":"run_1","schema":"svc.vpec/v1"}`)
			switch alg {
			case Ed25519:
				pub := s.Public().(ed25519.PublicKey)
				if want := signing.KeyID(pub); s.KeyID() != want {
					t.Fatalf("key id %s, pkg/core/signing says %s", s.KeyID(), want)
				}
				sig, err := s.Sign(rand.Reader, msg, crypto.Hash(0))
				if err != nil {
					t.Fatal(err)
				}
				if !ed25519.Verify(pub, msg, sig) {
					t.Fatal("crypto/ed25519 rejects the token's signature")
				}
				// Ed25519 is deterministic: the token computes RFC 8032 exactly.
				again, err := s.Sign(rand.Reader, msg, crypto.Hash(0))
				if err != nil || string(again) != string(sig) {
					t.Fatalf("second signature differs (%v)", err)
				}
			case ECDSAP256:
				pub := s.Public().(*ecdsa.PublicKey)
				d := sha256.Sum256(msg)
				sig, err := s.Sign(rand.Reader, d[:], crypto.SHA256)
				if err != nil {
					t.Fatal(err)
				}
				if !ecdsa.VerifyASN1(pub, d[:], sig) {
					t.Fatal("crypto/ecdsa rejects the token's ASN.1 signature")
				}
				// The standard library signs certificates with it, as the
				// built-in TSA's CMS signer will.
				tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "hsm test"},
					NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
				der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, s)
				if err != nil {
					t.Fatalf("x509.CreateCertificate with the PKCS#11 signer: %v", err)
				}
				cert, err := x509.ParseCertificate(der)
				if err != nil {
					t.Fatal(err)
				}
				if err := cert.CheckSignatureFrom(cert); err != nil {
					t.Fatalf("certificate signed on the token does not verify: %v", err)
				}
				// And CMS SignedData, as the built-in TSA's tokens are
				// made (pkg/core/timestamp passes its crypto.Signer to
				// digitorus/pkcs7 the same way).
				sd, err := pkcs7.NewSignedData([]byte("TSTInfo stand-in"))
				if err != nil {
					t.Fatal(err)
				}
				sd.SetDigestAlgorithm(pkcs7.OIDDigestAlgorithmSHA256)
				if err := sd.AddSigner(cert, s, pkcs7.SignerInfoConfig{}); err != nil {
					t.Fatalf("pkcs7 AddSigner with the PKCS#11 signer: %v", err)
				}
				der, err = sd.Finish()
				if err != nil {
					t.Fatal(err)
				}
				p7, err := pkcs7.Parse(der)
				if err != nil {
					t.Fatal(err)
				}
				if err := p7.Verify(); err != nil {
					t.Fatalf("CMS signature made on the token does not verify: %v", err)
				}
			}
			assertNotExportable(t, tk, "signing-key")

			// Generating again under the same label is refused: svc never
			// replaces a key.
			_, err = Generate(ctx, uri, alg, Options{})
			if !errors.Is(err, ErrGenerate) {
				t.Fatalf("second Generate: %v, want ErrGenerate", err)
			}
		})
	}
}

// assertNotExportable reads the private key object's attributes directly
// through PKCS#11: it is sensitive, was never extractable, and C_GetAttributeValue
// of CKA_VALUE fails with CKR_ATTRIBUTE_SENSITIVE.
func assertNotExportable(t *testing.T, tk *softhsmtest.Token, label string) {
	t.Helper()
	m, err := acquireModule(tk.Module)
	if err != nil {
		t.Fatal(err)
	}
	defer m.release()
	u, err := ParsePKCS11URI(tk.URI(label))
	if err != nil {
		t.Fatal(err)
	}
	slot, err := findToken(m.ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	sh, err := openSession(m.ctx, slot, softhsmtest.PIN)
	if err != nil {
		t.Fatal(err)
	}
	defer m.ctx.CloseSession(sh)
	objs, err := findObjects(m.ctx, sh, pkcs11.CKO_PRIVATE_KEY, label, nil)
	if err != nil || len(objs) != 1 {
		t.Fatalf("find private key: %d objects, %v", len(objs), err)
	}
	_, err = m.ctx.GetAttributeValue(sh, objs[0], []*pkcs11.Attribute{pkcs11.NewAttribute(pkcs11.CKA_VALUE, nil)})
	if !errors.Is(err, pkcs11.Error(pkcs11.CKR_ATTRIBUTE_SENSITIVE)) {
		t.Fatalf("C_GetAttributeValue(CKA_VALUE) = %v, want CKR_ATTRIBUTE_SENSITIVE", err)
	}
	attrs, err := m.ctx.GetAttributeValue(sh, objs[0], []*pkcs11.Attribute{
		pkcs11.NewAttribute(pkcs11.CKA_SENSITIVE, nil),
		pkcs11.NewAttribute(pkcs11.CKA_EXTRACTABLE, nil),
		pkcs11.NewAttribute(pkcs11.CKA_NEVER_EXTRACTABLE, nil),
		pkcs11.NewAttribute(pkcs11.CKA_ALWAYS_SENSITIVE, nil),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{1, 0, 1, 1}
	for i, a := range attrs {
		if len(a.Value) != 1 || a.Value[0] != want[i] {
			t.Errorf("attribute 0x%x = %v, want %d", a.Type, a.Value, want[i])
		}
	}
}

// TestPKCS11KeyMadeByPkcs11Tool opens keys OpenSC's pkcs11-tool generated:
// svc works with keys an operator creates with the usual tools.
func TestPKCS11KeyMadeByPkcs11Tool(t *testing.T) {
	cases := []struct {
		keyType string
		alg     Algorithm
	}{
		{"EC:edwards25519", Ed25519},
		{"EC:prime256v1", ECDSAP256},
	}
	for _, c := range cases {
		t.Run(c.keyType, func(t *testing.T) {
			tk := softhsmtest.NewToken(t, "ops")
			tk.Tool(t, "--keypairgen", "--key-type", c.keyType, "--label", "made-by-opensc", "--id", "0a0b", "--usage-sign")
			s, err := Open(context.Background(), tk.URI("made-by-opensc"), Options{})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			if s.Algorithm() != c.alg {
				t.Fatalf("algorithm %s, want %s", s.Algorithm(), c.alg)
			}
			sig, err := s.SignMessage(context.Background(), []byte("checkpoint"))
			if err != nil {
				t.Fatal(err)
			}
			msg := []byte("checkpoint")
			if c.alg == ECDSAP256 {
				d := sha256.Sum256(msg)
				msg = d[:]
			}
			if verify(s.Public(), msg, sig) != nil {
				t.Fatal("signature does not verify")
			}
			// The same key named by CKA_ID instead of its label.
			byID := strings.Replace(tk.URI("x"), "object=x", "id=%0A%0B", 1)
			s2, err := Open(context.Background(), byID, Options{})
			if err != nil {
				t.Fatalf("Open by id: %v", err)
			}
			defer s2.Close()
			if s2.KeyID() != s.KeyID() {
				t.Fatalf("by id %s, by label %s", s2.KeyID(), s.KeyID())
			}
		})
	}
}

// TestPKCS11Errors: every way a PKCS#11 key can be unusable is an error at
// Open naming the URI, matchable by class.
func TestPKCS11Errors(t *testing.T) {
	tk := softhsmtest.NewToken(t, "svc-errors")
	good := tk.URI("vpec")
	if _, err := Generate(context.Background(), good, Ed25519, Options{}); err != nil {
		t.Fatal(err)
	}
	wrongPIN := filepath.Join(tk.Dir, "wrong-pin")
	if err := os.WriteFile(wrongPIN, []byte("9999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := "?module-path=" + tk.Module + "&pin-source=file://" + tk.PINFile
	cases := []struct {
		name string
		uri  string
		opts Options
		want error
	}{
		{"wrong PIN", "pkcs11:token=svc-errors;object=vpec?module-path=" + tk.Module + "&pin-source=file://" + wrongPIN, Options{}, ErrUnreachable},
		{"no PIN anywhere", "pkcs11:token=svc-errors;object=vpec?module-path=" + tk.Module, Options{}, ErrUnreachable},
		{"PIN variable unset", "pkcs11:token=svc-errors;object=vpec?module-path=" + tk.Module + "&pin-source=env:SVC_TEST_PIN", Options{Getenv: func(string) string { return "" }}, ErrUnreachable},
		{"no such token", "pkcs11:token=other;object=vpec" + q, Options{}, ErrUnreachable},
		{"no such key", "pkcs11:token=svc-errors;object=missing" + q, Options{}, ErrKeyNotFound},
		{"module does not load", "pkcs11:token=svc-errors;object=vpec?module-path=/nonexistent/libnothing.so&pin-source=file://" + tk.PINFile, Options{}, ErrUnreachable},
		{"no module", "pkcs11:token=svc-errors;object=vpec?pin-source=file://" + tk.PINFile, Options{}, ErrUnreachable},
		{"wrong algorithm for the use", good, Options{Want: ECDSAP256}, ErrAlgorithm},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := Open(context.Background(), c.uri, c.opts)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.URI != c.uri || ke.Op != "open" {
				t.Fatalf("error %#v does not name the URI", err)
			}
			if !strings.Contains(err.Error(), c.uri) {
				t.Fatalf("message %q does not name the URI", err)
			}
		})
	}
	// The PIN from the environment, through Options.Getenv only.
	env := "pkcs11:token=svc-errors;object=vpec?module-path=" + tk.Module + "&pin-source=env:SVC_TEST_PIN"
	s, err := Open(context.Background(), env, Options{Getenv: func(n string) string {
		if n == "SVC_TEST_PIN" {
			return softhsmtest.PIN
		}
		return ""
	}})
	if err != nil {
		t.Fatalf("pin-source=env: %v", err)
	}
	s.Close()
	// After Close, signing is an error, never a silent success.
	if _, err := s.SignMessage(context.Background(), []byte("x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("sign after Close: %v", err)
	}
}

// TestPKCS11Concurrent signs from many goroutines through a small session
// pool; every signature verifies.
func TestPKCS11Concurrent(t *testing.T) {
	tk := softhsmtest.NewToken(t, "svc-conc")
	uri := tk.URI("k")
	if _, err := Generate(context.Background(), uri, Ed25519, Options{}); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), uri, Options{PKCS11Sessions: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A second signer on the same module (as the VPEC and TSA keys on one
	// HSM would be) shares its initialisation.
	uri2 := tk.URI("tsa")
	if _, err := Generate(context.Background(), uri2, ECDSAP256, Options{}); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(context.Background(), uri2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				msg := []byte(fmt.Sprintf("goroutine %d message %d", g, i))
				for _, signer := range []*Signer{s, s2} {
					sig, err := signer.SignMessage(context.Background(), msg)
					if err != nil {
						errs <- err
						return
					}
					m := msg
					if signer.Algorithm() == ECDSAP256 {
						d := sha256.Sum256(msg)
						m = d[:]
					}
					if verify(signer.Public(), m, sig) != nil {
						errs <- fmt.Errorf("signature %d/%d does not verify", g, i)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	// Closing one signer leaves the other working.
	if _, err := s.SignMessage(context.Background(), []byte("after")); err != nil {
		t.Fatalf("sign after the other signer closed: %v", err)
	}
}
