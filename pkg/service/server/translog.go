package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/dashboard"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"github.com/svc-gov/svc/pkg/service/store"
)

// TransparencyLog is the server's transparency log (docs/TRANSPARENCY.md):
// every VPEC a close seals is appended to it (the close answers with its
// index, api.HeaderLogIndex), its receipts are served at GET
// /api/v1/vpecs/{id}/receipt and the log itself, read-only, under /log/.
type TransparencyLog struct {
	// Log is the open log. The server appends to it and reads it; whoever
	// opened it closes it, after the server has stopped.
	Log *logwriter.Log
	// Secret derives each organisation's monitoring key
	// (tlog.DeriveOrgKey): at least 32 random bytes, kept with the log's
	// key.
	Secret []byte
	// Store records each VPEC's log index. Required.
	Store store.VPECLog
	// ReceiptRetryAfter is the Retry-After of a receipt asked for before
	// a checkpoint covers its entry (default 1 s): about the log's
	// checkpoint interval.
	ReceiptRetryAfter time.Duration
	// BatchWindow is how long the leaf of a close that did not wait for
	// its index waits for others to share its log batch (default
	// DefaultBatchWindow; a receipt comes about that much later).
	BatchWindow time.Duration
}

// DefaultBatchWindow is TransparencyLog.BatchWindow's default: a quarter
// of the default checkpoint interval (svc serve uses a quarter of its
// --tlog-checkpoint-interval). A receipt waits for the next checkpoint
// anyway; a busy service writes at most four log batches a second for its
// closes instead of one per close.
const DefaultBatchWindow = 250 * time.Millisecond

func (l *TransparencyLog) batchWindow() time.Duration {
	if l.BatchWindow > 0 {
		return l.BatchWindow
	}
	return DefaultBatchWindow
}

// logRoutes mounts the transparency log's routes when the server has a
// log.
//
// The API routes exist either way (501 not_implemented without a log);
// the tiles are mounted under api.LogPath, outside API v1 like the
// dashboard, only with one.
func (s *Server) logRoutes() {
	s.handle("GET /api/v1/vpecs/{vpec_id}/receipt", s.auth(s.withLog(s.getReceipt)))
	s.handle("GET /api/v1/log/org-key", s.auth(s.withLog(s.getOrgKey)))
	if s.cfg.Log != nil {
		s.mux.Handle("GET "+api.LogPath, http.StripPrefix(api.LogPath[:len(api.LogPath)-1], s.cfg.Log.Log.Handler()))
	}
}

// withLog answers 501 for a log route of a server without a log.
func (s *Server) withLog(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.cfg.Log == nil {
			writeError(w, http.StatusNotImplemented, api.CodeNotImplemented, "this service runs without a transparency log (svc serve --no-tlog): its VPECs have no receipts", "")
			return
		}
		h(w, r)
	}
}

// checkLogConfig checks Config.Log.
func checkLogConfig(l *TransparencyLog) error {
	switch {
	case l == nil:
		return nil
	case l.Log == nil:
		return errors.New("server: Config.Log without its Log")
	case l.Store == nil:
		return errors.New("server: Config.Log without its Store (store.VPECLog)")
	case len(l.Secret) < 32:
		return fmt.Errorf("server: Config.Log's monitoring secret has %d bytes; give at least 32 random bytes", len(l.Secret))
	}
	return nil
}

// logUnavailable is the 503 of a close whose VPEC is stored but not yet
// in the log.
func logUnavailable(vpecID string, err error) error {
	return &httpError{http.StatusServiceUnavailable, api.CodeLogUnavailable,
		fmt.Sprintf("VPEC %s was issued and stored but could not be appended to the transparency log (%v): close again with the same Idempotency-Key, or GET /api/v1/vpecs/%s/receipt, to append it", vpecID, err, vpecID), ""}
}

// sealedLeaf is what the log records of a VPEC, from the close that
// issued it (no re-parse).
func sealedLeaf(v *vpec.VPEC, digest [32]byte) (tlog.Entry, error) {
	at, err := vpec.ParseTime(v.IssuedAt)
	if err != nil {
		return tlog.Entry{}, fmt.Errorf("issued_at of %s: %w", v.VPECID, err)
	}
	return tlog.Entry{VPECID: v.VPECID, Digest: digest, OrgID: v.OrgID, WorkflowID: v.WorkflowID,
		Environment: string(v.Environment), IssuedAt: at, Clean: v.IsClean}, nil
}

// storedLeaf is what the log records of a stored VPEC, from its bytes.
func storedLeaf(body []byte) (tlog.Entry, error) {
	d, err := vpec.Parse(body)
	if err != nil {
		return tlog.Entry{}, fmt.Errorf("stored VPEC: %w", err)
	}
	return sealedLeaf(&d.VPEC, tlog.DigestParts(d.SignedParts))
}

// appendEntry appends e's leaf to the log and records its index with the
// VPEC. The index is durable in the log once Append returns; if recording
// it fails, the VPEC stays without an index and a retry (a close with the
// same key, its receipt, the next start) appends it again.
func (s *Server) appendEntry(req context.Context, e tlog.Entry) (uint64, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(req), logAppendTimeout)
	defer cancel()
	l := s.cfg.Log
	key, err := tlog.DeriveOrgKey(l.Secret, e.OrgID)
	if err != nil {
		return 0, err
	}
	leaf, err := tlog.NewLeaf(key, e)
	if err != nil {
		return 0, err
	}
	if f := s.behind.fault.Load(); f != nil {
		if err := (*f)(); err != nil {
			return 0, err
		}
	}
	begin := time.Now()
	a, err := l.Log.Append(ctx, leaf)
	if err != nil {
		return 0, err
	}
	if !a.Dup {
		s.metrics.LogAppended(1)
		s.integr.add(a.Index, begin)
	}
	if err := l.Store.SetVPECLogIndex(ctx, e.OrgID, e.VPECID, a.Index); err != nil {
		return 0, fmt.Errorf("record log index %d: %w", a.Index, err)
	}
	return a.Index, nil
}

// ensureLogged returns the log index of a stored VPEC, appending it first
// if it has none (a close that failed, or a crash, between storing and
// logging it).
func (s *Server) ensureLogged(ctx context.Context, v store.VPEC) (uint64, error) {
	if v.Logged {
		return v.LogIndex, nil
	}
	e, err := storedLeaf(v.Body)
	if err != nil {
		return 0, err
	}
	idx, err := s.appendEntry(ctx, e)
	if err != nil {
		return 0, err
	}
	s.log.Info("appended a stored VPEC to the transparency log", "vpec_id", v.ID, "log_index", idx)
	return idx, nil
}

// AppendBacklog appends to the log every stored VPEC that has no log
// index yet (left by a crash between storing a VPEC and logging it, or a
// close the log failed), oldest first, and returns how many it appended.
// svc serve runs it at start, before serving. A leaf appended twice (the
// crash came after Append) is the same bytes twice: see "Duplicates" in
// docs/TRANSPARENCY.md.
func (s *Server) AppendBacklog(ctx context.Context) (int, error) {
	return s.appendOwed(ctx, time.Time{})
}

// owedPage is how many stored VPECs appendOwed reads (bodies included)
// and appends at once; their appends share log batches.
const owedPage = 16

// appendOwed appends the stored VPECs without a log index that were
// stored before before (all of them for the zero time), oldest first.
func (s *Server) appendOwed(ctx context.Context, before time.Time) (int, error) {
	if s.cfg.Log == nil {
		return 0, nil
	}
	n := 0
	for {
		limit := owedPage
		if n == 0 && !before.IsZero() {
			limit = 1 // usually the oldest owed leaf is young: read one body, not a page
		}
		vs, err := s.cfg.Log.Store.VPECsNotLogged(ctx, limit)
		if err != nil {
			return n, err
		}
		if !before.IsZero() {
			k := 0
			for k < len(vs) && vs[k].IssuedAt.Before(before) {
				k++
			}
			vs = vs[:k]
		}
		if len(vs) == 0 {
			return n, nil
		}
		errs := make([]error, len(vs))
		var wg sync.WaitGroup
		for i, v := range vs {
			wg.Go(func() { _, errs[i] = s.ensureLogged(ctx, v) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				return n, fmt.Errorf("append VPEC %s to the transparency log: %w", vs[i].ID, err)
			}
		}
		n += len(vs)
	}
}

// logAppendTimeout bounds an append, which outlives the request it is
// made for: a client going away must not leave a stored VPEC out of the
// log until a retry or the next start.
const logAppendTimeout = 30 * time.Second

// setLogIndex sets the close answer's api.HeaderLogIndex.
func setLogIndex(w http.ResponseWriter, logged bool, idx uint64) {
	if logged {
		w.Header().Set(api.HeaderLogIndex, strconv.FormatUint(idx, 10))
	}
}

// getReceipt serves GET /api/v1/vpecs/{vpec_id}/receipt[?wait=DURATION]:
// the VPEC's receipt (tlog's svc.tlog.receipt/v1, in its one encoding),
// scoped like GET /api/v1/vpecs/{vpec_id}. Without wait, or once wait
// passes, a receipt no checkpoint covers yet is 503 receipt_pending with
// Retry-After; wait is a Go duration of at most
// api.MaxReceiptWaitSeconds.
func (s *Server) getReceipt(w http.ResponseWriter, r *http.Request) {
	var wait time.Duration
	q, given, err := oneParam(r, "wait")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if given {
		d, err := time.ParseDuration(q)
		if err != nil || d < 0 || d > api.MaxReceiptWaitSeconds*time.Second {
			s.fail(w, r, badRequest("wait", "wait=%q: give a duration from 0s to %ds, such as wait=5s", q, api.MaxReceiptWaitSeconds))
			return
		}
		wait = d
	}
	key := caller(r)
	id := r.PathValue("vpec_id")
	info, err := s.cfg.Storage.VPECs.VPECInfo(r.Context(), key.OrgID, id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if key.Environment != info.Environment {
		s.fail(w, r, &httpError{http.StatusForbidden, api.CodeEnvironmentMismatch,
			fmt.Sprintf("VPEC %s is the VPEC of %s run %s and API key %s is a %s key: a key reads only its own environment's receipts; use a %s key",
				info.ID, info.Environment, info.RunID, key.ID, key.Environment, info.Environment), ""})
		return
	}
	begin := time.Now()
	if !info.Logged {
		// A leaf queued for this process's next background batch: wait
		// for that batch (within wait) rather than append it alone.
		if done := s.behind.queued(key.OrgID, id); done != nil {
			if !waitUntil(r.Context(), done, wait) {
				s.receiptPending(w, fmt.Sprintf("VPEC %s is queued for the transparency log's next batch: ask again after Retry-After, or with ?wait=5s", id))
				return
			}
			if info, err = s.cfg.Storage.VPECs.VPECInfo(r.Context(), key.OrgID, id); err != nil {
				s.fail(w, r, err)
				return
			}
			wait = max(0, wait-time.Since(begin))
		}
	}
	idx := info.LogIndex
	if !info.Logged {
		v, release, err := s.loadVPEC(r, id, 1)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		idx, err = s.ensureLogged(r.Context(), v)
		release()
		if err != nil {
			s.fail(w, r, logUnavailable(id, err))
			return
		}
	}
	setLogIndex(w, true, idx)
	var rc *logwriter.Receipt
	if wait > 0 {
		ctx, cancel := context.WithTimeout(r.Context(), wait)
		rc, err = s.cfg.Log.Log.AwaitReceipt(ctx, idx)
		cancel()
		if err != nil && r.Context().Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("%w (waited %v)", logwriter.ErrNotIntegrated, wait)
		}
	} else {
		rc, err = s.cfg.Log.Log.Receipt(r.Context(), idx)
	}
	if errors.Is(err, logwriter.ErrNotIntegrated) {
		s.receiptPending(w, fmt.Sprintf("VPEC %s is in the transparency log at index %d, and no checkpoint covers it yet: ask again after Retry-After, or with ?wait=5s", id, idx))
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if rc.WitnessErr != nil || rc.Witnessed {
		w.Header().Set(api.HeaderReceiptWitnessed, strconv.FormatBool(rc.Witnessed))
	}
	if rc.WitnessErr != nil {
		w.Header().Set(api.HeaderReceiptUnwitnessed, headerSafe(rc.WitnessErr.Error()))
	}
	s.writeBody(w, http.StatusOK, "application/json", rc.JSON)
}

// headerSafe keeps a header value to printable ASCII on one line.
func headerSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = ' '
		}
	}
	if len(b) > 512 {
		b = b[:512]
	}
	return string(b)
}

// getOrgKey serves GET /api/v1/log/org-key: the caller's organisation's
// monitoring key and the log's key (api.LogInfo).
func (s *Server) getOrgKey(w http.ResponseWriter, r *http.Request) {
	key := caller(r)
	ok, err := tlog.DeriveOrgKey(s.cfg.Log.Secret, key.OrgID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.LogInfo{OrgID: key.OrgID, OrgKey: ok.String(), LogKey: s.cfg.Log.Log.Key().String(), LogPath: api.LogPath})
}

// logStatus is the dashboard's dashboard.Config.LogStatus: the size of
// the log's latest checkpoint (verified against the log key) and of the
// newest its witness policy's witnesses cosigned; nil without a log.
func (s *Server) logStatus() func(ctx context.Context) (dashboard.LogStatus, error) {
	if s.cfg.Log == nil {
		return nil
	}
	l := s.cfg.Log.Log
	none, err := tlog.ParseWitnessPolicy([]byte("quorum none\n"))
	if err != nil {
		return nil
	}
	v, err := tlog.NewVerifier(l.Key(), none)
	if err != nil {
		return nil
	}
	return func(ctx context.Context) (dashboard.LogStatus, error) {
		st := l.Stats()
		out := dashboard.LogStatus{Witnessing: l.Witnessing(), WitnessedSize: st.WitnessedSize}
		cp, err := l.Checkpoint(ctx)
		if errors.Is(err, logwriter.ErrNotIntegrated) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		ck, err := v.VerifyCheckpoint(cp)
		if err != nil {
			return out, err
		}
		out.Size = ck.Size
		return out, nil
	}
}

// receiptPending answers 503 receipt_pending with Retry-After: about the
// log's checkpoint interval.
func (s *Server) receiptPending(w http.ResponseWriter, msg string) {
	retry := s.cfg.Log.ReceiptRetryAfter
	if retry <= 0 {
		retry = time.Second
	}
	w.Header().Set("Retry-After", strconv.Itoa(int((retry+time.Second-1)/time.Second)))
	writeError(w, http.StatusServiceUnavailable, api.CodeReceiptPending, msg, "")
}

// waitUntil waits for done within wait, or until ctx ends; it reports
// whether done came.
func waitUntil(ctx context.Context, done <-chan struct{}, wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	select {
	case <-done:
		return true
	default:
		return false
	}
}
