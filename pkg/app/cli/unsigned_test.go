package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/app/cli"
)

// An unsigned profile given with --profile (what svc calibrate run
// writes) is PROFILE INVALID and the report says how to get it signed.
func TestVerifyUnsignedProfileSaysHowToSign(t *testing.T) {
	signed, err := os.ReadFile(vectorsDir + "/profile/pii-detection-v1.0.0.json")
	if err != nil {
		t.Fatal(err)
	}
	// Drop the two signature members, keeping every other byte.
	unsigned := regexp.MustCompile(`,\s*"signing_key_id": "[^"]*",\s*"profile_signature": "[^"]*"`).ReplaceAll(signed, nil)
	if bytes.Equal(unsigned, signed) {
		t.Fatal("the vector's signature members were not found")
	}
	path := filepath.Join(t.TempDir(), "profile.json")
	if err := os.WriteFile(path, unsigned, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	s := &cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	code := cli.VerifyMain([]string{"verify", vectorsDir + "/vpec/valid/bounded-inference.json",
		"--trust-root", vectorsDir + "/keys/trust-bundle.pem", "--profile", path}, s)
	if code != cli.ExitInvalid || !strings.Contains(out.String(), "profile is not signed: it is what 'svc calibrate run' writes") ||
		!strings.Contains(out.String(), "INVALID — PROFILE INVALID") {
		t.Fatalf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
}
