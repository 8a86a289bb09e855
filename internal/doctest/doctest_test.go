package doctest

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	md := "# t\n\n```sh\nsvc version\n```\n\n<!-- doctest: skip needs a remote host -->\n```sh\ncurl https://example.com\n```\n" +
		"\n<!-- doctest: setup=vector no-compare -->\n```console\n$ svc-verify verify vpec.json \\\n  --trust-root b.pem\nVALID\n```\n" +
		"\n" + ByHandMarker + "\n```sh\nset -e\n```\n\n```json\n{\"a\":1}\n```\n\n<!-- doctest: setup=client files=examples/ci -->\n~~~bash\necho hi\n~~~\n"
	bs, err := Parse("x.md", []byte(md))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 5 {
		t.Fatalf("got %d blocks, want 5: %+v", len(bs), bs)
	}
	want := []Block{
		{File: "x.md", Line: 3, Lang: "sh", Text: "svc version\n"},
		{File: "x.md", Line: 8, Lang: "sh", Text: "curl https://example.com\n", Skip: "needs a remote host"},
		{File: "x.md", Line: 13, Lang: "console", Text: "$ svc-verify verify vpec.json \\\n  --trust-root b.pem\nVALID\n", Setup: "vector", NoCompare: true},
		{File: "x.md", Line: 20, Lang: "sh", Text: "set -e\n", ByHand: true},
		{File: "x.md", Line: 29, Lang: "bash", Text: "echo hi\n", Setup: "client", Files: "examples/ci"},
	}
	for i := range want {
		if bs[i] != want[i] {
			t.Errorf("block %d:\n got %+v\nwant %+v", i, bs[i], want[i])
		}
	}
	if !bs[0].Runs() || bs[1].Runs() || bs[3].Runs() {
		t.Error("Runs: want only blocks without skip or by-hand marker to run")
	}
	cmds, err := Console(bs[2].Text)
	if err != nil {
		t.Fatal(err)
	}
	if len(cmds) != 1 || cmds[0].Cmd != "svc-verify verify vpec.json \\\n  --trust-root b.pem" || cmds[0].Want != "VALID\n" {
		t.Errorf("Console: %+v", cmds)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, md, want string
		directive      bool
	}{
		{"skip without reason", "<!-- doctest: skip -->\n```sh\nsvc version\n```\n", "needs a reason", true},
		{"skip glued", "<!-- doctest: skipped it -->\n```sh\nsvc version\n```\n", "needs a reason", true},
		{"unknown word", "<!-- doctest: setup=client fast -->\n```sh\nsvc version\n```\n", "unknown word", true},
		{"no-compare on sh", "<!-- doctest: no-compare -->\n```sh\nsvc version\n```\n", "console", true},
		{"files escaping", "<!-- doctest: files=../etc -->\n```sh\nsvc version\n```\n", "unknown word", true},
		{"directive on json", "<!-- doctest: setup=client -->\n```json\n{}\n```\n", "not a shell block", true},
		{"directive not before fence", "<!-- doctest: setup=client -->\ntext\n```sh\nsvc version\n```\n", "right before a fence", true},
		{"untagged command", "```\nsvc verify x\n```\n", "untagged block", false},
		{"untagged command after env", "```\nCGO_ENABLED=0 go build ./...\n```\n", "untagged block", false},
		{"unclosed", "```sh\nsvc version\n", "never closed", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("x.md", []byte(tc.md))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tc.want)
			}
			if tc.directive && !errors.Is(err, ErrDirective) {
				t.Errorf("err = %v, want errors.Is ErrDirective", err)
			}
		})
	}
	if _, err := Parse("x.md", []byte("```\nE = mc^2\n```\n")); err != nil {
		t.Errorf("an untagged formula: %v", err)
	}
}

func TestConsoleErrors(t *testing.T) {
	for _, text := range []string{"", "output first\n$ svc version\n", "no command\n"} {
		if _, err := Console(text); err == nil {
			t.Errorf("Console(%q): want an error", text)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("<!-- doctest: setup=vector -->\n```console\n$ a\nb\n```\n"))
	f.Add([]byte("````sh\n```\n````\n~~~\n"))
	f.Fuzz(func(t *testing.T, md []byte) {
		bs, _ := Parse("f.md", md)
		for _, b := range bs {
			if !IsShell(b.Lang) || b.Line < 1 {
				t.Fatalf("bad block %+v", b)
			}
			if b.Lang == "console" {
				_, _ = Console(b.Text)
			}
		}
	})
}
