package verifycmd_test

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/app/cli/verifycmd"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/verify"
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

// spaces is a stream of n bytes, not held in memory.
type spaces struct{ n int64 }

func (s *spaces) Read(p []byte) (int, error) {
	if s.n <= 0 {
		return 0, io.EOF
	}
	k := min(int64(len(p)), s.n)
	for i := range p[:k] {
		p[i] = ' '
	}
	s.n -= k
	return int(k), nil
}

// TestVerifyTooLarge: a VPEC above 256 MiB, in a file or on standard
// input, gets the report FORMATS.md documents, as any unreadable input:
// the schema check fails TOO LARGE, verdict UNREADABLE — TOO LARGE, exit 2
// (and with --output json a report, never a bare {"error": ...}). Found:
// the command printed an error object instead, for both.
func TestVerifyTooLarge(t *testing.T) {
	const bundle = "../../../../testdata/vectors/keys/trust-bundle.pem"
	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: the size is all the command looks at before refusing it.
	if err := f.Truncate(document.MaxSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, tc := range []struct {
		name, path string
		in         io.Reader
	}{
		{"file", big, strings.NewReader("")},
		{"standard input", "-", &spaces{document.MaxSize + 1}},
	} {
		for _, output := range []string{"json", "text"} {
			t.Run(tc.name+" "+output, func(t *testing.T) {
				if tc.path == "-" && testing.Short() {
					t.Skip("reads 256 MiB from a stream")
				}
				var out, errb bytes.Buffer
				s := streams(&out, &errb)
				s.In = tc.in
				if sp, ok := tc.in.(*spaces); ok {
					sp.n = document.MaxSize + 1
				}
				code := verifycmd.Main([]string{"verify", tc.path, "--trust-root", bundle, "--output", output}, s)
				if code != clicore.ExitUsage {
					t.Fatalf("exit %d, want %d; stdout %q, stderr %q", code, clicore.ExitUsage, out.String(), errb.String())
				}
				if output == "text" {
					if !strings.HasSuffix(out.String(), "UNREADABLE — TOO LARGE\n") || !strings.Contains(out.String(), "larger than the 268435456 byte (256 MiB) limit") {
						t.Fatalf("text report:\n%s\nstderr %q", out.String(), errb.String())
					}
					return
				}
				var rep struct {
					Verdict    string `json:"verdict"`
					Valid      bool   `json:"valid"`
					Unreadable bool   `json:"unreadable"`
					Checks     []struct {
						Name, Status, Code string
					} `json:"checks"`
					TrustRoot *struct{ File string } `json:"trust_root"`
				}
				if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
					t.Fatalf("--output json is not a report: %v\n%s\nstderr %q", err, out.String(), errb.String())
				}
				if rep.Verdict != "UNREADABLE — TOO LARGE" || rep.Valid || !rep.Unreadable || len(rep.Checks) != len(verify.Checks()) ||
					rep.Checks[0].Name != "schema" || rep.Checks[0].Code != "TOO LARGE" || rep.TrustRoot == nil {
					t.Fatalf("report %+v", rep)
				}
			})
		}
	}
}
