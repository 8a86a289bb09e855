package verifycmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// A disclosed value is data from the document: the text report escapes
// it, so it cannot move the cursor, clear the screen or reorder text.
func TestDisclosedValuesEscaped(t *testing.T) {
	evil := "ok\x1b[2J\x1b]0;pwned\x07\u202eexe.txt\r\n\u2028"
	b64, bin := "AAEC/g==", "AAEC/g=="
	r := &verify.Report{Disclosed: []verify.Disclosed{
		{Sequence: 2, Check: "t\x1b[31m", Visibility: vpec.Transparent, Input: &b64, InputText: &evil, Output: &bin},
		{Sequence: 3, Check: "kyc", Visibility: vpec.Selective, Fields: map[string]any{"doc\u202etype": evil, "n": 0.5}, Undisclosed: 2},
	}}
	var out bytes.Buffer
	printDisclosed(&out, r)
	s := out.String()
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\r", "\u2028"} {
		if strings.Contains(s, bad) {
			t.Errorf("the report holds %q:\n%s", bad, s)
		}
	}
	for _, want := range []string{`\x1b[2J`, "record 2 transparent", "output 4 bytes (binary)", "n = 0.5", "(2 field(s) not disclosed)"} {
		if !strings.Contains(s, want) {
			t.Errorf("the report lacks %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "\n"); n != 3 {
		t.Errorf("%d lines, want 3 (a value cannot add lines):\n%s", n, s)
	}
}
