package vpec

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
)

// MaxTimestampSkew is how far the RFC 3161 time may lie from issued_at.
const MaxTimestampSkew = 15 * time.Minute

// ProfileSource finds model profiles by profile id. It returns the raw
// signed document; the verifier checks its signature itself.
type ProfileSource interface {
	Profile(profileID string) ([]byte, error)
}

// ErrProfileNotFound is returned by a ProfileSource without the profile.
var ErrProfileNotFound = profile.ErrNotFound

// Options configure Verify: the trust material and the policy. Verify
// validates them before it reads the document (Validate).
type Options struct {
	// Trust holds the service keys and TSA roots. Required, with at least
	// one key; without TSA roots the timestamp cannot be checked and the
	// verdict is at best UNVERIFIED.
	Trust *signing.Bundle
	// Profiles resolves profile ids of Bounded Inference records. May be nil.
	Profiles ProfileSource
	// Proofs checks the zk_proof of verifiable_inference and mathematical
	// records (pkg/zk's Verifier over signed circuit entries). May be nil:
	// a record with a proof then fails as not checked (trust material
	// missing).
	Proofs ProofVerifier
	// CircuitAdvice tells the user, in the words of the surface that
	// verifies, how to supply a circuit entry that is missing: the "ZK
	// proofs" check appends it to its CIRCUIT NOT AVAILABLE message (svc
	// verify names its --circuit flag, the offline page its circuit entry
	// control, the dashboard the registry). Empty: DefaultCircuitAdvice.
	CircuitAdvice string
	// RequireClean makes a valid VPEC that is not clean (governance gaps,
	// declared chain breaks) INVALID — NOT CLEAN, matching ErrNotClean.
	RequireClean bool
	// RequirePassed makes a valid VPEC with a record whose check result
	// is fail or error (NotPassedCodes) INVALID — NOT PASSED, matching
	// ErrNotPassed. Clean and passed are separate: a VPEC with no gaps
	// can hold a failed check, and one with gaps can have every check
	// pass. With both set and both broken, the verdict is NOT PASSED and
	// the error matches ErrNotClean too.
	RequirePassed bool
	// Extra are checks made outside this package (svc's replay audit of
	// a Bounded Inference trace), run in order after the built-in checks
	// on any input that is a JSON document. Each returns its check and
	// whether it applied (a check that did not apply is not reported), or
	// an error, which stops verification: Verify then returns it wrapped,
	// with no report.
	Extra []ExtraCheck
}

// ExtraCheck is a check Options.Extra adds to the report; it reads the
// document as given to Verify.
type ExtraCheck func(doc []byte) (c Check, applied bool, err error)

// Validate reports whether the options can verify anything: an error
// matching ErrOptions when they cannot.
func (o *Options) Validate() error {
	if o.Trust == nil {
		return fmt.Errorf("%w: Trust is nil: pass the trust bundle of the service that issued the VPEC", ErrOptions)
	}
	if len(o.Trust.KeyIDs()) == 0 {
		return fmt.Errorf("%w: the trust bundle holds no Ed25519 public key", ErrOptions)
	}
	for i, x := range o.Extra {
		if x == nil {
			return fmt.Errorf("%w: Extra[%d] is nil", ErrOptions, i)
		}
	}
	return nil
}

// parsed is a VPEC decoded with the raw bytes of each record kept for the
// chain, which covers the bytes as issued.
type parsed struct {
	v          VPEC
	raw        []byte
	recordJCS  [][]byte
	signedJCS  []byte
	signature  []byte
	tsToken    []byte
	schemaErrs []string
	breaks     []ChainBreak
}

// NotCheckedSchema is the message of every check that did not run because
// the schema check failed.
const NotCheckedSchema = "not checked: the document does not match the v1 schema"

// NotCheckedUnreadable is the message of every check that did not run
// because the input is not a JSON document.
const NotCheckedUnreadable = "not checked: the input is not a JSON document"

// Verify checks a VPEC document offline and reports every check by name.
// It never panics and never reports VALID for anything it did not check.
//
// The error is nil exactly when the verdict is VALID. Otherwise it is a
// *VerificationError matching ErrInvalid, ErrUnverified or ErrUnreadable
// (errors.Is), returned with the report, which says what was checked and
// is for printing: a caller that looks only at the error cannot accept a
// document that failed. Options that cannot verify anything give an error
// matching ErrOptions and no report; so does an extra check's error.
func Verify(doc []byte, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r := verify(doc, opts)
	r.requireClean = opts.RequireClean
	r.requirePassed = opts.RequirePassed
	if !r.Unreadable {
		for i, x := range opts.Extra {
			c, applied, err := x(doc)
			if err != nil {
				return nil, fmt.Errorf("vpec: extra check %d: %w", i, err)
			}
			if applied {
				r.Checks = append(r.Checks, c)
			}
		}
	}
	r.finish()
	return r, r.err()
}

// ValidateSchema runs the schema check alone, for callers that need no
// more than a well-formed v1 VPEC (they hold no trust bundle): nil, or a
// *VerificationError naming the schema check and matching ErrInvalid,
// ErrUnsignedOffline (with ErrInvalid) or ErrUnreadable. It proves nothing
// about who issued the document.
func ValidateSchema(doc []byte) error {
	r, p := schemaReport(doc)
	if p != nil {
		return nil
	}
	return r.err()
}

// verify runs the built-in checks; the options are valid.
func verify(doc []byte, opts Options) *Report {
	r, p := schemaReport(doc)
	if p == nil {
		return r
	}
	// The signature hashes the whole document: let it run on another core
	// while the other checks run.
	sigc := make(chan Check, 1)
	go func() { sigc <- checkSignature(*p, opts.Trust) }()
	var sessions []sessionTimes
	chain, merkle, zk := checkChain(*p), checkMerkle(*p), checkZKProofs(*p, opts)
	evidence := checkEvidence(*p)
	ts := checkTimestamp(*p, opts.Trust, r)
	reviews := checkReviews(*p, opts.Trust, &sessions)
	tm := checkTime(*p, r, sessions)
	rest := []Check{chain, merkle, zk, evidence, ts, tm, checkGaps(*p), checkSummary(*p), reviews, checkProfiles(*p, opts),
		checkDisclosures(*p, r)}
	r.Checks = append(append(r.Checks, <-sigc), rest...)
	r.finish()
	return r
}

// schemaReport runs the schema check. When it passes, the report holds it
// and p is the parsed document; otherwise p is nil and the report is
// finished, every other check not_applicable.
func schemaReport(doc []byte) (r *Report, _ *parsed) {
	if err := document.CheckInput(doc); err != nil {
		return unreadableReport(err), nil
	}
	r = &Report{}
	p := parse(doc)
	r.fill(&p.v)
	if len(p.schemaErrs) == 0 {
		checkGapRules(&p.v, func(format string, a ...any) { p.schemaErrs = append(p.schemaErrs, fmt.Sprintf(format, a...)) })
	}
	if p.v.Schema == OfflineSchema {
		r.unsignedOffline(&p)
		return r, nil
	}
	if len(p.schemaErrs) > 0 {
		r.Checks = append(r.Checks, Check{Name: CheckSchema, Status: Fail, Code: "SCHEMA ERROR",
			Message: "schema invalid: " + p.schemaErrs[0], Details: p.schemaErrs})
		for _, n := range checks[1:] {
			r.Checks = append(r.Checks, Check{Name: n, Status: NotApplicable, Message: NotCheckedSchema})
		}
		r.finish()
		return r, nil
	}
	r.Checks = append(r.Checks, Check{Name: CheckSchema, Status: Pass, Message: fmt.Sprintf("schema valid (%s, %d records)", Schema, len(p.v.Records))})
	return r, &p
}

// unreadableReport is the report on input that is not a JSON document at
// all (empty, binary, not UTF-8, a BOM, too large): it says so in words,
// and nothing else runs.
func unreadableReport(err error) *Report {
	r := &Report{Unreadable: true}
	code := "NOT JSON"
	if errors.Is(err, document.ErrTooLarge) {
		code = "TOO LARGE"
	}
	r.Checks = append(r.Checks, Check{Name: CheckSchema, Status: Fail, Code: code, Message: "unreadable input: " + err.Error()})
	for _, n := range checks[1:] {
		r.Checks = append(r.Checks, Check{Name: n, Status: NotApplicable, Message: NotCheckedUnreadable})
	}
	r.finish()
	return r
}

// VerifyUnreadable returns what Verify returns for input that could not
// be read as a document, err saying why: a document too large to read
// (err matching document.ErrTooLarge, verdict UNREADABLE — TOO LARGE) or
// not a JSON text (UNREADABLE — NOT JSON). A caller that refuses a stream
// past document.MaxSize bytes without reading it whole (svc-verify does)
// reports it with this, so every input gets a report. The options are
// validated as by Verify; the error matches ErrUnreadable.
func VerifyUnreadable(cause error, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r := unreadableReport(cause)
	r.requireClean = opts.RequireClean
	r.finish()
	return r, r.err()
}

func (r *Report) fill(v *VPEC) {
	r.VPECID, r.RunID, r.WorkflowID, r.OrgID = v.VPECID, v.RunID, v.WorkflowID, v.OrgID
	r.Environment, r.IssuedAt, r.SigningKeyID = string(v.Environment), v.IssuedAt, v.SigningKeyID
	r.ProofLevelFloor, r.IsClean = v.ProofLevelFloor, v.IsClean
	r.Records, r.Gaps = len(v.Records), len(v.Gaps)
	r.ChecksFailed, r.ChecksErrored = CountNotPassed(v.Records)
}

var (
	keyIDPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)
)

// validTime reports whether s is an RFC 3339 time in UTC ("Z").
func validTime(s string) bool {
	_, err := ParseTime(s)
	return err == nil
}

// ErrTimeFormat is returned by ParseTime for a time that is not in the one
// accepted form.
var ErrTimeFormat = errors.New("not an RFC 3339 UTC time of the form YYYY-MM-DDTHH:MM:SS[.fraction]Z")

// ParseTime reads a document time (docs/FORMATS.md, JSON conventions):
// exactly "YYYY-MM-DDTHH:MM:SS", optionally "." and one or more digits, then "Z";
// two-digit fields, upper-case T and Z, a real calendar date, no leap
// second. time.Parse alone also takes a one-digit hour ("T2:27:04Z"), which
// would give one time two spellings.
func ParseTime(s string) (time.Time, error) {
	const fixed = len("2006-01-02T15:04:05")
	ok := len(s) >= fixed+1 && s[len(s)-1] == 'Z'
	for i := 0; ok && i < fixed; i++ {
		switch i {
		case 4, 7:
			ok = s[i] == '-'
		case 10:
			ok = s[i] == 'T'
		case 13, 16:
			ok = s[i] == ':'
		default:
			ok = s[i] >= '0' && s[i] <= '9'
		}
	}
	if frac := ""; ok {
		if frac = s[fixed : len(s)-1]; frac != "" {
			ok = frac[0] == '.' && len(frac) >= 2
			for i := 1; ok && i < len(frac); i++ {
				ok = frac[i] >= '0' && frac[i] <= '9'
			}
		}
	}
	if !ok {
		return time.Time{}, fmt.Errorf("%q: %w", s, ErrTimeFormat)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q: %w: %v", s, ErrTimeFormat, err)
	}
	return t, nil
}

// checkEvidenceEncoding checks, in a sealed VPEC, the spelling of a
// record's review and check-session members (docs/FORMATS.md, encoding:
// one spelling), before any signature, so a re-spelt one is a schema error
// whatever else is wrong; their content is the reviews check's. (A record
// sent to the service has no tokens yet: the service adds them.)
func checkEvidenceEncoding(r *Record, f string, bad func(string, ...any)) {
	if cs := r.CheckSession; cs != nil {
		checkTokenEncoding(f+".check_session", cs.CheckOpenTST, cs.CheckCloseTST, bad)
	}
	if rv := r.Review; rv != nil {
		if _, err := signing.ParseSignature(rv.ReviewerSignature); err != nil {
			bad("%s.review.reviewer_signature: %v", f, err)
		}
		if b, err := signing.DecodeBase64(rv.ReviewerPublicKey); err != nil || len(b) == 0 {
			bad("%s.review.reviewer_public_key must be the base64 of SPKI DER (standard alphabet, padded, no line breaks)", f)
		}
		checkTokenEncoding(f+".review", rv.CheckOpenTST, rv.CheckCloseTST, bad)
	}
}

// checkTokenEncoding checks the spelling of a session's two time-stamp
// tokens.
func checkTokenEncoding(f, open, closed string, bad func(string, ...any)) {
	for _, t := range []struct{ name, v string }{{"check_open_tst", open}, {"check_close_tst", closed}} {
		if b, err := signing.DecodeBase64(t.v); err != nil || len(b) == 0 {
			bad("%s.%s must be the base64 DER of an RFC 3161 response (standard alphabet, padded, no line breaks)", f, t.name)
		}
	}
}

// validID reports whether s is 1-128 characters of letters, digits and
// ._:- starting with a letter or digit (the rule for every id in a VPEC).
func validID(s string) bool {
	if len(s) == 0 || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || (c != '.' && c != '_' && c != ':' && c != '-')) {
			return false
		}
	}
	return true
}

// MaxIDBytes is the longest id in a VPEC, a prefixed id (rec_, run_,
// vpec_) prefix included.
const MaxIDBytes = 128

// ValidPrefixedID reports whether s is prefix followed by an id, the rule
// of record_id (rec_), run_id (run_) and vpec_id (vpec_): the part after
// the prefix starts with a letter or digit, and the whole value is an id,
// at most MaxIDBytes bytes in all (rec_ and up to 124 more). The server
// and the verifier apply this one rule.
func ValidPrefixedID(s, prefix string) bool {
	tail, ok := strings.CutPrefix(s, prefix)
	return ok && tail != "" && validID(tail) && validID(s)
}

// parse reads a document that passed document.CheckInput (schemaReport
// checks it first: too large, empty, binary, not UTF-8, so the scan over
// the whole input runs once).
func parse(doc []byte) (p parsed) {
	p.raw = doc
	bad := func(format string, a ...any) { p.schemaErrs = append(p.schemaErrs, fmt.Sprintf(format, a...)) }
	if !p.read(doc, bad) {
		return p
	}
	v := &p.v
	offline := v.Schema == OfflineSchema
	if v.Schema != Schema && !offline {
		bad("schema is %q, want %q (this verifier reads v1 VPECs)", v.Schema, Schema)
	}
	prefixed := func(field, val, prefix string) {
		if !ValidPrefixedID(val, prefix) {
			bad("%s %q must be %s followed by an id, %d bytes at most in all", field, val, prefix, MaxIDBytes)
		}
	}
	prefixed("vpec_id", v.VPECID, "vpec_")
	prefixed("run_id", v.RunID, "run_")
	if !validID(v.WorkflowID) {
		bad("workflow_id %q must be 1-128 characters of letters, digits and ._:-", v.WorkflowID)
	}
	if !validID(v.OrgID) && !(offline && v.OrgID == "") { // a run opened offline: org unknown
		bad("org_id %q must be 1-128 characters of letters, digits and ._:-", v.OrgID)
	}
	timeField := func(field, val string) {
		if !validTime(val) {
			bad("%s %q is not an RFC 3339 UTC time (…Z)", field, val)
		}
	}
	timeField("issued_at", v.IssuedAt)
	if v.OpenedAt != "" {
		timeField("opened_at", v.OpenedAt)
	}
	if v.Environment != Sandbox && v.Environment != Production {
		bad("environment %q must be sandbox or production", v.Environment)
	}
	if _, ok := EnvironmentOf(v.APIKeyID); !ok || !validID(v.APIKeyID) {
		bad("api_key_id %q must start with %s or %s", v.APIKeyID, SandboxKeyPrefix, ProductionKeyPrefix)
	}
	if !v.ProofLevelFloor.Valid() {
		bad("proof_level_floor %q is not a proof level %v", v.ProofLevelFloor, proofLevels)
	}
	for k, n := range v.ProofLevelBreakdown {
		if !ProofLevel(k).Valid() {
			bad("proof_level_breakdown key %q is not a proof level", k)
		}
		if n < 0 {
			bad("proof_level_breakdown.%s is negative", k)
		}
	}
	share := func(field string, f float64) {
		if math.IsNaN(f) || f < 0 || f > 1 {
			bad("%s is %v, want a share between 0 and 1", field, f)
		}
	}
	share("provable_surface", v.ProvableSurface)
	for k, f := range v.ProvableSurfaceBreakdown {
		share("provable_surface_breakdown."+k, f)
	}
	for _, n := range []int64{v.TotalChecksRun, v.ChecksPassed, v.ChecksFailed} {
		if n < 0 {
			bad("check counts must not be negative")
			break
		}
	}
	for i, g := range v.Gaps {
		f := fmt.Sprintf("gaps[%d]", i)
		if !validID(g.GapID) {
			bad("%s.gap_id %q is not an id", f, g.GapID)
		}
		if !validID(g.GapType) {
			bad("%s.gap_type %q is not a gap type", f, g.GapType)
		}
		if !g.Severity.Valid() {
			bad("%s.severity %q is not one of %v", f, g.Severity, severities)
		} else if want := GapSeverity(g.GapType); want != "" && want != g.Severity {
			bad("%s.severity of a %s gap is %s, not %s", f, g.GapType, want, g.Severity)
		}
		timeField(f+".timestamp", g.Timestamp)
	}
	if _, err := ParseHash(v.MerkleRoot); err != nil {
		bad("merkle_root: %v", err)
	}
	switch {
	case offline:
		// An unsigned offline VPEC: Verify reports it as such.
		if v.SigningKeyID != "" || v.Signature != "" || v.TimestampRFC3161 != "" {
			bad("an unsigned offline VPEC (%s) has empty signing_key_id, signature and timestamp_rfc3161", OfflineSchema)
		}
	default:
		if !keyIDPattern.MatchString(v.SigningKeyID) {
			bad("signing_key_id %q must be 16 lowercase hex characters", v.SigningKeyID)
		}
		sig, err := signing.ParseSignature(v.Signature)
		if err != nil {
			bad("signature: %v", err)
		}
		p.signature = sig
		tok, err := signing.DecodeBase64(v.TimestampRFC3161)
		if err != nil || len(tok) == 0 {
			bad("timestamp_rfc3161 must be the base64 DER of an RFC 3161 response (standard alphabet, padded, no line breaks)")
		}
		p.tsToken = tok
	}
	ids := map[string]bool{}
	var prevSeq int64
	for i := range v.Records {
		checkRecord(&v.Records[i], fmt.Sprintf("records[%d]", i), bad)
		checkEvidenceEncoding(&v.Records[i], fmt.Sprintf("records[%d]", i), bad)
		rec := &v.Records[i]
		if ids[rec.RecordID] {
			bad("records[%d].record_id %q appears twice", i, rec.RecordID)
		}
		ids[rec.RecordID] = true
		if rec.Sequence <= prevSeq {
			bad("records[%d].sequence %d does not increase (previous %d)", i, rec.Sequence, prevSeq)
		}
		prevSeq = rec.Sequence
	}
	if len(p.schemaErrs) > 0 {
		return p
	}
	p.breaks = VerifyChain(v.RunID, v.Records, p.recordJCS)
	return p
}

// encode computes the signed bytes and each record's chain input from the
// tree, the two halves in parallel.
func (p *parsed) encode(tree *canonical.Value) {
	if tree.Kind() != canonical.KindObject {
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.signedJCS = tree.AppendCanonical(make([]byte, 0, len(p.raw)), unsignedFields...)
	}()
	if recs := tree.Get("records"); recs != nil && recs.Kind() == canonical.KindArray {
		// One buffer for every record; each record's bytes are a window of it.
		buf := make([]byte, 0, len(p.raw))
		p.recordJCS = make([][]byte, recs.Len())
		for i, rec := range recs.Elements() {
			start := len(buf)
			buf = rec.AppendCanonical(buf, "chain_hash")
			p.recordJCS[i] = buf[start:len(buf):len(buf)]
		}
	}
	<-done
}

var stageParts = []string{"", StagePartPre, StagePartInference, StagePartPost}

// Validate checks a record's fields against the v1 rules (formats, enums,
// which blocks go with which proof level) and returns every problem found,
// joined, each naming its field. It does not check the chain.
func (r *Record) Validate() error {
	var errs []error
	checkRecord(r, "record", func(format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidRecord, fmt.Sprintf(format, a...)))
	})
	return errors.Join(errs...)
}

// ErrInvalidRecord reports a record that breaks the v1 rules.
var ErrInvalidRecord = errors.New("invalid record")

// Longest check name and manifest id of a record, in bytes (the service's
// request limits use the same values).
const (
	MaxCheckBytes      = 256
	MaxManifestIDBytes = 256
)

// ErrReviewTooShort: a witnessed review closed before its minimum duration.
var ErrReviewTooShort = errors.New("review too short")

func checkRecord(r *Record, f string, bad func(string, ...any)) {
	if !ValidPrefixedID(r.RecordID, "rec_") {
		bad("%s.record_id %q must be rec_ followed by an id, %d bytes at most in all", f, r.RecordID, MaxIDBytes)
	}
	if r.Sequence < 1 {
		bad("%s.sequence %d must be at least 1", f, r.Sequence)
	}
	if r.Check == "" || len(r.Check) > MaxCheckBytes {
		bad("%s.check must be 1-%d characters", f, MaxCheckBytes)
	} else if err := ValidName(r.Check); err != nil {
		bad("%s.check: %v", f, err)
	}
	if r.ManifestID == "" || len(r.ManifestID) > MaxManifestIDBytes {
		bad("%s.manifest_id must be 1-%d characters", f, MaxManifestIDBytes)
	} else if err := ValidName(r.ManifestID); err != nil {
		bad("%s.manifest_id: %v", f, err)
	}
	if r.Details != nil {
		if n := detailsSize(r.Details); n > MaxDetailsBytes {
			bad("%s.details is %d bytes in canonical form, more than %d", f, n, MaxDetailsBytes)
		}
	}
	if !r.CheckResult.Valid() {
		bad("%s.check_result %q is not one of %v", f, r.CheckResult, checkResults)
	}
	if !r.ProofLevel.Valid() {
		bad("%s.proof_level %q is not one of %v", f, r.ProofLevel, proofLevels)
	}
	if !r.Visibility.Valid() {
		bad("%s.visibility %q is not one of %v", f, r.Visibility, visibilities)
	}
	h, err := commitment.Parse(r.CommitmentHash)
	if err != nil {
		bad("%s.commitment_hash: %v", f, err)
	} else if string(h.Algorithm) != r.CommitmentAlgorithm {
		bad("%s.commitment_algorithm %q does not match the commitment hash (%s)", f, r.CommitmentAlgorithm, h.Algorithm)
	}
	if r.OutputCommitment != "" {
		if _, err := commitment.Parse(r.OutputCommitment); err != nil {
			bad("%s.output_commitment: %v", f, err)
		}
	}
	if r.ONNXModelHash != "" {
		if _, err := ParseHash(r.ONNXModelHash); err != nil {
			bad("%s.onnx_model_hash: %v", f, err)
		}
	}
	if !validTime(r.RecordedAt) {
		bad("%s.recorded_at %q is not an RFC 3339 UTC time (…Z)", f, r.RecordedAt)
	}
	if _, err := ParseHash(r.ChainHash); err != nil {
		bad("%s.chain_hash: %v", f, err)
	}
	if r.StageType != "" && r.StageType != StageBoundCommittedInference && r.StageType != StageOpenSourceML && r.StageType != StageMLPHead {
		bad("%s.stage_type %q is not %s, %s or %s", f, r.StageType, StageBoundCommittedInference, StageOpenSourceML, StageMLPHead)
	}
	if !slices.Contains(stageParts, r.StagePart) {
		bad("%s.stage_part %q is not one of pre_conditions, inference, post_conditions", f, r.StagePart)
	}
	if (r.ProofLevel == Witnessed) != (r.Review != nil) {
		bad("%s: a review block goes with proof_level witnessed and only with it", f)
	}
	if (r.ProofLevel == OperatorBound) != (r.BoundedInference != nil) {
		bad("%s: a bounded_inference block goes with proof_level operator_bound and only with it", f)
	}
	if bi := r.BoundedInference; bi != nil {
		if !profile.ValidID(bi.ProfileID) {
			bad("%s.bounded_inference.profile_id %q is not a profile id", f, bi.ProfileID)
		}
		if !profile.ValidGPUClass(bi.GPUClass) {
			bad("%s.bounded_inference.gpu_class %q is not one of %v", f, bi.GPUClass, profile.GPUClasses())
		}
		if _, err := ParseHash(bi.ONNXModelHash); err != nil {
			bad("%s.bounded_inference.onnx_model_hash: %v", f, err)
		}
		if bi.TraceMode != TraceFull && bi.TraceMode != TraceProduction && bi.TraceMode != TraceResidual {
			bad("%s.bounded_inference.trace_mode %q is not full, production or residual", f, bi.TraceMode)
		}
		if bi.OperatorCount < 1 || bi.OperatorCount > 1<<32 {
			bad("%s.bounded_inference.operator_count %d is out of range", f, bi.OperatorCount)
		}
		if _, err := ParseHash(bi.MerkleRoot); err != nil {
			bad("%s.bounded_inference.merkle_root: %v", f, err)
		}
	}
	checkZKProof(r, f, bad)
	if cs := r.CheckSession; cs != nil {
		if r.Review != nil {
			bad("%s: check_session and review do not go together (a review carries its own session)", f)
		}
		if !validID(cs.SessionID) {
			bad("%s.check_session.session_id %q is not an id", f, cs.SessionID)
		}
	}
	if rv := r.Review; rv != nil {
		if !validID(rv.SessionID) {
			bad("%s.review.session_id %q is not an id", f, rv.SessionID)
		}

		if rv.MinDurationSeconds < 0 || rv.MinDurationSeconds > 1<<40 {
			bad("%s.review.min_duration_seconds is out of range", f)
		}
		for name, h := range map[string]string{"display_content_hash": rv.DisplayContentHash, "rationale_hash": rv.RationaleHash} {
			if h != "" {
				if _, err := commitment.Parse(h); err != nil {
					bad("%s.review.%s: %v", f, name, err)
				}
			}
		}
	}
}

func checkSignature(p parsed, trust *signing.Bundle) Check {
	c := Check{Name: CheckSignature}
	if trust == nil {
		return fail(c, "TRUST ROOT MISSING", "signature not checked: no trust bundle given", true)
	}
	if err := trust.Verify(p.v.SigningKeyID, p.signedJCS, p.v.Signature); err != nil {
		if errors.Is(err, signing.ErrUnknownKey) {
			return fail(c, "UNKNOWN SIGNING KEY", fmt.Sprintf("signature by key %s, which the trust bundle does not hold", p.v.SigningKeyID), false)
		}
		return fail(c, "SIGNATURE INVALID", fmt.Sprintf("signature invalid: the signed fields were changed after signing or the signature is not by key %s", p.v.SigningKeyID), false)
	}
	c.Status, c.Message = Pass, fmt.Sprintf("signature valid (Ed25519, key %s)", p.v.SigningKeyID)
	return c
}

func fail(c Check, code, msg string, missingTrust bool) Check {
	c.Status, c.Code, c.Message, c.MissingTrust = Fail, code, msg, missingTrust
	return c
}

// declaredBreak reports whether gaps account for a chain break exactly: a
// hole (sequence numbers absent before b.Sequence) by one sequence_missing
// gap whose range is the hole, any other break by a chain_break gap at the
// record whose chain hash fails. A chain_break gap never declares a hole.
func declaredBreak(gaps []Gap, b ChainBreak) bool {
	for _, g := range gaps {
		if g.Sequence == nil {
			continue
		}
		if b.MissingFrom > 0 {
			if g.GapType == GapSequenceMissing && *g.Sequence == b.MissingFrom && g.SequenceEnd != nil && *g.SequenceEnd == b.MissingTo {
				return true
			}
		} else if g.GapType == GapChainBreak && *g.Sequence == b.Sequence {
			return true
		}
	}
	return false
}

func checkChain(p parsed) Check {
	c := Check{Name: CheckChain}
	breaks := p.breaks
	if len(breaks) == 0 {
		if !p.v.ChainIntact {
			return fail(c, "CHAIN MISMATCH", "chain_intact is false, but the chain recomputes intact from genesis", false)
		}
		c.Status, c.Message = Pass, fmt.Sprintf("chain intact (%d records from genesis)", len(p.v.Records))
		return c
	}
	undeclared := 0
	for _, b := range breaks {
		c.Details = append(c.Details, fmt.Sprintf("sequence %d: %s", b.Sequence, b.Reason))
		if !declaredBreak(p.v.Gaps, b) {
			undeclared++
		}
	}
	if p.v.ChainIntact || undeclared > 0 {
		return fail(c, "CHAIN BROKEN", fmt.Sprintf("chain broken at sequence %d: %s", breaks[0].Sequence, breaks[0].Reason), false)
	}
	c.Status, c.Message = Warn, fmt.Sprintf("chain not intact: %d break(s), each declared as a governance gap", len(breaks))
	return c
}

func checkMerkle(p parsed) Check {
	c := Check{Name: CheckMerkle}
	if got := MerkleRoot(p.v.Records); got != p.v.MerkleRoot {
		return fail(c, "MERKLE ROOT MISMATCH", fmt.Sprintf("merkle_root %s does not match the records' commitments (recomputed %s)", shortHash(p.v.MerkleRoot), shortHash(got)), false)
	}
	c.Status, c.Message = Pass, fmt.Sprintf("merkle root matches %d commitments", len(p.v.Records))
	return c
}

func checkTimestamp(p parsed, trust *signing.Bundle, r *Report) Check {
	c := Check{Name: CheckTimestamp}
	if trust == nil || len(trust.Roots()) == 0 {
		return fail(c, "TSA ROOT MISSING", "timestamp not checked: the trust bundle holds no timestamp authority root certificate", true)
	}
	// The token is over the 64 signature bytes; its imprint may be SHA-256,
	// SHA-384 or SHA-512 of them (FORMATS.md, "Signature and timestamp").
	info, err := timestamp.VerifyData(p.tsToken, p.signature, timestamp.VerifyOptions{Roots: trust.Roots()})
	if err != nil {
		code := "TIMESTAMP INVALID"
		switch {
		case errors.Is(err, timestamp.ErrUntrustedTSA):
			code = "UNTRUSTED TIMESTAMP AUTHORITY"
		case errors.Is(err, timestamp.ErrImprintMismatch):
			code = "TIMESTAMP NOT OVER SIGNATURE"
		}
		return fail(c, code, fmt.Sprintf("timestamp not authentic: %v", err), false)
	}
	r.TimestampedAt, r.genTime = FormatTime(info.GenTime), info.GenTime
	issued, _ := time.Parse(time.RFC3339Nano, p.v.IssuedAt)
	if d := info.GenTime.Sub(issued); d > MaxTimestampSkew || d < -MaxTimestampSkew {
		return fail(c, "TIMESTAMP TIME MISMATCH", fmt.Sprintf("timestamp time %s is %s away from issued_at %s (at most %s allowed)", FormatTime(info.GenTime), d.Round(time.Second), p.v.IssuedAt, MaxTimestampSkew), false)
	}
	c.Status = Pass
	c.Message = fmt.Sprintf("timestamp authentic (RFC 3161, %s, %s)", FormatTime(info.GenTime), info.Signer.Subject.CommonName)
	return c
}

// MaxReportDetails bounds the detail lines a check lists (one per gap,
// record or violation); the rest are counted in a last line.
const MaxReportDetails = 100

func checkGaps(p parsed) Check {
	c := Check{Name: CheckGaps}
	if bad := gapMismatches(&p.v, p.breaks); len(bad) > 0 {
		c.Details = bad
		return fail(c, "GAP MISMATCH", "governance gaps do not match the records: "+bad[0], false)
	}
	if len(p.v.Gaps) == 0 {
		c.Status, c.Message = Pass, "no governance gaps"
		return c
	}
	// One detail line per gap up to MaxReportDetails (a VPEC may hold
	// 100,000 gaps: the report stays small), and the message counts
	// the gap types in order of first appearance.
	var types []string
	count := map[string]int{}
	for i, g := range p.v.Gaps {
		if count[g.GapType]++; count[g.GapType] == 1 {
			types = append(types, g.GapType)
		}
		if i == MaxReportDetails {
			c.Details = append(c.Details, fmt.Sprintf("… and %d more", len(p.v.Gaps)-i))
		}
		if i >= MaxReportDetails {
			continue
		}
		d := fmt.Sprintf("%s (%s)", g.GapType, g.Severity)
		if g.Check != nil {
			d += " check " + *g.Check
		}
		switch {
		case g.Sequence != nil && g.SequenceEnd != nil && *g.SequenceEnd != *g.Sequence:
			d += fmt.Sprintf(" sequences %d-%d", *g.Sequence, *g.SequenceEnd)
		case g.Sequence != nil:
			d += fmt.Sprintf(" sequence %d", *g.Sequence)
		}
		c.Details = append(c.Details, d)
	}
	parts := make([]string, len(types))
	for i, t := range types {
		parts[i] = t
		if n := count[t]; n > 1 {
			parts[i] = fmt.Sprintf("%s ×%d", t, n)
		}
	}
	c.Status, c.Message = Warn, fmt.Sprintf("%d governance gap(s): %s", len(p.v.Gaps), strings.Join(parts, ", "))
	return c
}

func checkSummary(p parsed) Check {
	c := Check{Name: CheckSummary}
	v := &p.v
	chainIntact := len(p.breaks) == 0
	want := Summarize(v.Records, v.Gaps, chainIntact)
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
	if env, _ := EnvironmentOf(v.APIKeyID); env != v.Environment {
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

// ReviewStatement returns the bytes a human reviewer signs for a record:
// JCS of the review statement (see docs/FORMATS.md).
func ReviewStatement(runID string, r *Record) ([]byte, error) {
	st := map[string]any{
		"type":            "svc.review/v1",
		"run_id":          runID,
		"check":           r.Check,
		"manifest_id":     r.ManifestID,
		"check_result":    r.CheckResult,
		"commitment_hash": r.CommitmentHash,
	}
	if r.Review != nil {
		st["session_id"] = r.Review.SessionID
		if r.Review.DisplayContentHash != "" {
			st["display_content_hash"] = r.Review.DisplayContentHash
		}
		if r.Review.RationaleHash != "" {
			st["rationale_hash"] = r.Review.RationaleHash
		}
	}
	return document.MarshalSignedBytes(st)
}

// CheckOpenData is the byte string the check-open timestamp is over.
func CheckOpenData(sessionID string) []byte {
	return []byte("svc.check-open.v1:" + sessionID)
}

// CheckCloseData is the byte string the check-close timestamp is over.
func CheckCloseData(sessionID, commitmentHash string) []byte {
	return []byte("svc.check-close.v1:" + sessionID + ":" + commitmentHash)
}

// CheckOpenImprint is the SHA-256 digest of CheckOpenData, the imprint svc
// requests for the check-open timestamp.
func CheckOpenImprint(sessionID string) []byte {
	d := sha256.Sum256(CheckOpenData(sessionID))
	return d[:]
}

// CheckCloseImprint is the SHA-256 digest of CheckCloseData, the imprint
// svc requests for the check-close timestamp.
func CheckCloseImprint(sessionID, commitmentHash string) []byte {
	d := sha256.Sum256(CheckCloseData(sessionID, commitmentHash))
	return d[:]
}

func checkReviews(p parsed, trust *signing.Bundle, times *[]sessionTimes) Check {
	c := Check{Name: CheckReviews}
	reviews, sessions := 0, 0
	for i := range p.v.Records {
		r := &p.v.Records[i]
		var err error
		var st sessionTimes
		switch {
		case r.Review != nil:
			reviews++
			st, err = reviewTimes(p.v.RunID, r, trust)
		case r.CheckSession != nil:
			sessions++
			st, err = checkSessionTimes(r, trust)
		default:
			continue
		}
		if !st.open.IsZero() {
			st.index = i
			*times = append(*times, st)
		}
		if err != nil {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d (%s): %v", r.Sequence, r.Check, err))
		}
	}
	if reviews+sessions == 0 {
		c.Status, c.Message = NotApplicable, "witnessed reviews: none present"
		return c
	}
	if len(c.Details) > 0 {
		return fail(c, "REVIEW INVALID", "witnessed review or check session invalid: "+c.Details[0], trust == nil || len(trust.Roots()) == 0)
	}
	c.Status = Pass
	c.Message = fmt.Sprintf("%d witnessed review(s) valid (reviewer signature, open and close timestamps, minimum duration)", reviews)
	if sessions > 0 {
		c.Message = fmt.Sprintf("%d witnessed review(s) and %d check session(s) valid (signatures and open and close timestamps)", reviews, sessions)
	}
	return c
}

// VerifyCheckSession checks the open and close timestamps of a record's
// check session against the trust bundle's TSA roots.
func VerifyCheckSession(r *Record, trust *signing.Bundle) error {
	if r.CheckSession == nil {
		return fmt.Errorf("record has no check_session block")
	}
	return verifyCheckSession(r, trust)
}

func verifyCheckSession(r *Record, trust *signing.Bundle) error {
	_, err := checkSessionTimes(r, trust)
	return err
}

// sessionTimes are the verified genTimes of one record's session tokens
// (open is zero when the open token did not verify, close when the close
// token did not).
type sessionTimes struct {
	index       int // records[index]
	open, close time.Time
}

func checkSessionTimes(r *Record, trust *signing.Bundle) (st sessionTimes, err error) {
	cs := r.CheckSession
	if trust == nil || len(trust.Roots()) == 0 {
		return st, fmt.Errorf("check session timestamps not checked: the trust bundle holds no timestamp authority root")
	}
	if st.open, err = verifyTST(cs.CheckOpenTST, CheckOpenData(cs.SessionID), trust); err != nil {
		return st, fmt.Errorf("check_session.check_open_tst: %w", err)
	}
	if st.close, err = verifyTST(cs.CheckCloseTST, CheckCloseData(cs.SessionID, r.CommitmentHash), trust); err != nil {
		return st, fmt.Errorf("check_session.check_close_tst: %w", err)
	}
	if st.close.Before(st.open) {
		return st, fmt.Errorf("the check session closed before it opened")
	}
	return st, nil
}

// VerifyReview checks the witnessed-review evidence of a record of run
// runID: the reviewer's Ed25519 signature over the review statement, both
// RFC 3161 timestamps against the trust bundle's TSA roots, and that the
// review lasted at least its minimum duration.
func VerifyReview(runID string, r *Record, trust *signing.Bundle) error {
	if r.Review == nil {
		return fmt.Errorf("record has no review block")
	}
	_, err := reviewTimes(runID, r, trust)
	return err
}

func reviewTimes(runID string, r *Record, trust *signing.Bundle) (st sessionTimes, err error) {
	rv := r.Review
	der, err := signing.DecodeBase64(rv.ReviewerPublicKey)
	if err != nil {
		return st, fmt.Errorf("reviewer_public_key is not base64 SPKI DER")
	}
	pub, err := signing.ParsePublicKeyDER(der)
	if err != nil {
		return st, fmt.Errorf("reviewer_public_key: %w", err)
	}
	if id := signing.KeyID(pub); id != rv.ReviewerKeyID {
		return st, fmt.Errorf("reviewer_key_id %s does not match the reviewer public key (id %s)", rv.ReviewerKeyID, id)
	}
	sig, err := signing.ParseSignature(rv.ReviewerSignature)
	if err != nil {
		return st, fmt.Errorf("reviewer_signature: %w", err)
	}
	msg, err := ReviewStatement(runID, r)
	if err != nil {
		return st, err
	}
	if err := signing.Verify(pub, msg, sig); err != nil {
		return st, fmt.Errorf("reviewer signature: %w", err)
	}
	if trust == nil || len(trust.Roots()) == 0 {
		return st, fmt.Errorf("review timestamps not checked: the trust bundle holds no timestamp authority root")
	}
	if st.open, err = verifyTST(rv.CheckOpenTST, CheckOpenData(rv.SessionID), trust); err != nil {
		return st, fmt.Errorf("check_open_tst: %w", err)
	}
	if st.close, err = verifyTST(rv.CheckCloseTST, CheckCloseData(rv.SessionID, r.CommitmentHash), trust); err != nil {
		return st, fmt.Errorf("check_close_tst: %w", err)
	}
	if !LastedAtLeast(st.open, st.close, rv.MinDurationSeconds) {
		return st, fmt.Errorf("%w: review lasted %s, less than its minimum of %ds", ErrReviewTooShort, st.close.Sub(st.open).Round(time.Millisecond), rv.MinDurationSeconds)
	}
	return st, nil
}

// LastedAtLeast reports whether closed is at least seconds seconds after
// open, exactly: to the nanosecond, and for every int64 seconds (a review's
// min_duration_seconds may be up to 2^40, whose nanoseconds no int64
// holds: time.Duration(seconds)*time.Second would wrap around). Exact for
// any two times of years 0 to 9999, which is every time a document or a
// time-stamp token can state.
func LastedAtLeast(open, closed time.Time, seconds int64) bool {
	s := closed.Unix() - open.Unix()
	if closed.Nanosecond() < open.Nanosecond() {
		s-- // the fraction borrows one second: s whole seconds and less than one more
	}
	return s >= seconds
}

func verifyTST(b64 string, data []byte, trust *signing.Bundle) (time.Time, error) {
	der, err := signing.DecodeBase64(b64)
	if err != nil {
		return time.Time{}, err
	}
	info, err := timestamp.VerifyData(der, data, timestamp.VerifyOptions{Roots: trust.Roots()})
	if err != nil {
		return time.Time{}, err
	}
	return info.GenTime, nil
}

func checkProfiles(p parsed, opts Options) Check {
	c := Check{Name: CheckProfile}
	type key struct{ id, gpu string }
	var seen []key
	cache := map[string]*profile.Profile{}
	missing, invalid := 0, false
	var mismatchGPU string
	// Profiles given explicitly are all checked: a corrupt or forged one is
	// PROFILE INVALID even when no record needs it, never "not available".
	if ex, ok := opts.Profiles.(interface{ Explicit() []profile.File }); ok {
		for _, f := range ex.Explicit() {
			err := f.Err
			if err == nil {
				if opts.Trust == nil {
					continue
				}
				_, err = profile.Verify(f.Doc, opts.Trust)
			}
			if err != nil {
				c.Details = append(c.Details, "--profile "+f.Path+": "+profileProblem(err))
				invalid = true
			}
		}
	}
	for i := range p.v.Records {
		r := &p.v.Records[i]
		bi := r.BoundedInference
		if bi == nil {
			continue
		}
		if k := (key{bi.ProfileID, bi.GPUClass}); !slices.Contains(seen, k) {
			seen = append(seen, k)
		}
		prof, ok := cache[bi.ProfileID]
		if !ok {
			var err error
			prof, err = resolveProfile(bi.ProfileID, opts)
			if err != nil {
				c.Details = append(c.Details, fmt.Sprintf("sequence %d: profile %s: %v", r.Sequence, bi.ProfileID, err))
				if errors.Is(err, ErrProfileNotFound) {
					missing++
				} else {
					invalid = true
				}
				cache[bi.ProfileID] = nil
				continue
			}
			cache[bi.ProfileID] = prof
		}
		if prof == nil {
			continue
		}
		if !prof.CoversGPU(bi.GPUClass) {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d: gpu_class %s is not among %s's calibrated classes %v", r.Sequence, bi.GPUClass, prof.ProfileID, prof.CalibratedGPUClasses))
			mismatchGPU = bi.GPUClass
			continue
		}
		m, ok := prof.Model(bi.ONNXModelHash)
		if !ok {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d: model %s is not covered by profile %s", r.Sequence, shortHash(bi.ONNXModelHash), prof.ProfileID))
			continue
		}
		if want, ok := m.OperatorCounts[bi.TraceMode]; !ok || want != bi.OperatorCount {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d: operator_count %d in %s mode, profile %s gives %d for this model", r.Sequence, bi.OperatorCount, bi.TraceMode, prof.ProfileID, want))
		}
	}
	if len(seen) == 0 && len(c.Details) == 0 {
		c.Status, c.Message = NotApplicable, "profile: no Bounded Inference records"
		return c
	}
	var names []string
	for _, k := range seen {
		names = append(names, k.id+" · "+k.gpu)
	}
	if len(c.Details) > 0 {
		code := "PROFILE MISMATCH"
		if invalid {
			code = "PROFILE INVALID"
		}
		if mismatchGPU != "" && !invalid {
			code = "PROFILE MISMATCH (gpu_class " + mismatchGPU + ")"
		}
		if missing > 0 && len(c.Details) == missing {
			return fail(c, "PROFILE NOT AVAILABLE", "profile not checked: "+c.Details[0]+"; pass it with --profile or put it in the profile directory", true)
		}
		return fail(c, code, "profile inconsistent: "+c.Details[0], false)
	}
	c.Status, c.Message = Pass, "profile consistent ("+strings.Join(names, "; ")+")"
	return c
}

func resolveProfile(id string, opts Options) (*profile.Profile, error) {
	if opts.Profiles == nil {
		return nil, ErrProfileNotFound
	}
	doc, err := opts.Profiles.Profile(id)
	if err != nil {
		return nil, err
	}
	if opts.Trust == nil {
		return nil, fmt.Errorf("%w: no trust bundle to check its signature", ErrProfileNotFound)
	}
	prof, err := profile.Verify(doc, opts.Trust)
	if err != nil {
		return nil, err
	}
	if prof.ProfileID != id {
		return nil, fmt.Errorf("source returned profile %s", prof.ProfileID)
	}
	return prof, nil
}

// profileProblem says in one line what is wrong with a profile given to
// the verifier: the first of several schema problems (with their count),
// and for an unsigned one (what svc calibrate run writes) how to get it
// signed.
func profileProblem(err error) string {
	if errors.Is(err, profile.ErrUnsigned) {
		return err.Error() + ": it is what 'svc calibrate run' writes; the service signs it on 'svc registry publish', and 'svc registry get' gives the signed one"
	}
	msg := err.Error()
	if first, rest, ok := strings.Cut(msg, "\n"); ok {
		return fmt.Sprintf("%s (and %d more problems)", first, strings.Count(rest, "\n")+1)
	}
	return msg
}
