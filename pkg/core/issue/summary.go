package issue

import "github.com/svc-gov/svc/pkg/core/vpec"

// Summary holds the VPEC fields that are derived from its records and gaps
// (docs/FORMATS.md, "Summary fields"). The issuer computes it at close;
// the verifier recomputes it and compares.
type Summary struct {
	ProofLevelFloor          vpec.ProofLevel
	ProofLevelBreakdown      map[string]int64
	ProvableSurface          float64
	ProvableSurfaceBreakdown map[string]float64
	TotalChecksRun           int64
	ChecksPassed             int64
	ChecksFailed             int64
	IsClean                  bool
}

// Share returns count/total as a float rounded half-up to four decimal places
// (basis points), computed in integers so every implementation gets the same
// IEEE-754 value. Share of an empty run is 0.
func Share(count, total int64) float64 {
	if total <= 0 {
		return 0
	}
	bp := (count*20000 + total) / (2 * total)
	return float64(bp) / 10000
}

// Summarize derives the summary fields from records, gaps and chainIntact.
// The floor of a run without records is attestation: nothing was proven.
func Summarize(records []vpec.Record, gaps []vpec.Gap, chainIntact bool) Summary {
	s := Summary{
		ProofLevelBreakdown:      map[string]int64{},
		ProvableSurfaceBreakdown: map[string]float64{},
		TotalChecksRun:           int64(len(records)),
		IsClean:                  chainIntact && len(gaps) == 0,
	}
	floor := -1
	var provable int64
	surface := map[string]int64{}
	// Records are counted by rank (a VPEC of 10,000 records would hash a
	// level name twice per record); the maps are filled once after. A
	// level outside the list (refused by the schema check) is counted by
	// name.
	levels := vpec.ProofLevels()
	byRank := make([]int64, len(levels))
	for i := range records {
		r := &records[i]
		rank := r.ProofLevel.Rank()
		if rank < 0 {
			s.ProofLevelBreakdown[string(r.ProofLevel)]++
			surface[r.ProofLevel.SurfaceKey()]++
		} else {
			byRank[rank]++
		}
		if rank > floor {
			floor = rank
		}
		if r.ProofLevel.Provable() {
			provable++
		}
		switch r.CheckResult {
		case vpec.ResultPass:
			s.ChecksPassed++
		case vpec.ResultFail:
			s.ChecksFailed++
		}
	}
	for rank, n := range byRank {
		if n > 0 {
			s.ProofLevelBreakdown[string(levels[rank])] += n
			surface[levels[rank].SurfaceKey()] += n
		}
	}
	if floor < 0 {
		s.ProofLevelFloor = vpec.Attestation
	} else {
		s.ProofLevelFloor = levels[floor]
	}
	for k, n := range surface {
		s.ProvableSurfaceBreakdown[k] = Share(n, s.TotalChecksRun)
	}
	s.ProvableSurface = Share(provable, s.TotalChecksRun)
	return s
}

// Apply writes the summary into v.
func (s Summary) Apply(v *vpec.VPEC) {
	v.ProofLevelFloor = s.ProofLevelFloor
	v.ProofLevelBreakdown = s.ProofLevelBreakdown
	v.ProvableSurface = s.ProvableSurface
	v.ProvableSurfaceBreakdown = s.ProvableSurfaceBreakdown
	v.TotalChecksRun = s.TotalChecksRun
	v.ChecksPassed = s.ChecksPassed
	v.ChecksFailed = s.ChecksFailed
	v.IsClean = s.IsClean
}
