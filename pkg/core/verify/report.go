package verify

import (
	"slices"
	"strings"

	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Status is the outcome of one verification check.
type Status string

// Check statuses. Warn means checked and authentic but not clean (gaps, or a
// chain break the document itself declares); it does not make a VPEC invalid.
const (
	Pass          Status = "pass"
	Fail          Status = "fail"
	Warn          Status = "warn"
	NotApplicable Status = "not_applicable"
)

// CheckName names a verification check. Names are stable: scripts match them
// in the JSON report. Each built-in check's name is in its file.
type CheckName string

// CheckAudit is the replay audit of one Bounded Inference trace (svc
// verify --trace), an Options.Extra check run only when asked.
const CheckAudit CheckName = "audit"

// Checks returns the checks Verify reports, in order (a new slice each
// call): every report names each of them once, a check that did not run
// as not_applicable, followed by the Options.Extra checks that applied.
func Checks() []CheckName {
	out := []CheckName{CheckSchema}
	for _, c := range checks {
		out = append(out, c.name)
	}
	return out
}

// Check is the result of one named verification check.
type Check struct {
	Name    CheckName `json:"name"`
	Status  Status    `json:"status"`
	Message string    `json:"message"`
	// Code is the verdict reason a failure gives, e.g. "PROFILE MISMATCH".
	Code string `json:"code,omitempty"`
	// Details lists every individual problem or observation.
	Details []string `json:"details,omitempty"`
	// MissingTrust is set when the check could not run for want of trust
	// material (a trust root, a TSA root, a profile).
	MissingTrust bool `json:"missing_trust,omitempty"`
}

// Report is the result of verifying one VPEC. Valid is true only when every
// check passed, warned or did not apply.
type Report struct {
	ReportSchema    string          `json:"report_schema"`
	Valid           bool            `json:"valid"`
	Verdict         string          `json:"verdict"`
	VPECID          string          `json:"vpec_id,omitempty"`
	RunID           string          `json:"run_id,omitempty"`
	WorkflowID      string          `json:"workflow_id,omitempty"`
	OrgID           string          `json:"org_id,omitempty"`
	Environment     string          `json:"environment,omitempty"`
	IssuedAt        string          `json:"issued_at,omitempty"`
	TimestampedAt   string          `json:"timestamped_at,omitempty"`
	SigningKeyID    string          `json:"signing_key_id,omitempty"`
	ProofLevelFloor vpec.ProofLevel `json:"proof_level_floor,omitempty"`
	IsClean         bool            `json:"is_clean"`
	Records         int             `json:"records"`
	Gaps            int             `json:"gaps"`
	// ChecksFailed and ChecksErrored count the records whose check result
	// is fail and error: what Options.RequirePassed refuses.
	ChecksFailed  int     `json:"checks_failed"`
	ChecksErrored int     `json:"checks_errored"`
	Checks        []Check `json:"checks"`
	// Disclosed lists what the transparent and selective records disclose,
	// set only when the disclosures check passed (escape it before
	// printing: it is data from the document).
	Disclosed []Disclosed `json:"disclosed,omitempty"`
	// Unreadable is set when the input is not a JSON document at all
	// (empty, binary, not UTF-8, a byte order mark, larger than the
	// limit): the verdict is UNREADABLE and svc verify exits 2.
	Unreadable bool `json:"unreadable,omitempty"`
	// TrustRoot names the trust bundle the report was checked against
	// and where its name came from; set by the command line.
	TrustRoot *TrustRoot `json:"trust_root,omitempty"`

	// fetchHint is the command that fetches the signed VPEC, set for
	// an unsigned offline VPEC.
	fetchHint string

	// requireClean is Options.RequireClean: a valid VPEC that is not
	// clean is INVALID — NOT CLEAN.
	requireClean bool
	// requirePassed is Options.RequirePassed: a valid VPEC with a failed
	// or errored check is INVALID — NOT PASSED.
	requirePassed bool
}

// TrustRoot names a trust bundle file and where it was named.
type TrustRoot struct {
	File   string `json:"file"`
	Source string `json:"source"` // "flag --trust-root" or "environment SVC_TRUST_ROOT"
}

// ReportSchema versions the JSON report.
const ReportSchema = "svc.verify-report/v1"

// Check returns the named check, or nil.
func (r *Report) Check(name CheckName) *Check {
	for i := range r.Checks {
		if r.Checks[i].Name == name {
			return &r.Checks[i]
		}
	}
	return nil
}

// FirstFailure returns the first failed check, or nil.
func (r *Report) FirstFailure() *Check {
	for i := range r.Checks {
		if r.Checks[i].Status == Fail {
			return &r.Checks[i]
		}
	}
	return nil
}

// MissingTrust reports whether the report is incomplete rather than
// invalid: checks failed, and each only for want of trust material.
func (r *Report) MissingTrust() bool {
	failed := false
	for _, c := range r.Checks {
		if c.Status == Fail {
			if !c.MissingTrust {
				return false
			}
			failed = true
		}
	}
	return failed
}

// verdictCheck returns the failure the verdict names: the first real
// failure, else the first check that lacked trust material, else nil.
func (r *Report) verdictCheck() *Check {
	var trust *Check
	for i := range r.Checks {
		c := &r.Checks[i]
		if c.Status != Fail {
			continue
		}
		if !c.MissingTrust {
			return c
		}
		if trust == nil {
			trust = c
		}
	}
	return trust
}

func (r *Report) finish() {
	r.ReportSchema = ReportSchema
	f := r.verdictCheck()
	r.Valid = f == nil
	switch {
	case r.Unreadable:
		r.Valid = false
		r.Verdict = "UNREADABLE — " + f.Code
	case f == nil && r.requirePassed && !r.Passed():
		// Authentic, and a recorded check failed or hit an error, and
		// the caller asked for every check to pass (--require-passed).
		r.Valid = false
		r.Verdict = VerdictNotPassed
	case f == nil && r.requireClean && !r.IsClean:
		// Authentic, with governance gaps or declared chain breaks, and
		// the caller asked for clean (svc verify --require-clean).
		r.Valid = false
		r.Verdict = "INVALID — NOT CLEAN (--require-clean)"
	case f == nil:
		r.Verdict = "VALID"
	case f.Code == CodeUnsignedOffline:
		// Not a credential: never VALID, and the verdict says how to
		// get the signed one (docs/FORMATS.md, "Unsigned offline VPEC").
		r.Verdict = CodeUnsignedOffline + ": fetch the signed one with " + r.fetchHint
	case f.MissingTrust:
		// Every item of trust material that was missing is named, in
		// check order, so that adding one does not reveal the next.
		r.Verdict = "UNVERIFIED — " + strings.Join(r.missingCodes(), ", ")
	default:
		r.Verdict = "INVALID — " + f.Code
	}
}

// missingCodes returns the codes of the checks that failed for want of
// trust material, in check order, each once.
func (r *Report) missingCodes() []string {
	var codes []string
	for _, c := range r.Checks {
		if c.Status == Fail && c.MissingTrust && !slices.Contains(codes, c.Code) {
			codes = append(codes, c.Code)
		}
	}
	return codes
}

// MaxReportDetails bounds the detail lines a check lists (one per gap,
// record or violation); the rest are counted in a last line.
const MaxReportDetails = 100

// fail returns c failed with code and msg; missingTrust says it failed
// only for want of trust material.
func fail(c Check, code, msg string, missingTrust bool) Check {
	c.Status, c.Code, c.Message, c.MissingTrust = Fail, code, msg, missingTrust
	return c
}

// fill copies what the report says about the document from v.
func (r *Report) fill(v *vpec.VPEC) {
	r.VPECID, r.RunID, r.WorkflowID, r.OrgID = v.VPECID, v.RunID, v.WorkflowID, v.OrgID
	r.Environment, r.IssuedAt, r.SigningKeyID = string(v.Environment), v.IssuedAt, v.SigningKeyID
	r.ProofLevelFloor, r.IsClean = v.ProofLevelFloor, v.IsClean
	r.Records, r.Gaps = len(v.Records), len(v.Gaps)
	r.ChecksFailed, r.ChecksErrored = CountNotPassed(v.Records)
}

// NotPassedCodes lists the check results that make a VPEC "not passed"
// (Options.RequirePassed, svc verify --require-passed): fail and error.
// skipped, degraded, override and not_applicable do not: each is a
// deliberate, recorded outcome (a skip with its rationale, partial
// coverage, an operator's override), counted in the report but accepted
// by the gate (docs/CI.md, "Clean is not passed").
func NotPassedCodes() []vpec.CheckResult {
	return []vpec.CheckResult{vpec.ResultFail, vpec.ResultError}
}

// CountNotPassed counts the records whose check result is fail and error.
func CountNotPassed(records []vpec.Record) (failed, errored int) {
	for i := range records {
		switch records[i].CheckResult {
		case vpec.ResultFail:
			failed++
		case vpec.ResultError:
			errored++
		}
	}
	return failed, errored
}

// Passed reports whether no record's check failed or hit an error
// (RequirePassed's rule). An INVALID VPEC's counts are not to be trusted:
// look at Valid first.
func (r *Report) Passed() bool { return r.ChecksFailed == 0 && r.ChecksErrored == 0 }
