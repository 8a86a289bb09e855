package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"runtime"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
)

// DefaultMaxRecordsPerRun bounds the records of a run unless configured
// otherwise (svc serve --max-records-per-run).
const DefaultMaxRecordsPerRun = 100000

// The byte budget of a run. The VPEC of a run is its header, then each
// record's stored body verbatim on a line of its own, then its gaps. What
// a record adds to the VPEC beyond its body is bounded by
// VPECBytesPerRecord: 6 bytes of indentation and separator, at most one
// sequence_missing or chain_break gap (indented, ids and numbers at their
// longest: under 400 bytes) and at most one model_profile_missing gap
// (under 400 bytes plus its check name, at most 256 bytes, 512 when every
// character is escaped). Everything else (the header, the summary, at
// most one gap for a hole after the last record, the signature and the
// timestamp token) is below VPECHeaderBytes. So a run whose bodies plus
// VPECBytesPerRecord per record stay within
// MaxDocumentBytes - VPECHeaderBytes issues a VPEC below MaxDocumentBytes
// (TestRunByteBudget fills a run to the limit and checks it).
const (
	VPECBytesPerRecord = 1536
	VPECHeaderBytes    = 1 << 20
)

// RunLimits bound a run (decision D1). Zero fields take the defaults.
type RunLimits struct {
	// MaxRecords bounds the records of a run (DefaultMaxRecordsPerRun).
	MaxRecords int64
	// MaxDocumentBytes is the VPEC size the byte budget keeps below
	// (document.MaxSize; tests use less).
	MaxDocumentBytes int64
}

// store returns the store's form of the limits.
func (l RunLimits) store() store.Limits {
	return store.Limits{MaxRecords: l.MaxRecords, MaxBytes: l.MaxDocumentBytes - VPECHeaderBytes, BytesPerRecord: VPECBytesPerRecord}
}

// withDefaults fills the zero fields of l with the defaults.
func (l RunLimits) withDefaults() RunLimits {
	if l.MaxRecords <= 0 {
		l.MaxRecords = DefaultMaxRecordsPerRun
	}
	if l.MaxDocumentBytes <= 0 {
		l.MaxDocumentBytes = document.MaxSize
	}
	return l
}

func (s *Server) runLimits() RunLimits { return s.cfg.RunLimits }

// runFull is the answer to a record its run cannot take.
func runFull(le *store.LimitError) error {
	msg := fmt.Sprintf("the run holds %d records, the maximum per run (max_records_per_run); close it and record into a new run", le.Have)
	if le.Limit == "max_bytes" {
		msg = fmt.Sprintf("the run's records would exceed %d bytes (max_run_bytes: its VPEC must stay below %d bytes); close it and record into a new run", le.Max, le.Max+VPECHeaderBytes)
	}
	return &httpError{http.StatusUnprocessableEntity, api.CodeRunTooLarge, msg, ""}
}

// idempotencyKeyPattern is the form of a close's Idempotency-Key (D8).
var idempotencyKeyPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// idempotencyKey returns the close's Idempotency-Key header ("" if absent).
func idempotencyKey(r *http.Request) (string, error) {
	vs := r.Header.Values("Idempotency-Key")
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1 || !idempotencyKeyPattern.MatchString(vs[0]):
		return "", badRequest("Idempotency-Key", "the Idempotency-Key header must be one value of 1-128 letters, digits or ._:-")
	}
	return vs[0], nil
}

// sealedError is the 409 of a close of a run that is sealed, naming its
// VPEC when it has one.
func sealedError(run store.Run) error {
	msg := "the run is sealed: it is being closed by another request (retry that close with its Idempotency-Key); open a new run"
	if run.VPECID != "" {
		msg = "the run is sealed: its VPEC " + run.VPECID + " was issued (GET /api/v1/vpecs/" + run.VPECID + "); open a new run"
	}
	return &httpError{http.StatusConflict, api.CodeRunSealed, msg, ""}
}

// refusedClose is a close the service refuses for what the run holds
// (not for a failure): the run is opened again, since nothing was issued.
type refusedClose struct{ err error }

func (e *refusedClose) Error() string { return e.err.Error() }
func (e *refusedClose) Unwrap() error { return e.err }

// recordsPattern and indentedRecordsPattern are the (only) places the
// records go in a VPEC marshalled with no records: canonical and indented.
// A JSON string cannot hold them (its quotes are escaped, it has no raw
// newline), and no other member of a VPEC is named records.
var (
	recordsPattern         = []byte(`,"records":[],`)
	indentedRecordsPattern = []byte("\n  \"records\": [],\n")
)

// keepBodiesMax is the largest run (sum of its record bodies) whose close
// reads the records once and keeps their stored bytes for the signed
// bytes and the document; a larger run reads them again for each (its
// memory stays near two copies of the VPEC). Reading a 10,000-record run
// from the store was two thirds of its close (docs/BENCHMARKS.md).
const keepBodiesMax = 64 << 20

// issue builds and signs the VPEC of a run whose record set is sealed, in
// memory bounded by a small multiple of the VPEC's size. The first read
// derives gaps and summary (keeping, per record, only what those need and
// the bytes the chain covers); the signed bytes and then the document are
// assembled from the stored bodies: kept from that read when the run is at
// most keepBodiesMax, else read again each time (they cannot change).
// Each record appears in the VPEC exactly as stored: its canonical bytes,
// on a line of its own.
func (s *Server) issue(r *http.Request, run store.Run) (*vpec.VPEC, []byte, [32]byte, error) {
	var digest [32]byte // of the signed bytes: the transparency log leaf's vpec_digest
	ctx := r.Context()
	now := s.cfg.Now().UTC()
	stamp := vpec.FormatTime(now)
	v := &vpec.VPEC{
		VPECID: names.NewOrderedID("vpec_", now), RunID: run.ID, WorkflowID: run.WorkflowID, OrgID: run.OrgID,
		Environment: vpec.Environment(run.Environment), APIKeyID: run.APIKeyID, IssuedAt: stamp, OpenedAt: vpec.FormatTime(run.OpenedAt),
	}
	recs := make([]vpec.Record, 0, run.RecordCount)
	jcs := make([][]byte, 0, run.RecordCount)
	var profileGaps []vpec.Gap
	var claims runClaims
	var bodyBytes int64
	var kept *keptBodies
	if run.RecordBytes <= keepBodiesMax {
		kept = &keptBodies{buf: make([]byte, 0, run.RecordBytes), ends: make([]int, 0, run.RecordCount)}
	}
	cut := false // some chain input was cut from its stored body (chainInput)
	err := s.eachParsed(ctx, run.ID, func(p *parsedRecord) error {
		if kept != nil {
			kept.add(p.body)
		}
		rec := p.rec
		if rec.RaisesProfileMissing() {
			ok, err := s.profiled(r, rec.ONNXModelHash, gpuClassOf(&rec))
			if err != nil {
				return err
			}
			if !ok {
				check, sq := rec.Check, rec.Sequence
				profileGaps = append(profileGaps, vpec.Gap{GapID: names.NewID("gap_"), GapType: gap.ModelProfileMissing, Severity: gap.Medium, Check: &check, Sequence: &sq, Timestamp: stamp})
			}
		}
		if rec.RaisesCircuitMissing() {
			gap, err := s.circuitGap(r, &rec, stamp)
			if err != nil {
				return err
			}
			if gap != nil {
				profileGaps = append(profileGaps, *gap)
			}
		}
		claims.add(&rec)
		// Gaps and summary need the levels, results, hashes and sequence;
		// the evidence blocks and details stay in the stored bytes.
		rec.Details, rec.Review, rec.CheckSession, rec.BoundedInference = nil, nil, nil, nil
		rec.DisclosedInput, rec.DisclosedOutput, rec.FieldDigests, rec.Disclosures, rec.Manifest = "", "", nil, nil, nil
		recs = append(recs, rec)
		jcs = append(jcs, p.chain)
		cut = cut || p.cut
		bodyBytes += int64(len(p.body))
		return nil
	})
	if err != nil {
		return nil, nil, digest, fmt.Errorf("close %s: read records: %w", run.ID, err)
	}
	if err := claims.err(); err != nil {
		// Nothing is signed; closeRun opens the run again so that the
		// client can add what is missing and close again.
		return nil, nil, digest, &refusedClose{err}
	}
	gaps, intact := issue.GapsChain(run.ID, recs, jcs, stamp)
	if !intact && cut {
		// A link did not verify over bytes cut from a stored body: derive
		// the chain's gaps again from each record's canonical form, as the
		// verifier does, so that only a real break is signed.
		bodies := s.storedBodies(r, run.ID)
		if kept != nil {
			bodies = kept.each
		}
		if jcs, err = canonicalChainInputs(bodies, len(recs)); err != nil {
			return nil, nil, digest, fmt.Errorf("close %s: read records: %w", run.ID, err)
		}
		gaps, intact = issue.GapsChain(run.ID, recs, jcs, stamp)
	}
	v.Gaps = append(gaps, profileGaps...)
	v.Records = recs
	issue.FinishIntact(v, intact)
	count := len(recs)
	v.Records, recs, jcs = []vpec.Record{}, nil, nil
	collect(bodyBytes) // the chain bytes are garbage now: reuse their memory

	signer, err := s.vpecSigner(ctx) // keyring.go: the key valid now
	if err != nil {
		return nil, nil, digest, signFailed(r, err)
	}
	v.Schema, v.SigningKeyID = vpec.Schema, signer.KeyID()
	head, err := document.MarshalSignedBytes(v, "signature", "timestamp_rfc3161")
	if err != nil {
		return nil, nil, digest, err
	}
	bodies := s.storedBodies(r, run.ID)
	if kept != nil {
		bodies = kept.each
	}
	msg, err := s.splice(run.ID, bodies, head, recordsPattern, []byte(`,"records":[`), []byte(","), []byte("],"), count, bodyBytes)
	if err != nil {
		return nil, nil, digest, err
	}
	_, signed := s.span(ctx, "sign")
	sig, err := signer.Sign(msg)
	signed(err)
	digest = sha256.Sum256(msg)
	msg = nil
	if err != nil {
		// No VPEC, and never another key: the run stays sealed without
		// one and a close with the same Idempotency-Key completes it once
		// the key answers again.
		return nil, nil, digest, signFailed(r, err)
	}
	collect(bodyBytes)
	token, err := s.cfg.Timestamper.Timestamp(ctx, issue.TimestampImprint(sig))
	if err != nil {
		// The run stays sealed without a VPEC either way; a close with the
		// same Idempotency-Key completes it.
		return nil, nil, digest, timestampFailed(r, "could not seal the VPEC: timestamp signature", "; close again (with the same Idempotency-Key) to retry", err)
	}
	if err := s.checkGenTime(r, signer, token); err != nil {
		return nil, nil, digest, err // keyring.go: issueInWindow issues again with the next key
	}
	v.Signature, v.TimestampRFC3161 = signing.FormatSignature(sig), base64.StdEncoding.EncodeToString(token)
	head, err = document.MarshalIndent(v)
	if err != nil {
		return nil, nil, digest, err
	}
	if count == 0 {
		return v, head, digest, nil
	}
	body, err := s.splice(run.ID, bodies, head, indentedRecordsPattern, []byte("\n  \"records\": [\n    "), []byte(",\n    "), []byte("\n  ],\n"), count, bodyBytes)
	if err != nil {
		return nil, nil, digest, err
	}
	return v, body, digest, nil
}

// canonicalChainInputs returns what each record's chain hash covers,
// computed from its canonical form: the record without chain_hash, in
// RFC 8785 form.
func canonicalChainInputs(bodies func(fn func([]byte) error) error, count int) ([][]byte, error) {
	jcs := make([][]byte, 0, count)
	err := bodies(func(body []byte) error {
		tree, err := document.ParseTree(body)
		if err != nil {
			return err
		}
		jcs = append(jcs, tree.Canonical("chain_hash"))
		return nil
	})
	if err == nil && len(jcs) != count {
		err = fmt.Errorf("the sealed run's records changed between reads (%d records, then %d)", count, len(jcs))
	}
	return jcs, err
}

// collectAbove is the run size above which issue collects garbage
// between its passes.
const collectAbove = 32 << 20

// collect runs the garbage collector when a close of bodyBytes has just
// dropped a copy of its records: the next pass then reuses that memory
// instead of growing the heap to twice its live size (GOGC), which keeps
// the peak near two copies of the VPEC instead of four or five.
func collect(bodyBytes int64) {
	if bodyBytes > collectAbove {
		runtime.GC()
	}
}

// keptBodies are a run's stored record bodies, in sequence order, kept in
// one buffer by the first read of a close.
type keptBodies struct {
	buf  []byte
	ends []int
}

func (k *keptBodies) add(body []byte) {
	k.buf = append(k.buf, body...)
	k.ends = append(k.ends, len(k.buf))
}

// each calls fn on each kept body in order.
func (k *keptBodies) each(fn func(body []byte) error) error {
	start := 0
	for _, end := range k.ends {
		if err := fn(k.buf[start:end:end]); err != nil {
			return err
		}
		start = end
	}
	return nil
}

// storedBodies returns an iterator over the run's stored record bodies,
// read from the store again on each call.
func (s *Server) storedBodies(r *http.Request, runID string) func(fn func([]byte) error) error {
	return func(fn func([]byte) error) error {
		return s.cfg.Storage.Runs.EachRecordBody(r.Context(), runID, func(_ int64, body []byte) error { return fn(body) })
	}
}

// splice returns doc with the one occurrence of pattern replaced by open,
// the run's record bodies (from bodies) separated by sep, and end,
// checking that there are still count of bodyBytes.
func (s *Server) splice(runID string, bodies func(fn func([]byte) error) error, doc, pattern, open, sep, end []byte, count int, bodyBytes int64) ([]byte, error) {
	i := bytes.Index(doc, pattern)
	if i < 0 || bytes.Contains(doc[i+1:], pattern) {
		return nil, fmt.Errorf("close %s: the VPEC header does not hold its records member once", runID)
	}
	out := make([]byte, 0, int64(len(doc))+bodyBytes+int64(count*len(sep))+int64(len(open)+len(end)))
	out = append(out, doc[:i]...)
	out = append(out, open...)
	n, nb := 0, int64(0)
	err := bodies(func(body []byte) error {
		if n > 0 {
			out = append(out, sep...)
		}
		out = append(out, body...)
		n++
		nb += int64(len(body))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("close %s: read records: %w", runID, err)
	}
	if n != count || nb != bodyBytes {
		return nil, fmt.Errorf("close %s: the sealed run's records changed between reads (%d of %d bytes, then %d of %d)", runID, count, bodyBytes, n, nb)
	}
	if count == 0 {
		out = append(out[:i], pattern...)
	} else {
		out = append(out, end...)
	}
	return append(out, doc[i+len(pattern):]...), nil
}

// profiled reports whether a published profile now covers the model (on
// the GPU class, when the record names one): its model_profile_missing gap
// has then resolved. A store error is returned, never taken for "not
// profiled" (that would sign a gap that does not exist).
func (s *Server) profiled(r *http.Request, modelHash, gpuClass string) (bool, error) {
	if modelHash == "" {
		return false, nil
	}
	sp, err := s.cfg.Storage.Profiles.ProfileByModelHash(r.Context(), modelHash)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("profile of model %s: %w", modelHash, err)
	}
	if gpuClass == "" {
		return true, nil
	}
	p, err := profile.Parse(sp.Body)
	if err != nil {
		return false, fmt.Errorf("stored profile %s: %w", sp.ID, err)
	}
	return p.CoversGPU(gpuClass), nil
}

// timestampFailed is the error for a failed timestamp request: a 502
// timestamp_failed naming the authority's error, unless the request's
// context is done (the client went away, or the service is stopping),
// which is no failure of the authority: then ctx's error, wrapped, which
// fail answers as a cancelled request.
func timestampFailed(r *http.Request, what, hint string, err error) error {
	if cerr := r.Context().Err(); cerr != nil {
		return fmt.Errorf("%s: %w", what, errors.Join(cerr, err))
	}
	return &httpError{http.StatusBadGateway, api.CodeTimestampFailed, what + ": " + err.Error() + hint, ""}
}

// signFailed is the error for a VPEC the service key could not sign (an
// HSM that went away, a KMS that refused): a 503 signing_failed naming the
// key's error, unless the request's context is done (then ctx's error,
// wrapped, as timestampFailed does). The close made no VPEC; closing again
// with the same Idempotency-Key completes it once the key signs again.
func signFailed(r *http.Request, err error) error {
	if cerr := r.Context().Err(); cerr != nil {
		return fmt.Errorf("sign VPEC: %w", errors.Join(cerr, err))
	}
	return &httpError{http.StatusServiceUnavailable, api.CodeSigningFailed, "could not seal the VPEC: the service key did not sign: " + err.Error() + "; close again (with the same Idempotency-Key) to retry", ""}
}
