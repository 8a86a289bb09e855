package verify

import (
	"errors"
	"slices"
)

// Verdict kinds. Verify returns an error matching exactly one of
// ErrInvalid, ErrUnverified and ErrUnreadable whenever its verdict is not
// VALID (docs/FORMATS.md, "The Go API"); match them with errors.Is.
var (
	// ErrInvalid: a check failed (verdict INVALID — <code>, or an
	// unsigned offline VPEC). svc verify exits 1.
	ErrInvalid = errors.New("VPEC invalid")
	// ErrUnverified: every failed check failed only for want of trust
	// material (verdict UNVERIFIED — <code>). svc verify exits 3.
	ErrUnverified = errors.New("VPEC not verified: trust material missing")
	// ErrUnreadable: the input is not a JSON document (verdict
	// UNREADABLE — <code>). svc verify exits 2.
	ErrUnreadable = errors.New("input is not a JSON document")

	// ErrNotClean: the VPEC is authentic but has governance gaps and
	// Options.RequireClean is set. It also matches ErrInvalid.
	ErrNotClean = errors.New("VPEC not clean")
	// ErrNotPassed: the VPEC is authentic but a recorded check failed or
	// hit an error and Options.RequirePassed is set. It also matches
	// ErrInvalid.
	ErrNotPassed = errors.New("VPEC not passed: a check failed or hit an error")
	// ErrUnsignedOffline: the document is a client's unsigned offline
	// copy, not a credential. It also matches ErrInvalid.
	ErrUnsignedOffline = errors.New("unsigned offline VPEC")
)

// VerificationError is the error Verify returns with a report whose
// verdict is not VALID.
type VerificationError struct {
	// Verdict is the report's verdict, e.g. "INVALID — CHAIN MISMATCH".
	Verdict string
	// Check is a copy of the check the verdict names; nil when the
	// verdict names none (NOT CLEAN under RequireClean, NOT PASSED under
	// RequirePassed).
	Check *Check
	kind  error
	// alsoNotClean: a NOT PASSED verdict whose VPEC is not clean either,
	// under RequireClean.
	alsoNotClean bool
}

// VerdictNotPassed is the verdict of a valid VPEC with a failed or errored
// check under Options.RequirePassed.
const VerdictNotPassed = "INVALID — NOT PASSED (--require-passed)"

func (e *VerificationError) Error() string {
	if e.Check != nil && e.Check.Message != "" {
		return "vpec: " + e.Verdict + ": " + e.Check.Message
	}
	return "vpec: " + e.Verdict
}

// Is matches the error's kind; ErrNotClean, ErrNotPassed and
// ErrUnsignedOffline also match ErrInvalid.
func (e *VerificationError) Is(target error) bool {
	switch target {
	case e.kind:
		return true
	case ErrInvalid:
		return e.kind == ErrNotClean || e.kind == ErrNotPassed || e.kind == ErrUnsignedOffline
	case ErrNotClean:
		return e.alsoNotClean
	}
	return false
}

// err is the error a finished report gives: nil when it is valid.
func (r *Report) err() error {
	if r.Valid {
		return nil
	}
	f := r.verdictCheck()
	e := &VerificationError{Verdict: r.Verdict, kind: ErrInvalid}
	switch {
	case r.Unreadable:
		e.kind = ErrUnreadable
	case f == nil && r.Verdict == VerdictNotPassed:
		e.kind = ErrNotPassed
		e.alsoNotClean = r.requireClean && !r.IsClean
	case f == nil:
		e.kind = ErrNotClean
	case f.Code == CodeUnsignedOffline:
		e.kind = ErrUnsignedOffline
	case f.MissingTrust:
		e.kind = ErrUnverified
	}
	if f != nil {
		c := *f
		c.Details = slices.Clone(c.Details)
		e.Check = &c
	}
	return e
}
