package calibration

import (
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// Audit verdict codes (verify.Check.Code of the audit check); docs/FORMATS.md
// lists them with the other verdicts.
const (
	CodeAuditNotPossible    = "AUDIT NOT POSSIBLE"
	CodeTraceNotInVPEC      = "TRACE NOT IN VPEC"
	CodeProfileNotAvailable = "PROFILE NOT AVAILABLE"
	CodeProfileInvalid      = "PROFILE INVALID"
)

// MismatchCode is the verdict code of an audit whose trace or replay does
// not match the profile on gpuClass: "PROFILE MISMATCH (gpu_class <class>)".
func MismatchCode(gpuClass string) string { return "PROFILE MISMATCH (gpu_class " + gpuClass + ")" }

// RecordAudit is what the replay audit of one Bounded Inference record of a
// VPEC needs (svc verify --trace).
type RecordAudit struct {
	// VPEC is the VPEC document; its signature is not checked here
	// (verify.Verify does that: run the audit as one of its Extra checks).
	VPEC []byte
	// Trace is the kept operator trace; the record audited is the one
	// whose merkle_root is the trace's.
	Trace *trace.Trace
	// Input is the raw input the record commits to.
	Input []byte
	// Trust verifies the signed profile the record names; Profiles holds it.
	Trust    *signing.Bundle
	Profiles *profile.Set
	// LoadModel loads the model the trace claims. It is called only once
	// the record and the profile are found, so that an audit that fails
	// earlier needs no model and no runtime; its error is returned as is.
	LoadModel func() (*trace.Model, error)
}

// AuditRecord replays the trace of one Bounded Inference record of a VPEC
// and returns the audit check (verify.CheckAudit). The finding is in the
// check: pass with "profile consistent (profile · gpu class), sequence N:
// ..." or fail with one of the Code* codes or MismatchCode. An error means
// the audit could not run at all: the model could not be loaded, or the
// reference execution failed.
//
// In order: the VPEC must parse (else AUDIT NOT POSSIBLE); a Bounded
// Inference record must commit to the trace's Merkle root, the last one if
// several do (else TRACE NOT IN VPEC); the trace must verify and agree with
// that record on operator count, model, trace mode and input commitment
// (else PROFILE MISMATCH, each disagreement a detail); the record's profile
// must be in Profiles (else PROFILE NOT AVAILABLE, MissingTrust set) and
// verify under Trust (else PROFILE INVALID); then Replay decides.
func AuditRecord(a RecordAudit) (verify.Check, error) {
	c := verify.Check{Name: verify.CheckAudit}
	fail := func(code, format string, args ...any) (verify.Check, error) {
		c.Status, c.Code, c.Message = verify.Fail, code, fmt.Sprintf(format, args...)
		return c, nil
	}
	if a.Trace == nil {
		return c, fmt.Errorf("%w: no trace given", ErrAudit)
	}
	tr := a.Trace
	var v vpec.VPEC
	if _, err := document.Parse(a.VPEC, &v); err != nil {
		return fail(CodeAuditNotPossible, "audit: the VPEC cannot be read: %v", err)
	}
	var rec *vpec.Record
	for i := range v.Records {
		if bi := v.Records[i].BoundedInference; bi != nil && bi.MerkleRoot == tr.MerkleRoot {
			rec = &v.Records[i]
		}
	}
	if rec == nil {
		return fail(CodeTraceNotInVPEC, "audit: no Bounded Inference record of the VPEC commits to the trace's root %s", tr.MerkleRoot)
	}
	bi := rec.BoundedInference
	if bad := recordMismatches(rec, tr); len(bad) > 0 {
		c.Details = bad
		return fail(MismatchCode(bi.GPUClass), "audit of sequence %d: the trace does not match its record", rec.Sequence)
	}
	if a.Profiles == nil {
		a.Profiles = profile.NewSet()
	}
	pdoc, err := a.Profiles.Profile(bi.ProfileID)
	if err != nil {
		c.MissingTrust = true
		return fail(CodeProfileNotAvailable, "audit: profile %s not available; pass it with --profile", bi.ProfileID)
	}
	prof, err := profile.Verify(pdoc, a.Trust)
	if err != nil {
		return fail(CodeProfileInvalid, "audit: profile %s: %v", bi.ProfileID, err)
	}
	if a.LoadModel == nil {
		return c, fmt.Errorf("%w: no model given", ErrAudit)
	}
	m, err := a.LoadModel()
	if err != nil {
		return c, err
	}
	res, err := Replay(m, tr, a.Input, prof, bi.GPUClass)
	if err != nil {
		if errors.Is(err, ErrAudit) {
			return fail(MismatchCode(bi.GPUClass), "audit of sequence %d: %v", rec.Sequence, err)
		}
		return c, fmt.Errorf("audit: %w", err)
	}
	summary := res.Summary()
	if !res.Consistent {
		c.Details = append(res.Problems, res.RuleDetails()...)
		return fail(MismatchCode(bi.GPUClass), "profile inconsistent (%s · %s), sequence %d: %s", prof.ProfileID, bi.GPUClass, rec.Sequence, summary)
	}
	c.Status = verify.Pass
	c.Message = fmt.Sprintf("profile consistent (%s · %s), sequence %d: %s", prof.ProfileID, bi.GPUClass, rec.Sequence, summary)
	c.Details = res.RuleDetails()
	return c, nil
}

// recordMismatches lists where the trace disagrees with the record that
// commits to its root (the trace's own root and count included).
func recordMismatches(rec *vpec.Record, tr *trace.Trace) []string {
	bi := rec.BoundedInference
	var bad []string
	if err := tr.Verify(); err != nil {
		bad = append(bad, err.Error())
	}
	if bi.OperatorCount != tr.OperatorCount {
		bad = append(bad, fmt.Sprintf("operator_count %d in the record, %d in the trace", bi.OperatorCount, tr.OperatorCount))
	}
	if bi.ONNXModelHash != tr.ONNXModelHash {
		bad = append(bad, fmt.Sprintf("model %s in the record, %s in the trace", bi.ONNXModelHash, tr.ONNXModelHash))
	}
	if bi.TraceMode != tr.Mode {
		bad = append(bad, fmt.Sprintf("trace mode %s in the record, %s in the trace", bi.TraceMode, tr.Mode))
	}
	if rec.CommitmentHash != tr.InputCommitment {
		bad = append(bad, fmt.Sprintf("the record commits to input %s, the trace to %s", rec.CommitmentHash, tr.InputCommitment))
	}
	return bad
}
