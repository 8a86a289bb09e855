package cli_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/app/cli"
)

// svc record --visibility transparent warns once on a terminal that the
// input will be visible to anyone holding the VPEC, and not through a pipe.
// (The service is unreachable here: the records queue, which is enough.)
func TestTransparentWarnsOnTerminal(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--base-url", "http://127.0.0.1:1", "--api-key", "pk_sb_0123456789abcdef0123456789abcdef",
		"--state", filepath.Join(dir, "state.json"), "--queue-path", filepath.Join(dir, "q.jsonl")}
	run := func(tty bool, args ...string) string {
		var out, errb bytes.Buffer
		s := &cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, ErrIsTTY: tty, Getenv: func(string) string { return "" }}
		if code := cli.Main(append(args, common...), s); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
		return errb.String()
	}
	run(false, "run", "open", "--workflow-id", "w", "--timeout", "1s")
	record := []string{"record", "--check", "c", "--manifest-id", "m", "--result", "pass", "--input", "public text", "--timeout", "1s"}
	const warning = "will be visible to anyone holding the VPEC"
	if got := run(true, append(record, "--visibility", "transparent")...); strings.Count(got, warning) != 1 {
		t.Errorf("on a terminal: %q", got)
	}
	if got := run(false, append(record, "--visibility", "transparent")...); strings.Contains(got, warning) {
		t.Errorf("through a pipe: %q", got)
	}
	if got := run(true, record...); strings.Contains(got, warning) {
		t.Errorf("opaque record: %q", got)
	}
}
