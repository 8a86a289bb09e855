package cli_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/svc-gov/svc/pkg/app/cli"
)

const manDir = "../../../docs/man"

func quietStreams() *cli.Streams {
	return &cli.Streams{In: bytes.NewReader(nil), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
}

// manTrees are the two command trees with the man page name of each
// command (svc-verify names its pages first, as GenerateDocs does) and the
// directory of their pages.
type manTree struct {
	root  *cobra.Command
	names map[string]string
	dir   string
}

func manTrees(t *testing.T) []manTree {
	t.Helper()
	taken := map[string]string{}
	var out []manTree
	for _, root := range []*cobra.Command{cli.NewVerifyCommand(quietStreams()), cli.NewSvcCommand(quietStreams())} {
		names, err := cli.ManPageNames(root, taken)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			taken[n] = root.Name()
		}
		out = append(out, manTree{root: root, names: names, dir: filepath.Join(manDir, root.Name(), "man"+cli.ManSection)})
	}
	return out
}

// manCommandsOf lists the commands that get a man page.
func manCommandsOf(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, k := range c.Commands() {
		if k.IsAvailableCommand() && !k.IsAdditionalHelpTopicCommand() {
			out = append(out, manCommandsOf(k)...)
		}
	}
	return out
}

// roffText undoes the roff markup go-md2man writes, enough to compare text.
var roffText = strings.NewReplacer(`\fB`, "", `\fP`, "", `\fI`, "", `\&`, "", `\-`, "-", `\\`, `\`, `\(aq`, "'", `\[la]`, "<", `\[ra]`, ">")

// manSection returns the text of a page's section (the lines after
// ".SH NAME" up to the next .SH), roff markup undone.
func manSection(page, name string) string {
	_, rest, ok := strings.Cut(page, ".SH "+name+"\n")
	if !ok {
		return ""
	}
	if i := strings.Index(rest, "\n.SH "); i >= 0 {
		rest = rest[:i]
	}
	return strings.TrimSpace(roffText.Replace(rest))
}

// TestManPagesShowUseLines: every command's man page has a synopsis that is
// its use line as --help prints it (with its positional arguments), and
// shows every word of its descriptions and flag usages as written:
// go-md2man dropped <placeholders> as HTML tags ("svc verify  [flags]"),
// set pk_sb_... in italics and made "[a, b] (c)" a link.
func TestManPagesShowUseLines(t *testing.T) {
	for _, tr := range manTrees(t) {
		for _, c := range manCommandsOf(tr.root) {
			name, ok := tr.names[c.CommandPath()]
			if !ok {
				t.Errorf("%s: no man page name", c.CommandPath())
				continue
			}
			file := filepath.Join(tr.dir, name+"."+cli.ManSection)
			b, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: %v", c.CommandPath(), err)
				continue
			}
			page := string(b)
			c.InitDefaultHelpFlag() // as --help does
			if got, want := manSection(page, "SYNOPSIS"), c.UseLine(); got != want {
				t.Errorf("%s: synopsis %q, want the use line %q", file, got, want)
			}
			text := c.Short + "\n" + c.Long
			c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) { text += "\n" + f.Usage + "\n" + f.DefValue })
			plain := " " + strings.Join(strings.Fields(roffText.Replace(page)), " ") + " "
			for _, w := range strings.Fields(text) {
				if !strings.Contains(plain, w) {
					t.Errorf("%s: %q is missing from the page", file, w)
				}
			}
			for _, markup := range []string{`\fI`, `\[la]`, `\[ra]`} {
				if strings.Contains(page, markup) {
					t.Errorf("%s: the page has %s (markdown read as markup)", file, markup)
				}
			}
		}
	}
}

// TestManPageNamesAreUnique: the pages of svc and svc-verify can be
// installed in one man1 directory (as the two Homebrew casks do): no file
// name is in both directories, each page's NAME and header are its file
// name, and every SEE ALSO reference names a page of the same directory.
func TestManPageNamesAreUnique(t *testing.T) {
	owner := map[string]string{}
	seeAlso := regexp.MustCompile(`\\fB([^\\(]+)\(` + cli.ManSection + `\)\\fP`)
	for _, bin := range []string{"svc-verify", "svc"} {
		dir := filepath.Join(manDir, bin, "man"+cli.ManSection)
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) == 0 {
			t.Fatalf("%s has no pages", dir)
		}
		for _, e := range entries {
			if o, ok := owner[e.Name()]; ok {
				t.Errorf("%s is a page of both %s and %s", e.Name(), o, bin)
			}
			owner[e.Name()] = bin
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			page := string(b)
			base := strings.TrimSuffix(e.Name(), "."+cli.ManSection)
			// The header names the page itself: SVC-RUN-OPEN(1), not svc(1).
			wantTH := `.TH "` + strings.ToUpper(base) + `" "` + cli.ManSection + `"`
			if !strings.Contains(page, "\n"+wantTH+" ") {
				t.Errorf("%s/%s: header is not %s", bin, e.Name(), wantTH)
			}
			if nameLine := manSection(page, "NAME"); !strings.HasPrefix(nameLine, base+" - ") {
				t.Errorf("%s/%s: NAME line %q does not start with %q", bin, e.Name(), nameLine, base+" - ")
			}
			_, also, _ := strings.Cut(page, ".SH SEE ALSO\n")
			for _, m := range seeAlso.FindAllStringSubmatch(also, -1) {
				if _, err := os.Stat(filepath.Join(dir, m[1]+"."+cli.ManSection)); err != nil {
					t.Errorf("%s/%s: SEE ALSO names %s(%s), which is not a page of %s", bin, e.Name(), m[1], cli.ManSection, bin)
				}
			}
		}
	}
	// The svc-verify binary keeps svc-verify.1; `svc verify` is renamed.
	for file, bin := range map[string]string{"svc-verify.1": "svc-verify", "svc-verify-command.1": "svc"} {
		if owner[file] != bin {
			t.Errorf("%s belongs to %q, want %s", file, owner[file], bin)
		}
	}
}

// TestManPageNames: cobra's names, with RenamedPageSuffix where another
// binary has the name, and ErrManPageClash when a name still collides.
func TestManPageNames(t *testing.T) {
	tree := func(subs ...string) *cobra.Command {
		root := &cobra.Command{Use: "a"}
		for _, s := range subs {
			parent := root
			for _, w := range strings.Fields(s) {
				var next *cobra.Command
				for _, k := range parent.Commands() {
					if k.Name() == w {
						next = k
					}
				}
				if next == nil {
					next = &cobra.Command{Use: w, Run: func(*cobra.Command, []string) {}}
					parent.AddCommand(next)
				}
				parent = next
			}
		}
		return root
	}
	cases := []struct {
		name    string
		root    *cobra.Command
		taken   []string
		want    map[string]string
		wantErr error
	}{
		{"cobra names", tree("b", "b c"), nil, map[string]string{"a": "a", "a b": "a-b", "a b c": "a-b-c"}, nil},
		{"renamed", tree("b", "b-c"), []string{"a-b"}, map[string]string{"a": "a", "a b": "a-b-command", "a b-c": "a-b-c"}, nil},
		{"renamed name taken too", tree("b"), []string{"a-b", "a-b-command"}, nil, cli.ErrManPageClash},
		{"two commands, one name", tree("b c", "b-c"), nil, nil, cli.ErrManPageClash},
		{"hidden command has no page", tree("b"), nil, map[string]string{"a": "a"}, nil},
	}
	cases[4].root.Commands()[0].Hidden = true
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			taken := map[string]string{}
			for _, n := range c.taken {
				taken[n] = "other"
			}
			got, err := cli.ManPageNames(c.root, taken)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("error %v, want %v", err, c.wantErr)
			}
			if c.wantErr != nil {
				return
			}
			if len(got) != len(c.want) {
				t.Fatalf("names %v, want %v", got, c.want)
			}
			for path, n := range c.want {
				if got[path] != n {
					t.Errorf("%q: %q, want %q", path, got[path], n)
				}
			}
		})
	}
}

// TestUseLinesNamePositionalArgs: a command that takes positional
// arguments names them in its use line (so --help, the man page and the
// markdown reference show them), and one whose use line names some
// accepts them.
func TestUseLinesNamePositionalArgs(t *testing.T) {
	for _, root := range []*cobra.Command{cli.NewSvcCommand(quietStreams()), cli.NewVerifyCommand(quietStreams())} {
		for _, c := range manCommandsOf(root) {
			if !c.Runnable() {
				continue
			}
			accepts := false
			for _, args := range [][]string{{"x"}, {"x", "y"}, {"x", "y", "z"}} {
				accepts = accepts || c.ValidateArgs(args) == nil
			}
			pos := positionals(c.Use)
			if accepts != (len(pos) > 0) {
				t.Errorf("%s: accepts positional arguments: %v; its use line %q names %q", c.CommandPath(), accepts, c.Use, pos)
			}
		}
	}
}

// positionals are the words of a use line after the command name that name
// positional arguments: not flags, not flag values, not "|", "..." or the
// word stdin (as in "(--input TEXT | stdin)").
func positionals(use string) []string {
	var out []string
	words := strings.Fields(use)
	afterFlag := false
	for _, w := range words[1:] {
		bare := strings.Trim(w, "[]()")
		closes := strings.ContainsAny(w, "])")
		switch {
		case strings.HasPrefix(bare, "-"):
			afterFlag = !closes
		case afterFlag:
			afterFlag = false
		case bare == "" || bare == "|" || bare == "..." || bare == "stdin":
		default:
			out = append(out, bare)
		}
	}
	return out
}

func TestPositionals(t *testing.T) {
	cases := []struct {
		use  string
		want []string
	}{
		{"verify VPEC", []string{"VPEC"}},
		{"export", nil},
		{"hash [plaintext]", []string{"plaintext"}},
		{"status REQUEST_ID (in_progress | rejected)", []string{"REQUEST_ID", "in_progress", "rejected"}},
		{"create --org NAME (--sandbox | --live)", nil},
		{"run --model DIR|FILE [--model ...] --out profile.json", nil},
		{"lookup (HASH | --model FILE)", []string{"HASH"}},
		{"record --check NAME (--input TEXT | --input-file F | stdin)", nil},
		{"get RUN_OR_VPEC_ID [--out F]", []string{"RUN_OR_VPEC_ID"}},
	}
	for _, c := range cases {
		if got := positionals(c.use); !slices.Equal(got, c.want) {
			t.Errorf("positionals(%q) = %q, want %q", c.use, got, c.want)
		}
	}
}

// TestManPagesReadInPlace: docs/man/svc and docs/man/svc-verify are manual
// trees (man1/ inside) that man reads as they are, as README.md says
// (MANPATH=docs/man/svc man svc-run-open), and the page shown is titled
// with its own name.
func TestManPagesReadInPlace(t *testing.T) {
	if _, err := exec.LookPath("man"); err != nil {
		t.Skip("man is not installed")
	}
	for _, tc := range []struct{ tree, page, title string }{
		{"svc", "svc-run-open", "SVC-RUN-OPEN(1)"},
		{"svc-verify", "svc-verify-verify", "SVC-VERIFY-VERIFY(1)"},
	} {
		abs, err := filepath.Abs(filepath.Join(manDir, tc.tree))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("man", tc.page)
		cmd.Env = append(os.Environ(), "MANPATH="+abs, "MANPAGER=cat", "PAGER=cat", "MANWIDTH=100")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("MANPATH=%s man %s: %v\n%s", abs, tc.page, err, out)
		}
		if first := strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]; !strings.HasPrefix(first, tc.title) {
			t.Errorf("man %s: header %q, want it to start with %s", tc.page, first, tc.title)
		}
	}
}
