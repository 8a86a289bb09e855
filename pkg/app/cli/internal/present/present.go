// Package present formats what several svc commands print about runs,
// records and VPECs, so that each command file only wires flags to a
// library call and hands the result here. Text goes to the writer given;
// the JSON forms are the objects --output json prints.
package present

import (
	"fmt"
	"io"

	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/client/bounded"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Clean says what is_clean means: no governance gaps. It is not "every
// check passed"; printed beside the pass/fail counts, neither is read as
// the other.
func Clean(isClean bool) string {
	if isClean {
		return "clean: no governance gaps"
	}
	return "not clean: see the gaps"
}

// Summary is the one-line summary of a VPEC: its run, the checks passed
// and failed, the proof level floor, the gaps and what clean means.
func Summary(v *vpec.VPEC) string {
	return fmt.Sprintf("%s: %d checks (%d passed, %d failed), floor %s, %d gap(s), %s",
		v.RunID, v.TotalChecksRun, v.ChecksPassed, v.ChecksFailed, v.ProofLevelFloor, len(v.Gaps), Clean(v.IsClean))
}

// Closed prints the summary of a VPEC written to out.
func Closed(w io.Writer, v *vpec.VPEC, out string) {
	fmt.Fprintf(w, "%s -> %s\n", Summary(v), out)
}

// ClosedJSON is the --output json object of a VPEC written to out.
func ClosedJSON(res *client.VPECResult, out string) map[string]any {
	v := res.VPEC
	return map[string]any{"vpec_id": v.VPECID, "run_id": v.RunID, "out": out, "offline": res.Offline,
		"proof_level_floor": v.ProofLevelFloor, "total_checks_run": v.TotalChecksRun, "gaps": len(v.Gaps), "is_clean": v.IsClean}
}

// Recorded prints one record: id, sequence, commitment, and whether it was
// delivered or queued.
func Recorded(w io.Writer, res *client.RecordResult) {
	state := "recorded"
	if res.Queued {
		state = "queued (service unreachable; delivered later)"
	}
	fmt.Fprintf(w, "%s sequence %d %s %s\n", res.RecordID, res.Sequence, res.CommitmentHash, state)
}

// Inference prints the result of a classifier check (svc record --model):
// the verdict and score, the profile applied or why none, and its records.
func Inference(w io.Writer, check string, res *bounded.Result, threshold float64, gpuClass string) {
	fmt.Fprintf(w, "%s %s score %.4f (threshold %g) %s\n", check, res.Verdict, res.Score, threshold, res.ProofLevel)
	if res.ProfileID != "" {
		fmt.Fprintf(w, "  profile %s · %s, %d operators, root %s\n", res.ProfileID, gpuClass, res.Trace.OperatorCount, res.Trace.MerkleRoot)
	} else {
		fmt.Fprintf(w, "  open_source_ml (model_profile_missing): %s\n", res.ProfileNote)
	}
	for _, o := range res.Conditions {
		fmt.Fprintf(w, "  %s: Groth16 proof (%s, bound %d)\n", o.Check, o.Circuit, o.Bound)
	}
	for _, r := range res.Records {
		state := "recorded"
		if r.Queued {
			state = "queued"
		}
		fmt.Fprintf(w, "  %s sequence %d %s\n", r.RecordID, r.Sequence, state)
	}
}

// InferenceJSON is the --output json object of a classifier check whose
// trace was kept at traceOut ("" when not kept).
func InferenceJSON(res *bounded.Result, traceOut string) map[string]any {
	return map[string]any{"verdict": res.Verdict, "score": res.Score, "stage_type": res.StageType, "proof_level": res.ProofLevel,
		"profile_id": res.ProfileID, "profile_note": res.ProfileNote, "merkle_root": res.Trace.MerkleRoot, "operator_count": res.Trace.OperatorCount,
		"onnx_model_hash": res.Trace.ONNXModelHash, "trace": traceOut, "queued": res.Queued, "records": res.Records,
		"proved_conditions": provedConditions(res)}
}

// provedConditions lists the proved condition records without their
// openings (the salts go only to --conditions-out).
func provedConditions(res *bounded.Result) []map[string]any {
	out := []map[string]any{}
	for _, o := range res.Conditions {
		out = append(out, map[string]any{"check": o.Check, "circuit": o.Circuit, "bound": o.Bound, "commitment_hash": o.Commitment})
	}
	return out
}
