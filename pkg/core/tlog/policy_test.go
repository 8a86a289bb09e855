package tlog_test

import (
	"errors"
	"testing"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/core/tlog"
)

// TestWitnessPolicyStrict: what the Sigsum policy parser would read as a
// weaker policy is refused (docs/TRANSPARENCY.md, "In svc-verify"), and
// the line-ending leniencies the docs name are accepted.
func TestWitnessPolicyStrict(t *testing.T) {
	w1 := tlogtest.NewWitness(t, "witness.test/w1").PolicyLine("w1")
	for _, c := range []struct {
		name, text string
		ok         bool
	}{
		{"one witness", w1 + "quorum w1\n", true},
		{"quorum none", "quorum none\n", true},
		{"crlf", w1[:len(w1)-1] + "\r\nquorum w1\r\n", true},
		{"no final line feed", w1 + "quorum w1", true},
		{"comments", "# policy\n" + w1 + "\nquorum w1 # one\n", true},
		{"threshold zero", w1 + "group g 0 w1\nquorum g\n", false},
		{"negative threshold", w1 + "group g -1 w1\nquorum g\n", false},
		{"two quorums", w1 + "quorum w1\nquorum none\n", false},
		{"two quorums, one commented out", w1 + "quorum w1\n# quorum none\n", true},
		{"no quorum", w1, false},
		{"empty", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := tlog.ParseWitnessPolicy([]byte(c.text))
			if c.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !c.ok && !errors.Is(err, tlog.ErrMalformed) {
				t.Fatalf("got %v, want an error matching ErrMalformed", err)
			}
		})
	}
}
