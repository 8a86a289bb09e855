// Package doctest extracts the shell blocks of the project's markdown
// documentation so a test can run them as written.
//
// A shell block is a fenced block whose info string is sh, bash, shell or
// console. Every shell block runs unless the line right before its fence is
// a directive saying why it cannot:
//
//	<!-- doctest: skip REASON -->             never run; REASON is required
//	<!-- doctest: setup=NAME [files=DIR] [no-compare] -->
//	                                          run in fixture NAME, with the
//	                                          files of the repository's DIR
//	<!-- verify-by-hand.sh -->                a piece of docs/verify-by-hand.sh,
//	                                          run whole by docs/verifying_test.go
//
// In a console block, lines starting with "$ " are commands (a trailing
// backslash continues one on the next line) and the lines up to the next
// command are the standard output the docs show, compared exactly unless
// the directive says no-compare. An untagged fence whose first word is a
// command of this project (svc, svc-verify, curl, ...) is an error: it
// would hide a command from the test.
package doctest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrDirective is returned for a malformed or misplaced doctest directive.
var ErrDirective = errors.New("doctest directive")

// ByHandMarker precedes the blocks of docs/VERIFYING.md that are pieces of
// docs/verify-by-hand.sh.
const ByHandMarker = "<!-- verify-by-hand.sh -->"

// Block is one fenced shell block of a markdown file.
type Block struct {
	File string // the markdown file's name, as given to Parse
	Line int    // 1-based line of the opening fence
	Lang string // the fence's info string: sh, bash, shell or console
	Text string // the block's content, ending in a newline

	Skip      string // non-empty: the block does not run, for this reason
	ByHand    bool   // a piece of verify-by-hand.sh, run elsewhere
	Setup     string // the fixture it runs in ("" means the default)
	Files     string // a repository directory copied into the block's directory
	NoCompare bool   // a console block whose output is not compared
}

// Name is "FILE:LINE", how failures name a block.
func (b Block) Name() string { return fmt.Sprintf("%s:%d", b.File, b.Line) }

// Runs reports whether the block is run by the documentation test.
func (b Block) Runs() bool { return b.Skip == "" && !b.ByHand }

var (
	directiveRE = regexp.MustCompile(`^<!--\s*doctest:\s*(.*?)\s*-->$`)
	setupRE     = regexp.MustCompile(`^setup=([a-z]+)$`)
	filesRE     = regexp.MustCompile(`^files=([A-Za-z0-9_./-]+)$`)
	// commandWords are the first words of a line that make an untagged
	// block a shell block in disguise.
	commandWords = map[string]bool{"svc": true, "svc-verify": true, "curl": true, "cosign": true,
		"openssl": true, "jq": true, "make": true, "go": true, "export": true, "$": true}
)

// IsShell reports whether a fence info string marks a shell block.
func IsShell(lang string) bool {
	switch lang {
	case "sh", "bash", "shell", "console":
		return true
	}
	return false
}

// Parse returns the shell blocks of one markdown document.
func Parse(file string, md []byte) ([]Block, error) {
	var (
		blocks  []Block
		errs    []error
		prev    string // the last non-blank line outside a block
		inBlock bool
		fence   string
		cur     Block
		body    strings.Builder
	)
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if inBlock {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`~") == "" {
				inBlock = false
				cur.Text = body.String()
				if IsShell(cur.Lang) {
					blocks = append(blocks, cur)
				} else if cur.Lang == "" {
					if w := firstWord(cur.Text); commandWords[w] {
						errs = append(errs, fmt.Errorf("%s:%d: an untagged block starting with %q: tag it ```sh (and mark it if it cannot run)", file, cur.Line, w))
					}
				}
				prev = ""
				continue
			}
			body.WriteString(line)
			body.WriteByte('\n')
			continue
		}
		if f, lang, ok := openFence(trimmed); ok {
			inBlock, fence = true, f
			body.Reset()
			cur = Block{File: file, Line: n, Lang: lang}
			if err := cur.apply(prev); err != nil {
				errs = append(errs, fmt.Errorf("%s:%d: %w", file, n, err))
			}
			if cur.hasDirective(prev) && !IsShell(lang) {
				errs = append(errs, fmt.Errorf("%s:%d: %w: it precedes a %q block, not a shell block", file, n, ErrDirective, lang))
			}
			continue
		}
		if trimmed != "" {
			if directiveRE.MatchString(prev) {
				errs = append(errs, fmt.Errorf("%s:%d: %w: %q must be the line right before a fence", file, n-1, ErrDirective, prev))
			}
			prev = trimmed
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if inBlock {
		errs = append(errs, fmt.Errorf("%s:%d: fence never closed", file, cur.Line))
	}
	return blocks, errors.Join(errs...)
}

func openFence(trimmed string) (fence, lang string, ok bool) {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(trimmed, f) {
			n := len(trimmed) - len(strings.TrimLeft(trimmed, f[:1]))
			info := strings.TrimSpace(trimmed[n:])
			if strings.Contains(info, "`") {
				return "", "", false
			}
			lang, _, _ = strings.Cut(info, " ")
			return trimmed[:n], lang, true
		}
	}
	return "", "", false
}

func (b *Block) hasDirective(prev string) bool {
	return prev == ByHandMarker || directiveRE.MatchString(prev)
}

// apply reads the directive on the line before a fence, if any.
func (b *Block) apply(prev string) error {
	if prev == ByHandMarker {
		b.ByHand = true
		return nil
	}
	m := directiveRE.FindStringSubmatch(prev)
	if m == nil {
		return nil
	}
	body := m[1]
	if reason, ok := strings.CutPrefix(body, "skip"); ok {
		reason = strings.TrimSpace(reason)
		if reason == "" || !strings.HasPrefix(body, "skip ") {
			return fmt.Errorf("%w: skip needs a reason: <!-- doctest: skip REASON -->", ErrDirective)
		}
		b.Skip = reason
		return nil
	}
	for _, f := range strings.Fields(body) {
		switch {
		case f == "no-compare":
			if b.Lang != "console" {
				return fmt.Errorf("%w: no-compare is for console blocks", ErrDirective)
			}
			b.NoCompare = true
		case setupRE.MatchString(f):
			b.Setup = setupRE.FindStringSubmatch(f)[1]
		case filesRE.MatchString(f) && !strings.Contains(f, ".."):
			b.Files = filesRE.FindStringSubmatch(f)[1]
		default:
			return fmt.Errorf("%w: unknown word %q (want skip REASON, setup=NAME, files=DIR, no-compare)", ErrDirective, f)
		}
	}
	return nil
}

// envAssign matches a leading VAR=value word of a command line.
var envAssign = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// firstWord returns the command word of a block's first command line:
// comments and leading VAR=value assignments are passed over.
func firstWord(text string) string {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		for len(f) > 1 && envAssign.MatchString(f[0]) {
			f = f[1:]
		}
		return f[0]
	}
	return ""
}

// Command is one command of a console block and the output shown for it.
type Command struct {
	Line int    // 1-based line of the command within the block
	Cmd  string // the command, continuation lines joined with newlines
	Want string // the standard output shown, ending in a newline if any
}

// Console splits a console block into its commands.
func Console(text string) ([]Command, error) {
	var (
		cmds []Command
		cont bool
	)
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, line := range lines {
		switch {
		case cont:
			c := &cmds[len(cmds)-1]
			c.Cmd += "\n" + line
			cont = strings.HasSuffix(line, `\`)
		case strings.HasPrefix(line, "$ "):
			cmds = append(cmds, Command{Line: i + 1, Cmd: line[2:]})
			cont = strings.HasSuffix(line, `\`)
		case len(cmds) == 0:
			return nil, fmt.Errorf("line %d: console output before any \"$ \" command", i+1)
		default:
			cmds[len(cmds)-1].Want += line + "\n"
		}
	}
	if len(cmds) == 0 {
		return nil, errors.New(`a console block without a "$ " command`)
	}
	return cmds, nil
}
