package docs_test

// These tests hold the three verifiers (svc-verify, the by-hand recipe and
// the Python second implementation) to one reading of docs/ where an
// independent implementer found two (issue 21, "One reading of the docs").

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/verify"
)

// TestTooLargeOneVerdict: a VPEC above 256 MiB is UNREADABLE — TOO LARGE
// (exit 2) for the recipe and the Python verifier, as for svc-verify
// (pkg/app/cli/verifycmd TestVerifyTooLarge), neither reading it whole.
// Found: the recipe had no limit at all.
func TestTooLargeOneVerdict(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(document.MaxSize + 1); err != nil { // sparse
		t.Fatal(err)
	}
	f.Close()
	t.Run("by hand", func(t *testing.T) {
		requireTools(t)
		out, code := runScript(t, big, bundle)
		if code != 2 || !strings.HasSuffix(out, "UNREADABLE (by hand)\n") || !strings.Contains(out, "(TOO LARGE)") {
			t.Fatalf("exit %d, want 2, UNREADABLE (by hand) and TOO LARGE; output:\n%s", code, out)
		}
	})
	t.Run("python", func(t *testing.T) {
		python3(t)
		r := runSecondImpl(t, []pyJob{{File: big, TrustRoot: bundle}})[0]
		if r.Verdict != "UNREADABLE — TOO LARGE" || r.Exit != 2 {
			t.Fatalf("second implementation: %q (exit %d), want UNREADABLE — TOO LARGE (exit 2)", r.Verdict, r.Exit)
		}
	})
}

// TestFormatsCountsEveryCheck: FORMATS.md says how many checks every
// report lists, and its verification table names each of them. Found: it
// said twelve while thirteen are named and reported.
func TestFormatsCountsEveryCheck(t *testing.T) {
	doc := string(mustRead(t, "FORMATS.md"))
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
		"thirteen", "fourteen", "fifteen", "sixteen"}
	m := regexp.MustCompile(`Every report\s+lists all (\w+) checks`).FindStringSubmatch(doc)
	if m == nil {
		t.Fatal(`FORMATS.md does not say "Every report lists all N checks"`)
	}
	if n := len(verify.Checks()); m[1] != words[n] {
		t.Errorf("FORMATS.md: every report lists all %s checks; vpec reports %d (%s)", m[1], n, words[n])
	}
	for _, c := range verify.Checks() {
		if !strings.Contains(doc, "\n| `"+string(c)+"` | ") {
			t.Errorf("FORMATS.md's verification table has no row for check %s", c)
		}
	}
}

// TestGapSeveritiesOneTable: the recipe's and the Python verifier's tables
// of fixed gap severities are pkg/core/gap's. Found: both lacked
// circuit_missing (Medium), so a circuit_missing gap at High passed by
// hand and in Python while svc-verify refuses it (vector
// circuit-missing-wrong-severity).
func TestGapSeveritiesOneTable(t *testing.T) {
	types := []string{gap.SystemUnavailable, gap.ModelProfileMissing, gap.CircuitMissing, gap.SequenceMissing,
		gap.ChainBreak, gap.EmptyRun}
	want := map[string]string{}
	for _, g := range types {
		want[g] = string(gap.SeverityOf(g))
	}
	m := regexp.MustCompile(`(?s)\{(system_unavailable: "\w+",.*?)\}\s*\[\.gap_type`).FindStringSubmatch(jqProgram(t, "SCHEMA_JQ"))
	if m == nil {
		t.Fatal("the recipe's SCHEMA_JQ has no table of fixed severities")
	}
	recipe := map[string]string{}
	for _, kv := range regexp.MustCompile(`(\w+): "(\w+)"`).FindAllStringSubmatch(m[1], -1) {
		recipe[kv[1]] = kv[2]
	}
	if !maps.Equal(recipe, want) {
		t.Errorf("the recipe's fixed severities %v, pkg/core/gap's %v", recipe, want)
	}
	py := python3(t)
	out, err := exec.Command(py, "-c", `import json, sys; sys.path.insert(0, "../testdata/secondimpl"); import svcverify; print(json.dumps(svcverify.FIXED_SEVERITY))`).Output()
	if err != nil {
		t.Fatal(err)
	}
	var python map[string]string
	if err := json.Unmarshal(out, &python); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(python, want) {
		t.Errorf("the Python verifier's fixed severities %v, pkg/core/gap's %v", python, want)
	}
}

// TestVerifyByHandNamesTheCheck: where FORMATS.md once gave two rules for
// one fault (a record-table rule against a check's code), the recipe names
// the check, and the code, that vectors.json gives svc-verify and the
// Python verifier (TestSecondImplVectors holds those two to the same
// list). Found: the recipe took a zk_proof.proof in another spelling or
// size (stopping at step 8, exit 3); svc-verify said SALT REUSED for a
// field disclosed twice and a digest listed twice, the recipe DISCLOSURE
// MALFORMED.
func TestVerifyByHandNamesTheCheck(t *testing.T) {
	requireTools(t)
	var m struct {
		Vectors []struct {
			Name, File, Verdict string
			Fails, Profiles     []string
		} `json:"vectors"`
	}
	if err := json.Unmarshal(mustRead(t, filepath.Join(vectorsDir, "vectors.json")), &m); err != nil {
		t.Fatal(err)
	}
	names := []string{"zk-claim", "proof-not-canonical-base64", "proof-too-long", "disclosure-without-manifest",
		"disclosure-field-twice", "disclosure-digest-twice", "disclosure-salt-reused", "circuit-missing-wrong-severity",
		"mathematical-other-check", "mathematical-other-input"}
	for _, v := range m.Vectors {
		if !slices.Contains(names, v.Name) {
			continue
		}
		names = slices.DeleteFunc(names, func(n string) bool { return n == v.Name })
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			args := []string{filepath.Join(vectorsDir, v.File), bundle}
			for _, p := range v.Profiles {
				args = append(args, filepath.Join(vectorsDir, p))
			}
			out, code := runScript(t, args...)
			_, failLine, _ := strings.Cut(out, "FAIL  ")
			failLine, _, _ = strings.Cut(failLine, "\n")
			code2, _ := strings.CutPrefix(v.Verdict, "INVALID — ")
			if code != 1 || !strings.HasPrefix(failLine, v.Fails[0]+": ") {
				t.Fatalf("exit %d, FAIL line %q; want exit 1 and the check %s (%s)\n%s", code, failLine, v.Fails[0], v.Verdict, out)
			}
			if v.Fails[0] == "disclosures" && !strings.Contains(failLine, "("+code2+")") {
				t.Fatalf("FAIL line %q does not name %s", failLine, code2)
			}
		})
	}
	if len(names) > 0 {
		t.Errorf("vectors.json lacks %v", names)
	}
}

// TestTimesInNanoseconds: the recipe's and the Python verifier's time
// arithmetic is exact to the nanosecond, as svc-verify's (vpec.ParseTime,
// verify.LastedAtLeast): a review 100 ns short of its minimum is short, a
// fraction's digits after the ninth are dropped, a 2^40 s minimum is
// compared exactly. Found: both computed in doubles (about 0.24 µs apart
// at today's dates), so a review 100 ns short passed.
func TestTimesInNanoseconds(t *testing.T) {
	requireTools(t)
	py := python3(t)
	cases := []struct {
		open, close   string // openssl's and GeneralizedTime's forms of the genTimes
		gOpen, gClose string
		min           int64
	}{
		{"Nov 25 00:15:36.0000001 2026 GMT", "Nov 25 00:15:46 2026 GMT", "20261125001536.0000001Z", "20261125001546Z", 10},
		{"Nov 25 00:15:36 2026 GMT", "Nov 25 00:15:46 2026 GMT", "20261125001536Z", "20261125001546Z", 10},
		{"Nov 25 00:15:36.9999999 2026 GMT", "Nov 25 00:15:46.9999998 2026 GMT", "20261125001536.9999999Z", "20261125001546.9999998Z", 10},
		{"Nov 25 00:15:36.9999999 2026 GMT", "Nov 25 00:15:46.9999999 2026 GMT", "20261125001536.9999999Z", "20261125001546.9999999Z", 10},
		{"Nov 25 00:15:36.5 2026 GMT", "Nov 25 00:15:46.49999999999 2026 GMT", "20261125001536.5Z", "20261125001546.49999999999Z", 10},
		{"Jan  1 00:00:00 2000 GMT", "Dec 31 23:59:59.999999999 9999 GMT", "20000101000000Z", "99991231235959.999999999Z", 252423993599},
		{"Jan  1 00:00:00 2000 GMT", "Dec 31 23:59:59.999999999 9999 GMT", "20000101000000Z", "99991231235959.999999999Z", 1 << 40},
		{"Nov 25 00:15:36 2026 GMT", "Nov 25 00:16:11 2026 GMT", "20261125001536Z", "20261125001611Z", 9223372037},
	}
	timeJQ := jqProgram(t, "TIME_JQ")
	for _, c := range cases {
		parse := func(s string) time.Time {
			tm, err := time.Parse("Jan _2 15:04:05.999999999 2006 MST", s)
			if err != nil {
				t.Fatal(err)
			}
			return tm
		}
		want := verify.LastedAtLeast(parse(c.open), parse(c.close), c.min)
		byHand := runJQ(t, "", "-n", "--arg", "o", c.open, "--arg", "c", c.close, "--argjson", "min", fmt.Sprint(c.min),
			timeJQ+` ($o | openssl_epoch) as $o | ($c | openssl_epoch) | seconds_since($o) >= $min`)
		if byHand[0] != fmt.Sprint(want) {
			t.Errorf("by hand: %s to %s lasted at least %d s: %s, svc-verify %v", c.open, c.close, c.min, byHand[0], want)
		}
		out, err := exec.Command(py, "-c", fmt.Sprintf(`import sys; sys.path.insert(0, "../testdata/secondimpl"); import svcverify as s; `+
			`print(str(s.lasted_at_least(s.gen_time_ns(%q), s.gen_time_ns(%q), %d)).lower())`, c.gOpen, c.gClose, c.min)).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(string(out)); got != fmt.Sprint(want) {
			t.Errorf("python: %s to %s lasted at least %d s: %s, svc-verify %v", c.gOpen, c.gClose, c.min, got, want)
		}
	}
	// The recorded_at side: a record 100 ns after T + 5 min is late.
	late := runJQ(t, "", "-n", timeJQ+` ("2026-11-25T00:20:36.000000100Z" | rfc3339_epoch) > ("Nov 25 00:15:36 2026 GMT" | openssl_epoch | plus(300))`)
	if late[0] != "true" {
		t.Errorf("by hand: a record 100 ns after T + 5 min is not late")
	}
}
