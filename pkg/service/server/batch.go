package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/service/store"
)

// recordBatch serves POST /api/v1/runs/{run_id}/records:batch: 1 to
// api.MaxBatchRecords records, each checked exactly as the single append
// checks it (checkRecord), chained in order, stored all or nothing in one
// store transaction (store.RunWriter.AppendRecords). The answer is 201
// with one result per record, 200 when every record was already stored (a
// replayed batch); a refused record refuses the batch, and the error's
// field names it: records[i].<field>.
func (s *Server) recordBatch(w http.ResponseWriter, r *http.Request) {
	key := caller(r)
	run, err := s.appendRun(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	body, err := s.readBody(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	batch, trees, err := parseBatch(body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	recs := make([]store.Record, len(batch.Records))
	claims := make([][]sessionClaim, len(batch.Records))
	var before *chainTip
	for i := range batch.Records {
		rec := &batch.Records[i]
		// On a sealed run only an exact retry of stored records is
		// acknowledged (the store compares them byte for byte); anything
		// else gets run_sealed from the store, as for a single append.
		if !run.Sealed {
			if claims[i], err = s.checkRecordOnly(r, run, rec, trees[i], before); err != nil {
				s.fail(w, r, atRecord(i, err))
				return
			}
		}
		before = &chainTip{rec.Sequence, rec.ChainHash}
		recs[i] = store.Record{RunID: run.ID, RecordID: rec.RecordID, Sequence: rec.Sequence, ChainHash: rec.ChainHash, Body: trees[i].Canonical()}
	}
	// Sessions are claimed only once every record passed its checks, and
	// none if two records of the batch present one session (the second
	// gets session_used). A claim names its record id: a retry of the
	// batch claims again (a store refusal after the claims leaves them, as
	// for a single append).
	held := map[string]int{}
	for i := range claims {
		for _, c := range claims[i] {
			if j, ok := held[c.sess.ID]; ok {
				s.fail(w, r, atRecord(i, &httpError{http.StatusConflict, api.CodeSessionUsed,
					fmt.Sprintf("%s session %s is also presented by records[%d]: a session backs one record; open a new session for this one", c.sess.Kind, c.sess.ID, j), c.field}))
				return
			}
			held[c.sess.ID] = i
		}
	}
	for i := range claims {
		if err := s.claimSessions(r, run, &batch.Records[i], claims[i]); err != nil {
			s.fail(w, r, atRecord(i, err))
			return
		}
	}
	dups, err := s.cfg.Storage.Runs.AppendRecords(r.Context(), key.OrgID, recs, s.runLimits().store())
	if err != nil {
		if errors.Is(err, store.ErrSealed) {
			s.runs.del(run.ID)
		}
		var be *store.BatchError
		if errors.As(err, &be) {
			var le *store.LimitError
			if errors.As(err, &le) {
				err = runFull(le)
			}
			if he := sentinelError(err); he != nil && !errors.Is(err, store.ErrNotFound) {
				err = he
			}
			err = atRecord(be.Index, err)
		}
		s.fail(w, r, err)
		return
	}
	if !run.Sealed {
		s.tips.put(run.ID, *before)
	}
	out := api.RecordBatchResult{Records: make([]api.RecordResult, len(recs))}
	status := http.StatusOK
	for i := range batch.Records {
		out.Records[i] = recordResult(&batch.Records[i], dups[i])
		if !dups[i] {
			status = http.StatusCreated
		}
	}
	writeJSON(w, status, out)
}

// tooManyRecords is the 413 of a batch of n records, n above
// api.MaxBatchRecords.
func tooManyRecords(n int) error {
	return &httpError{http.StatusRequestEntityTooLarge, api.CodePayloadTooLarge,
		fmt.Sprintf("the batch holds %d records, at most %d are accepted: split it into batches of %d or fewer", n, api.MaxBatchRecords, api.MaxBatchRecords), "records"}
}

// batchLen is the number of entries of the "records" array of a body
// that is I-JSON but failed the strict decoding, or 0.
func batchLen(body []byte) int {
	tree, err := canonical.Parse(body)
	if err != nil || tree.Kind() != canonical.KindObject {
		return 0
	}
	if list := tree.Get("records"); list != nil && list.Kind() == canonical.KindArray {
		return list.Len()
	}
	return 0
}

// batchTrees checks a decoded batch's shape (1 to api.MaxBatchRecords
// records, unique record ids, strictly increasing sequences) and returns
// each record's own parse tree, the bytes it is stored and chained as.
func batchTrees(batch *api.RecordBatch, tree *canonical.Value) ([]*canonical.Value, error) {
	n := len(batch.Records)
	if n == 0 {
		return nil, badRequest("records", "the batch holds no record: send 1 to %d", api.MaxBatchRecords)
	}
	if n > api.MaxBatchRecords {
		return nil, tooManyRecords(n)
	}
	list := tree.Get("records")
	if list == nil || list.Len() != n {
		return nil, badRequest("records", "records must be an array of records")
	}
	trees := make([]*canonical.Value, n)
	ids := make(map[string]int, n)
	for i := range batch.Records {
		rec := &batch.Records[i]
		if j, ok := ids[rec.RecordID]; ok {
			return nil, badRequest(fmt.Sprintf("records[%d].record_id", i), "records[%d].record_id %q is also records[%d]'s: each record of a batch has its own record_id", i, rec.RecordID, j)
		}
		ids[rec.RecordID] = i
		if i > 0 && rec.Sequence <= batch.Records[i-1].Sequence {
			return nil, badRequest(fmt.Sprintf("records[%d].sequence", i), "records[%d].sequence %d does not follow records[%d].sequence %d: a batch lists its records in strictly increasing sequence order",
				i, rec.Sequence, i-1, batch.Records[i-1].Sequence)
		}
		trees[i] = list.Index(i)
	}
	return trees, nil
}

// atRecord names the batch's record i in err's response: its field
// becomes records[i].<field> and its message starts with records[i].
func atRecord(i int, err error) error {
	var he *httpError
	if !errors.As(err, &he) {
		return err
	}
	at := fmt.Sprintf("records[%d]", i)
	field := at
	if he.field != "" {
		field += "." + he.field
	}
	return &httpError{he.status, he.code, at + ": " + he.msg, field}
}

// parseBatch is the batch body's parser: the strict parse of the body as
// an api.RecordBatch, then batchTrees.
func parseBatch(body []byte) (*api.RecordBatch, []*canonical.Value, error) {
	var batch api.RecordBatch
	tree, err := parseBody(body, &batch)
	if err != nil {
		// Too many records is said first (413: split the batch), before
		// what is wrong inside them.
		if n := batchLen(body); n > api.MaxBatchRecords {
			return nil, nil, tooManyRecords(n)
		}
		return nil, nil, err
	}
	trees, err := batchTrees(&batch, tree)
	if err != nil {
		return nil, nil, err
	}
	return &batch, trees, nil
}
