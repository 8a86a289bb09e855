package signing_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/signing"
)

func needOpenSSL(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl not installed")
	}
}

func openssl(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("openssl", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// Keys we write, openssl reads; keys openssl writes, we read; signatures
// verify both ways.
func TestOpenSSLInterop(t *testing.T) {
	needOpenSSL(t)
	dir := t.TempDir()
	msg := []byte("the canonical bytes of a VPEC")
	os.WriteFile(filepath.Join(dir, "msg"), msg, 0o644)

	// Ours -> openssl.
	pub, priv, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	privPEM, _ := signing.MarshalPrivateKeyPEM(priv)
	pubPEM, _ := signing.MarshalPublicKeyPEM(pub)
	os.WriteFile(filepath.Join(dir, "ours.pem"), privPEM, 0o600)
	os.WriteFile(filepath.Join(dir, "ours.pub"), pubPEM, 0o644)
	derived := openssl(t, dir, "pkey", "-in", "ours.pem", "-pubout")
	if !bytes.Equal(derived, pubPEM) {
		t.Fatalf("openssl derives another public key:\n%s\nwant\n%s", derived, pubPEM)
	}
	s, _ := signing.NewSigner(priv)
	os.WriteFile(filepath.Join(dir, "sig"), mustSig(s.Sign(msg)), 0o644)
	openssl(t, dir, "pkeyutl", "-verify", "-pubin", "-inkey", "ours.pub", "-rawin", "-in", "msg", "-sigfile", "sig")

	// openssl -> ours.
	openssl(t, dir, "genpkey", "-algorithm", "ed25519", "-out", "theirs.pem")
	openssl(t, dir, "pkey", "-in", "theirs.pem", "-pubout", "-out", "theirs.pub")
	openssl(t, dir, "pkeyutl", "-sign", "-inkey", "theirs.pem", "-rawin", "-in", "msg", "-out", "theirs.sig")
	theirPriv, err := signing.ParsePrivateKeyPEM(mustRead(t, dir, "theirs.pem"))
	if err != nil {
		t.Fatal(err)
	}
	theirPub, err := signing.ParsePublicKeyPEM(mustRead(t, dir, "theirs.pub"))
	if err != nil {
		t.Fatal(err)
	}
	if !theirPriv.Public().(ed25519.PublicKey).Equal(theirPub) {
		t.Fatal("openssl's private and public key disagree after parsing")
	}
	if err := signing.Verify(theirPub, msg, mustRead(t, dir, "theirs.sig")); err != nil {
		t.Fatalf("openssl's signature: %v", err)
	}

	// Key id = first 16 hex of SHA-256 over the SPKI DER, as openssl computes it.
	der := openssl(t, dir, "pkey", "-pubin", "-in", "theirs.pub", "-outform", "DER")
	sum := sha256.Sum256(der)
	if got, want := signing.KeyID(theirPub), hex.EncodeToString(sum[:])[:16]; got != want {
		t.Errorf("KeyID = %s, openssl-derived %s", got, want)
	}
}

func mustRead(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignatureString(t *testing.T) {
	sig := bytes.Repeat([]byte{0xab}, 64)
	s := signing.FormatSignature(sig)
	if !strings.HasPrefix(s, "Ed25519:") {
		t.Fatalf("FormatSignature = %q", s)
	}
	back, err := signing.ParseSignature(s)
	if err != nil || !bytes.Equal(back, sig) {
		t.Fatalf("round trip: %v", err)
	}
	for _, bad := range []string{"", "ed25519:" + s[8:], s[8:], "Ed25519:!!!", "Ed25519:" + "AAAA", s + "=", "Ed25519:" + strings.Repeat("A", 88)} {
		if _, err := signing.ParseSignature(bad); !errors.Is(err, signing.ErrMalformedSignature) {
			t.Errorf("ParseSignature(%q) = %v, want ErrMalformedSignature", bad, err)
		}
	}
}

func TestBundle(t *testing.T) {
	pub1, priv1, _ := signing.GenerateKey()
	pub2, _, _ := signing.GenerateKey()
	b := signing.NewBundle()
	id1 := b.AddKey(pub1)
	b.AddKey(pub2)
	parsed, err := signing.ParseBundle(b.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if got := parsed.KeyIDs(); len(got) != 2 {
		t.Fatalf("KeyIDs = %v", got)
	}
	s, _ := signing.NewSigner(priv1)
	msg := []byte("m")
	sig := signing.FormatSignature(mustSig(s.Sign(msg)))
	if err := parsed.Verify(id1, msg, sig); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if err := parsed.Verify(id1, []byte("n"), sig); !errors.Is(err, signing.ErrBadSignature) {
		t.Errorf("other message: %v", err)
	}
	if err := parsed.Verify("0000000000000000", msg, sig); !errors.Is(err, signing.ErrUnknownKey) {
		t.Errorf("unknown key: %v", err)
	}
	for name, data := range map[string]string{
		"empty":     "",
		"private":   string(must(signing.MarshalPrivateKeyPEM(priv1))),
		"bad key":   "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
		"bad cert":  "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
		"text only": "hello\n",
	} {
		if _, err := signing.ParseBundle([]byte(data)); !errors.Is(err, signing.ErrMalformedBundle) {
			t.Errorf("%s: %v, want ErrMalformedBundle", name, err)
		}
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func TestParseKeyErrors(t *testing.T) {
	junkKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{0, 0, 0}}))
	for _, data := range []string{"", "junk", junkKey} {
		if _, err := signing.ParsePrivateKeyPEM([]byte(data)); !errors.Is(err, signing.ErrMalformedKey) {
			t.Errorf("ParsePrivateKeyPEM(%q) = %v", data, err)
		}
		if _, err := signing.ParsePublicKeyPEM([]byte(data)); !errors.Is(err, signing.ErrMalformedKey) {
			t.Errorf("ParsePublicKeyPEM(%q) = %v", data, err)
		}
	}
	if _, err := signing.NewSigner(ed25519.PrivateKey{1, 2}); !errors.Is(err, signing.ErrMalformedKey) {
		t.Errorf("NewSigner(short) = %v", err)
	}
}

func FuzzParseBundle(f *testing.F) {
	if b, err := os.ReadFile("../../../testdata/vectors/keys/trust-bundle.pem"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n"))
	f.Add([]byte("-----BEGIN TRANSPARENCY LOG KEY-----\nNote-Verifier: svc.test/log+3bc32b76+AXxXI747Y9aoeMnT5VE8a0J40JfzuFRzE93DZNT2mC+q\n\n" +
		"MCowBQYDK2VwAyEAfFcjvjtj1qh4ydPlUTxrQnjQl/O4VHMT3cNk1PaYL6o=\n-----END TRANSPARENCY LOG KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := signing.ParseBundle(data)
		if err != nil {
			return
		}
		// What parses must survive a round trip.
		again, err := signing.ParseBundle(b.Marshal())
		if len(b.KeyIDs())+len(b.Roots())+len(b.LogKeys()) > 0 && (err != nil || len(again.KeyIDs()) != len(b.KeyIDs()) || len(again.Roots()) != len(b.Roots()) ||
			len(again.LogKeys()) != len(b.LogKeys())) {
			t.Fatalf("round trip changed the bundle: %v", err)
		}
	})
}

func FuzzParseSignature(f *testing.F) {
	f.Add("Ed25519:" + strings.Repeat("A", 86) + "==")
	f.Fuzz(func(t *testing.T, s string) {
		sig, err := signing.ParseSignature(s)
		if err == nil && signing.FormatSignature(sig) != s {
			t.Fatalf("non-canonical signature string accepted: %q", s)
		}
	})
}

// TestDecodeBase64OneForm: a base64 value has exactly one accepted
// spelling. encoding/base64 (even Strict) skips CR and LF, so a signature
// with a line break inserted verified, making byte-different copies of a
// signed document valid.
func TestDecodeBase64OneForm(t *testing.T) {
	raw := make([]byte, 64)
	for i := range raw {
		raw[i] = byte(i * 7)
	}
	good := base64.StdEncoding.EncodeToString(raw)
	if b, err := signing.DecodeBase64(good); err != nil || !bytes.Equal(b, raw) {
		t.Fatalf("canonical form refused: %v", err)
	}
	for _, ok := range []string{"", "AA==", "AAA=", "AAAA", "+/+/"} {
		if _, err := signing.DecodeBase64(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	bad := map[string]string{
		"CRLF inside":      good[:20] + "\r\n" + good[20:],
		"LF inside":        good[:20] + "\n" + good[20:],
		"CR at end":        good + "\r",
		"LF at start":      "\n" + good,
		"space":            good[:8] + " " + good[8:],
		"tab":              good[:8] + "\t" + good[8:],
		"no padding":       strings.TrimRight(good, "="),
		"url alphabet":     strings.NewReplacer("+", "-", "/", "_").Replace(base64.StdEncoding.EncodeToString([]byte{0xfb, 0xff, 0xbf})),
		"non-zero pad bit": "AB==",
		"extra padding":    "AA===",
		"padding inside":   "AA==AA==",
		"unicode":          "AAA\u00e9",
		"nul":              "AAA\x00",
	}
	for name, s := range bad {
		t.Run(name, func(t *testing.T) {
			if _, err := signing.DecodeBase64(s); !errors.Is(err, signing.ErrBase64) {
				t.Fatalf("DecodeBase64(%q) = %v, want ErrBase64", s, err)
			}
			if strings.HasPrefix(name, "CR") || strings.HasPrefix(name, "LF") {
				if _, err := signing.ParseSignature(signing.SignaturePrefix + s); !errors.Is(err, signing.ErrMalformedSignature) || !errors.Is(err, signing.ErrBase64) {
					t.Fatalf("ParseSignature: %v", err)
				}
			}
		})
	}
}

func FuzzDecodeBase64(f *testing.F) {
	for _, s := range []string{"", "AA==", "AB==", "AA\r\n==", "QUJD", "QU JD", "-_=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := signing.DecodeBase64(s)
		if err != nil {
			if !errors.Is(err, signing.ErrBase64) {
				t.Fatalf("error %v does not match ErrBase64", err)
			}
			return
		}
		if base64.StdEncoding.EncodeToString(b) != s {
			t.Fatalf("accepted %q, which is not the canonical encoding of its bytes", s)
		}
	})
}
