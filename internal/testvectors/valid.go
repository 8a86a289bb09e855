package testvectors

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func (g *gen) valid() error {
	clean, err := g.newVPEC("run_00000000-0000-4000-8000-00000000c1ea", g.cleanRecords(), nil)
	if err != nil {
		return err
	}
	g.clean = clean
	if err := g.write("vpec/valid/clean.json", clean); err != nil {
		return err
	}
	g.add(Vector{Name: "clean", Kind: "vpec", File: "vpec/valid/clean.json", Description: "four checks, chain intact, no gaps", Valid: true, Exit: 0})

	// Gaps: record 3 never reached the service, and a model had no profile.
	recs := []vpec.Record{
		g.record(1, "pii_detection", "input one", vpec.ResultPass, vpec.Execution),
		g.record(2, "toxicity", "input one", vpec.ResultPass, vpec.Execution),
		g.record(3, "lost_check", "input lost", vpec.ResultPass, vpec.Execution),
		g.record(4, "prompt_injection", "input one", vpec.ResultPass, vpec.Execution),
	}
	recs[3].StageType = stage.OpenSourceML
	runID := "run_00000000-0000-4000-8000-0000000009a9"
	if _, err := issue.Chain(vpec.Genesis(runID), recs); err != nil {
		return err
	}
	recs = append(recs[:2], recs[3])
	seq3, seq4 := int64(3), int64(4)
	check := "prompt_injection"
	gaps := []vpec.Gap{
		{GapID: "gap_00000000-0000-4000-8000-000000000001", GapType: gap.SequenceMissing, Severity: gap.High, Sequence: &seq3, SequenceEnd: &seq3, Timestamp: g.stamp()},
		{GapID: "gap_00000000-0000-4000-8000-000000000002", GapType: gap.ModelProfileMissing, Severity: gap.Medium, Check: &check, Sequence: &seq4, Timestamp: g.stamp()},
	}
	gv := &vpec.VPEC{VPECID: "vpec_00000000-0000-4000-8000-0000000009a9", RunID: runID, WorkflowID: "claims-intake", OrgID: "org_acme-health",
		Environment: vpec.Sandbox, APIKeyID: "pk_sb_51d0e2aa7c44", Records: recs, Gaps: gaps}
	g.clk.advance(time.Second)
	gv.IssuedAt = g.stamp()
	if err := g.seal(gv, g.service, g.tsa); err != nil {
		return err
	}
	if err := g.write("vpec/valid/with-gaps.json", gv); err != nil {
		return err
	}
	g.add(Vector{Name: "with-gaps", Kind: "vpec", File: "vpec/valid/with-gaps.json", Description: "sequence 3 missing (declared sequence_missing gap) and a model_profile_missing gap: authentic but not clean", Valid: true, Verdict: "VALID", Exit: 0})

	wv, err := g.witnessed("run_00000000-0000-4000-8000-00000000a17e", 30*time.Second, 10)
	if err != nil {
		return err
	}
	if err := g.write("vpec/valid/witnessed.json", wv); err != nil {
		return err
	}
	g.add(Vector{Name: "witnessed", Kind: "vpec", File: "vpec/valid/witnessed.json", Description: "a check run in a timestamped check session, and a human review signed with Ed25519, open and close timestamps 30 s apart (minimum 10 s)", Valid: true, Exit: 0})

	// null in details, at every depth, is a value like any other (D3).
	nullRecs := g.cleanRecords()[:2]
	nullRecs[0].Details = map[string]any{"x": nil, "labels": []any{nil, "PII", map[string]any{"score": nil, "spans": []any{[]any{nil}}}}}
	nv, err := g.newVPEC("run_00000000-0000-4000-8000-0000000000d0", nullRecs, nil)
	if err != nil {
		return err
	}
	if err := g.write("vpec/valid/details-null.json", nv); err != nil {
		return err
	}
	g.add(Vector{Name: "details-null", Kind: "vpec", File: "vpec/valid/details-null.json", Description: "a record's details holding null at every depth: a JSON value, kept byte for byte", Valid: true, Exit: 0})

	// A run closed without records: its empty_run gap makes it not clean.
	ev := &vpec.VPEC{VPECID: "vpec_00000000-0000-4000-8000-000000000e70", RunID: "run_00000000-0000-4000-8000-000000000e70", WorkflowID: "claims-intake", OrgID: "org_acme-health",
		Environment: vpec.Production, APIKeyID: "pk_live_9c1e4b7a2f30", Records: []vpec.Record{}}
	g.clk.advance(time.Second)
	ev.IssuedAt = g.stamp()
	ev.Gaps = []vpec.Gap{{GapID: "gap_00000000-0000-4000-8000-000000000e70", GapType: gap.EmptyRun, Severity: gap.High, Timestamp: ev.IssuedAt}}
	if err := g.seal(ev, g.service, g.tsa); err != nil {
		return err
	}
	if err := g.write("vpec/valid/empty-run.json", ev); err != nil {
		return err
	}
	g.add(Vector{Name: "empty-run", Kind: "vpec", File: "vpec/valid/empty-run.json", Description: "a run closed without records, declared by its empty_run gap: authentic but not clean (--require-clean fails)", Valid: true, Verdict: "VALID", Exit: 0})

	// A hole of 1500 sequence numbers, declared by one sequence_missing range.
	hv, err := g.holed("run_00000000-0000-4000-8000-0000000001e5", nil)
	if err != nil {
		return err
	}
	if err := g.write("vpec/valid/large-hole.json", hv); err != nil {
		return err
	}
	g.add(Vector{Name: "large-hole", Kind: "vpec", File: "vpec/valid/large-hole.json", Description: "sequences 3-1502 missing, declared by one sequence_missing gap with sequence_end: authentic but not clean", Valid: true, Verdict: "VALID", Exit: 0})

	bv, err := g.bounded("run_00000000-0000-4000-8000-0000000000b1", "cpu")
	if err != nil {
		return err
	}
	if err := g.write("vpec/valid/bounded-inference.json", bv); err != nil {
		return err
	}
	g.add(Vector{Name: "bounded-inference", Kind: "vpec", File: "vpec/valid/bounded-inference.json", Profiles: []string{ProfileFile}, Description: "a bound_committed_inference check decomposed into pre-conditions, traced inference and post-conditions (named <check>:<part> and <check>, as pkg/client/bounded records them)", Valid: true, Exit: 0})

	// The longest hole there can be: sequences 3 to 2^53-2, one gap.
	huge := g.cleanRecords()[:3]
	huge[2].Sequence, huge[2].RecordID = 1<<53-1, "rec_00000000-0000-4000-8000-009007199254"
	hv2, err := g.issued("run_00000000-0000-4000-8000-00000000e5e4", huge)
	if err != nil {
		return err
	}
	if err := g.write("vpec/valid/huge-hole.json", hv2); err != nil {
		return err
	}
	g.add(Vector{Name: "huge-hole", Kind: "vpec", File: "vpec/valid/huge-hole.json", Description: "records 1, 2 and 2^53-1 (the largest sequence): sequences 3 to 2^53-2 missing, declared by one sequence_missing gap however long: authentic but not clean", Valid: true, Verdict: "VALID", Exit: 0})

	pv, err := g.boundedWith("run_00000000-0000-4000-8000-0000000000b3", "cpu", publishedBounded)
	if err != nil {
		return err
	}
	if err := g.write("vpec/valid/bounded-published-profile.json", pv); err != nil {
		return err
	}
	g.add(Vector{Name: "bounded-published-profile", Kind: "vpec", File: "vpec/valid/bounded-published-profile.json", Profiles: []string{PublishedProfileFile},
		Description: "a Bounded Inference check in residual mode against the profile svc calibrate run and svc registry publish make (every optional member: drift_definition, measured, coverage, hub_model_id, signed_by, a residual operator count)", Valid: true, Exit: 0})
	return nil
}

// holed seals records 1, 2, 1503 and 1504 (3-1502 missing) with the gaps
// issue.Gaps declares, edited by edit when not nil.
func (g *gen) holed(runID string, edit func([]vpec.Gap) []vpec.Gap) (*vpec.VPEC, error) {
	recs := g.cleanRecords()
	recs[2].Sequence, recs[3].Sequence = 1503, 1504
	recs[2].RecordID, recs[3].RecordID = "rec_00000000-0000-4000-8000-000000001503", "rec_00000000-0000-4000-8000-000000001504"
	return g.issuedEdited(runID, recs, edit)
}

// lateSession seals one record whose check session closed an hour after
// the VPEC's timestamp (the TSA's clock moved forward, then back).
func (g *gen) lateSession(runID string) (*vpec.VPEC, error) {
	recs := g.cleanRecords()[:1]
	id := "chk_00000000-0000-4000-8000-00000000e5e3"
	open, err := g.tsa.Timestamp(context.Background(), issue.CheckOpenImprint(id))
	if err != nil {
		return nil, err
	}
	g.clk.advance(time.Hour)
	cl, err := g.tsa.Timestamp(context.Background(), issue.CheckCloseImprint(id, recs[0].CommitmentHash))
	g.clk.advance(-time.Hour)
	if err != nil {
		return nil, err
	}
	recs[0].CheckSession = &vpec.CheckSession{SessionID: id,
		CheckOpenTST: base64.StdEncoding.EncodeToString(open), CheckCloseTST: base64.StdEncoding.EncodeToString(cl)}
	return g.newVPEC(runID, recs, nil)
}

func (g *gen) witnessed(runID string, lasted time.Duration, minSeconds int64) (*vpec.VPEC, error) {
	recs := g.cleanRecords()[:2]
	// The first check ran inside a check session.
	checkSession := "chk_00000000-0000-4000-8000-0000000c4ec1"
	cOpen, err := g.tsa.Timestamp(context.Background(), issue.CheckOpenImprint(checkSession))
	if err != nil {
		return nil, err
	}
	cClose, err := g.tsa.Timestamp(context.Background(), issue.CheckCloseImprint(checkSession, recs[0].CommitmentHash))
	if err != nil {
		return nil, err
	}
	recs[0].CheckSession = &vpec.CheckSession{SessionID: checkSession,
		CheckOpenTST: base64.StdEncoding.EncodeToString(cOpen), CheckCloseTST: base64.StdEncoding.EncodeToString(cClose)}
	session := "chk_00000000-0000-4000-8000-00000000e71e"
	openTok, err := g.tsa.Timestamp(context.Background(), issue.CheckOpenImprint(session))
	if err != nil {
		return nil, err
	}
	g.clk.advance(lasted)
	r := g.record(3, "human_review", "claim #4411 summary shown to reviewer", vpec.ResultPass, vpec.Witnessed)
	pubDER, _ := marshalSPKI(g.reviewer.PublicKey())
	r.Review = &vpec.Review{
		SessionID:          session,
		ReviewerKeyID:      g.reviewer.KeyID(),
		ReviewerPublicKey:  base64.StdEncoding.EncodeToString(pubDER),
		DisplayContentHash: commitment.String([]byte("claim #4411 summary shown to reviewer")),
		RationaleHash:      commitment.String([]byte("documents match the policy; approve")),
		MinDurationSeconds: minSeconds,
	}
	stmt, err := vpec.ReviewStatement(runID, &r)
	if err != nil {
		return nil, err
	}
	r.Review.ReviewerSignature = signing.FormatSignature(mustSig(g.reviewer.Sign(stmt)))
	closeTok, err := g.tsa.Timestamp(context.Background(), issue.CheckCloseImprint(session, r.CommitmentHash))
	if err != nil {
		return nil, err
	}
	r.Review.CheckOpenTST = base64.StdEncoding.EncodeToString(openTok)
	r.Review.CheckCloseTST = base64.StdEncoding.EncodeToString(closeTok)
	return g.newVPEC(runID, append(recs, r), nil)
}

func marshalSPKI(pub ed25519.PublicKey) ([]byte, error) {
	p, err := signing.MarshalPublicKeyPEM(pub)
	if err != nil {
		return nil, err
	}
	// Strip the PEM armour: the record carries base64 of the DER.
	lines := strings.Split(strings.TrimSpace(string(p)), "\n")
	return base64.StdEncoding.DecodeString(strings.Join(lines[1:len(lines)-1], ""))
}

// boundedSpec is what a Bounded Inference record states about its
// profile, model and trace.
type boundedSpec struct {
	profileID, modelHash, mode string
	operators                  int64
}

// testBounded is the test profile's model traced in production mode.
var testBounded = boundedSpec{ProfileID, ModelHash, profile.TraceProduction, 9}

func (g *gen) bounded(runID, gpu string) (*vpec.VPEC, error) {
	return g.boundedWith(runID, gpu, testBounded)
}

func (g *gen) boundedWith(runID, gpu string, b boundedSpec) (*vpec.VPEC, error) {
	recs, err := g.boundedRecords(gpu, b)
	if err != nil {
		return nil, err
	}
	return g.newVPEC(runID, recs, nil)
}

// issued seals records as the service issues them: chained from genesis,
// with the gaps issue.Gaps finds (ids numbered from 1).
func (g *gen) issued(runID string, recs []vpec.Record) (*vpec.VPEC, error) {
	return g.issuedEdited(runID, recs, nil)
}

// issuedEdited is issued with the gaps edited by edit when not nil.
func (g *gen) issuedEdited(runID string, recs []vpec.Record, edit func([]vpec.Gap) []vpec.Gap) (*vpec.VPEC, error) {
	v := &vpec.VPEC{VPECID: "vpec_" + strings.TrimPrefix(runID, "run_"), RunID: runID, WorkflowID: "claims-intake", OrgID: "org_acme-health",
		Environment: vpec.Production, APIKeyID: "pk_live_9c1e4b7a2f30", Records: recs}
	if _, err := issue.Chain(vpec.Genesis(runID), v.Records); err != nil {
		return nil, err
	}
	jcs, err := issue.RecordsJCS(v.Records)
	if err != nil {
		return nil, err
	}
	g.clk.advance(time.Second)
	v.IssuedAt = g.stamp()
	v.Gaps = issue.Gaps(runID, v.Records, jcs, v.IssuedAt)
	for i := range v.Gaps {
		v.Gaps[i].GapID = fmt.Sprintf("gap_00000000-0000-4000-8000-%012d", i+1)
	}
	if edit != nil {
		v.Gaps = edit(v.Gaps)
	}
	return v, g.seal(v, g.service, g.tsa)
}

// boundedRecords are the six records of a bound_committed_inference check
// named as pkg/client/bounded names them (docs/BOUNDED.md, Recording): the
// inference record under the check's name, each pre- and post-condition
// under <check>:<part>, all over the same input.
func (g *gen) boundedRecords(gpu string, b boundedSpec) ([]vpec.Record, error) {
	input := "My SSN is 078-05-1120, call me"
	parts := []struct {
		check string
		part  string
		level vpec.ProofLevel
	}{
		{"pii_detector:tokenization", "pre_conditions", vpec.Mathematical},
		{"pii_detector:input_schema_validation", "pre_conditions", vpec.Mathematical},
		{"pii_detector:truncation_check", "pre_conditions", vpec.Mathematical},
		{"pii_detector", "inference", vpec.OperatorBound},
		{"pii_detector:threshold_check", "post_conditions", vpec.Mathematical},
		{"pii_detector:output_schema_validation", "post_conditions", vpec.Mathematical},
	}
	var recs []vpec.Record
	for i, p := range parts {
		r := g.record(int64(i+1), p.check, input, vpec.ResultPass, p.level)
		r.StageType, r.StagePart = stage.BoundCommittedInference, p.part
		if p.level == vpec.OperatorBound {
			r.OutputCommitment = commitment.String([]byte(`{"label":"PII","score":0.9731}`))
			r.BoundedInference = &vpec.BoundedInference{
				ProfileID: b.profileID, GPUClass: gpu, ONNXModelHash: b.modelHash, TraceMode: b.mode,
				OperatorCount: b.operators, MerkleRoot: commitment.String([]byte("operator trace of " + input)),
			}
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// --- invalid corpus -------------------------------------------------------------
