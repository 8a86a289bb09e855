// Package gap names the governance gaps a VPEC declares: the gap types svc
// defines and the severities of gaps (docs/FORMATS.md, "Gaps"). A gap is
// a vpec.Gap; the VPEC schema (pkg/core/vpec) holds each gap type here to
// its fixed severity and members, the issuer (pkg/core/issue) declares the
// gaps a run's records require, and the verifier's gaps check
// (pkg/core/verify) compares the two.
package gap

import "slices"

// Severity is a governance gap's severity.
type Severity string

// Severities, most severe first.
const (
	Critical      Severity = "Critical"
	High          Severity = "High"
	Medium        Severity = "Medium"
	Low           Severity = "Low"
	Informational Severity = "Informational"
)

var severities = [...]Severity{Critical, High, Medium, Low, Informational}

// Severities returns every severity, most severe first (a new slice each
// call).
func Severities() []Severity { return slices.Clone(severities[:]) }

// Valid reports whether s is a known severity.
func (s Severity) Valid() bool { return slices.Contains(severities[:], s) }

// Gap types with a fixed severity.
const (
	SystemUnavailable   = "system_unavailable"    // High: the service was unreachable at close
	ModelProfileMissing = "model_profile_missing" // Medium, advisory: no drift profile for the model or GPU class
	SequenceMissing     = "sequence_missing"      // High: a record sequence number never reached the service
	ChainBreak          = "chain_break"           // Critical: a record's chain hash does not follow from its predecessor
	EmptyRun            = "empty_run"             // High: the run was closed without a single record
	CircuitMissing      = "circuit_missing"       // Medium, advisory: no published circuit for an MLP head, recorded at execution level
)

// SeverityOf returns the fixed severity of a gap type svc defines, or ""
// for any other gap type (whose severity the issuer chooses).
func SeverityOf(gapType string) Severity {
	switch gapType {
	case SystemUnavailable, SequenceMissing, EmptyRun:
		return High
	case ModelProfileMissing, CircuitMissing:
		return Medium
	case ChainBreak:
		return Critical
	}
	return ""
}
