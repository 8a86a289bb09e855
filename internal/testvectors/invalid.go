package testvectors

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// mutateJSON rewrites a document at the JSON level, keeping its signature.
func mutateJSON(v any, f func(m map[string]any)) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	f(m)
	return document.MarshalIndent(m)
}

func (g *gen) bad(name, desc string, fails []string, verdict string, doc []byte, profiles ...string) error {
	rel := "vpec/invalid/" + name + ".json"
	if err := writeFile(filepath.Join(g.dir, rel), doc); err != nil {
		return err
	}
	exit := 1
	switch {
	case strings.HasPrefix(verdict, "UNVERIFIED"):
		exit = 3
	case strings.HasPrefix(verdict, "UNREADABLE"):
		exit = 2
	}
	g.add(Vector{Name: name, Kind: "vpec", File: rel, Description: desc, Profiles: profiles, Fails: fails, Verdict: verdict, Exit: exit})
	return nil
}

func (g *gen) badVPEC(name, desc string, fails []string, verdict string, v *vpec.VPEC, profiles ...string) error {
	b, err := document.MarshalIndent(v)
	if err != nil {
		return err
	}
	return g.bad(name, desc, fails, verdict, b, profiles...)
}

func (g *gen) invalid() error {
	base, err := g.newVPEC("run_00000000-0000-4000-8000-0000000000ba", g.cleanRecords(), nil)
	if err != nil {
		return err
	}
	raw, err := document.MarshalIndent(base)
	if err != nil {
		return err
	}
	type jsonCase struct {
		name, desc string
		fails      []string
		verdict    string
		mutate     func(m map[string]any)
	}
	records := func(m map[string]any) []any { return m["records"].([]any) }
	jsonCases := []jsonCase{
		{"tampered-field", "workflow_id changed after signing", []string{"signature"}, "INVALID — SIGNATURE INVALID",
			func(m map[string]any) { m["workflow_id"] = "claims-intake-prod" }},
		{"tampered-record-result", "a record's check_result changed from fail to pass after signing", []string{"signature", "chain", "summary"}, "INVALID — SIGNATURE INVALID",
			func(m map[string]any) { records(m)[2].(map[string]any)["check_result"] = "pass" }},
		{"reordered-records", "records 2 and 3 swapped", []string{"schema"}, "INVALID — SCHEMA ERROR",
			func(m map[string]any) { r := records(m); r[1], r[2] = r[2], r[1] }},
		{"removed-record", "record 2 removed", []string{"signature", "chain", "merkle_root", "summary"}, "INVALID — SIGNATURE INVALID",
			func(m map[string]any) { r := records(m); m["records"] = append(r[:1:1], r[2:]...) }},
		{"unknown-key-id", "signing_key_id names a key the trust bundle does not hold", []string{"signature"}, "INVALID — UNKNOWN SIGNING KEY",
			func(m map[string]any) { m["signing_key_id"] = "0123456789abcdef" }},
		{"token-over-other-data", "timestamp_rfc3161 taken from another VPEC", []string{"timestamp"}, "INVALID — TIMESTAMP NOT OVER SIGNATURE",
			nil},
		{"unknown-field", "an extra top-level field", []string{"schema"}, "INVALID — SCHEMA ERROR",
			func(m map[string]any) { m["approved_by"] = "me" }},
		{"missing-field", "chain_intact removed", []string{"schema"}, "INVALID — SCHEMA ERROR",
			func(m map[string]any) { delete(m, "chain_intact") }},
		{"wrong-type", "chain_intact is the string \"yes\"", []string{"schema"}, "INVALID — SCHEMA ERROR",
			func(m map[string]any) { m["chain_intact"] = "yes" }},
		{"bad-enum", "a record's check_result is \"passed\"", []string{"schema"}, "INVALID — SCHEMA ERROR",
			func(m map[string]any) { records(m)[0].(map[string]any)["check_result"] = "passed" }},
		{"bad-commitment", "a commitment hash with uppercase hex", []string{"schema"}, "INVALID — SCHEMA ERROR",
			func(m map[string]any) {
				r := records(m)[0].(map[string]any)
				r["commitment_hash"] = "sha256:" + strings.ToUpper(r["commitment_hash"].(string)[7:])
			}},
		{"empty-output-commitment", "a record's optional output_commitment is \"\" instead of omitted", []string{"schema"}, "INVALID — SCHEMA ERROR",
			func(m map[string]any) { records(m)[0].(map[string]any)["output_commitment"] = "" }},
		{"empty-details", "a record's optional details is {} instead of omitted", []string{"schema"}, "INVALID — SCHEMA ERROR",
			func(m map[string]any) { records(m)[1].(map[string]any)["details"] = map[string]any{} }},
		{"empty-stage-type", "a record's optional stage_type is \"\" instead of omitted", []string{"schema"}, "INVALID — SCHEMA ERROR",
			func(m map[string]any) { records(m)[2].(map[string]any)["stage_type"] = "" }},
		{"huge-sequence", "a record sequence of 2^63-1", []string{"schema"}, "INVALID — SCHEMA ERROR",
			func(m map[string]any) {
				records(m)[3].(map[string]any)["sequence"] = json.Number("9223372036854775807")
			}},
	}
	other, err := g.newVPEC("run_00000000-0000-4000-8000-00000000007e", g.cleanRecords()[:1], nil)
	if err != nil {
		return err
	}
	jsonCases[5].mutate = func(m map[string]any) { m["timestamp_rfc3161"] = other.TimestampRFC3161 }
	for _, c := range jsonCases {
		b, err := mutateJSON(base, c.mutate)
		if err != nil {
			return err
		}
		if err := g.bad(c.name, c.desc, c.fails, c.verdict, b); err != nil {
			return err
		}
	}

	// Text-level corruption.
	text := string(raw)
	textCases := []struct {
		name, desc string
		doc        string
	}{
		{"malformed-json", "the document is cut off half way", text[:len(text)/2]},
		{"duplicate-key", "checks_passed appears twice (the second would win in a lax parser)", strings.Replace(text, `"checks_passed": 3,`, `"checks_passed": 3, "checks_passed": 4,`, 1)},
		{"huge-number", "total_checks_run is 1e400", strings.Replace(text, `"total_checks_run": 4,`, `"total_checks_run": 1e400,`, 1)},
		{"trailing-data", "a second JSON value after the document", text + "{}\n"},
		{"not-an-object", "a JSON array instead of an object", "[1, 2, 3]\n"},
	}
	for _, c := range textCases {
		if c.doc == text {
			return fmt.Errorf("text case %s did not change the document", c.name)
		}
		if err := g.bad(c.name, c.desc, []string{"schema"}, "INVALID — SCHEMA ERROR", []byte(c.doc)); err != nil {
			return err
		}
	}

	// Input that is not a JSON document at all: exit 2, in words.
	for _, c := range []struct{ name, desc, doc string }{
		{"empty", "an empty file", ""},
		{"binary", "binary data (a gzip header and NUL bytes)", "\x1f\x8b\x08\x00\x00\x00\x00\x00"},
	} {
		if err := g.bad(c.name, c.desc, []string{"schema"}, "UNREADABLE — NOT JSON", []byte(c.doc)); err != nil {
			return err
		}
	}

	// Re-signed by the genuine key: the signature passes, so the
	// independent checks must catch what is wrong.
	type signedCase struct {
		name, desc string
		fails      []string
		verdict    string
		mutate     func(v *vpec.VPEC) error
		profiles   []string
	}
	signedCases := []signedCase{
		{"broken-chain-resigned", "a record's check_result changed and the VPEC re-signed, chain hashes left as they were", []string{"chain", "summary"}, "INVALID — CHAIN BROKEN",
			func(v *vpec.VPEC) error { v.Records[2].CheckResult = vpec.ResultPass; return nil }, nil},
		{"removed-record-resigned", "record 2 removed and the VPEC re-signed", []string{"chain", "merkle_root", "summary"}, "INVALID — CHAIN BROKEN",
			func(v *vpec.VPEC) error { v.Records = append(v.Records[:1], v.Records[2:]...); return nil }, nil},
		{"merkle-root-resigned", "merkle_root replaced and the VPEC re-signed", []string{"merkle_root"}, "INVALID — MERKLE ROOT MISMATCH",
			func(v *vpec.VPEC) error { v.MerkleRoot = commitment.String([]byte("other")); return nil }, nil},
		{"counts-resigned", "checks_failed set to 0 and is_clean kept, re-signed", []string{"summary"}, "INVALID — SUMMARY MISMATCH",
			func(v *vpec.VPEC) error { v.ChecksFailed, v.ChecksPassed = 0, 4; return nil }, nil},
		{"floor-resigned", "proof_level_floor raised to mathematical, re-signed", []string{"summary"}, "INVALID — SUMMARY MISMATCH",
			func(v *vpec.VPEC) error { v.ProofLevelFloor = vpec.Mathematical; return nil }, nil},
		{"environment-resigned", "environment says sandbox while api_key_id is a pk_live_ key, re-signed", []string{"summary"}, "INVALID — SUMMARY MISMATCH",
			func(v *vpec.VPEC) error { v.Environment = vpec.Sandbox; return nil }, nil},
		{"hidden-gap-resigned", "a gap removed while is_clean stays false... then is_clean set true with a chain break", []string{"chain", "summary"}, "INVALID — CHAIN BROKEN",
			func(v *vpec.VPEC) error {
				v.Records = append(v.Records[:2], v.Records[3:]...)
				v.MerkleRoot = vpec.MerkleRoot(v.Records)
				v.TotalChecksRun, v.ChecksFailed = 3, 0
				v.ProofLevelBreakdown = map[string]int64{"execution": 3}
				v.ProvableSurface = 0
				v.ProvableSurfaceBreakdown = map[string]float64{"execution": 1}
				return nil
			}, nil},
	}
	for _, c := range signedCases {
		v := clone(base)
		if err := c.mutate(v); err != nil {
			return err
		}
		if err := g.resign(v); err != nil {
			return err
		}
		if err := g.badVPEC(c.name, c.desc, c.fails, c.verdict, v, c.profiles...); err != nil {
			return err
		}
	}

	zk := clone(base)
	zk.Records[3].ProofLevel = vpec.VerifiableInference
	if _, err := issue.Chain(vpec.Genesis(zk.RunID), zk.Records); err != nil {
		return err
	}
	if err := g.seal(zk, g.service, g.tsa); err != nil {
		return err
	}
	if err := g.badVPEC("zk-claim", "a consistent, signed VPEC whose record claims verifiable_inference without a zk_proof block", []string{"zk_proofs"}, "INVALID — ZK PROOF UNVERIFIABLE", zk); err != nil {
		return err
	}

	nullGaps := clone(base)
	nullGaps.Gaps = nil // marshals as "gaps": null
	if err := g.resign(nullGaps); err != nil {
		return err
	}
	if err := g.badVPEC("null-gaps-resigned", "gaps is null instead of an array, re-signed", []string{"schema"}, "INVALID — SCHEMA ERROR", nullGaps); err != nil {
		return err
	}
	badHash := clone(base)
	badHash.Records[1].ChainHash = "not-a-hash"
	if err := g.resign(badHash); err != nil {
		return err
	}
	if err := g.badVPEC("malformed-chain-hash-resigned", "record 2's chain_hash is not a hash, re-signed", []string{"schema"}, "INVALID — SCHEMA ERROR", badHash); err != nil {
		return err
	}
	localTime := clone(base)
	localTime.IssuedAt = g.clk.now().In(time.FixedZone("CET", 3600)).Format(time.RFC3339)
	if err := g.resign(localTime); err != nil {
		return err
	}
	if err := g.badVPEC("non-utc-time-resigned", "issued_at carries a +01:00 offset instead of UTC, re-signed", []string{"schema"}, "INVALID — SCHEMA ERROR", localTime); err != nil {
		return err
	}

	// Claims and evidence, time rules, declared gaps (issue 10).
	noEvidence := clone(base)
	noEvidence.Records[3].ProofLevel = vpec.Mathematical
	if _, err := issue.Chain(vpec.Genesis(noEvidence.RunID), noEvidence.Records); err != nil {
		return err
	}
	if err := g.seal(noEvidence, g.service, g.tsa); err != nil {
		return err
	}
	if err := g.badVPEC("mathematical-without-evidence", "a record claims mathematical with no evidence (not a pre/post-condition of a bound_committed_inference stage), consistently signed", []string{"evidence"}, "INVALID — CLAIM WITHOUT EVIDENCE", noEvidence); err != nil {
		return err
	}
	future := clone(base)
	future.Records[3].RecordedAt = vpec.FormatTime(g.clk.now().Add(30 * 24 * time.Hour))
	if _, err := issue.Chain(vpec.Genesis(future.RunID), future.Records); err != nil {
		return err
	}
	if err := g.seal(future, g.service, g.tsa); err != nil {
		return err
	}
	if err := g.badVPEC("record-after-timestamp", "a record's recorded_at is 30 days after the VPEC's own timestamp, consistently signed", []string{"time"}, "INVALID — TIME VIOLATION", future); err != nil {
		return err
	}
	old := clone(base)
	old.Gaps = []vpec.Gap{{GapID: "gap_00000000-0000-4000-8000-000000001970", GapType: gap.SystemUnavailable, Severity: gap.High, Timestamp: "1970-01-01T00:00:00.000Z"}}
	if err := g.seal(old, g.service, g.tsa); err != nil {
		return err
	}
	if err := g.badVPEC("gap-dated-1970", "a gap dated 1970, long before the run's first record, consistently signed", []string{"time"}, "INVALID — TIME VIOLATION", old); err != nil {
		return err
	}
	short3, err := g.holed("run_00000000-0000-4000-8000-00000000e5e1", func(gs []vpec.Gap) []vpec.Gap {
		end := *gs[0].SequenceEnd - 1
		gs[0].SequenceEnd = &end
		return gs
	})
	if err != nil {
		return err
	}
	if err := g.badVPEC("hole-range-too-short", "sequences 3-1502 missing, but the sequence_missing gap declares 3-1501", []string{"chain", "gaps"}, "INVALID — CHAIN BROKEN", short3); err != nil {
		return err
	}
	asBreak, err := g.holed("run_00000000-0000-4000-8000-00000000e5e2", func(gs []vpec.Gap) []vpec.Gap {
		seq := int64(1503)
		return []vpec.Gap{{GapID: gs[0].GapID, GapType: gap.ChainBreak, Severity: gap.Critical, Sequence: &seq, Timestamp: gs[0].Timestamp}}
	})
	if err != nil {
		return err
	}
	if err := g.badVPEC("hole-declared-as-chain-break", "sequences 3-1502 missing, declared only by a chain_break gap at 1503 (a chain_break gap does not declare a hole)", []string{"chain", "gaps"}, "INVALID — CHAIN BROKEN", asBreak); err != nil {
		return err
	}
	undeclaredEmpty := &vpec.VPEC{VPECID: "vpec_00000000-0000-4000-8000-000000000e71", RunID: "run_00000000-0000-4000-8000-000000000e71", WorkflowID: "claims-intake", OrgID: "org_acme-health",
		Environment: vpec.Production, APIKeyID: "pk_live_9c1e4b7a2f30", Records: []vpec.Record{}, Gaps: []vpec.Gap{}, IssuedAt: g.stamp()}
	if err := g.seal(undeclaredEmpty, g.service, g.tsa); err != nil {
		return err
	}
	if err := g.badVPEC("empty-run-undeclared", "no records and no empty_run gap: it would pass --require-clean", []string{"gaps"}, "INVALID — GAP MISMATCH", undeclaredEmpty); err != nil {
		return err
	}
	late, err := g.lateSession("run_00000000-0000-4000-8000-00000000e5e3")
	if err != nil {
		return err
	}
	if err := g.badVPEC("session-after-timestamp", "a check session's close token is dated an hour after the VPEC's own timestamp, consistently signed", []string{"time"}, "INVALID — TIME VIOLATION", late); err != nil {
		return err
	}
	ctrl := clone(base)
	ctrl.Records[0].Check = "pii\x1b[2J\u202edetection"
	if _, err := issue.Chain(vpec.Genesis(ctrl.RunID), ctrl.Records); err != nil {
		return err
	}
	if err := g.seal(ctrl, g.service, g.tsa); err != nil {
		return err
	}
	if err := g.badVPEC("control-in-check", "a check name holding ESC[2J and U+202E (a terminal escape and a bidi override), consistently signed", []string{"schema"}, "INVALID — SCHEMA ERROR", ctrl); err != nil {
		return err
	}

	// Properly built documents that fail on trust.
	wrongKey := clone(base)
	if err := issue.Seal(context.Background(), wrongKey, g.other, g.tsa); err != nil {
		return err
	}
	if err := g.badVPEC("wrong-key", "signed by a key outside the trust bundle", []string{"signature"}, "INVALID — UNKNOWN SIGNING KEY", wrongKey); err != nil {
		return err
	}
	forged := clone(base)
	if err := issue.Seal(context.Background(), forged, g.other, g.tsa); err != nil {
		return err
	}
	forged.SigningKeyID = g.service.KeyID()
	if err := g.badVPEC("forged-key-id", "signed by another key but naming the trusted key id", []string{"signature"}, "INVALID — SIGNATURE INVALID", forged); err != nil {
		return err
	}
	untrusted := clone(base)
	if err := issue.Seal(context.Background(), untrusted, g.service, g.otherTSA); err != nil {
		return err
	}
	if err := g.badVPEC("untrusted-tsa", "timestamped by a TSA whose root is not in the trust bundle", []string{"timestamp"}, "INVALID — UNTRUSTED TIMESTAMP AUTHORITY", untrusted); err != nil {
		return err
	}
	stale := clone(base)
	stale.IssuedAt = vpec.FormatTime(g.clk.now().Add(-48 * time.Hour))
	if err := g.resign(stale); err != nil {
		return err
	}
	if err := g.badVPEC("backdated-resigned", "issued_at two days before the RFC 3161 time", []string{"timestamp"}, "INVALID — TIMESTAMP TIME MISMATCH", stale); err != nil {
		return err
	}

	// Bounded Inference.
	a100, err := g.bounded("run_00000000-0000-4000-8000-0000000000a1", "a100")
	if err != nil {
		return err
	}
	if err := g.badVPEC("gpu-class-not-calibrated", "gpu_class a100 is not among the profile's calibrated classes (cpu, a10g)", []string{"profile"}, "INVALID — PROFILE MISMATCH (gpu_class a100)", a100, ProfileFile); err != nil {
		return err
	}
	bi, err := g.bounded("run_00000000-0000-4000-8000-0000000000b2", "cpu")
	if err != nil {
		return err
	}
	if err := g.badVPEC("tampered-profile", "valid VPEC checked against a profile whose thresholds were changed after signing", []string{"profile"}, "INVALID — PROFILE INVALID", bi, "profile/invalid-tampered-threshold.json"); err != nil {
		return err
	}
	tamperedBI, err := mutateJSON(bi, func(m map[string]any) { m["workflow_id"] = "other" })
	if err != nil {
		return err
	}
	if err := g.bad("tampered-without-profile", "workflow_id changed and no profile given: a real failure outranks missing trust material", []string{"signature", "profile"}, "INVALID — SIGNATURE INVALID", tamperedBI); err != nil {
		return err
	}
	if err := g.badVPEC("profile-unavailable", "valid Bounded Inference VPEC verified without its profile", []string{"profile"}, "UNVERIFIED — PROFILE NOT AVAILABLE", bi); err != nil {
		return err
	}
	opc := clone(bi)
	opc.Records[3].BoundedInference.OperatorCount = 412
	if _, err := issue.Chain(vpec.Genesis(opc.RunID), opc.Records); err != nil {
		return err
	}
	if err := g.seal(opc, g.service, g.tsa); err != nil {
		return err
	}
	if err := g.badVPEC("operator-count-mismatch", "operator_count 412 claimed for a production-mode trace, the profile gives 9", []string{"profile"}, "INVALID — PROFILE MISMATCH", opc, ProfileFile); err != nil {
		return err
	}

	// Witnessed reviews.
	short, err := g.witnessed("run_00000000-0000-4000-8000-00000000500e", 3*time.Second, 10)
	if err != nil {
		return err
	}
	if err := g.badVPEC("review-too-short", "review lasted 3 s, minimum 10 s", []string{"reviews"}, "INVALID — REVIEW INVALID", short); err != nil {
		return err
	}
	forgedReview, err := g.witnessed("run_00000000-0000-4000-8000-00000000f0e1", 30*time.Second, 10)
	if err != nil {
		return err
	}
	forgedReview.Records[2].Review.ReviewerSignature = signing.FormatSignature(mustSig(g.other.Sign([]byte("something else"))))
	if _, err := issue.Chain(vpec.Genesis(forgedReview.RunID), forgedReview.Records); err != nil {
		return err
	}
	if err := g.seal(forgedReview, g.service, g.tsa); err != nil {
		return err
	}
	if err := g.badVPEC("review-bad-signature", "reviewer signature is not the reviewer's signature of the review statement", []string{"reviews"}, "INVALID — REVIEW INVALID", forgedReview); err != nil {
		return err
	}
	if err := g.newClasses(); err != nil {
		return err
	}
	return g.badVPEC("unsigned-offline", "the unsigned local copy a client writes when it closes a run offline (schema "+vpec.OfflineSchema+")",
		[]string{"schema"}, verify.CodeUnsignedOffline+": fetch the signed one with "+verify.FetchHint(g.clean.RunID), UnsignedOffline(g.clean))
}
