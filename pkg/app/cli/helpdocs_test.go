package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli"
)

// helpSections splits `--help` output into its description (before
// "Usage:") and its sections by header ("Usage", "Examples", "Flags",
// "Global Flags", "Available Commands", ...), each a list of lines.
func helpSections(help string) (desc string, sections map[string][]string) {
	sections = map[string][]string{}
	head, rest, _ := strings.Cut(help, "\nUsage:\n")
	desc = strings.TrimSpace(head)
	cur := "Usage"
	for _, l := range strings.Split(rest, "\n") {
		if l != "" && !strings.HasPrefix(l, " ") && strings.HasSuffix(l, ":") {
			cur = strings.TrimSuffix(l, ":")
			continue
		}
		if strings.HasPrefix(l, "Use \"") { // the closing "Use ... --help" hint
			continue
		}
		sections[cur] = append(sections[cur], l)
	}
	for k, v := range sections {
		sections[k] = strings.Split(strings.TrimRight(strings.Join(v, "\n"), "\n"), "\n")
	}
	return desc, sections
}

// TestHelpMatchesReference: for every command of svc and svc-verify, what
// `--help` prints is what the generated reference docs/cli/<binary>/*.md
// shows: the description, the usage line, the examples, every flag line
// (local and inherited, as printed, defaults included) and every
// subcommand. TestGeneratedDocsUpToDate keeps the files generated; this
// keeps the generator and the help template saying the same thing.
func TestHelpMatchesReference(t *testing.T) {
	trees := []struct {
		root *cobra.Command
		main func([]string, *cli.Streams) int
	}{
		{cli.NewVerifyCommand(quietStreams()), cli.VerifyMain},
		{cli.NewSvcCommand(quietStreams()), cli.Main},
	}
	for _, tr := range trees {
		for _, c := range manCommandsOf(tr.root) {
			path := strings.Fields(c.CommandPath())[1:]
			file := filepath.Join("../../../docs/cli", tr.root.Name(), strings.ReplaceAll(c.CommandPath(), " ", "_")+".md")
			b, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: %v", c.CommandPath(), err)
				continue
			}
			md := string(b)
			mdLines := map[string]bool{}
			for _, l := range strings.Split(md, "\n") {
				mdLines[l] = true
			}
			var out bytes.Buffer
			s := quietStreams()
			s.Out = &out
			if code := tr.main(append(path, "--help"), s); code != 0 {
				t.Errorf("%s --help: exit %d", c.CommandPath(), code)
				continue
			}
			desc, sections := helpSections(out.String())
			if desc == "" || !strings.Contains(md, desc) {
				t.Errorf("%s: the description --help prints is not in %s:\n%s", c.CommandPath(), file, desc)
			}
			if u := sections["Usage"]; len(u) == 0 || (c.Runnable() && !strings.Contains(md, "```\n"+strings.TrimSpace(u[0])+"\n```")) {
				t.Errorf("%s: usage line %q is not the synopsis of %s", c.CommandPath(), u, file)
			}
			if ex := strings.Join(sections["Examples"], "\n"); ex != "" && !strings.Contains(md, ex) {
				t.Errorf("%s: the examples --help prints are not in %s:\n%s", c.CommandPath(), file, ex)
			}
			for _, sec := range []string{"Flags", "Global Flags"} {
				for _, l := range sections[sec] {
					if l != "" && !mdLines[l] {
						t.Errorf("%s: %s line %q is not in %s", c.CommandPath(), sec, l, file)
					}
				}
			}
			for _, l := range sections["Available Commands"] {
				if f := strings.Fields(l); len(f) > 0 && f[0] != "help" && !strings.Contains(md, "["+c.CommandPath()+" "+f[0]+"]") {
					t.Errorf("%s: subcommand %s is not listed in %s", c.CommandPath(), f[0], file)
				}
			}
		}
	}
}

// placeholderPending are README rows whose use line lives in a file another
// branch owns; each entry must go once the use line matches.
var placeholderPending = map[string]string{}

// TestUseLinePlaceholders: positional arguments are named by upper-case
// placeholders, never <...> (VPEC for a VPEC file, PROFILE for a profile),
// and every command of the README's command table names the same
// positional arguments as its use line.
func TestUseLinePlaceholders(t *testing.T) {
	roots := map[string]*cobra.Command{"svc": cli.NewSvcCommand(quietStreams()), "svc-verify": cli.NewVerifyCommand(quietStreams())}
	for _, root := range roots {
		for _, c := range manCommandsOf(root) {
			for _, p := range positionals(c.Use) {
				if strings.ContainsAny(p, "<>") {
					t.Errorf("%s: use line %q names %s: write it upper case (VPEC, PROFILE, FILE)", c.CommandPath(), c.Use, p)
				}
			}
		}
	}
	readme, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "| `svc") {
			continue
		}
		cell := strings.ReplaceAll(line[1:], `\|`, "\x00")
		cell, _, _ = strings.Cut(cell, "|")
		spans := strings.Split(cell, "`")
		for i := 1; i < len(spans); i += 2 {
			words := strings.Fields(strings.ReplaceAll(spans[i], "\x00", "|"))
			root, ok := roots[words[0]]
			if !ok || (len(words) > 1 && words[1] == "completion") {
				continue // cobra adds completion when it runs: its shells are its subcommands
			}
			c, n := root, 1
			for n < len(words) {
				next := findSub(c, words[n])
				if next == nil {
					break
				}
				c, n = next, n+1
			}
			if n < len(words) && strings.Contains(words[n], "|") && !strings.HasPrefix(words[n], "-") {
				continue // "svc queue status|flush": several commands
			}
			if _, ok := placeholderPending[c.CommandPath()]; ok {
				continue
			}
			want := positionals(strings.Join(append([]string{c.Name()}, words[n:]...), " "))
			if got := positionals(c.Use); strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("README row %q names %q; %s --help names %q", spans[i], want, c.CommandPath(), got)
			}
			checked++
		}
	}
	if checked < 20 {
		t.Errorf("only %d README commands checked: is the command table still there?", checked)
	}
}

func findSub(c *cobra.Command, name string) *cobra.Command {
	for _, k := range c.Commands() {
		if k.Name() == name {
			return k
		}
	}
	return nil
}
