package clicore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/verify"
)

// --output flag values.
const (
	OutputText = "text"
	OutputJSON = "json"
)

// AddOutputFlag registers --output (-o) text|json on cmd.
func AddOutputFlag(cmd *cobra.Command, target *string) {
	cmd.Flags().StringVarP(target, "output", "o", OutputText, "output format: text or json")
}

// CheckOutput refuses an --output value other than text and json.
func CheckOutput(o string) error {
	if o != OutputText && o != OutputJSON {
		return Errorf(ExitUsage, "use --output text or --output json", "unknown output format %q", o)
	}
	return nil
}

// WriteJSON writes v as indented JSON to standard output.
func (a *App) WriteJSON(v any) error {
	b, err := document.MarshalIndent(v)
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if _, err := a.Streams.Out.Write(b); err != nil {
		return &Error{Code: ExitFailure, Err: fmt.Errorf("write output: %w", err)}
	}
	return nil
}

// ReadInput reads a document from path, or standard input when path is "-".
func (a *App) ReadInput(path, what string) ([]byte, error) {
	var data []byte
	var err error
	// Never read more than one byte past the limit: a larger document is
	// refused at once (exit 2), however large the file or stream.
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(a.Streams.In, document.MaxSize+1))
	} else {
		var f *os.File
		if f, err = os.Open(path); err == nil {
			st, serr := f.Stat()
			if serr != nil {
				st = nil
			}
			if st != nil && st.Mode().IsRegular() && st.Size() > document.MaxSize {
				f.Close()
				return nil, tooLarge(what, path, st.Size())
			}
			data, err = readFile(f, st)
			f.Close()
		}
	}
	if err != nil {
		return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("read %s: %w", what, err), Hint: "check the path; use - to read standard input"}
	}
	if len(data) > document.MaxSize {
		return nil, tooLarge(what, path, -1)
	}
	return data, nil
}

// readFile reads f whole. For a regular file it allocates the size Stat
// gave (plus one byte, to see a file that grew past it) once and fills it,
// instead of io.ReadAll's doubling, which on a multi-megabyte VPEC costs
// more than parsing it (memclr and page faults on every discarded buffer).
// Other files (pipes, devices) fall back to a bounded io.ReadAll. It never
// returns more than document.MaxSize+1 bytes.
func readFile(f *os.File, st os.FileInfo) ([]byte, error) {
	if st == nil || !st.Mode().IsRegular() || st.Size() <= 0 {
		return io.ReadAll(io.LimitReader(f, document.MaxSize+1))
	}
	buf := makeReadBuffer(int(st.Size()) + 1)
	n, err := io.ReadFull(f, buf)
	switch {
	case err == nil:
		// The file grew since Stat: read the rest the slow way, still
		// bounded, so that the size check sees it.
		rest, rerr := io.ReadAll(io.LimitReader(f, document.MaxSize+1-int64(n)))
		return append(buf, rest...), rerr
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return buf[:n], nil
	default:
		return nil, err
	}
}

// tooLarge is ReadInput's error for a document above document.MaxSize
// (size -1: a stream, of which only MaxSize+1 bytes were read). It
// matches document.ErrTooLarge, so that verify can report it as a
// verdict (UNREADABLE — TOO LARGE) like any other unreadable input.
func tooLarge(what, path string, size int64) error {
	name := Safe(path)
	if path == "-" {
		name = "standard input"
	}
	return &Error{Code: ExitUsage, Err: fmt.Errorf("read %s: %s: %w", what, name, document.TooLarge(size)), Hint: "a document is at most 256 MiB"}
}

// Palette holds colour functions that are no-ops when color is off.
type Palette struct{ Green, Red, Yellow, Dim, Bold func(a ...any) string }

// Palette returns the colours for standard output.
func (a *App) Palette() Palette {
	on := a.Streams.ColorOut()
	mk := func(attrs ...color.Attribute) func(a ...any) string {
		c := color.New(attrs...)
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
		return c.SprintFunc()
	}
	return Palette{mk(color.FgGreen), mk(color.FgRed, color.Bold), mk(color.FgYellow), mk(color.Faint), mk(color.Bold)}
}

// Mark returns the status marker: symbols with color on a TTY, words otherwise.
func (a *App) Mark(st verify.Status) string {
	p := a.Palette()
	if !a.Streams.MarksOut() {
		switch st {
		case verify.Pass:
			return "[ok]  "
		case verify.Fail:
			return "[FAIL]"
		case verify.Warn:
			return "[warn]"
		default:
			return "[n/a] "
		}
	}
	switch st {
	case verify.Pass:
		return p.Green("✓")
	case verify.Fail:
		return p.Red("✗")
	case verify.Warn:
		return p.Yellow("!")
	default:
		return p.Dim("–")
	}
}

// MarkCheck is Mark for a check's line: a check that failed only for want
// of trust material (a trust bundle without a TSA root, a profile or
// circuit entry not given) is marked [need] (a yellow ? on a terminal),
// never with the mark of a failure: nothing was found wrong, something
// was not checked.
func (a *App) MarkCheck(c verify.Check) string {
	if c.Status != verify.Fail || !c.MissingTrust {
		return a.Mark(c.Status)
	}
	if !a.Streams.MarksOut() {
		return "[need]"
	}
	return a.Palette().Yellow("?")
}

// Safe makes text from a document fit to print on a terminal: C0 and C1
// controls, DEL, bidi controls, line and paragraph separators and invalid
// UTF-8 are written as visible escapes (\x1b, \u202e), so no document can
// move the cursor, clear the screen or reorder what a person reads.
func Safe(s string) string {
	clean := true
	for _, r := range s {
		if names.IsControl(r) || r == utf8.RuneError || r == 0x2028 || r == 0x2029 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r < 0x80 && names.IsControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		case names.IsControl(r) || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
