package server_test

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
)

// compact returns the canonical form of JSON text, or the text itself if it
// does not parse.
func compact(b []byte) string {
	c, err := canonical.Transform(b)
	if err != nil {
		return string(b)
	}
	return string(c)
}

// chainRaw gives the wire object m its chain hash from prev (genesis when
// nil) and returns it as canonical JSON.
func chainRaw(t *testing.T, runID string, prev *[32]byte, m map[string]any) []byte {
	t.Helper()
	delete(m, "chain_hash")
	jcs, err := canonical.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	p := vpec.Genesis(runID)
	if prev != nil {
		p = *prev
	}
	m["chain_hash"] = commitment.OfSHA256(vpec.NextChainHash(p, jcs)).String()
	out, err := canonical.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// gen writes random record JSON text: members in random order with random
// whitespace, strings with random escaping and odd unicode, numbers in
// several forms, optional members absent, empty or set, nulls in details at
// every depth, every check result and proof level.
type gen struct {
	rng *rand.Rand
	now time.Time
	// opened is the runs' opened_at: records before it, less the skew,
	// are refused.
	opened time.Time
	tags   []string // what the current record holds, for the failure summary
	// profileID and model are a published profile and a model it covers
	// (on cpu, 100 operators in full mode), for operator_bound records.
	profileID, model string
}

func (g *gen) p(prob float64) bool { return g.rng.Float64() < prob }

func (g *gen) tag(format string, a ...any) { g.tags = append(g.tags, fmt.Sprintf(format, a...)) }

// oddRunes are characters a careless encoder or decoder gets wrong.
var oddRunes = []rune{'é', 'ß', '検', '🎉', '\u0301', '\u200b', '\u200d', '\u2028', '\u2029', '\ufeff', '\ufffd', 'Ω', '"', '\\', '/', '<', '&', ' '}

// controlRunes are refused in names a person reads (decision D9).
var controlRunes = []rune{0x00, 0x07, 0x1b, 0x7f, 0x85, 0x9b, 0x061c, 0x200e, 0x202e, 0x2066}

// text returns a random string: mostly letters, sometimes odd unicode,
// with controls only when controls is true.
func (g *gen) text(maxLen int, controls bool) string {
	n := 1 + g.rng.IntN(maxLen)
	var b strings.Builder
	for range n {
		switch {
		case controls && g.p(0.01):
			b.WriteRune(controlRunes[g.rng.IntN(len(controlRunes))])
		case g.p(0.2):
			b.WriteRune(oddRunes[g.rng.IntN(len(oddRunes))])
		default:
			b.WriteByte("abcdefghijklmnopqrstuvwxyz0123456789_-:."[g.rng.IntN(40)])
		}
	}
	return b.String()
}

// str encodes s as a JSON string, escaping at random: \uXXXX (with
// surrogate pairs), \/ and raw characters are all valid JSON.
func (g *gen) str(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == '/' && g.p(0.5):
			b.WriteString(`\/`)
		case r > 0x7f && g.p(0.3):
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04X\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// number returns a JSON number in one of several valid forms.
func (g *gen) number() string {
	switch g.rng.IntN(8) {
	case 0:
		return strconv.FormatInt(g.rng.Int64N(1<<53)-1<<52, 10)
	case 1:
		return "0"
	case 2:
		return "-0"
	case 3:
		return strconv.FormatFloat(g.rng.NormFloat64()*1e3, 'g', -1, 64)
	case 4:
		return strconv.FormatFloat(g.rng.ExpFloat64()*1e-7, 'e', -1, 64)
	case 5:
		return "1.0"
	case 6:
		return "25E-1"
	default:
		return strconv.Itoa(g.rng.IntN(100))
	}
}

func (g *gen) ws() string {
	if g.p(0.15) {
		return []string{" ", "\n", "\t", "\r\n  "}[g.rng.IntN(4)]
	}
	return ""
}

// value returns a random JSON value for details, nulls included, nested
// up to depth.
func (g *gen) value(depth int) string {
	k := g.rng.IntN(7)
	if depth <= 0 && k >= 5 {
		k = g.rng.IntN(5)
	}
	switch k {
	case 0:
		g.tag("details null")
		return "null"
	case 1:
		return []string{"true", "false"}[g.rng.IntN(2)]
	case 2:
		return g.number()
	case 3, 4:
		return g.str(g.text(12, true))
	case 5:
		n := g.rng.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = g.ws() + g.value(depth-1) + g.ws()
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		return g.object(depth-1, 0)
	}
}

// object returns a random JSON object of at least minMembers members
// (fewer when a random key repeats) whose values nest up to depth.
func (g *gen) object(depth, minMembers int) string {
	n := minMembers + g.rng.IntN(4)
	seen := map[string]bool{}
	var parts []string
	for range n {
		k := g.text(8, false)
		if seen[k] {
			continue
		}
		seen[k] = true
		parts = append(parts, g.ws()+g.str(k)+g.ws()+":"+g.ws()+g.value(depth))
	}
	if len(parts) == 0 {
		g.tag("empty object")
	}
	return "{" + strings.Join(parts, ",") + "}"
}

type member struct{ key, val string }

// optional sets an optional member: absent, empty, or a valid value.
func (g *gen) optional(ms []member, key string, valid func() string) []member {
	switch r := g.rng.Float64(); {
	case r < 0.5:
		return ms
	case r < 0.58:
		g.tag("%s empty", key)
		return append(ms, member{key, `""`})
	default:
		v := valid()
		g.tag("%s %s", key, v)
		return append(ms, member{key, v})
	}
}

// record returns the members of a random record with the given sequence.
func (g *gen) record(seq int64) []member {
	g.tags = g.tags[:0]
	hash := func() string { return commitment.String([]byte(g.text(16, false))) }
	id := "rec_" + strings.TrimPrefix(names.NewID(""), "_")
	if g.p(0.03) {
		id = "rec_" + g.text(6, true)
		g.tag("odd record_id")
	}
	check := g.text(20, true)
	if g.p(0.02) {
		check = strings.Repeat("c", 257)
		g.tag("long check")
	}
	manifest := "sha256:" + strings.Repeat("ab", 32)
	if g.p(0.3) {
		manifest = g.text(24, true)
	}
	results := vpec.CheckResults()
	result := results[g.rng.IntN(len(results))]
	if g.p(0.02) {
		result = "maybe"
	}
	level := []vpec.ProofLevel{vpec.Execution, vpec.Execution, vpec.Attestation, vpec.Mathematical, vpec.Mathematical, vpec.VerifiableInference, vpec.Witnessed, vpec.OperatorBound}[g.rng.IntN(8)]
	visibilities := vpec.Visibilities()
	vis := visibilities[g.rng.IntN(len(visibilities))]
	recorded := g.now.Add(-time.Duration(g.rng.Int64N(int64(48 * time.Hour))))
	stamp := vpec.FormatTime(recorded)
	switch g.rng.IntN(20) {
	case 0:
		stamp = recorded.UTC().Format(time.RFC3339) // valid, without fraction
	case 1:
		stamp = g.now.Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
		g.tag("recorded_at future")
	case 2:
		stamp = vpec.FormatTime(g.opened.Add(-verify.MaxClockSkew - time.Minute))
		g.tag("recorded_at before the run")
	}
	g.tag("%s/%s", level, result)
	ms := []member{
		{"record_id", g.str(id)},
		{"sequence", strconv.FormatInt(seq, 10)},
		{"check", g.str(check)},
		{"manifest_id", g.str(manifest)},
		{"check_result", g.str(string(result))},
		{"proof_level", g.str(string(level))},
		{"commitment_algorithm", `"sha256"`},
		{"commitment_hash", g.str(hash())},
		{"visibility", g.str(string(vis))},
		{"recorded_at", g.str(stamp)},
	}
	ms = g.optional(ms, "output_commitment", func() string { return g.str(hash()) })
	ms = g.optional(ms, "onnx_model_hash", func() string {
		if g.p(0.5) {
			return g.str(g.model)
		}
		return g.str(commitment.OfSHA256([32]byte{byte(g.rng.IntN(256))}).String())
	})
	if level == vpec.OperatorBound && g.p(0.7) {
		// The inference record of a decomposition, with its evidence.
		root := commitment.OfSHA256([32]byte{byte(g.rng.IntN(256)), 1}).String()
		ms = append(ms, member{"stage_type", g.str(stage.BoundCommittedInference)}, member{"stage_part", g.str(stage.PartInference)},
			member{"bounded_inference", fmt.Sprintf(`{"profile_id":%s,"gpu_class":"cpu","onnx_model_hash":%s,"trace_mode":"full","operator_count":100,"merkle_root":%s}`,
				g.str(g.profileID), g.str(g.model), g.str(root))})
		g.tag("operator_bound anchor")
	} else if level == vpec.Mathematical && g.p(0.6) {
		// The decomposition records that may claim mathematical.
		ms = append(ms, member{"stage_type", g.str(stage.BoundCommittedInference)},
			member{"stage_part", g.str([]string{stage.PartPre, stage.PartPost}[g.rng.IntN(2)])})
		g.tag("bci pre/post")
	} else {
		ms = g.optional(ms, "stage_type", func() string {
			return g.str([]string{stage.BoundCommittedInference, stage.OpenSourceML}[g.rng.IntN(2)])
		})
		ms = g.optional(ms, "stage_part", func() string {
			return g.str([]string{stage.PartPre, stage.PartInference, stage.PartPost}[g.rng.IntN(3)])
		})
	}
	switch r := g.rng.Float64(); {
	case r < 0.35:
	case r < 0.45:
		g.tag("details {}")
		ms = append(ms, member{"details", "{}"})
	default:
		ms = append(ms, member{"details", g.object(1+g.rng.IntN(4), 1)})
	}
	return ms
}

// text assembles members in random order with random whitespace.
func (g *gen) assemble(ms []member) string {
	ms = append([]member(nil), ms...)
	g.rng.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = g.ws() + `"` + m.key + `"` + g.ws() + ":" + g.ws() + m.val + g.ws()
	}
	return g.ws() + "{" + strings.Join(parts, ",") + "}" + g.ws()
}

// valueOf decodes the JSON string member key of ms ("" if absent or not a
// string).
func valueOf(ms []member, key string) string {
	for _, m := range ms {
		if m.key == key {
			var v string
			json.Unmarshal([]byte(m.val), &v)
			return v
		}
	}
	return ""
}

// evidence gives some records a real session: a witnessed record a review
// block (a review session opened and closed on its input, the statement
// signed by a registered reviewer), an execution or attestation record now
// and then a check_session block. The session is refused (and the record
// left as it is) when the record's names break the session limits.
func (g *gen) evidence(e *env, runID string, reviewer *signing.Signer, ms []member) []member {
	level := vpec.ProofLevel(valueOf(ms, "proof_level"))
	kind := ""
	switch {
	case level == vpec.Witnessed && g.p(0.7):
		kind = api.SessionReview
	case (level == vpec.Execution || level == vpec.Attestation) && g.p(0.1):
		kind = api.SessionCheck
	default:
		return ms
	}
	check, manifestID, ch := valueOf(ms, "check"), valueOf(ms, "manifest_id"), valueOf(ms, "commitment_hash")
	req := api.SessionRequest{Kind: kind, Check: check, ManifestID: manifestID}
	if kind == api.SessionReview {
		req.ReviewerKeyID = reviewer.KeyID()
	}
	base := "/api/v1/runs/" + runID + "/sessions"
	var sess api.SessionView
	if code, _ := e.do("POST", base, e.keyB, req, &sess); code != 201 {
		return ms
	}
	if code, _ := e.do("POST", base+"/"+sess.SessionID+"/close", e.keyB, api.SessionCloseRequest{CommitmentHash: ch}, &sess); code != 200 {
		return ms
	}
	if kind == api.SessionCheck {
		g.tag("check_session evidence")
		return append(ms, member{"check_session", fmt.Sprintf(`{"session_id":%q,"check_open_tst":%q,"check_close_tst":%q}`, sess.SessionID, sess.CheckOpenTST, sess.CheckCloseTST)})
	}
	rv := &vpec.Review{SessionID: sess.SessionID}
	if g.p(0.5) {
		rv.RationaleHash = commitment.String([]byte(g.text(10, false)))
	}
	stmt, err := vpec.ReviewStatement(runID, &vpec.Record{Check: check, ManifestID: manifestID, CheckResult: vpec.CheckResult(valueOf(ms, "check_result")), CommitmentHash: ch, Review: rv})
	if err != nil {
		return ms
	}
	der, _ := x509.MarshalPKIXPublicKey(reviewer.PublicKey())
	review := fmt.Sprintf(`{"session_id":%q,"reviewer_key_id":%q,"reviewer_public_key":%q,"reviewer_signature":%q,"min_duration_seconds":0,"check_open_tst":%q,"check_close_tst":%q`,
		sess.SessionID, reviewer.KeyID(), base64.StdEncoding.EncodeToString(der), signing.FormatSignature(mustSig(reviewer.Sign(stmt))), sess.CheckOpenTST, sess.CheckCloseTST)
	if rv.RationaleHash != "" {
		review += fmt.Sprintf(`,"rationale_hash":%q`, rv.RationaleHash)
	}
	g.tag("review evidence")
	return append(ms, member{"review", review + "}"})
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// Property (decision D2, issue 10 section 1): every record the service
// accepts ends up in a VPEC that verifies VALID against the service's trust
// bundle; every record it refuses is refused with 400 or 422 naming the
// field. Cases are random records (seeded): SVC_PROPERTY_CASES (default
// 300) runs, SVC_PROPERTY_SEED picks the seed.
func TestPropertyAcceptedVerifies(t *testing.T) {
	cases := envInt("SVC_PROPERTY_CASES", 300)
	seed := uint64(envInt("SVC_PROPERTY_SEED", 10))
	e := newEnv(t)
	model := commitment.String([]byte("property model"))
	p := &profile.Profile{Schema: profile.Schema, ProfileID: "svc/property-class/v1.0.0", ModelClass: "property", Architecture: "bert",
		CalibratedGPUClasses: []string{"cpu"}, CalibrationPasses: 1000, CalibrationDate: "2026-11-22", SafetyMargin: 2,
		Operators: map[string]profile.Bounds{profile.Linear: {P99: 1e-7, P99_9: 2e-7, P9999: 3e-7}},
		Models:    []profile.Model{{ONNXModelHash: model, OperatorCounts: map[string]int64{"full": 100}}}}
	if _, err := server.Publish(context.Background(), e.st, e.mat.Signer, "test", p, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	sp, err := e.st.ProfileByID(context.Background(), p.ProfileID)
	if err != nil {
		t.Fatal(err)
	}
	profiles := profile.NewSet()
	if _, err := profiles.Add(sp.Body); err != nil {
		t.Fatal(err)
	}
	_, priv, _ := signing.GenerateKey()
	reviewer, _ := signing.NewSigner(priv)
	pubPEM, _ := signing.MarshalPublicKeyPEM(reviewer.PublicKey())
	if code, body := e.do("POST", "/api/v1/reviewers", e.keyB, api.ReviewerKeyRequest{PublicKey: string(pubPEM), Name: "Property Reviewer"}, nil); code != 201 {
		t.Fatalf("register reviewer: %d %s", code, body)
	}
	now := time.Now()
	g := &gen{rng: rand.New(rand.NewPCG(seed, 0x5eed)), now: now, opened: now.Add(-48 * time.Hour), profileID: p.ProfileID, model: model}
	sealed, math, bounded, witnessed, checkSessions := 0, 0, 0, 0, 0
	var accepted, refused, invalid int
	refusedBy, unsealed := map[string]int{}, map[string]int{}
	failures := map[string]int{}
	var examples []string
	for c := range cases {
		// Opened (by the client's clock) two days ago: the generator's
		// records are dated within the last 48 hours, some before that.
		var run api.Run
		if code, body := e.do("POST", "/api/v1/runs", e.keyB, api.OpenRunRequest{WorkflowID: "property", OpenedAt: vpec.FormatTime(g.opened)}, &run); code != 201 {
			t.Fatalf("open: %d %s", code, body)
		}
		prev := vpec.Genesis(run.RunID)
		var sent []string
		var tags []string
		seq := int64(1)
		for range 1 + g.rng.IntN(3) {
			ms := g.evidence(e, run.RunID, reviewer, g.record(seq))
			text := g.assemble(ms)
			jcs, err := canonical.Transform([]byte(text))
			if err != nil {
				t.Fatalf("case %d: generator wrote invalid JSON: %v\n%s", c, err, text)
			}
			next := vpec.NextChainHash(prev, jcs)
			body := g.assemble(append(ms, member{"chain_hash", `"` + commitment.OfSHA256(next).String() + `"`}))
			code, _, eb, data := e.raw("POST", "/api/v1/runs/"+run.RunID+"/records", e.keyB, []string{"application/json"}, body)
			switch {
			case code == 201:
				accepted++
				prev, seq = next, seq+1
				sent = append(sent, body)
				tags = append(tags, g.tags...)
			case (code == 400 || code == 422) && eb.Error.Field != "":
				refused++
				refusedBy[fmt.Sprintf("%d %s", code, eb.Error.Field)]++
			default:
				invalid++
				k := fmt.Sprintf("refused without a field or with an unexpected status: %d %s", code, eb.Error.Code)
				if failures[k]++; failures[k] == 1 {
					examples = append(examples, fmt.Sprintf("case %d: %d %s\nbody: %s", c, code, data, body))
				}
			}
		}
		code, doc := e.do("POST", "/api/v1/runs/"+run.RunID+"/close", e.keyB, nil, nil)
		var ceb api.ErrorBody
		if json.Unmarshal(doc, &ceb); code == 422 && ceb.Error.Field != "" {
			// The service refuses to seal what would not verify (a
			// mathematical record without its decomposition's
			// operator_bound record): no VPEC, a reason naming the field.
			unsealed[ceb.Error.Field]++
			continue
		}
		if code != 200 {
			invalid++
			k := fmt.Sprintf("close answered %d", code)
			if failures[k]++; failures[k] == 1 {
				examples = append(examples, fmt.Sprintf("case %d: close %d %s\nrecords: %s", c, code, doc, strings.Join(sent, "\n")))
			}
			continue
		}
		rep, _ := verify.Verify(doc, verify.Options{Trust: e.mat.Trust, Profiles: profiles})
		sealed++
		var v vpec.VPEC
		json.Unmarshal(doc, &v)
		math += int(v.ProofLevelBreakdown[string(vpec.Mathematical)])
		bounded += int(v.ProofLevelBreakdown[string(vpec.OperatorBound)])
		witnessed += int(v.ProofLevelBreakdown[string(vpec.Witnessed)])
		for _, r := range v.Records {
			if r.CheckSession != nil {
				checkSessions++
			}
		}
		if !rep.Valid {
			invalid++
			var failed, why []string
			for _, ch := range rep.Checks {
				if ch.Status == verify.Fail {
					failed = append(failed, string(ch.Name))
					why = append(why, string(ch.Name)+": "+firstLine(ch.Message))
				}
			}
			k := fmt.Sprintf("accepted, then %s (failed: %s) | the records had: %s", rep.Verdict, strings.Join(failed, ", "), summarizeTags(tags))
			if len(sent) == 0 {
				k = fmt.Sprintf("empty run (every record refused), then %s (failed: %s)", rep.Verdict, strings.Join(failed, ", "))
			}
			if failures[k]++; failures[k] == 1 {
				examples = append(examples, fmt.Sprintf("case %d: %s\n%s\nrecords sent:\n%s", c, k, strings.Join(why, "\n"), strings.Join(sent, "\n")))
			}
		}
	}
	t.Logf("%d cases (seed %d): %d records accepted, %d refused naming a field, %d failures", cases, seed, accepted, refused, invalid)
	t.Logf("  %d VPECs sealed, holding %d mathematical, %d operator_bound and %d witnessed records, %d with a check session", sealed, math, bounded, witnessed, checkSessions)
	for f, n := range unsealed {
		t.Logf("  close refused (422 naming %s): %d runs", f, n)
	}
	keys := make([]string, 0, len(refusedBy))
	for k := range refusedBy {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("  refused %s: %d", k, refusedBy[k])
	}
	if accepted == 0 || refused == 0 {
		t.Errorf("the generator should make both accepted and refused records (accepted %d, refused %d)", accepted, refused)
	}
	if invalid > 0 {
		keys := make([]string, 0, len(failures))
		for k := range failures {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return failures[keys[i]] > failures[keys[j]] })
		for _, k := range keys {
			t.Errorf("%d× %s", failures[k], k)
		}
		if testing.Verbose() {
			for _, ex := range examples {
				t.Logf("first example of a failure: %s", ex)
			}
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if utf8.RuneCountInString(s) > 160 {
		s = string([]rune(s)[:160]) + "…"
	}
	return s
}

// summarizeTags lists the features of the records of a failed case that
// are suspects (empty members, nulls, empty objects), deduplicated.
func summarizeTags(tags []string) string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		if strings.Contains(t, "empty") || strings.Contains(t, "null") || strings.Contains(t, "{}") {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "(no empty member, null or empty object)"
	}
	return strings.Join(out, ", ")
}
