package verify

import (
	"fmt"
	"sort"
	"strings"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckSummary: the summary fields (proof level floor and breakdowns,
// provable surface, counts, is_clean) are what the records give, and
// api_key_id selects the stated environment.
const CheckSummary CheckName = "summary"

func (s *state) summary() Check { return checkSummary(&s.doc.VPEC, s.breaks) }

// checkSummary recomputes v's summary fields from its records, gaps and
// chain breaks and compares, and checks that api_key_id selects v's
// environment.
func checkSummary(v *vpec.VPEC, breaks []vpec.ChainBreak) Check {
	c := Check{Name: CheckSummary}
	chainIntact := len(breaks) == 0
	want := issue.Summarize(v.Records, v.Gaps, chainIntact)
	mismatch := func(field string, got, exp any) {
		c.Details = append(c.Details, fmt.Sprintf("%s is %v, the records give %v", field, got, exp))
	}
	if v.ProofLevelFloor != want.ProofLevelFloor {
		mismatch("proof_level_floor", v.ProofLevelFloor, want.ProofLevelFloor)
	}
	if v.TotalChecksRun != want.TotalChecksRun {
		mismatch("total_checks_run", v.TotalChecksRun, want.TotalChecksRun)
	}
	if v.ChecksPassed != want.ChecksPassed {
		mismatch("checks_passed", v.ChecksPassed, want.ChecksPassed)
	}
	if v.ChecksFailed != want.ChecksFailed {
		mismatch("checks_failed", v.ChecksFailed, want.ChecksFailed)
	}
	if !mapsEqual(v.ProofLevelBreakdown, want.ProofLevelBreakdown) {
		mismatch("proof_level_breakdown", formatMap(v.ProofLevelBreakdown), formatMap(want.ProofLevelBreakdown))
	}
	if v.ProvableSurface != want.ProvableSurface {
		mismatch("provable_surface", v.ProvableSurface, want.ProvableSurface)
	}
	if !mapsEqual(v.ProvableSurfaceBreakdown, want.ProvableSurfaceBreakdown) {
		mismatch("provable_surface_breakdown", formatMap(v.ProvableSurfaceBreakdown), formatMap(want.ProvableSurfaceBreakdown))
	}
	if v.IsClean != want.IsClean {
		mismatch("is_clean", v.IsClean, want.IsClean)
	}
	if env, _ := api.EnvironmentOf(v.APIKeyID); env != v.Environment {
		c.Details = append(c.Details, fmt.Sprintf("environment is %s, but api_key_id %s selects %s", v.Environment, v.APIKeyID, env))
	}
	if len(c.Details) > 0 {
		return fail(c, "SUMMARY MISMATCH", "summary inconsistent with records: "+c.Details[0], false)
	}
	c.Status, c.Message = Pass, fmt.Sprintf("summary consistent (%d checks, %d passed, %d failed, %s environment)", v.TotalChecksRun, v.ChecksPassed, v.ChecksFailed, v.Environment)
	return c
}

func mapsEqual[V comparable](a, b map[string]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func formatMap[V any](m map[string]V) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return "{" + strings.Join(parts, " ") + "}"
}
