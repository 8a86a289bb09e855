package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// docsDate is the date written into generated man pages. It is fixed so
// regenerating the docs is reproducible; bump it when the CLI changes a lot.
var docsDate = time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

// ManSection is the manual section of the generated man pages.
const ManSection = "1"

// RenamedPageSuffix is appended to the name of a man page of svc that a page
// of svc-verify already uses (see GenerateDocs).
const RenamedPageSuffix = "-command"

// ErrManPageClash: two commands would have man pages of the same name.
var ErrManPageClash = errors.New("man page names collide")

// GenerateDocs writes the CLI reference (markdown under docsDir/cli, man
// pages under docsDir/man) and shell completions (bash, zsh, fish,
// powershell) under completionsDir, for both svc and svc-verify.
//
// Man pages go to one manual tree per binary (docsDir/man/svc-verify/man1,
// docsDir/man/svc/man1: MANPATH=docs/man/svc man svc-run-open reads one in
// place), each page titled with its own name (SVC-RUN-OPEN(1)), and their
// file names never collide, so both sets can
// be installed in one man1 directory (the two Homebrew casks do): a page is
// named by its command path joined with "-" (cobra's convention: `svc run
// open` is svc-run-open.1), and svc-verify names its pages first. A page of
// svc whose name svc-verify already uses gets RenamedPageSuffix: `svc
// verify` is svc-verify-command.1, since svc-verify.1 is the page of the
// svc-verify binary. References to a renamed page (its NAME line, SEE ALSO
// of its parent and children) use the new name. GenerateDocs fails if a
// name still collides.
func GenerateDocs(docsDir, completionsDir string) error {
	quiet := func() *Streams {
		return &Streams{In: bytes.NewReader(nil), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Getenv: func(string) string { return "" }}
	}
	// svc-verify first: its pages keep their names.
	roots := []func(*Streams) *cobra.Command{NewVerifyCommand, NewSvcCommand}
	taken := map[string]string{} // page name -> binary
	for _, newRoot := range roots {
		root := newRoot(quiet())
		root.DisableAutoGenTag = true
		withDefaults(root)
		md := filepath.Join(docsDir, "cli", root.Name())
		man := filepath.Join(docsDir, "man", root.Name(), "man"+ManSection)
		for _, d := range []string{md, man, completionsDir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if err := doc.GenMarkdownTree(root, md); err != nil {
			return fmt.Errorf("markdown for %s: %w", root.Name(), err)
		}
		// The man pages come from a tree of their own, escaped for
		// markdown (see escapeForMan).
		manRoot := newRoot(quiet())
		manRoot.DisableAutoGenTag = true
		withDefaults(manRoot)
		escapeForMan(manRoot)
		names, err := ManPageNames(manRoot, taken)
		if err != nil {
			return err
		}
		if err := genManPages(manRoot, man, names); err != nil {
			return fmt.Errorf("man pages for %s: %w", root.Name(), err)
		}
		for _, n := range names {
			taken[n] = root.Name()
		}
		if err := genCompletions(root, completionsDir); err != nil {
			return err
		}
	}
	return nil
}

// withDefaults adds what cobra adds to a tree only when it runs, so that
// the reference shows what --help shows: the --version flag and the
// completion command.
func withDefaults(root *cobra.Command) {
	root.InitDefaultVersionFlag()
	root.InitDefaultCompletionCmd()
}

// ManPageNames names the man page (without the section) of every command
// of root that gets one: its command path joined with "-", with
// RenamedPageSuffix when taken (the names of the pages of another binary)
// holds that name. It fails when a name still collides. The map is keyed by
// command path.
func ManPageNames(root *cobra.Command, taken map[string]string) (map[string]string, error) {
	names := map[string]string{}
	own := map[string]string{}
	for _, c := range manCommands(root) {
		path := c.CommandPath()
		name := strings.ReplaceAll(path, " ", "-")
		if _, ok := taken[name]; ok {
			name += RenamedPageSuffix
		}
		if bin, ok := taken[name]; ok {
			return nil, fmt.Errorf("%w: %s.%s of %q is a page of %s", ErrManPageClash, name, ManSection, path, bin)
		}
		if other, ok := own[name]; ok {
			return nil, fmt.Errorf("%w: %s.%s of %q is the page of %q", ErrManPageClash, name, ManSection, path, other)
		}
		own[name], names[path] = path, name
	}
	return names, nil
}

// manCommands lists root and its descendants that get a man page (as
// cobra's GenManTree chooses them), depth first.
func manCommands(root *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{root}
	for _, c := range root.Commands() {
		if !c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			continue
		}
		out = append(out, manCommands(c)...)
	}
	return out
}

// genManPages writes the man page of every command of root into dir,
// under the names ManPageNames chose, and points the references to a
// renamed page (NAME line, SEE ALSO) at its new name.
func genManPages(root *cobra.Command, dir string, names map[string]string) error {
	renames := map[string]string{} // cobra's name -> ours
	for path, name := range names {
		if dashed := strings.ReplaceAll(path, " ", "-"); dashed != name {
			renames[dashed] = name
		}
	}
	for _, c := range manCommands(root) {
		// The title is the page's own name (SVC-RUN-OPEN(1)), as man
		// shows it in the header and footer.
		title := strings.ToUpper(names[c.CommandPath()])
		header := &doc.GenManHeader{Title: title, Section: ManSection, Source: "svc", Manual: "svc manual", Date: &docsDate}
		var b bytes.Buffer
		if err := doc.GenMan(c, header, &b); err != nil {
			return fmt.Errorf("%s: %w", c.CommandPath(), err)
		}
		page := b.String()
		for from, to := range renames {
			// SEE ALSO entries are \fBNAME(1)\fP (the section makes the
			// match exact); the NAME line is the line after .SH NAME.
			page = strings.ReplaceAll(page, `\fB`+from+"("+ManSection+`)\fP`, `\fB`+to+"("+ManSection+`)\fP`)
			page = strings.Replace(page, ".SH NAME\n"+from+" ", ".SH NAME\n"+to+" ", 1)
		}
		file := filepath.Join(dir, names[c.CommandPath()]+"."+ManSection)
		if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// escapeForMan escapes the text cobra writes into the markdown it renders
// as man pages (use lines, short and long descriptions, flag usages), so
// that go-md2man shows it as written: unescaped, "<vpec.json>" was dropped
// as an HTML tag (the synopsis `svc verify <vpec.json> [flags]` read `svc
// verify  [flags]`), "pk_sb_... or pk_live_..." turned italic and
// "[a, b] (c)" into a link. Lines of a long description indented by two
// spaces or more (command lines) become a verbatim block. Examples are
// code blocks already and stay as they are.
func escapeForMan(root *cobra.Command) {
	seen := map[*pflag.Flag]bool{}
	escFlag := func(f *pflag.Flag) {
		if !seen[f] {
			seen[f] = true
			f.Usage = markdownText(f.Usage)
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Use, c.Short, c.Long = markdownText(c.Use), markdownText(c.Short), markdownLong(c.Long)
		c.LocalFlags().VisitAll(escFlag)
		c.PersistentFlags().VisitAll(escFlag)
		c.InheritedFlags().VisitAll(escFlag)
		for _, k := range c.Commands() {
			walk(k)
		}
	}
	walk(root)
}

// markdownInline are the characters that markdown reads as markup inside
// a line of text (emphasis, code, links, HTML, entities); a backslash makes
// each show as itself.
const markdownInline = "\\`*_[]<>&"

// listOrHeading matches a line that markdown would read as a list item or
// heading.
var listOrHeading = regexp.MustCompile(`^(\s*)([-+*#]|\d+\.)(\s)`)

// markdownText escapes s, line by line, so that it renders as itself.
func markdownText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		var b strings.Builder
		for _, r := range l {
			if strings.ContainsRune(markdownInline, r) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		lines[i] = listOrHeading.ReplaceAllString(b.String(), `$1\$2$3`)
	}
	return strings.Join(lines, "\n")
}

// markdownLong is markdownText for a long description, except that a run
// of lines indented by two spaces or more becomes a verbatim (code) block:
// indented by four more spaces, unescaped, set off by blank lines.
func markdownLong(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	inBlock := false
	for _, l := range lines {
		indented := strings.HasPrefix(l, "  ") && strings.TrimSpace(l) != ""
		switch {
		case indented && !inBlock:
			if len(out) > 0 && out[len(out)-1] != "" {
				out = append(out, "")
			}
			out = append(out, "    "+l)
		case indented:
			out = append(out, "    "+l)
		case inBlock && l != "":
			out = append(out, "", markdownText(l))
		default:
			out = append(out, markdownText(l))
		}
		inBlock = indented
	}
	return strings.Join(out, "\n")
}

// genCompletions writes root's bash, zsh, fish and PowerShell completion
// scripts into dir.
func genCompletions(root *cobra.Command, dir string) error {
	base := filepath.Join(dir, root.Name())
	gens := []struct {
		ext string
		gen func(*bytes.Buffer) error
	}{
		{".bash", func(b *bytes.Buffer) error { return root.GenBashCompletionV2(b, true) }},
		{".zsh", func(b *bytes.Buffer) error { return root.GenZshCompletion(b) }},
		{".fish", func(b *bytes.Buffer) error { return root.GenFishCompletion(b, true) }},
		{".ps1", func(b *bytes.Buffer) error { return root.GenPowerShellCompletionWithDesc(b) }},
	}
	for _, g := range gens {
		var b bytes.Buffer
		if err := g.gen(&b); err != nil {
			return fmt.Errorf("%s completion for %s: %w", g.ext, root.Name(), err)
		}
		if err := os.WriteFile(base+g.ext, b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}
