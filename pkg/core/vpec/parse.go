package vpec

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"regexp"
	"slices"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/merkle"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
)

// Document is a VPEC as Parse read it: the decoded VPEC and the bytes its
// signature and chain cover, taken from the input as given (never from a
// re-encoding of the decoded value). It shares the input's bytes: the
// input must not change while the Document is used.
type Document struct {
	// VPEC is the decoded document. A record's Details holds only the
	// members the decomposition links name (read.go): the verifier needs
	// no more, and decoded details cost up to 20 times their size.
	VPEC VPEC
	// SignedParts is the bytes the signature covers (SignedBytes) in
	// parts, to be taken in order: bytes Parse wrote and, in a large VPEC
	// whose records are each written in canonical form (as the service
	// writes them), the records as windows of the input (copied, they
	// would double the memory the signed bytes take). Signed joins them.
	SignedParts [][]byte
	// Chain holds each record's chain input: RFC 8785 of the record
	// without chain_hash (RecordBytes of the record as given), in windows
	// of the input where the record is written in that form.
	Chain []ChainInput
	// Signature and Token are the decoded signature and RFC 3161 token;
	// nil in an unsigned offline VPEC.
	Signature, Token []byte

	raw []byte
	par readPar // how records are read (tests); zero: by size and GOMAXPROCS
	// input, when not nil, gives document.CheckInput's answer, computed
	// beside the shape scan; read waits for it before anything else.
	input    chan error
	inputErr error
	// rules holds each record's own problems when the goroutines that
	// read the records found them (recordProblems).
	rules [][]string
	// owned: the caller handed doc over (ParseOwned), so records' fields
	// may be windows of it.
	owned bool
	// leaves are the records' Merkle leaf hashes when the goroutines that
	// read the records computed them (each record's commitment then in
	// cache, where the check would read it again cold); nil otherwise.
	leaves []merkle.Hash
	// links are the records' chain links, from the genesis of linksRunID,
	// when the goroutines that read the records computed them; nil
	// otherwise.
	links      []chainLink
	linksRunID string
	// idHashes are the records' record_id hashes when those goroutines
	// computed them (duplicateIDs); nil otherwise.
	idHashes []uint64
	// signedTo is ParseOptions.SignedTo; signedWritten: the writer it
	// returned was given exactly SignedParts.
	signedTo      func(*VPEC) io.Writer
	signedWritten bool
}

// SignedWritten reports whether the writer ParseOptions.SignedTo returned
// was given the signed bytes: exactly SignedParts, in order, and nothing
// else. When false, it may have been given nothing, or other bytes.
func (d *Document) SignedWritten() bool { return d.signedWritten }

// ChainBreaks is VerifyChainInputs of the document's records and chain
// inputs as Parse read them, from the links computed while reading them
// when there are (each record's bytes then in cache, where a second pass
// would read them again cold). Like MerkleRoot, it does not follow later
// changes to VPEC.Records or VPEC.RunID: call VerifyChainInputs then.
func (d *Document) ChainBreaks() []ChainBreak {
	if d.links == nil || len(d.links) != len(d.VPEC.Records) || d.linksRunID != d.VPEC.RunID {
		return VerifyChainInputs(d.VPEC.RunID, d.VPEC.Records, d.Chain)
	}
	return chainBreaks(d.VPEC.Records, d.links)
}

// MerkleRoot is MerkleRoot of the document's records as Parse read them,
// from the leaf hashes computed while reading them when there are (like
// SignedParts and Chain, it does not follow later changes to VPEC.Records:
// call the MerkleRoot function on changed records).
func (d *Document) MerkleRoot() string {
	if d.leaves == nil || len(d.leaves) != len(d.VPEC.Records) {
		return MerkleRoot(d.VPEC.Records)
	}
	return rootOf(d.leaves)
}

// Signed returns the bytes the signature covers in one slice: the one
// part, or the parts joined (a new slice on each call).
func (d *Document) Signed() []byte {
	if len(d.SignedParts) == 1 {
		return d.SignedParts[0]
	}
	return bytes.Join(d.SignedParts, nil)
}

// inputOK waits for the input check, if it runs apart, and reports
// whether it passed (its error is then in inputErr).
func (p *Document) inputOK() bool {
	if p.input != nil {
		p.inputErr, p.input = <-p.input, nil
	}
	return p.inputErr == nil
}

// Parse reads a v1 VPEC (or an unsigned offline VPEC, OfflineSchema) from
// untrusted bytes: the input rules (document.CheckInput), the shape scan,
// the strict decode and every v1 rule that needs no trust material (ids,
// times, enums, encodings, records, gaps). It proves nothing about who
// issued the document: that is pkg/core/verify's.
//
// Input that is not a JSON document at all gives a nil Document and the
// *document.SyntaxError. A document that breaks the schema gives the
// Document as far as it was read (to say which VPEC it was) and a
// *document.SchemaError listing every problem, each naming its member.
func Parse(doc []byte) (*Document, error) { return ParseWith(doc, ParseOptions{}) }

// ParseOwned is Parse of a doc the caller hands over for good: doc must
// never change again while the Document, or any string taken from it, is
// in use (a file read for verification and dropped after). The fields of
// records read in one pass are then windows of doc itself instead of a
// copy of each record: a large VPEC's records are not copied once more.
func ParseOwned(doc []byte) (*Document, error) { return ParseWith(doc, ParseOptions{Owned: true}) }

// ParseOptions are ParseWith's options; the zero value is Parse.
type ParseOptions struct {
	// Owned: doc is handed over for good (ParseOwned).
	Owned bool
	// SignedTo, when not nil, is called at most once, when the top level
	// has been read and before the records are, with the top level (its
	// Records not yet set). The writer it returns, if not nil, may then be
	// given the signed bytes while the records are read (in a large VPEC
	// whose records are each in canonical form), so that a signature
	// check hashes them beside the reading. Document.SignedWritten says
	// whether it was given exactly them; when not, it may have been given
	// other bytes, and must not be used to judge the signature.
	SignedTo func(top *VPEC) io.Writer
}

// ParseWith is Parse with options.
func ParseWith(doc []byte, o ParseOptions) (*Document, error) {
	if len(doc) > document.MaxSize {
		return nil, document.CheckInput(doc) // at once: not even scanned
	}
	// The input check (two passes over the bytes) runs beside the shape
	// scan (one pass, allocating only the records' offsets), which is all
	// read does before it has the check's answer: a refused input is
	// refused as if checked first.
	d := &Document{raw: doc, input: make(chan error, 1), owned: o.Owned, signedTo: o.SignedTo}
	go func() { d.input <- document.CheckInput(doc) }()
	var problems []string
	bad := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	ok := d.read(doc, bad)
	if !d.inputOK() {
		return nil, d.inputErr
	}
	if ok {
		d.checkRules(bad)
	}
	if len(problems) == 0 {
		checkGapRules(&d.VPEC, bad)
	}
	if len(problems) > 0 {
		return d, &document.SchemaError{Problems: problems}
	}
	return d, nil
}

var keyIDPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

// checkRules applies the v1 rules to the decoded VPEC, in member order,
// and decodes the signature and token.
func (d *Document) checkRules(bad func(string, ...any)) {
	v := &d.VPEC
	offline := v.Schema == OfflineSchema
	if v.Schema != Schema && !offline {
		bad("schema is %q, want %q (this verifier reads v1 VPECs)", v.Schema, Schema)
	}
	prefixed := func(field, val, prefix string) {
		if !names.ValidPrefixedID(val, prefix) {
			bad("%s %q must be %s followed by an id, %d bytes at most in all", field, val, prefix, names.MaxIDBytes)
		}
	}
	prefixed("vpec_id", v.VPECID, "vpec_")
	prefixed("run_id", v.RunID, "run_")
	if !names.ValidID(v.WorkflowID) {
		bad("workflow_id %q must be 1-128 characters of letters, digits and ._:-", v.WorkflowID)
	}
	if !names.ValidID(v.OrgID) && !(offline && v.OrgID == "") { // a run opened offline: org unknown
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
	if _, ok := environmentOf(v.APIKeyID); !ok || !names.ValidID(v.APIKeyID) {
		bad("api_key_id %q must start with %s or %s", v.APIKeyID, Sandbox.KeyPrefix(), Production.KeyPrefix())
	}
	if !v.ProofLevelFloor.Valid() {
		bad("proof_level_floor %q is not a proof level %v", v.ProofLevelFloor, proofLevels)
	}
	// Map members in sorted order: the problems, like the verdict, are
	// the same on every run.
	for _, k := range slices.Sorted(maps.Keys(v.ProofLevelBreakdown)) {
		n := v.ProofLevelBreakdown[k]
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
	for _, k := range slices.Sorted(maps.Keys(v.ProvableSurfaceBreakdown)) {
		share("provable_surface_breakdown."+k, v.ProvableSurfaceBreakdown[k])
	}
	for _, n := range []int64{v.TotalChecksRun, v.ChecksPassed, v.ChecksFailed} {
		if n < 0 {
			bad("check counts must not be negative")
			break
		}
	}
	for i, g := range v.Gaps {
		f := fmt.Sprintf("gaps[%d]", i)
		if !names.ValidID(g.GapID) {
			bad("%s.gap_id %q is not an id", f, g.GapID)
		}
		if !names.ValidID(g.GapType) {
			bad("%s.gap_type %q is not a gap type", f, g.GapType)
		}
		if !g.Severity.Valid() {
			bad("%s.severity %q is not one of %v", f, g.Severity, gap.Severities())
		} else if want := gap.SeverityOf(g.GapType); want != "" && want != g.Severity {
			bad("%s.severity of a %s gap is %s, not %s", f, g.GapType, want, g.Severity)
		}
		timeField(f+".timestamp", g.Timestamp)
	}
	if _, err := commitment.ParseSHA256(v.MerkleRoot); err != nil {
		bad("merkle_root: %v", err)
	}
	switch {
	case offline:
		// An unsigned offline VPEC: the verifier reports it as such.
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
		d.Signature = sig
		tok, err := signing.DecodeBase64(v.TimestampRFC3161)
		if err != nil || len(tok) == 0 {
			bad("timestamp_rfc3161 must be the base64 DER of an RFC 3161 response (standard alphabet, padded, no line breaks)")
		}
		d.Token = tok
	}
	var prevSeq int64
	each, twice := d.recordProblems(), d.duplicateIDs()
	for i := range v.Records {
		each(i, bad)
		rec := &v.Records[i]
		if twice(i) {
			bad("records[%d].record_id %q appears twice", i, rec.RecordID)
		}
		if rec.Sequence <= prevSeq {
			bad("records[%d].sequence %d does not increase (previous %d)", i, rec.Sequence, prevSeq)
		}
		prevSeq = rec.Sequence
	}
}

// duplicateIDs returns a function that reports whether record i's id is
// an earlier record's, called for each record in order. For a large VPEC
// the goroutines that read the records hashed the ids (idHashes); a table
// of those hashes then reads an id again only to compare two whose hashes
// are equal (a map would read every id again, far apart in memory).
func (d *Document) duplicateIDs() func(i int) bool {
	recs := d.VPEC.Records
	if d.idHashes == nil || len(d.idHashes) != len(recs) {
		ids := make(map[string]struct{}, len(recs))
		return func(i int) bool {
			n := len(ids)
			ids[recs[i].RecordID] = struct{}{} // one hash per id: it was there if the map did not grow
			return len(ids) == n
		}
	}
	size := 1
	for size < 2*len(recs) {
		size <<= 1
	}
	slots := make([]int32, size) // record index + 1; 0: empty
	return func(i int) bool {
		h := d.idHashes[i]
		for at := h & uint64(size-1); ; at = (at + 1) & uint64(size-1) {
			j := slots[at] - 1
			if j < 0 {
				slots[at] = int32(i + 1)
				return false
			}
			if d.idHashes[j] == h && recs[j].RecordID == recs[i].RecordID {
				return true
			}
		}
	}
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

// checkGapRules applies the gap rules the struct decoder cannot: which
// members go with which gap type. bad reports a schema problem.
func checkGapRules(v *VPEC, bad func(string, ...any)) {
	for i, g := range v.Gaps {
		f := fmt.Sprintf("gaps[%d]", i)
		if err := names.ValidName(g.GapType); err != nil {
			bad("%s.gap_type: %v", f, err)
		}
		if g.Check != nil {
			if err := names.ValidName(*g.Check); err != nil {
				bad("%s.check: %v", f, err)
			}
		}
		switch g.GapType {
		case gap.SequenceMissing:
			switch {
			case g.Sequence == nil || g.SequenceEnd == nil:
				bad("%s: a sequence_missing gap needs sequence (first missing) and sequence_end (last missing)", f)
			case *g.Sequence < 1 || *g.SequenceEnd < *g.Sequence:
				bad("%s: sequence %d to sequence_end %d is not a range of sequence numbers", f, *g.Sequence, *g.SequenceEnd)
			}
		case gap.ChainBreak:
			if g.Sequence == nil || *g.Sequence < 1 {
				bad("%s: a chain_break gap needs the sequence of the record whose chain hash fails", f)
			}
		case gap.EmptyRun:
			if g.Check != nil || g.Sequence != nil {
				bad("%s: an empty_run gap has check and sequence null", f)
			}
		}
		if g.GapType != gap.SequenceMissing && g.SequenceEnd != nil {
			bad("%s.sequence_end: only a sequence_missing gap has one", f)
		}
	}
}
