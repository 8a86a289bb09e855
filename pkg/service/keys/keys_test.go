package keys

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
)

func TestParseURI(t *testing.T) {
	cases := []struct {
		uri  string
		ok   bool
		want func(*URI) bool
	}{
		{"file:///etc/svc/signing-key.pem", true, func(u *URI) bool { return u.Path == "/etc/svc/signing-key.pem" }},
		{"file://localhost/k.pem", true, func(u *URI) bool { return u.Path == "/k.pem" }},
		{"file:///a%20b/k.pem", true, func(u *URI) bool { return u.Path == "/a b/k.pem" }},
		{"file:k.pem", false, nil},
		{"file://host/k.pem", false, nil},
		{"file:///k.pem?x=1", false, nil},
		{"/etc/svc/signing-key.pem", false, nil},
		{"signing-key.pem", false, nil},
		{"pkcs11:token=svc;object=vpec%20key?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:///run/pin", true, func(u *URI) bool {
			p := u.PKCS11
			return p.Token == "svc" && p.Object == "vpec key" && p.ModulePath == "/usr/lib/softhsm/libsofthsm2.so" && p.PINSource == "file:///run/pin"
		}},
		{"pkcs11:id=%01%02;type=private;slot-id=3", true, func(u *URI) bool {
			return string(u.PKCS11.ID) == "\x01\x02" && *u.PKCS11.SlotID == 3
		}},
		{"pkcs11:serial=ABC;manufacturer=SoftHSM%20project;model=SoftHSM%20v2;object=k?pin-source=env:SVC_PIN", true, func(u *URI) bool {
			return u.PKCS11.Serial == "ABC" && u.PKCS11.Manufacturer == "SoftHSM project" && u.PKCS11.PINSource == "env:SVC_PIN"
		}},
		{"pkcs11:token=svc", false, nil},                        // no key named
		{"pkcs11:object=a;object=b", false, nil},                // duplicate
		{"pkcs11:object=k?pin-value=1234", false, nil},          // PIN in the URI
		{"pkcs11:object=k?module-name=softhsm2", false, nil},    // unsupported
		{"pkcs11:object=k;type=public", false, nil},             // not a private key
		{"pkcs11:object=a b", false, nil},                       // space unencoded
		{"pkcs11:object=a/b", false, nil},                       // / in a path value
		{"pkcs11:object=%zz", false, nil},                       // bad escape
		{"pkcs11:object=k;x-vendor=1", false, nil},              // vendor attribute
		{"pkcs11:object=k?module-path=relative.so", false, nil}, // relative module
		{"pkcs11:object=k?pin-source=/run/pin", false, nil},     // pin-source not a URI
		{"pkcs11:slot-id=x;object=k", false, nil},               // slot-id not a number
		{"pkcs11:object", false, nil},                           // no value
		{"hashivault://svc-vpec", true, func(u *URI) bool { return u.VaultKey == "svc-vpec" }},
		{"openbao://svc_tsa.v2", true, func(u *URI) bool { return u.VaultKey == "svc_tsa.v2" }},
		{"hashivault://", false, nil},
		{"hashivault://a/b", false, nil},
		{"hashivault:svc", false, nil},
		{"awskms:///alias/svc-tsa", true, func(u *URI) bool { return u.AWSEndpoint == "" && u.AWSKey == "alias/svc-tsa" }},
		{"awskms:///1234abcd-12ab-34cd-56ef-1234567890ab", true, func(u *URI) bool { return u.AWSKey == "1234abcd-12ab-34cd-56ef-1234567890ab" }},
		{"awskms:///arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab", true, func(u *URI) bool { return strings.HasPrefix(u.AWSKey, "arn:") }},
		{"awskms://localhost:4566/alias/svc", true, func(u *URI) bool { return u.AWSEndpoint == "localhost:4566" }},
		{"awskms:///alias/", false, nil},
		{"awskms://alias/svc", false, nil},
		{"awskms:///arn:aws:kms:eu-west-1:12:key/x", false, nil},
		{"gcpkms://projects/p/locations/global/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1", true, func(u *URI) bool {
			return u.GCPName == "projects/p/locations/global/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1"
		}},
		{"gcpkms://projects/p/locations/global/keyRings/r/cryptoKeys/k", false, nil}, // no version
		{"azurekms://vault/key", false, nil},
		{"", false, nil},
	}
	for _, c := range cases {
		u, err := ParseURI(c.uri)
		if !c.ok {
			if err == nil {
				t.Errorf("ParseURI(%q) succeeded, want an error", c.uri)
				continue
			}
			var ke *KeyError
			if !errors.Is(err, ErrBadURI) || !errors.As(err, &ke) || ke.URI != c.uri || ke.Op != "parse" {
				t.Errorf("ParseURI(%q) = %v, want a KeyError matching ErrBadURI", c.uri, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseURI(%q): %v", c.uri, err)
			continue
		}
		if !c.want(u) {
			t.Errorf("ParseURI(%q) = %+v (pkcs11 %+v)", c.uri, u, u.PKCS11)
		}
	}
}

// TestPKCS11URIString: the canonical form parses back to the same URI.
func TestPKCS11URIString(t *testing.T) {
	slot := uint(7)
	in := &PKCS11URI{Token: "svc; prod", Serial: "0a1b", SlotID: &slot, Object: "vpec/2026", ID: []byte{0, 0xff},
		ModulePath: "/usr/lib/x/y.so", PINSource: "file:///run/svc pin"}
	s := in.String()
	if want := "pkcs11:token=svc%3B%20prod;serial=0a1b;slot-id=7;object=vpec%2F2026;id=%00%FF?module-path=/usr/lib/x/y.so&pin-source=file:///run/svc%20pin"; s != want {
		t.Fatalf("String() = %s\nwant       %s", s, want)
	}
	out, err := ParsePKCS11URI(s)
	if err != nil {
		t.Fatal(err)
	}
	if out.String() != s {
		t.Fatalf("round trip: %s", out.String())
	}
}

func TestFileURI(t *testing.T) {
	dir := t.TempDir()
	u, err := FileURI(filepath.Join(dir, "a key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseURI(u)
	if err != nil {
		t.Fatalf("ParseURI(%s): %v", u, err)
	}
	if p.Path != filepath.Join(dir, "a key.pem") {
		t.Fatalf("path %q", p.Path)
	}
}

// TestFileSigner: Generate and Open file keys of both algorithms; the key
// id is pkg/core/signing's.
func TestFileSigner(t *testing.T) {
	ctx := context.Background()
	for _, alg := range []Algorithm{Ed25519, ECDSAP256} {
		t.Run(string(alg), func(t *testing.T) {
			uri, _ := FileURI(filepath.Join(t.TempDir(), "k.pem"))
			g, err := Generate(ctx, uri, alg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Generate(ctx, uri, alg, Options{}); !errors.Is(err, ErrGenerate) || !errors.Is(err, fs.ErrExist) {
				t.Fatalf("Generate over an existing key: %v", err)
			}
			p, _ := ParseURI(uri)
			if st, err := os.Stat(p.Path); err != nil || st.Mode().Perm() != 0o600 {
				t.Fatalf("key file mode %v (%v), want 0600", st.Mode(), err)
			}
			s, err := Open(ctx, uri, Options{Want: alg})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.KeyID() != g.KeyID || s.Provider() != "file" {
				t.Fatalf("key id %s provider %s, generated %s", s.KeyID(), s.Provider(), g.KeyID)
			}
			msg := []byte("profile bytes")
			sig, err := s.SignMessage(ctx, msg)
			if err != nil {
				t.Fatal(err)
			}
			switch pub := s.Public().(type) {
			case ed25519.PublicKey:
				if !ed25519.Verify(pub, msg, sig) || signing.KeyID(pub) != s.KeyID() {
					t.Fatal("Ed25519 signature or key id wrong")
				}
			case *ecdsa.PublicKey:
				d := sha256.Sum256(msg)
				if !ecdsa.VerifyASN1(pub, d[:], sig) {
					t.Fatal("ECDSA signature does not verify")
				}
			}
		})
	}
}

// TestFileSignerReadsExistingKeys opens the keys svc writes today: the
// Ed25519 key of svc keygen and the built-in TSA's P-256 key.
func TestFileSignerReadsExistingKeys(t *testing.T) {
	dir := t.TempDir()
	kd, err := signing.CreateKeyDir(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	uri, _ := FileURI(kd.PrivateKey)
	s, err := Open(context.Background(), uri, Options{Want: Ed25519})
	if err != nil {
		t.Fatal(err)
	}
	if s.KeyID() != kd.KeyID {
		t.Fatalf("key id %s, svc keygen said %s", s.KeyID(), kd.KeyID)
	}
	a, err := timestamp.InitAuthority(filepath.Join(dir, "tsa"), timestamp.AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tsaURI, _ := FileURI(filepath.Join(dir, "tsa", timestamp.KeyFile))
	ts, err := Open(context.Background(), tsaURI, Options{Want: ECDSAP256})
	if err != nil {
		t.Fatal(err)
	}
	if !ts.Public().(*ecdsa.PublicKey).Equal(a.Certificate().PublicKey) {
		t.Fatal("TSA key does not match the TSA certificate")
	}
}

func TestFileSignerErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	os.WriteFile(garbage, []byte("not a key"), 0o600)
	pubOnly := filepath.Join(dir, "pub.pem")
	_, priv, _ := ed25519.GenerateKey(nil)
	pemPub, _ := signing.MarshalPublicKeyPEM(priv.Public().(ed25519.PublicKey))
	os.WriteFile(pubOnly, pemPub, 0o600)
	cases := []struct {
		path string
		want error
	}{
		{filepath.Join(dir, "missing.pem"), ErrKeyNotFound},
		{garbage, ErrAlgorithm},
		{pubOnly, ErrAlgorithm},
	}
	for _, c := range cases {
		uri, _ := FileURI(c.path)
		_, err := Open(context.Background(), uri, Options{})
		var ke *KeyError
		if !errors.Is(err, c.want) || !errors.As(err, &ke) || ke.URI != uri {
			t.Errorf("Open(%s) = %v, want %v naming the URI", uri, err, c.want)
		}
	}
}

// TestSignerOpts: crypto.Signer options the key cannot honour are errors.
func TestSignerOpts(t *testing.T) {
	_, edPriv, _ := ed25519.GenerateKey(nil)
	ed, err := FromPrivateKey("memory:ed", edPriv)
	if err != nil {
		t.Fatal(err)
	}
	ecURI, _ := FileURI(filepath.Join(t.TempDir(), "ec.pem"))
	if _, err := Generate(context.Background(), ecURI, ECDSAP256, Options{}); err != nil {
		t.Fatal(err)
	}
	ec, err := Open(context.Background(), ecURI, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := sha256.Sum256([]byte("m"))
	cases := []struct {
		name   string
		s      *Signer
		digest []byte
		opts   crypto.SignerOpts
	}{
		{"Ed25519ph", ed, d[:], crypto.SHA512},
		{"Ed25519ctx", ed, []byte("m"), &ed25519.Options{Context: "svc"}},
		{"ECDSA without hash", ec, d[:], crypto.Hash(0)},
		{"ECDSA with SHA-384", ec, make([]byte, 48), crypto.SHA384},
		{"ECDSA short digest", ec, d[:16], crypto.SHA256},
	}
	for _, c := range cases {
		if _, err := c.s.Sign(nil, c.digest, c.opts); !errors.Is(err, ErrSignerOpts) {
			t.Errorf("%s: %v, want ErrSignerOpts", c.name, err)
		}
	}
	if _, err := ed.Sign(nil, []byte("m"), &ed25519.Options{}); err != nil {
		t.Errorf("pure Ed25519 through *ed25519.Options: %v", err)
	}
}

func TestReadPIN(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "pin")
	os.WriteFile(f, []byte("4321\r\nignored\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, nil, 0o600)
	env := func(n string) string {
		if n == "PIN" {
			return "9876"
		}
		return ""
	}
	cases := []struct {
		source string
		opts   Options
		pin    string
		want   error
	}{
		{"file://" + f, Options{}, "4321", nil},
		{"file:" + f, Options{}, "4321", nil},
		{"env:PIN", Options{Getenv: env}, "9876", nil},
		{"", Options{PKCS11PIN: "1111"}, "1111", nil},
		{"", Options{}, "", ErrUnreachable},
		{"env:PIN", Options{}, "", ErrUnreachable},
		{"env:OTHER", Options{Getenv: env}, "", ErrUnreachable},
		{"file://" + empty, Options{}, "", ErrUnreachable},
		{"file://" + filepath.Join(dir, "none"), Options{}, "", ErrUnreachable},
		{"file:relative", Options{}, "", ErrBadURI},
	}
	for _, c := range cases {
		pin, err := readPIN(c.source, c.opts)
		if c.want != nil {
			if !errors.Is(err, c.want) {
				t.Errorf("readPIN(%q) = %q, %v; want %v", c.source, pin, err, c.want)
			}
			continue
		}
		if err != nil || pin != c.pin {
			t.Errorf("readPIN(%q) = %q, %v; want %q", c.source, pin, err, c.pin)
		}
	}
}

// TestGenerateRefusesCloudKeys: svc does not create keys at cloud
// providers; the error says so.
func TestGenerateRefusesCloudKeys(t *testing.T) {
	for _, uri := range []string{"hashivault://k", "awskms:///alias/k", "gcpkms://projects/p/locations/l/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1"} {
		if _, err := Generate(context.Background(), uri, Ed25519, Options{}); !errors.Is(err, ErrGenerate) {
			t.Errorf("Generate(%s) = %v, want ErrGenerate", uri, err)
		}
	}
}

func FuzzParseURI(f *testing.F) {
	for _, s := range []string{
		"file:///etc/svc/k.pem",
		"pkcs11:token=svc;object=vpec%20key;id=%01?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:///run/pin",
		"hashivault://svc-vpec", "awskms://localhost:4566/alias/svc",
		"gcpkms://projects/p/locations/global/keyRings/r/cryptoKeys/k/cryptoKeyVersions/1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := ParseURI(s)
		if err != nil {
			if !errors.Is(err, ErrBadURI) {
				t.Fatalf("error %v does not match ErrBadURI", err)
			}
			return
		}
		if u.PKCS11 != nil {
			// The canonical form parses to the same canonical form.
			again, err := ParsePKCS11URI(u.PKCS11.String())
			if err != nil {
				t.Fatalf("canonical form %q does not parse: %v", u.PKCS11.String(), err)
			}
			if again.String() != u.PKCS11.String() {
				t.Fatalf("canonical form unstable: %q then %q", u.PKCS11.String(), again.String())
			}
		}
	})
}
