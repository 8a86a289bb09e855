package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/app/cli"
)

// On a terminal the report uses symbols, and colour unless NO_COLOR is set;
// through a pipe it uses words and no escape sequences.
func TestTerminalOutput(t *testing.T) {
	cases := []struct {
		name             string
		tty              bool
		env              map[string]string
		marks, ansiColor bool
	}{
		{"pipe", false, nil, false, false},
		{"tty", true, nil, true, true},
		{"tty NO_COLOR", true, map[string]string{"NO_COLOR": "1"}, true, false},
		{"tty TERM=dumb", true, map[string]string{"TERM": "dumb"}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			s := &cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, OutIsTTY: c.tty, ErrIsTTY: c.tty,
				Getenv: func(k string) string { return c.env[k] }}
			code := cli.VerifyMain([]string{"verify", vectorsDir + "/vpec/valid/clean.json", "--trust-root", vectorsDir + "/keys/trust-bundle.pem"}, s)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			got := out.String()
			if strings.Contains(got, "✓") != c.marks || strings.Contains(got, "[ok]") == c.marks {
				t.Errorf("marks=%v, output:\n%s", c.marks, got)
			}
			if strings.Contains(got, "\x1b[") != c.ansiColor {
				t.Errorf("colour=%v, output:\n%q", c.ansiColor, got)
			}
		})
	}
}

// svc-verify hash with no input on a terminal says so instead of waiting
// silently; with --file - it reads the terminal and says how to end.
func TestHashStdinTerminal(t *testing.T) {
	var out, errb bytes.Buffer
	s := &cli.Streams{In: strings.NewReader("abc"), Out: &out, Err: &errb, InIsTTY: true, Getenv: func(string) string { return "" }}
	if code := cli.VerifyMain([]string{"hash"}, s); code != cli.ExitUsage || !strings.Contains(errb.String(), "no input to hash") {
		t.Fatalf("no input on a terminal: exit %d, stderr %q", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := cli.VerifyMain([]string{"hash", "--file", "-"}, s); code != 0 || !strings.Contains(errb.String(), "Ctrl-D") ||
		!strings.Contains(out.String(), "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
		t.Fatalf("--file - on a terminal: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// svc verify keeps the replay audit's flags and its own examples;
// svc-verify verify has neither (pkg/app/cli/verifycmd tests that side).
func TestSvcVerifyHelpKeepsAudit(t *testing.T) {
	var out, errb bytes.Buffer
	s := &cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
	if code := cli.Main([]string{"hash", "--help"}, s); code != 0 || !strings.Contains(out.String(), "  svc hash --file input.txt") ||
		strings.Contains(out.String(), "svc-verify") {
		t.Fatalf("svc hash --help: exit %d, examples not svc's:\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := cli.Main([]string{"verify", "--help"}, s); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"--trace", "--model", "--input-file", "--ort-lib", "  svc verify vpec.json --trust-root trust-bundle.pem --trace "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("svc verify --help lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "svc-verify verify") {
		t.Errorf("svc verify --help shows svc-verify examples:\n%s", out.String())
	}
}
