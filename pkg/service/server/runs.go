package server

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
)

// runIDPattern matches the run ids a client may propose: run_ and a
// lowercase UUID of version 7 (time-ordered, what the Go client makes) or
// 4 (random, what it made before).
var runIDPattern = regexp.MustCompile(`^run_[0-9a-f]{8}-[0-9a-f]{4}-[47][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func (s *Server) openRun(w http.ResponseWriter, r *http.Request) {
	var req api.OpenRunRequest
	if _, err := s.decode(r, &req); err != nil {
		s.fail(w, r, err)
		return
	}
	if req.WorkflowID == "" {
		req.WorkflowID = "default"
	}
	if !api.ValidWorkflowID(req.WorkflowID) {
		s.fail(w, r, badRequest("workflow_id", "workflow_id %q must be 1-128 letters, digits or ._:-", req.WorkflowID))
		return
	}
	if req.ProcessContextHash != "" {
		if err := commitment.Validate(req.ProcessContextHash); err != nil {
			s.fail(w, r, badRequest("process_context_hash", "process_context_hash: %v", err))
			return
		}
	}
	key := caller(r)
	policy := append([]string(nil), req.Policy...)
	sort.Strings(policy)
	snapshot, err := canonical.Marshal(map[string]any{"policy": policy, "policy_pack_id": req.PolicyPackID})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	id := names.NewOrderedID("run_", s.cfg.Now())
	if req.RunID != "" {
		if !runIDPattern.MatchString(req.RunID) {
			s.fail(w, r, badRequest("run_id", "a proposed run_id must be run_ followed by a lowercase UUID, version 7 or 4, e.g. %s", id))
			return
		}
		id = req.RunID
	}
	openedAt, err := s.openedAt(req.OpenedAt)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// The run keeps opened_at as it shows it and its VPEC signs it, to the
	// millisecond: the floor of its records' recorded_at (checkRecordTime)
	// is then the one the verifier applies, and every store holds the time
	// exactly (PostgreSQL keeps microseconds).
	openedAt = openedAt.Truncate(time.Millisecond)
	run := store.Run{
		ID: id, OrgID: key.OrgID, WorkflowID: req.WorkflowID, SurfaceID: req.SurfaceID,
		PolicyPackID: req.PolicyPackID, PolicySnapshotHash: commitment.String(snapshot),
		ProcessContextHash: req.ProcessContextHash, Environment: key.Environment, APIKeyID: key.ID,
		OpenedAt: openedAt,
	}
	if err := s.cfg.Storage.Runs.CreateRun(r.Context(), run); err != nil {
		// A retried open of a proposed id (the client queued it while the
		// service was down) returns the run it made.
		if errors.Is(err, store.ErrExists) && req.RunID != "" {
			if old, gerr := s.cfg.Storage.Runs.Run(r.Context(), key.OrgID, req.RunID); gerr == nil && old.WorkflowID == run.WorkflowID {
				if err := s.checkRunScope(r, old); err != nil {
					s.fail(w, r, err) // never hand a run to a key of the other environment
					return
				}
				writeJSON(w, http.StatusOK, s.runView(r, old))
				return
			}
			s.fail(w, r, &httpError{http.StatusConflict, api.CodeRunIDTaken, "run_id " + req.RunID + " is taken: propose another", "run_id"})
			return
		}
		s.fail(w, r, err)
		return
	}
	// The run as stored (the store adds only zero values): its first
	// record and its scope check (its organisation and environment never
	// change) need not read it back in this process.
	s.scopes.put(run.ID, runScope{run.OrgID, run.Environment})
	s.runs.put(run.ID, run)
	s.log.InfoContext(r.Context(), "run opened", "run_id", run.ID, "org_id", run.OrgID, "workflow_id", run.WorkflowID)
	writeJSON(w, http.StatusCreated, s.runView(r, run))
}

// openedAt is a new run's opened_at: the service clock, or the client's
// opened_at when it is earlier (a run opened while the service was
// unreachable), but not more than api.MaxOpenedAtAge earlier; a claim
// more than MaxRecordAhead ahead of the service clock is refused (400).
func (s *Server) openedAt(claim string) (time.Time, error) {
	now := s.cfg.Now().UTC()
	if claim == "" {
		return now, nil
	}
	t, err := vpec.ParseTime(claim)
	if err != nil {
		return time.Time{}, badRequest("opened_at", "opened_at %q is not an RFC 3339 UTC time", claim)
	}
	switch {
	case t.After(now.Add(MaxRecordAhead)):
		return time.Time{}, badRequest("opened_at", "opened_at %s is %s ahead of the service clock (%s); at most %s ahead is accepted: check the client's clock",
			claim, t.Sub(now).Round(time.Second), vpec.FormatTime(now), MaxRecordAhead)
	case t.After(now):
		return now, nil
	case t.Before(now.Add(-api.MaxOpenedAtAge)):
		return now.Add(-api.MaxOpenedAtAge), nil
	}
	return t.UTC(), nil
}

// runView is the API form of a stored run, with its chain position.
func (s *Server) runView(r *http.Request, run store.Run) api.Run {
	out := api.Run{
		RunID: run.ID, WorkflowID: run.WorkflowID, OrgID: run.OrgID, SurfaceID: run.SurfaceID,
		PolicyPackID: run.PolicyPackID, PolicySnapshotHash: run.PolicySnapshotHash,
		ProcessContextHash: run.ProcessContextHash, Environment: vpec.Environment(run.Environment),
		Status: api.RunOpen, OpenedAt: vpec.FormatTime(run.OpenedAt), VPECID: run.VPECID,
		LastChainHash: commitment.OfSHA256(vpec.Genesis(run.ID)).String(),
	}
	if run.Sealed {
		out.Status, out.ClosedAt = api.RunSealed, vpec.FormatTime(run.ClosedAt)
	}
	// The run's metadata, kept by every append in its transaction: a run
	// read never reads the records, and there is no second read to fail.
	if run.RecordCount > 0 {
		out.RecordCount, out.LastSequence, out.LastChainHash, out.RecordBytes = run.RecordCount, run.LastSequence, run.LastChainHash, run.RecordBytes
	}
	return out
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.cfg.Storage.Runs.Run(r.Context(), caller(r).OrgID, r.PathValue("run_id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.runView(r, run))
}

// openRunOf loads the caller's run named in the path and requires it open.
func (s *Server) openRunOf(r *http.Request) (store.Run, error) {
	run, err := s.cfg.Storage.Runs.Run(r.Context(), caller(r).OrgID, r.PathValue("run_id"))
	if err == nil && run.Sealed {
		err = store.ErrSealed
	}
	return run, err
}

// appendRun is the caller's run named in the path of an append (from the
// run cache while it is open).
func (s *Server) appendRun(r *http.Request) (store.Run, error) {
	key := caller(r)
	run, ok := s.runs.get(r.PathValue("run_id"))
	if !ok || run.OrgID != key.OrgID || run.Sealed {
		var err error
		if run, err = s.cfg.Storage.Runs.Run(r.Context(), key.OrgID, r.PathValue("run_id")); err != nil {
			return store.Run{}, err
		}
		if !run.Sealed {
			s.runs.put(run.ID, run)
		}
	}
	return run, nil
}

func (s *Server) record(w http.ResponseWriter, r *http.Request) {
	key := caller(r)
	run, err := s.appendRun(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var rec vpec.Record
	tree, err := s.decode(r, &rec)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	// On a sealed run only an exact retry of a stored record is
	// acknowledged (the store compares it byte for byte); anything else
	// gets run_sealed from the store.
	if !run.Sealed {
		if err := s.checkRecord(r, run, &rec, tree, nil); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	dup, err := s.cfg.Storage.Runs.AppendRecord(r.Context(), key.OrgID, store.Record{
		RunID: run.ID, RecordID: rec.RecordID, Sequence: rec.Sequence, ChainHash: rec.ChainHash, Body: tree.Canonical(),
	}, s.runLimits().store())
	if err != nil {
		if errors.Is(err, store.ErrSealed) {
			s.runs.del(run.ID)
		}
		var le *store.LimitError
		if errors.As(err, &le) {
			err = runFull(le)
		}
		s.fail(w, r, err)
		return
	}
	s.tips.put(run.ID, chainTip{rec.Sequence, rec.ChainHash})
	status := http.StatusCreated
	if dup {
		status = http.StatusOK
	}
	writeJSON(w, status, recordResult(&rec, dup))
}

// recordResult is the answer for an appended record.
func recordResult(rec *vpec.Record, dup bool) api.RecordResult {
	res := api.RecordResult{
		RecordID: rec.RecordID, Sequence: rec.Sequence, CommitmentHash: rec.CommitmentHash,
		CommitmentAlgorithm: rec.CommitmentAlgorithm, ProofLevel: rec.ProofLevel, RecordedAt: rec.RecordedAt,
		ChainHash: rec.ChainHash, Duplicate: dup,
	}
	if rec.OutputCommitment != "" {
		oc := rec.OutputCommitment
		res.OutputCommitment = &oc
	}
	return res
}

// checkRecord validates a record against the v1 rules, the proof level it
// claims, and the chain stored so far; before, when not nil, is the record
// just before it in the same batch (its chain link when it is the
// predecessor, not yet stored).
func (s *Server) checkRecord(r *http.Request, run store.Run, rec *vpec.Record, tree *canonical.Value, before *chainTip) error {
	claims, err := s.checkRecordOnly(r, run, rec, tree, before)
	if err != nil {
		return err
	}
	return s.claimSessions(r, run, rec, claims)
}

// sessionClaim is a session a checked record claims (its field: review or
// check_session).
type sessionClaim struct {
	sess  store.Session
	field string
}

// claimSessions claims a checked record's sessions, once it (and, in a
// batch, every record) passed every check.
func (s *Server) claimSessions(r *http.Request, run store.Run, rec *vpec.Record, claims []sessionClaim) error {
	for _, c := range claims {
		if err := s.claimSession(r, run, c.sess, rec.RecordID, c.field); err != nil {
			return err
		}
	}
	return nil
}

// checkRecordOnly is checkRecord without claiming the sessions: it returns
// the claims to make.
func (s *Server) checkRecordOnly(r *http.Request, run store.Run, rec *vpec.Record, tree *canonical.Value, before *chainTip) ([]sessionClaim, error) {
	// The server's own checks first (limits, time, claims: decision D6
	// names proof_level when a level lacks its evidence block), then the
	// v1 rules.
	if err := s.validateRecord(rec, tree, run.OpenedAt); err != nil {
		return nil, err
	}
	if err := rec.Validate(); err != nil {
		msg := strings.ReplaceAll(err.Error(), "invalid record: ", "")
		return nil, badRequest(recordErrorField(msg), "%s", strings.ReplaceAll(msg, "\n", "; "))
	}
	if err := checkRecordDisclosures(rec); err != nil {
		return nil, err
	}
	// Sessions are checked here and claimed last, once the record has
	// passed every check (claimSession).
	var claims []sessionClaim
	switch rec.ProofLevel {
	case vpec.Witnessed:
		sess, err := s.checkReviewSession(r, run, rec)
		if err != nil {
			return nil, err
		}
		if err := verify.Review(run.ID, rec, s.cfg.Trust); err != nil {
			code := api.CodeInvalidSignature
			if errors.Is(err, verify.ErrReviewTooShort) {
				code = api.CodeReviewTooShort
			}
			return nil, &httpError{http.StatusUnprocessableEntity, code, "witnessed review rejected: " + err.Error(), "review"}
		}
		claims = append(claims, sessionClaim{sess, "review"})
	}
	if rec.ZKProof != nil {
		if err := s.checkProof(r.Context(), run.ID, rec); err != nil {
			return nil, err
		}
	}
	if bi := rec.BoundedInference; bi != nil {
		if err := s.checkBounded(r, bi); err != nil {
			return nil, err
		}
	}
	if rec.CheckSession != nil {
		sess, err := s.checkCheckSession(r, run, rec)
		if err != nil {
			return nil, err
		}
		if err := verify.CheckSession(rec, s.cfg.Trust); err != nil {
			return nil, &httpError{http.StatusUnprocessableEntity, api.CodeInvalidSignature, "check session rejected: " + err.Error(), "check_session"}
		}
		claims = append(claims, sessionClaim{sess, "check_session"})
	}
	if err := s.checkChainLink(r, run, rec, tree, before); err != nil {
		return nil, err
	}
	return claims, nil
}

// checkChainLink checks the record's chain_hash against its predecessor:
// before (the previous record of its batch) when that is it, else the
// stored one (or genesis).
func (s *Server) checkChainLink(r *http.Request, run store.Run, rec *vpec.Record, tree *canonical.Value, before *chainTip) error {
	// The chain: follow from genesis or from the stored predecessor. A
	// missing predecessor (a record still queued at the client) is accepted
	// here and becomes a gap at close if it never arrives.
	prev := vpec.Genesis(run.ID)
	tip, ok := s.tips.get(run.ID)
	if before != nil {
		tip, ok = *before, true
	}
	if ok && tip.seq == rec.Sequence-1 && rec.Sequence > 1 {
		var err error
		if prev, err = commitment.ParseSHA256(tip.chain); err != nil {
			return err
		}
	} else if rec.Sequence > 1 {
		p, err := s.cfg.Storage.Runs.RecordBySequence(r.Context(), run.ID, rec.Sequence-1)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil
		case err != nil:
			return err
		}
		if prev, err = commitment.ParseSHA256(p.ChainHash); err != nil {
			return fmt.Errorf("stored chain hash of sequence %d: %w", p.Sequence, err)
		}
	}
	want := commitment.OfSHA256(vpec.NextChainHash(prev, tree.Canonical("chain_hash"))).String()
	if rec.ChainHash != want {
		return &httpError{http.StatusUnprocessableEntity, api.CodeChainMismatch,
			fmt.Sprintf("chain_hash of sequence %d does not follow from the stored chain: expected %s (SHA-256 of the previous chain hash and the record's canonical JSON without chain_hash)", rec.Sequence, want), "chain_hash"}
	}
	return nil
}

// closeRun serves POST /api/v1/runs/{run_id}/close. Only the request
// holding the run's close flight (closeFlights) seals and issues; a close
// with the same bound Idempotency-Key waits for it and gets the same
// answer, any other gets 409 once that request is the run's issuer.
func (s *Server) closeRun(w http.ResponseWriter, r *http.Request) {
	key := caller(r)
	if err := refuseBody(r); err != nil {
		s.fail(w, r, err)
		return
	}
	idem, err := idempotencyKey(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	waitLog, err := closeWait(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	closeKey := boundCloseKey(key.ID, idem)
	runID := r.PathValue("run_id")
	flight := key.OrgID + "/" + runID
	var f *closeFlight
	for {
		var owner bool
		if f, owner = s.closes.enter(flight, closeKey); owner {
			break
		}
		if closeKey != "" && f.key == closeKey {
			body, err := f.wait(r.Context())
			if errors.Is(err, errFlightAbandoned) {
				continue // its client went away first; this close takes over
			}
			if err == nil {
				err = s.closeLogIndex(w, r, f, waitLog)
			}
			s.answerClose(w, r, body, err)
			return
		}
		issuing, err := f.await(r.Context())
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if issuing {
			s.fail(w, r, closingError(runID))
			return
		}
	}
	ctx := f.start(r.Context())
	body, release, err := func() (body []byte, release func(), err error) {
		err = errors.New("the close in progress failed; the service log has the details") // what waiters get if it panics
		defer func() { s.closes.finish(flight, f, body, err) }()
		return s.close(r.WithContext(ctx), f, key.OrgID, runID, closeKey, waitLog)
	}()
	if err == nil {
		setLogIndex(w, f.logged, f.logIndex)
	}
	s.answerClose(w, r, body, err)
	if release != nil {
		release()
	}
}

// answerClose writes a close's answer: its VPEC, or its error.
func (s *Server) answerClose(w http.ResponseWriter, r *http.Request, body []byte, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.writeBody(w, http.StatusOK, "application/json", body)
}

// close seals run runID of orgID and issues its VPEC, or finds the VPEC a
// close with closeKey (bound, "" for none) issued. It returns the VPEC's
// bytes; release, when not nil, gives back the LoadBytes of a stored VPEC
// once the answer is written.
func (s *Server) close(r *http.Request, f *closeFlight, orgID, runID, closeKey string, waitLog bool) (body []byte, release func(), err error) {
	// Phase 1: seal the record set. From this commit on no record is added
	// to the run (in any process): the records read below are exactly
	// the ones ever acknowledged.
	begin := time.Now()
	run, sealedNow, err := s.cfg.Storage.Runs.SealRecords(r.Context(), orgID, runID, closeKey, s.cfg.Now().UTC())
	if err != nil {
		return nil, nil, err
	}
	s.runs.del(run.ID)
	s.tips.del(run.ID)
	if !sealedNow {
		switch {
		case run.VPECID != "" && closeKey != "" && closeKey == run.CloseKey:
			// A retry of the close that issued the VPEC (its response was
			// lost): the same bytes again.
			return s.storedVPEC(r, f, run.VPECID, waitLog)
		case run.VPECID != "", closeKey != run.CloseKey:
			return nil, nil, sealedError(run)
		}
		// The close that sealed the records (same key, or both without
		// one) did not store a VPEC, and no request of this process is
		// making it (closeFlights): it crashed, its client went away, its
		// timestamp authority failed, or another process is on it.
		// Complete it; if another completes first, StoreVPEC says so below.
	}
	f.issue()
	// Phase 2: issue the VPEC of the sealed record set and store it.
	v, body, digest, err := s.issueInWindow(r, run)
	var refused *refusedClose
	if errors.As(err, &refused) {
		// Nothing was issued and the run cannot be sealed as it is: open
		// it again (records refused meanwhile got 409 and were not
		// acknowledged), so the client can complete it and close again.
		if uerr := s.cfg.Storage.Runs.UnsealRecords(r.Context(), orgID, run.ID, closeKey); uerr != nil && !errors.Is(uerr, store.ErrSealed) && !errors.Is(uerr, store.ErrNotSealed) {
			err = errors.Join(err, uerr)
		}
		s.runs.del(run.ID)
	}
	if err != nil {
		return nil, nil, err
	}
	err = s.cfg.Storage.Runs.StoreVPEC(r.Context(), orgID, run.ID, store.VPEC{ID: v.VPECID, RunID: run.ID, OrgID: orgID, IssuedAt: s.cfg.Now().UTC(), Body: body})
	if errors.Is(err, store.ErrSealed) {
		// Another close of the same seal (another process) stored its VPEC first.
		cur, gerr := s.cfg.Storage.Runs.Run(r.Context(), orgID, run.ID)
		switch {
		case gerr != nil:
			return nil, nil, gerr
		case closeKey != "" && cur.CloseKey == closeKey && cur.VPECID != "":
			return s.storedVPEC(r, f, cur.VPECID, waitLog)
		default:
			return nil, nil, sealedError(cur)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if s.cfg.Log != nil {
		// The VPEC is stored without a log index: the durable record that
		// its leaf is owed to the log. Append it in the background, or,
		// when the close asked to wait, before answering (a failure then
		// fails the close visibly; a retry or the next start appends it).
		e, err := sealedLeaf(v, digest)
		if err != nil {
			return nil, nil, logUnavailable(v.VPECID, err)
		}
		f.entry = &e
		if waitLog {
			if f.logIndex, err = s.appendEntry(r.Context(), e); err != nil {
				return nil, nil, logUnavailable(v.VPECID, err)
			}
			f.logged = true
		} else {
			s.logLater(e)
		}
	}
	s.metrics.RunSealed(string(v.Environment), string(v.ProofLevelFloor), metricGaps(v.Gaps), time.Since(begin))
	s.log.InfoContext(r.Context(), "run closed", "run_id", run.ID, "vpec_id", v.VPECID, "records", v.TotalChecksRun, "gaps", len(v.Gaps), "chain_intact", v.ChainIntact, "bytes", len(body))
	return body, nil, nil
}

// storedVPEC loads a stored VPEC of the caller's organisation for a close's
// answer, within LoadBytes.
func (s *Server) storedVPEC(r *http.Request, f *closeFlight, vpecID string, waitLog bool) ([]byte, func(), error) {
	v, release, err := s.loadVPEC(r, vpecID, 1)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case s.cfg.Log == nil:
	case v.Logged:
		f.logged, f.logIndex = true, v.LogIndex
	case waitLog:
		// A retry of a close whose VPEC is not in the log yet (the log
		// failed, or the process died, after storing it) appends it.
		if f.logIndex, err = s.ensureLogged(r.Context(), v); err != nil {
			release()
			return nil, nil, logUnavailable(vpecID, err)
		}
		f.logged = true
	default:
		e, err := storedLeaf(v.Body)
		if err != nil {
			release()
			return nil, nil, logUnavailable(vpecID, err)
		}
		f.entry = &e
		s.logLater(e)
	}
	return v.Body, release, nil
}

// closeLogIndex sets the log index header of a close that waited for the
// close in progress: the owner's, or, when this close asked to wait for
// the index and the owner did not, the index its own append of the same
// leaf finds (the same, from the log's antispam).
func (s *Server) closeLogIndex(w http.ResponseWriter, r *http.Request, f *closeFlight, waitLog bool) error {
	if !f.logged && waitLog && f.entry != nil {
		idx, err := s.appendEntry(r.Context(), *f.entry)
		if err != nil {
			return logUnavailable(f.entry.VPECID, err)
		}
		setLogIndex(w, true, idx)
		return nil
	}
	setLogIndex(w, f.logged, f.logIndex)
	return nil
}

// checkBounded refuses a Bounded Inference record that the registry's
// profile does not cover: the service never signs a claim its own registry
// contradicts (the verifier would report PROFILE MISMATCH).
func (s *Server) checkBounded(r *http.Request, bi *vpec.BoundedInference) error {
	refuse := func(format string, a ...any) error {
		return &httpError{http.StatusUnprocessableEntity, api.CodeProfileMismatch, "bounded_inference: " + fmt.Sprintf(format, a...) +
			"; record the check as open_source_ml at execution level instead", "bounded_inference"}
	}
	p, ok := s.profileCache.get(bi.ProfileID)
	if !ok {
		sp, err := s.cfg.Storage.Profiles.ProfileByID(r.Context(), bi.ProfileID)
		if errors.Is(err, store.ErrNotFound) {
			return refuse("profile %s is not in the registry", bi.ProfileID)
		}
		if err != nil {
			return err
		}
		if p, err = profile.Parse(sp.Body); err != nil {
			return err
		}
		s.profileCache.put(bi.ProfileID, p)
	}
	if !p.CoversGPU(bi.GPUClass) {
		return refuse("profile %s is not calibrated for gpu_class %s (calibrated: %v)", p.ProfileID, bi.GPUClass, p.CalibratedGPUClasses)
	}
	m, ok := p.Model(bi.ONNXModelHash)
	if !ok {
		return refuse("profile %s does not cover model %s", p.ProfileID, bi.ONNXModelHash)
	}
	if want, ok := m.OperatorCounts[bi.TraceMode]; !ok || want != bi.OperatorCount {
		return refuse("operator_count %d in %s mode; profile %s gives %d for this model", bi.OperatorCount, bi.TraceMode, p.ProfileID, want)
	}
	return nil
}

// gpuClassOf is the GPU class an open_source_ml record names in its details
// (gpu_class), or "".
func gpuClassOf(rec *vpec.Record) string {
	g, _ := rec.Details[stage.DetailGPUClass].(string)
	return g
}
