// Package softhsmtest gives tests a real PKCS#11 token: a throwaway
// SoftHSM2 token in a temporary directory.
//
// SoftHSM2 (Debian's softhsm2 2.6.1, installed by scripts/install-softhsm.sh)
// implements CKM_EC_EDWARDS_KEY_PAIR_GEN, CKM_EDDSA and CKM_ECDSA. Its
// configuration is read from the file SOFTHSM2_CONF names when a process
// calls C_Initialize, so NewToken sets SOFTHSM2_CONF for the test (t.Setenv:
// such tests cannot run in parallel) and every signer of an earlier token
// must be closed before the next token is made (pkg/service/keys finalises the
// module when its last signer closes).
//
// Without SoftHSM2 the tests skip and say so, unless SVC_REQUIRE_SOFTHSM=1
// (make unit sets it, and SVC_SOFTHSM to the module's path).
package softhsmtest

import (
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Fixed credentials of throwaway tokens. They are on the softhsm2-util
// command line; that is acceptable for a token that lives for one test and
// never for a real one (svc itself reads PINs from files or the
// environment only).
const (
	PIN   = "1234"
	SOPIN = "12345678"
)

var modulePaths = []string{
	"/usr/lib/softhsm/libsofthsm2.so",
	"/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so",
	"/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so",
	"/usr/local/lib/softhsm/libsofthsm2.so",
}

// Module returns the path of the SoftHSM2 PKCS#11 module: $SVC_SOFTHSM, or
// the first of the usual install paths that exists. Without one the test
// skips, or fails if SVC_REQUIRE_SOFTHSM=1.
func Module(t testing.TB) string {
	t.Helper()
	candidates := modulePaths
	if p := os.Getenv("SVC_SOFTHSM"); p != "" {
		candidates = []string{p}
	}
	for _, p := range candidates {
		if _, err := os.Stat(p); err == nil {
			if _, err := exec.LookPath("softhsm2-util"); err != nil {
				missing(t, "softhsm2-util is not on PATH")
			}
			return p
		}
	}
	missing(t, fmt.Sprintf("no SoftHSM2 module at %v", candidates))
	return ""
}

func missing(t testing.TB, why string) {
	t.Helper()
	msg := why + ": run scripts/install-softhsm.sh (Debian softhsm2 and opensc) and set SVC_SOFTHSM to the path it prints"
	if os.Getenv("SVC_REQUIRE_SOFTHSM") == "1" {
		t.Fatal(msg + " (SVC_REQUIRE_SOFTHSM=1)")
	}
	t.Skip(msg)
}

// Token is a throwaway, initialised SoftHSM2 token.
type Token struct {
	// Module is the PKCS#11 module path.
	Module string
	// Label is the token label.
	Label string
	// Dir is the token directory; Conf the SoftHSM2 configuration file.
	Dir, Conf string
	// PINFile holds the user PIN (mode 0600), for pin-source=file:.
	PINFile string
}

// NewToken creates and initialises a token labelled label in a temporary
// directory and points SOFTHSM2_CONF at it for the rest of the test.
func NewToken(t testing.TB, label string) *Token {
	t.Helper()
	mod := Module(t)
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.Mkdir(tokens, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "softhsm2.conf")
	body := fmt.Sprintf("directories.tokendir = %s\nobjectstore.backend = file\nlog.level = ERROR\nslots.removable = false\n", tokens)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SOFTHSM2_CONF", conf)
	cmd := exec.Command("softhsm2-util", "--init-token", "--free", "--label", label, "--pin", PIN, "--so-pin", SOPIN)
	cmd.Env = append(os.Environ(), "SOFTHSM2_CONF="+conf)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("softhsm2-util --init-token: %v\n%s", err, out)
	}
	pinFile := filepath.Join(dir, "pin")
	if err := os.WriteFile(pinFile, []byte(PIN+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &Token{Module: mod, Label: label, Dir: dir, Conf: conf, PINFile: pinFile}
}

// URI returns the pkcs11: URI of the key labelled object on the token,
// with module-path and pin-source=file: set.
func (tk *Token) URI(object string) string {
	q := "module-path=" + tk.Module + "&pin-source=" + (&url.URL{Scheme: "file", Path: tk.PINFile}).String()
	return "pkcs11:token=" + url.PathEscape(tk.Label) + ";object=" + url.PathEscape(object) + "?" + q
}

// Tool runs OpenSC's pkcs11-tool against the token's module (logged in
// with the token's PIN) and returns its combined output. The test skips
// (or fails under SVC_REQUIRE_SOFTHSM=1) without pkcs11-tool.
func (tk *Token) Tool(t testing.TB, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("pkcs11-tool"); err != nil {
		missing(t, "pkcs11-tool (OpenSC) is not on PATH")
	}
	all := append([]string{"--module", tk.Module, "--token-label", tk.Label, "--login", "--pin", PIN}, args...)
	cmd := exec.Command("pkcs11-tool", all...)
	cmd.Env = append(os.Environ(), "SOFTHSM2_CONF="+tk.Conf)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pkcs11-tool %v: %v\n%s", args, err, out)
	}
	return string(out)
}
