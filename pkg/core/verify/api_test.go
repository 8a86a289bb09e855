package verify_test

import (
	"bytes"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// acceptIfNoError is the caller docs/FORMATS.md ("The Go API") warns
// about: it never looks at the report, only at the error.
func acceptIfNoError(doc []byte, opts verify.Options) bool {
	_, err := verify.Verify(doc, opts)
	return err == nil
}

// TestVerifyFailsClosed: a caller that ignores the report still refuses
// an INVALID, UNVERIFIED or UNREADABLE document, and can tell which it is
// with errors.Is / errors.As, never by reading text.
func TestVerifyFailsClosed(t *testing.T) {
	f := newFixture(t)
	good := f.issue(t, records(3, vpec.Execution), nil)
	tampered := bytes.Replace(good, []byte(`"check_0"`), []byte(`"check_X"`), 1)
	keysOnly := signing.NewBundle()
	keysOnly.AddKey(f.signer.PublicKey())
	for _, tc := range []struct {
		name    string
		doc     []byte
		opts    verify.Options
		want    error // nil: accepted
		check   verify.CheckName
		verdict string
	}{
		{"valid", good, verify.Options{Trust: f.trust}, nil, "", "VALID"},
		{"tampered", tampered, verify.Options{Trust: f.trust}, verify.ErrInvalid, verify.CheckSignature, "INVALID — SIGNATURE INVALID"},
		{"no TSA root", good, verify.Options{Trust: keysOnly}, verify.ErrUnverified, verify.CheckTimestamp, "UNVERIFIED — TSA ROOT MISSING"},
		{"empty input", nil, verify.Options{Trust: f.trust}, verify.ErrUnreadable, verify.CheckSchema, "UNREADABLE — NOT JSON"},
		{"schema error", []byte(`{"schema":"x"}`), verify.Options{Trust: f.trust}, verify.ErrInvalid, verify.CheckSchema, "INVALID — SCHEMA ERROR"},
		{"unsigned offline", offlineVector(t), verify.Options{Trust: f.trust}, verify.ErrUnsignedOffline, verify.CheckSchema, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := acceptIfNoError(tc.doc, tc.opts); got != (tc.want == nil) {
				t.Fatalf("a caller ignoring the report accepts=%v, want %v", got, tc.want == nil)
			}
			r, err := verify.Verify(tc.doc, tc.opts)
			if tc.verdict == "" && r != nil && errors.Is(err, verify.ErrInvalid) { // the offline verdict names its run
				tc.verdict = r.Verdict
			}
			if r == nil || r.Verdict != tc.verdict || r.Valid != (err == nil) {
				t.Fatalf("report %+v, err %v; want verdict %q", r, err, tc.verdict)
			}
			if tc.want == nil {
				return
			}
			var ve *verify.VerificationError
			if !errors.Is(err, tc.want) || !errors.As(err, &ve) || ve.Verdict != tc.verdict || ve.Check == nil || ve.Check.Name != tc.check {
				t.Fatalf("err = %#v, want %v naming check %s", err, tc.want, tc.check)
			}
			for _, other := range []error{verify.ErrInvalid, verify.ErrUnverified, verify.ErrUnreadable} {
				if other != tc.want && errors.Is(err, other) != (other == verify.ErrInvalid && tc.want == verify.ErrUnsignedOffline) {
					t.Fatalf("err %v also matches %v", err, other)
				}
			}
			// The error's check is a copy: editing it changes no report.
			ve.Check.Status = verify.Pass
			if r.Check(tc.check).Status == verify.Pass {
				t.Fatal("the error shares its check with the report")
			}
		})
	}
}

// TestVerifyOptionsValidated: options are checked before any document is
// read; nil or key-less trust is an error, not an UNVERIFIED report.
func TestVerifyOptionsValidated(t *testing.T) {
	f := newFixture(t)
	doc := f.issue(t, records(1, vpec.Execution), nil)
	rootsOnly := signing.NewBundle()
	rootsOnly.AddRoot(f.tsa.Root())
	for name, opts := range map[string]verify.Options{
		"nil trust":           {},
		"trust without a key": {Trust: rootsOnly},
		"nil extra check":     {Trust: f.trust, Extra: []verify.ExtraCheck{nil}},
	} {
		t.Run(name, func(t *testing.T) {
			r, err := verify.Verify(doc, opts)
			var ve *verify.VerificationError
			if r != nil || !errors.Is(err, verify.ErrOptions) || errors.As(err, &ve) || errors.Is(err, verify.ErrInvalid) {
				t.Fatalf("Verify = %v, %v; want no report and ErrOptions", r, err)
			}
		})
	}
}

// TestVerifyRequireClean: the policy lives in the options, not in a
// caller rewriting Valid; a VPEC with gaps is VALID without it.
func TestVerifyRequireClean(t *testing.T) {
	f := newFixture(t)
	gappy := f.issueRun(t, nil, nil, nil) // an empty run: its empty_run gap makes it not clean
	clean := f.issue(t, records(2, vpec.Execution), nil)
	if r, err := verify.Verify(gappy, verify.Options{Trust: f.trust}); err != nil || !r.Valid || r.IsClean {
		t.Fatalf("without RequireClean: %v %+v", err, r)
	}
	r, err := verify.Verify(gappy, verify.Options{Trust: f.trust, RequireClean: true})
	var ve *verify.VerificationError
	if !errors.Is(err, verify.ErrNotClean) || !errors.Is(err, verify.ErrInvalid) || !errors.As(err, &ve) || ve.Check != nil ||
		r.Valid || r.Verdict != "INVALID — NOT CLEAN (--require-clean)" {
		t.Fatalf("RequireClean on a gappy VPEC: %v, verdict %q", err, r.Verdict)
	}
	if r, err := verify.Verify(clean, verify.Options{Trust: f.trust, RequireClean: true}); err != nil || r.Verdict != "VALID" {
		t.Fatalf("RequireClean on a clean VPEC: %v %q", err, r.Verdict)
	}
}

// TestVerifyExtraCheck: an extra check (svc's replay audit) is part of the
// verdict and of the error; an extra check's own error stops verification.
func TestVerifyExtraCheck(t *testing.T) {
	f := newFixture(t)
	doc := f.issue(t, records(1, vpec.Execution), nil)
	failAudit := func([]byte) (verify.Check, bool, error) {
		return verify.Check{Name: verify.CheckAudit, Status: verify.Fail, Code: "PROFILE MISMATCH", Message: "drift"}, true, nil
	}
	skip := func([]byte) (verify.Check, bool, error) { return verify.Check{}, false, nil }
	r, err := verify.Verify(doc, verify.Options{Trust: f.trust, Extra: []verify.ExtraCheck{skip, failAudit}})
	if !errors.Is(err, verify.ErrInvalid) || r.Verdict != "INVALID — PROFILE MISMATCH" || len(r.Checks) != len(verify.Checks())+1 {
		t.Fatalf("failed audit: %v, %q, %d checks", err, r.Verdict, len(r.Checks))
	}
	boom := errors.New("no model")
	r, err = verify.Verify(doc, verify.Options{Trust: f.trust, Extra: []verify.ExtraCheck{func([]byte) (verify.Check, bool, error) { return verify.Check{}, false, boom }}})
	if r != nil || !errors.Is(err, boom) || errors.Is(err, verify.ErrInvalid) {
		t.Fatalf("extra check error: %v, %v", r, err)
	}
	// Not run on input that is not a JSON document.
	ran := false
	_, err = verify.Verify(nil, verify.Options{Trust: f.trust, Extra: []verify.ExtraCheck{func([]byte) (verify.Check, bool, error) { ran = true; return verify.Check{}, false, nil }}})
	if ran || !errors.Is(err, verify.ErrUnreadable) {
		t.Fatalf("extra check ran on unreadable input: %v", err)
	}
}

// TestValidateSchema: the schema check alone, for callers that only map a
// document (the Sigstore export) and hold no trust bundle.
func TestValidateSchema(t *testing.T) {
	f := newFixture(t)
	doc := f.issue(t, records(2, vpec.Execution), nil)
	d, err := verify.ValidateSchema(doc)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := vpec.SignedBytes(doc)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(d.Signed(), signed) || len(d.VPEC.Records) != 2 || len(d.Signature) != 64 || len(d.Token) == 0 {
		t.Errorf("ValidateSchema's document: signed bytes as SignedBytes %v, %d records, %d-byte signature, %d-byte token",
			bytes.Equal(d.Signed(), signed), len(d.VPEC.Records), len(d.Signature), len(d.Token))
	}
	for doc, want := range map[string]error{"": verify.ErrUnreadable, `{"schema":"x"}`: verify.ErrInvalid} {
		var ve *verify.VerificationError
		if d, err := verify.ValidateSchema([]byte(doc)); d != nil || !errors.Is(err, want) || !errors.As(err, &ve) || ve.Check.Name != verify.CheckSchema {
			t.Errorf("ValidateSchema(%q) = %v, %v, want nil, %v", doc, d, err, want)
		}
	}
}

// TestTablesAreCopies: the tables the verifier reads cannot be changed
// through what the package exports.
func TestTablesAreCopies(t *testing.T) {
	f := newFixture(t)
	doc := f.issue(t, records(2, vpec.Execution), nil)
	vpec.ProofLevels()[0] = "forged"
	vpec.CheckResults()[0] = "forged"
	vpec.Visibilities()[0] = "forged"
	gap.Severities()[0] = "forged"
	verify.Checks()[0] = "forged"
	profile.GPUClasses()[0] = "tpu"
	profile.OperatorClasses()[0] = "forged"
	profile.TraceModes()[0] = "forged"
	if vpec.ProofLevels()[0] != vpec.Mathematical || vpec.CheckResults()[0] != vpec.ResultPass || vpec.Visibilities()[0] != vpec.Opaque ||
		gap.Severities()[0] != gap.Critical || verify.Checks()[0] != verify.CheckSchema || !slices.Equal(profile.GPUClasses(), []string{"cpu", "a10g", "a100", "h100"}) ||
		profile.OperatorClasses()[0] != profile.Linear || profile.TraceModes()[0] != profile.TraceFull {
		t.Fatal("a table changed through a returned copy")
	}
	if gap.SeverityOf(gap.ChainBreak) != gap.Critical || gap.SeverityOf(gap.EmptyRun) != gap.High || gap.SeverityOf("custom") != "" {
		t.Fatal("gap.SeverityOf")
	}
	if r, err := verify.Verify(doc, verify.Options{Trust: f.trust}); err != nil {
		t.Fatalf("verify after editing copies: %v", r.Verdict)
	}
}

// verifyDoc is verify.Verify for tests that read the report: it fails the test
// unless the error agrees with the report (nil exactly when VALID, else a
// *VerificationError carrying the report's verdict).
func verifyDoc(t testing.TB, doc []byte, opts verify.Options) *verify.Report {
	t.Helper()
	r, err := verify.Verify(doc, opts)
	if r == nil {
		t.Fatalf("Verify returned no report: %v", err)
		return nil
	}
	var ve *verify.VerificationError
	if (err == nil) != r.Valid || (err != nil && (!errors.As(err, &ve) || ve.Verdict != r.Verdict)) {
		t.Fatalf("Verify: error %v disagrees with the report (valid=%v, verdict %q)", err, r.Valid, r.Verdict)
	}
	return r
}

// someTrust is a trust bundle for tests whose documents fail before any
// signature is checked.
func someTrust(t testing.TB) *signing.Bundle {
	t.Helper()
	pub, _, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	b := signing.NewBundle()
	b.AddKey(pub)
	return b
}

// TestNoExportedTables: the verifier's packages export no variable but
// sentinel errors (Err…), so no importer can change what it accepts.
func TestNoExportedTables(t *testing.T) {
	for _, dir := range []string{".", "../vpec", "../profile", "../gap", "../stage", "../names", "../issue", "../document"} {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(names) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.IsExported() && !strings.HasPrefix(n.Name, "Err") {
							t.Errorf("%s: exported variable %s: make it an unexported table with an accessor", name, n.Name)
						}
					}
				}
			}
		}
	}
}
