package timestamp

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dts "github.com/digitorus/timestamp"
)

// opensslConfig serves both the certificate commands and `openssl ts`.
const opensslConfig = `
[ req ]
distinguished_name = req_dn
prompt             = no

[ req_dn ]
CN = placeholder

[ v3_ca ]
basicConstraints     = critical, CA:TRUE
keyUsage             = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash

[ v3_tsa ]
basicConstraints       = critical, CA:FALSE
keyUsage               = critical, digitalSignature
extendedKeyUsage       = critical, timeStamping
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid:always

[ tsa ]
default_tsa = tsa_config1

[ tsa_config1 ]
dir                    = .
serial                 = $dir/tsaserial
crypto_device          = builtin
signer_cert            = $dir/tsa.pem
signer_key             = $dir/tsa.key
signer_digest          = sha256
default_policy         = 1.3.6.1.4.1.32473.7
other_policies         = 1.3.6.1.4.1.32473.8
digests                = sha256, sha384, sha512
accuracy               = secs:1, millisecs:500, microsecs:100
clock_precision_digits = 3
ordering               = yes
tsa_name               = yes
ess_cert_id_chain      = no
ess_cert_id_alg        = sha256
`

// openssl runs the openssl binary in dir and returns its combined output.
func openssl(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("openssl", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "OPENSSL_CONF="+filepath.Join(dir, "openssl.cnf"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustOpenSSL(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := openssl(t, dir, args...)
	if err != nil {
		t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func requireOpenSSL(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not in PATH")
	}
}

// opensslDir prepares a directory with the config and a data file.
func opensslDir(t *testing.T) (dir string, data []byte) {
	dir = t.TempDir()
	data = []byte("VPEC signature bytes stand-in\n")
	writeFile(t, dir, "openssl.cnf", []byte(opensslConfig))
	writeFile(t, dir, "data", data)
	return dir, data
}

func writeFile(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenSSLVerifiesOurTokens checks our tokens, and our answers to
// openssl's requests, with `openssl ts -verify`.
func TestOpenSSLVerifiesOurTokens(t *testing.T) {
	requireOpenSSL(t)
	dir, data := opensslDir(t)
	a, err := InitAuthority(filepath.Join(dir, "tsa"), AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	other := memAuthority(t, AuthorityOptions{}, nil)
	writeFile(t, dir, "other-root.pem", EncodeCertificatePEM(other.Root()))
	sum := sha256.Sum256(data)
	resp, err := a.Timestamp(context.Background(), sum[:])
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "resp.der", resp)
	writeFile(t, dir, "token.der", tokenOf(t, resp))
	writeFile(t, dir, "nocert.der", respond(t, a, sum[:], nil, false))
	digestHex := hex.EncodeToString(sum[:])
	otherHex := hex.EncodeToString(digestOf("other"))
	trust := []string{"-CAfile", "tsa/root.pem", "-untrusted", "tsa/tsa.pem"}

	ok := map[string][]string{
		"digest":         {"ts", "-verify", "-digest", digestHex, "-in", "resp.der"},
		"data":           {"ts", "-verify", "-data", "data", "-in", "resp.der"},
		"bare token":     {"ts", "-verify", "-data", "data", "-in", "token.der", "-token_in"},
		"no cert in tok": {"ts", "-verify", "-digest", digestHex, "-in", "nocert.der"},
	}
	for name, args := range ok {
		t.Run(name, func(t *testing.T) {
			out := mustOpenSSL(t, dir, append(args, trust...)...)
			if !strings.Contains(out, "Verification: OK") {
				t.Fatalf("openssl output:\n%s", out)
			}
		})
	}
	// openssl really checks: wrong data and wrong root fail.
	bad := []struct {
		name, reason string
		args         []string
	}{
		{"other digest", "message imprint mismatch", append([]string{"ts", "-verify", "-digest", otherHex, "-in", "resp.der"}, trust...)},
		{"other root", "unable to get local issuer certificate", []string{"ts", "-verify", "-digest", digestHex, "-in", "resp.der", "-CAfile", "other-root.pem", "-untrusted", "tsa/tsa.pem"}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			out, err := openssl(t, dir, tc.args...)
			if err == nil || !strings.Contains(out, "Verification: FAILED") || !strings.Contains(out, tc.reason) {
				t.Fatalf("openssl did not fail with %q (%v):\n%s", tc.reason, err, out)
			}
		})
	}

	t.Run("reply text", func(t *testing.T) {
		out := mustOpenSSL(t, dir, "ts", "-reply", "-in", "resp.der", "-text")
		for _, want := range []string{"Status: Granted", "Policy OID: 1.3.6.1.4.1.32473.1", "Hash Algorithm: sha256", "Nonce: 0x", "Accuracy: 0x01 seconds", "TSA: DirName:/CN=" + defaultAuthorityName} {
			if !strings.Contains(out, want) {
				t.Errorf("openssl -text lacks %q:\n%s", want, out)
			}
		}
	})

	// openssl makes the requests, we answer, openssl checks the answer
	// against its request (imprint, nonce, policy).
	for _, alg := range []string{"-sha256", "-sha384", "-sha512"} {
		t.Run("openssl query "+alg, func(t *testing.T) {
			mustOpenSSL(t, dir, "ts", "-query", "-data", "data", alg, "-cert", "-out", "q.tsq")
			r, err := a.Respond(readFile(t, dir, "q.tsq"))
			if err != nil {
				t.Fatalf("Respond to openssl query: %v", err)
			}
			writeFile(t, dir, "r.der", r)
			out := mustOpenSSL(t, dir, append([]string{"ts", "-verify", "-queryfile", "q.tsq", "-in", "r.der"}, trust...)...)
			if !strings.Contains(out, "Verification: OK") {
				t.Fatalf("openssl output:\n%s", out)
			}
		})
	}
	t.Run("openssl query with our policy, no nonce", func(t *testing.T) {
		mustOpenSSL(t, dir, "ts", "-query", "-data", "data", "-sha256", "-no_nonce", "-tspolicy", "1.3.6.1.4.1.32473.1", "-out", "q.tsq")
		r, err := a.Respond(readFile(t, dir, "q.tsq"))
		if err != nil {
			t.Fatalf("Respond: %v", err)
		}
		writeFile(t, dir, "r.der", r)
		mustOpenSSL(t, dir, append([]string{"ts", "-verify", "-queryfile", "q.tsq", "-in", "r.der"}, trust...)...)
		if _, err := Verify(r, sum[:], VerifyOptions{Roots: []*x509.Certificate{a.Root()}, Intermediates: []*x509.Certificate{a.Certificate()}}); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("openssl query with another policy", func(t *testing.T) {
		mustOpenSSL(t, dir, "ts", "-query", "-data", "data", "-sha256", "-tspolicy", "1.2.3.4", "-out", "q.tsq")
		if _, err := a.Respond(readFile(t, dir, "q.tsq")); err == nil {
			t.Fatal("Respond accepted a foreign policy")
		}
	})
}

// opensslTSA creates, with openssl, a root CA and a TSA certificate with a
// critical timeStamping EKU, of the given key type ("ec" or "rsa").
func opensslTSA(t *testing.T, dir, keyType string) (root, leaf *x509.Certificate) {
	t.Helper()
	newkey := []string{"-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"}
	if keyType == "rsa" {
		newkey = []string{"-newkey", "rsa:2048"}
	}
	mustOpenSSL(t, dir, append(append([]string{"req", "-x509", "-config", "openssl.cnf", "-extensions", "v3_ca", "-nodes"}, newkey...),
		"-keyout", "ca.key", "-out", "ca.pem", "-subj", "/CN=OpenSSL Test Root "+keyType, "-days", "30")...)
	mustOpenSSL(t, dir, append(append([]string{"req", "-new", "-config", "openssl.cnf", "-nodes"}, newkey...),
		"-keyout", "tsa.key", "-out", "tsa.csr", "-subj", "/CN=OpenSSL Test TSA "+keyType)...)
	mustOpenSSL(t, dir, "x509", "-req", "-in", "tsa.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "0x5eed",
		"-days", "30", "-extfile", "openssl.cnf", "-extensions", "v3_tsa", "-out", "tsa.pem")
	writeFile(t, dir, "tsaserial", []byte("01\n"))
	roots, err := ParseCertificatesPEM(readFile(t, dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	leaves, err := ParseCertificatesPEM(readFile(t, dir, "tsa.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return roots[0], leaves[0]
}

// TestOpenSSLAsTSA verifies tokens made by `openssl ts -reply`, for
// openssl's requests and for ours.
func TestOpenSSLAsTSA(t *testing.T) {
	requireOpenSSL(t)
	for _, keyType := range []string{"ec", "rsa"} {
		t.Run(keyType, func(t *testing.T) {
			dir, data := opensslDir(t)
			root, leaf := opensslTSA(t, dir, keyType)
			sum := sha256.Sum256(data)
			ours := memAuthority(t, AuthorityOptions{}, nil)

			reply := func(t *testing.T, query string, extra ...string) []byte {
				t.Helper()
				mustOpenSSL(t, dir, append([]string{"ts", "-reply", "-config", "openssl.cnf", "-queryfile", query,
					"-signer", "tsa.pem", "-inkey", "tsa.key", "-out", "r.tsr"}, extra...)...)
				return readFile(t, dir, "r.tsr")
			}

			t.Run("openssl query", func(t *testing.T) {
				mustOpenSSL(t, dir, "ts", "-query", "-data", "data", "-sha256", "-cert", "-out", "q.tsq")
				q, err := dts.ParseRequest(readFile(t, dir, "q.tsq"))
				if err != nil {
					t.Fatal(err)
				}
				r := reply(t, "q.tsq")
				before := time.Now().Add(-2 * time.Second)
				info, err := Verify(r, sum[:], VerifyOptions{Roots: []*x509.Certificate{root}, Nonce: q.Nonce})
				if err != nil {
					t.Fatalf("Verify openssl token: %v", err)
				}
				if !info.Signer.Equal(leaf) || info.Policy.String() != "1.3.6.1.4.1.32473.7" ||
					info.Accuracy != 1500100*time.Microsecond || info.GenTime.Before(before) || info.GenTime.After(time.Now().Add(time.Second)) {
					t.Errorf("Info: %+v", info)
				}
				if _, err := Verify(r, sum[:], VerifyOptions{Roots: []*x509.Certificate{ours.Root()}}); !errors.Is(err, ErrUntrustedTSA) {
					t.Errorf("Verify with another root: %v, want ErrUntrustedTSA", err)
				}
				if _, err := Verify(r, digestOf("other"), VerifyOptions{Roots: []*x509.Certificate{root}}); !errors.Is(err, ErrImprintMismatch) {
					t.Errorf("Verify other data: %v, want ErrImprintMismatch", err)
				}
				if _, err := Verify(r, sum[:], VerifyOptions{Roots: []*x509.Certificate{root}, Nonce: big.NewInt(1)}); !errors.Is(err, ErrNonceMismatch) {
					t.Errorf("Verify other nonce: %v, want ErrNonceMismatch", err)
				}
			})

			t.Run("openssl bare token", func(t *testing.T) {
				mustOpenSSL(t, dir, "ts", "-query", "-data", "data", "-sha256", "-cert", "-out", "q.tsq")
				tok := reply(t, "q.tsq", "-token_out")
				if _, err := Verify(tok, sum[:], VerifyOptions{Roots: []*x509.Certificate{root}}); err != nil {
					t.Fatalf("Verify openssl bare token: %v", err)
				}
			})

			t.Run("our request", func(t *testing.T) {
				for _, certReq := range []bool{true, false} {
					nonce, err := NewNonce()
					if err != nil {
						t.Fatal(err)
					}
					q, err := NewRequest(sum[:], nonce, certReq)
					if err != nil {
						t.Fatal(err)
					}
					writeFile(t, dir, "ours.tsq", q)
					r := reply(t, "ours.tsq")
					text := mustOpenSSL(t, dir, "ts", "-reply", "-in", "r.tsr", "-text")
					if !strings.Contains(text, "Status: Granted") {
						t.Fatalf("openssl reply:\n%s", text)
					}
					opts := VerifyOptions{Roots: []*x509.Certificate{root}, Nonce: nonce}
					_, err = Verify(r, sum[:], opts)
					if certReq {
						if err != nil {
							t.Fatalf("Verify: %v", err)
						}
						continue
					}
					if !errors.Is(err, ErrNoCertificate) {
						t.Fatalf("Verify without certificate: %v, want ErrNoCertificate", err)
					}
					opts.Intermediates = []*x509.Certificate{leaf}
					if _, err := Verify(r, sum[:], opts); err != nil {
						t.Fatalf("Verify with supplied certificate: %v", err)
					}
				}
			})
		})
	}
}
