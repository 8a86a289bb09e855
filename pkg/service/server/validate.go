package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// limited is a request body with documented limits, checked by decode
// right after the strict parse (400 naming the field).
type limited interface{ CheckLimits() error }

// limitError maps a limit check's error to its response.
func limitError(err error) error {
	var fe *api.FieldError
	if errors.As(err, &fe) {
		return badRequest(fe.Field, "%s", fe.Error())
	}
	return badRequest("", "%v", err)
}

// unprocessable is a 422 naming a field.
func unprocessable(field, format string, a ...any) *httpError {
	return &httpError{http.StatusUnprocessableEntity, api.CodeClaimWithoutEvidence, fmt.Sprintf(format, a...), field}
}

// checkClaims refuses a proof level the record does not carry the evidence
// for (decision D6): the service signs no claim stronger than its evidence.
//
//   - verifiable_inference: its zk_proof (verified by checkRecord against
//     the published circuit entry);
//   - mathematical: a zk_proof of a condition circuit, or the deterministic pre- or post-condition records of
//     a bound_committed_inference decomposition (stage_type
//     bound_committed_inference, stage_part pre_conditions or
//     post_conditions, check <check>:<part>); the verifier also requires
//     the decomposition's operator_bound record (check <check>, the same
//     input) in the same VPEC, which runClaims requires at close;
//   - witnessed and operator_bound: their review and bounded_inference
//     blocks (verified by checkRecord: review signature and timestamps,
//     registry profile);
//   - execution and attestation need no more than the record itself.
func checkClaims(rec *vpec.Record) error {
	switch rec.ProofLevel {
	case vpec.VerifiableInference:
		if rec.ZKProof == nil {
			return unprocessable("proof_level", "proof_level verifiable_inference needs its evidence, a zk_proof (an mlp_head proof against a published circuit); record the check at a lower level")
		}
	case vpec.Witnessed:
		if rec.Review == nil {
			return unprocessable("proof_level", "proof_level witnessed needs its evidence, the review block of a review session (POST /api/v1/runs/{run_id}/sessions with kind review)")
		}
	case vpec.OperatorBound:
		if rec.BoundedInference == nil {
			return unprocessable("proof_level", "proof_level operator_bound needs its evidence, the bounded_inference block (profile, model, operator count and trace Merkle root)")
		}
	case vpec.Mathematical:
		if rec.ZKProof != nil {
			break // a proved condition: its zk_proof is its evidence (checkProof)
		}
		if rec.StageType != stage.BoundCommittedInference || (rec.StagePart != stage.PartPre && rec.StagePart != stage.PartPost) {
			return unprocessable("proof_level", "proof_level mathematical is accepted only on the pre_conditions or post_conditions records of a %s decomposition (stage_type %q, stage_part %q); record the check at execution level instead",
				stage.BoundCommittedInference, rec.StageType, rec.StagePart)
		}
		if i := strings.LastIndexByte(rec.Check, ':'); i < 0 || i == len(rec.Check)-1 {
			return unprocessable("proof_level", "proof_level mathematical without a proof is accepted only on a decomposition's part, check <check>:<part> beside the inference record of check <check> (check %q names no part); record the check at execution level instead", rec.Check)
		}
	}
	if rec.ZKProof != nil && rec.ProofLevel != vpec.VerifiableInference && rec.ProofLevel != vpec.Mathematical {
		return unprocessable("zk_proof", "a zk_proof goes only with proof_level verifiable_inference or mathematical, not %s", rec.ProofLevel)
	}
	return nil
}

// runClaims is the close-time half of decision D6: a mathematical pre- or
// post-condition record is evidence only beside the operator_bound
// inference record of its bound_committed_inference decomposition (its
// check without :<part>, the same input: verify.Claims, the verifier's own
// rule), so a run holding such a record without it is not sealed (the
// verifier would fail the VPEC's evidence check). The client records the
// missing inference record (it may still be queued) and closes again.
// Feed it every record of the run with add (in any order, so a close can
// stream the records), then ask err.
type runClaims struct{ verify.Claims }

func (c *runClaims) add(r *vpec.Record) { c.Add(r) }

func (c *runClaims) err() error {
	bad := c.Unsupported()
	if len(bad) == 0 {
		return nil
	}
	return unprocessable("proof_level", "%d mathematical record(s) without their evidence, first: %s. A mathematical pre/post-condition <check>:<part> is evidence only beside the operator_bound %s inference record of check <check> on the same input, so the service does not seal this run; record that inference record and close again",
		len(bad), bad[0], stage.BoundCommittedInference)
}

// MaxRecordAhead is how far a record's recorded_at may be ahead of the
// service clock: verify.MaxClockSkew less one minute, the room left for a
// timestamp authority whose clock lags the service's (the verifier allows
// recorded_at up to MaxClockSkew after the VPEC's timestamp).
const MaxRecordAhead = verify.MaxClockSkew - time.Minute

// checkRecordTime refuses a record dated more than MaxRecordAhead after
// the server clock (decision D7): the VPEC sealed later would carry a
// record from the future, which the verifier rejects; and one dated more
// than verify.MaxClockSkew before its run was opened (the VPEC's opened_at:
// the verifier rejects that too).
func (s *Server) checkRecordTime(rec *vpec.Record, openedAt time.Time) error {
	t, err := vpec.ParseTime(rec.RecordedAt)
	if err != nil {
		return badRequest("recorded_at", "recorded_at %q is not an RFC 3339 UTC time", rec.RecordedAt)
	}
	now := s.cfg.Now()
	if t.After(now.Add(MaxRecordAhead)) {
		return badRequest("recorded_at", "recorded_at %s is %s ahead of the service clock (%s); at most %s ahead is accepted: check the client's clock",
			rec.RecordedAt, t.Sub(now).Round(time.Second), vpec.FormatTime(now), MaxRecordAhead)
	}
	if floor := openedAt.Add(-verify.MaxClockSkew); !openedAt.IsZero() && t.Before(floor) {
		return badRequest("recorded_at", "recorded_at %s is before the run was opened (%s); at most %s earlier is accepted: check the client's clock (a run opened while the service was unreachable gives its opened_at when it is delivered)",
			rec.RecordedAt, vpec.FormatTime(openedAt), verify.MaxClockSkew)
	}
	return nil
}

// checkRecordLimits checks what the server adds to vpec.Record.Validate:
// the names a person reads (check, manifest_id) carry no control or bidi
// character, and details stay within vpec.MaxDetailsBytes canonical bytes.
func checkRecordLimits(rec *vpec.Record, tree *canonical.Value) error {
	if err := api.CheckName("check", rec.Check, 1, api.MaxCheckBytes); err != nil {
		return limitError(err)
	}
	if err := api.CheckName("manifest_id", rec.ManifestID, 1, api.MaxManifestIDBytes); err != nil {
		return limitError(err)
	}
	// A record sits at depth 3 of a VPEC (top level, records, record),
	// which nests at most document.MaxDepth levels: a record deeper than
	// MaxRecordDepth (itself depth 1) would be sealed into a VPEC the
	// verifier refuses as a whole.
	for name, m := range tree.Members() {
		if d := 1 + depth(m); d > MaxRecordDepth {
			return badRequest(name, "%s: nests %d levels counting the record, at most %d (the VPEC that carries the record nests at most %d)", name, d, MaxRecordDepth, document.MaxDepth)
		}
	}
	if d := tree.Get("details"); d != nil {
		if n := len(d.Canonical()); n > vpec.MaxDetailsBytes {
			return badRequest("details", "details: canonical JSON must be at most %d bytes, is %d", vpec.MaxDetailsBytes, n)
		}
	}
	return nil
}

// MaxRecordDepth is the deepest nesting of arrays and objects a record
// sent to the service may have, the record's own object being depth 1:
// sealed, the record sits two levels down in the VPEC, whose limit is
// document.MaxDepth.
const MaxRecordDepth = document.MaxDepth - 2

// depth returns how many levels of arrays and objects v nests (0 for a
// scalar, 1 for an array or object holding only scalars).
func depth(v *canonical.Value) int {
	d := 0
	switch v.Kind() {
	case canonical.KindArray:
		for _, e := range v.Elements() {
			d = max(d, depth(e))
		}
	case canonical.KindObject:
		for _, m := range v.MemberNames() {
			d = max(d, depth(m))
		}
	default:
		return 0
	}
	return d + 1
}

// recordErrorField names the field of a vpec.Record.Validate problem:
// "record.check must ..." gives "check", "record.review.session_id ..."
// gives "review.session_id", and "record: a review block goes with ..."
// gives the block it is about.
func recordErrorField(msg string) string {
	if f, ok := strings.CutPrefix(msg, "record."); ok {
		if i := strings.IndexAny(f, " :"); i > 0 {
			return f[:i]
		}
		return f
	}
	if rest, ok := strings.CutPrefix(msg, "record: "); ok {
		for _, f := range []string{"review", "bounded_inference", "check_session", "zk_proof"} {
			if strings.HasPrefix(rest, "a "+f+" block") || strings.HasPrefix(rest, f+" ") {
				return f
			}
		}
	}
	return ""
}

// validateRecord runs the server's own record checks (limits, claims,
// time) in the order checkRecord calls them.
func (s *Server) validateRecord(rec *vpec.Record, tree *canonical.Value, openedAt time.Time) error {
	if err := checkRecordLimits(rec, tree); err != nil {
		return err
	}
	if err := s.checkRecordTime(rec, openedAt); err != nil {
		return err
	}
	return checkClaims(rec)
}
