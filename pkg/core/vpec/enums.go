package vpec

import (
	"slices"
	"strings"
)

// ProofLevel is how strongly a record's execution is proven.
type ProofLevel string

// Proof levels, strongest first (docs/FORMATS.md).
const (
	Mathematical        ProofLevel = "mathematical"
	VerifiableInference ProofLevel = "verifiable_inference"
	OperatorBound       ProofLevel = "operator_bound"
	Execution           ProofLevel = "execution"
	Witnessed           ProofLevel = "witnessed"
	Attestation         ProofLevel = "attestation"
)

// proofLevels lists the proof levels strongest first.
var proofLevels = [...]ProofLevel{Mathematical, VerifiableInference, OperatorBound, Execution, Witnessed, Attestation}

// ProofLevels returns the proof levels strongest first (a new slice each
// call: the verifier's table cannot be changed through it).
func ProofLevels() []ProofLevel { return slices.Clone(proofLevels[:]) }

// Rank orders levels: 0 is the strongest; -1 means unknown.
func (l ProofLevel) Rank() int { return slices.Index(proofLevels[:], l) }

// Valid reports whether l is a known proof level.
func (l ProofLevel) Valid() bool { return l.Rank() >= 0 }

// Provable reports whether a level counts toward the provable surface:
// mathematical, verifiable_inference and operator_bound.
func (l ProofLevel) Provable() bool { r := l.Rank(); return r >= 0 && r <= OperatorBound.Rank() }

// SurfaceKey is the key of l in provable_surface_breakdown: the level's
// name, except operator_bound which is reported as "bounded_inference".
func (l ProofLevel) SurfaceKey() string {
	if l == OperatorBound {
		return "bounded_inference"
	}
	return string(l)
}

// CheckResult is the outcome of one check (docs/FORMATS.md).
type CheckResult string

// Check results.
const (
	ResultPass          CheckResult = "pass"
	ResultFail          CheckResult = "fail"
	ResultError         CheckResult = "error"
	ResultSkipped       CheckResult = "skipped"
	ResultDegraded      CheckResult = "degraded"
	ResultOverride      CheckResult = "override"
	ResultNotApplicable CheckResult = "not_applicable"
)

var checkResults = [...]CheckResult{ResultPass, ResultFail, ResultError, ResultSkipped, ResultDegraded, ResultOverride, ResultNotApplicable}

// CheckResults returns every check result (a new slice each call).
func CheckResults() []CheckResult { return slices.Clone(checkResults[:]) }

// Valid reports whether r is a known check result.
func (r CheckResult) Valid() bool { return slices.Contains(checkResults[:], r) }

// Visibility says what of a record's data the VPEC discloses (docs/FORMATS.md).
type Visibility string

// Visibility modes.
const (
	Opaque      Visibility = "opaque"
	Selective   Visibility = "selective"
	Transparent Visibility = "transparent"
)

var visibilities = [...]Visibility{Opaque, Selective, Transparent}

// Visibilities returns every visibility mode (a new slice each call).
func Visibilities() []Visibility { return slices.Clone(visibilities[:]) }

// Valid reports whether v is a known visibility mode.
func (v Visibility) Valid() bool { return slices.Contains(visibilities[:], v) }

// Environment is sandbox or production, set by the API key's prefix.
type Environment string

// Environments.
const (
	Sandbox    Environment = "sandbox"
	Production Environment = "production"
)

// environments lists the environments with the prefix of their API keys
// (and key ids): the VPEC's api_key_id starts with the prefix of its
// environment (docs/FORMATS.md, "VPEC fields"). pkg/core/api's
// EnvironmentOf reads a key's environment from them.
var environments = [...]struct {
	env    Environment
	prefix string
}{{Sandbox, "pk_sb_"}, {Production, "pk_live_"}}

// KeyPrefix returns the prefix of the API keys (and key ids) of
// environment e, "pk_sb_" or "pk_live_"; "" for an unknown environment.
func (e Environment) KeyPrefix() string {
	for _, x := range environments {
		if x.env == e {
			return x.prefix
		}
	}
	return ""
}

// environmentOf returns the environment an API key id's prefix selects.
func environmentOf(key string) (Environment, bool) {
	for _, x := range environments {
		if strings.HasPrefix(key, x.prefix) {
			return x.env, true
		}
	}
	return "", false
}
