package verifycmd_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/cli/clicore"
	"github.com/svc-gov/svc/pkg/cli/verifycmd"
)

func streams(out, errb *bytes.Buffer) *clicore.Streams {
	return &clicore.Streams{In: strings.NewReader(""), Out: out, Err: errb, Getenv: func(string) string { return "" }}
}

// svc-verify's help shows only flags it can use and svc-verify examples:
// the replay audit (--trace, --model, --input-file, --ort-lib) is svc's.
func TestVerifyHelpIsSvcVerifys(t *testing.T) {
	for _, c := range []string{"verify", "verify-profile", "hash"} {
		t.Run(c, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := verifycmd.Main([]string{c, "--help"}, streams(&out, &errb)); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			help := out.String()
			for _, flag := range []string{"--trace", "--model", "--input-file", "--ort-lib"} {
				if strings.Contains(help, flag) {
					t.Errorf("svc-verify %s --help offers %s:\n%s", c, flag, help)
				}
			}
			_, examples, _ := strings.Cut(help, "Examples:\n")
			examples, _, _ = strings.Cut(examples, "\n\n")
			if examples == "" {
				t.Fatalf("no examples:\n%s", help)
			}
			for _, line := range strings.Split(examples, "\n") {
				if fields := strings.Fields(line); len(fields) > 0 && fields[0] != "svc-verify" && fields[0] != "printf" {
					t.Errorf("example %q is not an svc-verify command", line)
				}
			}
		})
	}
	var out, errb bytes.Buffer
	if code := verifycmd.Main([]string{"verify", "x.json", "--trace", "t.json"}, streams(&out, &errb)); code != clicore.ExitUsage ||
		!strings.Contains(errb.String(), "unknown flag: --trace") {
		t.Fatalf("--trace: exit %d, stderr %q", code, errb.String())
	}
}
