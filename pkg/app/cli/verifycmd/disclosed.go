package verifycmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// maxShown bounds, in characters, each disclosed value the text report
// prints (--output json has them whole).
const maxShown = 200

// printDisclosed prints what the transparent and selective records
// disclose, every value escaped (clicore.Safe): a disclosed value cannot
// move the cursor, clear the screen or reorder what a person reads.
func printDisclosed(w io.Writer, r *verify.Report) {
	if len(r.Disclosed) == 0 {
		return
	}
	fmt.Fprintf(w, "  disclosed (visible to anyone holding this VPEC; whole in --output json):\n")
	for i, d := range r.Disclosed {
		if i == 20 {
			fmt.Fprintf(w, "    … and %d more records\n", len(r.Disclosed)-20)
			break
		}
		head := fmt.Sprintf("    record %d %s (%s):", d.Sequence, d.Visibility, clicore.Safe(d.Check))
		switch d.Visibility {
		case vpec.Transparent:
			parts := []string{"input " + shownBytes(d.Input, d.InputText)}
			if d.Output != nil {
				parts = append(parts, "output "+shownBytes(d.Output, d.OutputText))
			}
			fmt.Fprintf(w, "%s %s\n", head, strings.Join(parts, "; "))
		case vpec.Selective:
			names := make([]string, 0, len(d.Fields))
			for k := range d.Fields {
				names = append(names, k)
			}
			slices.Sort(names)
			parts := make([]string, 0, len(names))
			for _, k := range names {
				v, err := canonical.Marshal(d.Fields[k])
				if err != nil {
					v = []byte("?")
				}
				parts = append(parts, clicore.Safe(k)+" = "+shown(string(v)))
			}
			if len(parts) == 0 {
				parts = append(parts, "no field")
			}
			fmt.Fprintf(w, "%s %s (%d field(s) not disclosed)\n", head, strings.Join(parts, ", "), d.Undisclosed)
		}
	}
}

// shownBytes shows disclosed bytes: quoted text, or their size when they
// are not UTF-8 text.
func shownBytes(b64, text *string) string {
	if text != nil {
		return shown(fmt.Sprintf("%q", *text))
	}
	n := 0
	if b64 != nil {
		n = len(*b64) / 4 * 3
		n -= strings.Count(*b64, "=")
	}
	return fmt.Sprintf("%d bytes (binary)", n)
}

// shown escapes s and cuts it to maxShown characters.
func shown(s string) string {
	s = clicore.Safe(s)
	if r := []rune(s); len(r) > maxShown {
		return string(r[:maxShown]) + "…"
	}
	return s
}
