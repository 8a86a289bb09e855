package vpec_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestParseProblemsInOneOrder: the problems of the breakdown maps come in
// the keys' sorted order on every parse (found by FuzzReadParallel: they
// came in map order, so two runs of the verifier on one document listed
// them differently).
func TestParseProblemsInOneOrder(t *testing.T) {
	doc := []byte(`{"schema":"svc.vpec/v1","vpec_id":"vpec_1","run_id":"run_1","workflow_id":"w","org_id":"o",` +
		`"issued_at":"2026-11-29T00:00:00Z","environment":"sandbox","api_key_id":"pk_sb_1","proof_level_floor":"execution",` +
		`"proof_level_breakdown":{"zeta":1,"execution":-1,"alpha":2,"mid":3},"provable_surface":0,` +
		`"provable_surface_breakdown":{"b":2,"execution":0.5,"a":-1,"c":1.5},"total_checks_run":0,"checks_passed":0,` +
		`"checks_failed":0,"gaps":[],"chain_intact":true,"is_clean":true,"merkle_root":"sha256:` + strings.Repeat("0", 64) + `",` +
		`"records":[],"signing_key_id":"0123456789abcdef","signature":"","timestamp_rfc3161":""}`)
	want := []string{
		`proof_level_breakdown key "alpha" is not a proof level`,
		`proof_level_breakdown.execution is negative`,
		`proof_level_breakdown key "mid" is not a proof level`,
		`proof_level_breakdown key "zeta" is not a proof level`,
		`provable_surface_breakdown.a is -1, want a share between 0 and 1`,
		`provable_surface_breakdown.b is 2, want a share between 0 and 1`,
		`provable_surface_breakdown.c is 1.5, want a share between 0 and 1`,
	}
	for range 20 {
		_, err := vpec.ParseWith(doc, vpec.ParseOptions{})
		var se *document.SchemaError
		if !errors.As(err, &se) {
			t.Fatalf("err = %v, want a schema error", err)
		}
		var got []string
		for _, p := range se.Problems {
			if strings.HasPrefix(p, "proof_level_breakdown") || strings.HasPrefix(p, "provable_surface_breakdown") {
				got = append(got, p)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
