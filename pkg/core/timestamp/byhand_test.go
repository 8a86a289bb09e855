package timestamp

import (
	"encoding/asn1"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// byHandScript is the by-hand recipe; its verify_tst function checks every
// RFC 3161 token of a VPEC with openssl.
const byHandScript = "../../../docs/verify-by-hand.sh"

// scriptPart returns the part of the script matched by re (multi-line).
func scriptPart(t *testing.T, script, re string) string {
	t.Helper()
	m := regexp.MustCompile(re).FindString(script)
	if m == "" {
		t.Fatalf("%s: no match for %s", byHandScript, re)
	}
	return m
}

// TestVerifyByHandAgrees runs the by-hand recipe's verify_tst (its helpers
// copied out of docs/verify-by-hand.sh at test time) on every real token
// whose data is published, and checks that it accepts exactly the tokens
// svc accepts: the same imprint rule (H(data) with H the token's SHA-256,
// SHA-384 or SHA-512) and the same refusal of SHA-1 signatures.
func TestVerifyByHandAgrees(t *testing.T) {
	for _, tool := range []string{"bash", "openssl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	b, err := os.ReadFile(byHandScript)
	if err != nil {
		t.Fatal(err)
	}
	script := string(b)
	helpers := strings.Join([]string{
		"set -euo pipefail",
		scriptPart(t, script, `(?m)^fail\(\) \{\n(?s:.*?)\n\}\n`),
		scriptPart(t, script, `(?m)^b64d\(\) \{.*\n`),
		scriptPart(t, script, `(?m)^TIME_JQ='\n(?s:.*?)'\n`),
		scriptPart(t, script, `(?m)^verify_tst\(\) \{(?s:.*?)\n\}\n`),
		`verify_tst token "$(cat "$work/resp.b64")" "$DATA"`,
		`echo VERIFIED`,
	}, "\n")
	abs, err := filepath.Abs(realDir)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, tc := range realTokens {
		if tc.data == "" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			ran++
			resp := readReal(t, tc.file)
			if strings.HasSuffix(tc.file, ".tst") {
				resp, err = asn1.Marshal(timeStampResp{TimeStampToken: asn1.RawValue{FullBytes: resp}})
				if err != nil {
					t.Fatal(err)
				}
			}
			// The recipe trusts the bundle's certificates as anchors
			// (-partial_chain); certificates a token does not embed are
			// given to both verifiers that way.
			trusted := append(append([]string(nil), tc.roots...), tc.untrusted...)
			work := t.TempDir()
			writeFile(t, work, "roots.pem", pemOf(t, trusted))
			writeFile(t, work, "resp.b64", []byte(base64.StdEncoding.EncodeToString(resp)))
			cmd := exec.Command("bash", "-c", helpers)
			cmd.Env = append(os.Environ(), "work="+work, "DATA="+filepath.Join(abs, tc.data))
			out, _ := cmd.CombinedOutput()
			scriptOK := strings.HasSuffix(strings.TrimSpace(string(out)), "VERIFIED")
			_, svcErr := VerifyData(resp, readReal(t, tc.data), VerifyOptions{Roots: realCerts(t, trusted)})
			if scriptOK != (svcErr == nil) {
				t.Fatalf("verify-by-hand ok=%v, svc: %v\n%s", scriptOK, svcErr, out)
			}
		})
	}
	if ran < 10 {
		t.Fatalf("only %d tokens compared", ran)
	}
}
