package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// MaxBatch is the largest number of writes the writer commits in one
// transaction.
const MaxBatch = 256

// ErrClosed is the error (wrapped, like the store's sentinels) of a write
// to a DB that is closed or closing.
var ErrClosed = errors.New("the database is closed")

// A wtx is the writer's transaction as one write sees it: the batch's
// *sql.Tx, and the DB's prepared statements bound to it. It is the
// backend.RunTx of appends and seals (runtx.go).
type wtx struct {
	*sql.Tx
	stmts *writerStmts
	bound map[*sql.Stmt]*sql.Stmt
}

// stmt returns s (one of the DB's prepared statements) bound to the
// transaction. The statement is prepared once on the writer connection:
// parsing the append's statements again for each of thousands of appends a
// second costs more than running them.
func (tx *wtx) stmt(ctx context.Context, s *sql.Stmt) *sql.Stmt {
	b, ok := tx.bound[s]
	if !ok {
		b = tx.StmtContext(ctx, s)
		tx.bound[s] = b
	}
	return b
}

// writerStmts are the statements every append runs, and those of opening
// and sealing a run, prepared on the writer connection.
type writerStmts struct {
	runSealed, insertRecord, updateRun, savepoint, rollbackTo, release *sql.Stmt
	createRun, runState, runByID, markSealed, insertVPEC, setVPECID    *sql.Stmt
}

// all lists the statements (nil before prepare).
func (st *writerStmts) all() []*sql.Stmt {
	return []*sql.Stmt{st.runSealed, st.insertRecord, st.updateRun, st.savepoint, st.rollbackTo, st.release,
		st.createRun, st.runState, st.runByID, st.markSealed, st.insertVPEC, st.setVPECID}
}

// prepare prepares the writer's statements; Open calls it once the schema
// is current, before the writer goroutine starts (the writer's connection
// is free).
func (db *DB) prepare(ctx context.Context) error {
	for _, s := range []struct {
		stmt  **sql.Stmt
		query string
	}{
		{&db.stmts.runSealed, "SELECT sealed, record_count, record_bytes FROM runs WHERE id = ? AND org_id = ?"},
		// SET expressions see the row as it was before the UPDATE.
		// ?5 records of ?2 bytes in all, ?3 the highest sequence among
		// them and ?4 its chain hash.
		{&db.stmts.updateRun, `UPDATE runs SET record_count = record_count + ?5, record_bytes = record_bytes + ?2,
			last_sequence = CASE WHEN record_count = 0 OR ?3 > last_sequence THEN ?3 ELSE last_sequence END,
			last_chain_hash = CASE WHEN record_count = 0 OR ?3 > last_sequence THEN ?4 ELSE last_chain_hash END
			WHERE id = ?1`},
		{&db.stmts.insertRecord, `INSERT INTO records (run_id, sequence, record_id, chain_hash, body)
			VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`},
		{&db.stmts.savepoint, "SAVEPOINT w"},
		{&db.stmts.rollbackTo, "ROLLBACK TO w"},
		{&db.stmts.release, "RELEASE w"},
		{&db.stmts.createRun, `INSERT INTO runs (id, org_id, workflow_id, surface_id, policy_pack_id,
			policy_snapshot_hash, process_context_hash, environment, api_key_id, sealed, opened_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`},
		{&db.stmts.runState, "SELECT sealed, vpec_id, close_key FROM runs WHERE id = ? AND org_id = ?"},
		{&db.stmts.runByID, "SELECT " + backend.RunCols + " FROM runs WHERE id = ?"},
		{&db.stmts.markSealed, "UPDATE runs SET sealed = 1, closed_at = ?, close_key = ? WHERE id = ?"},
		{&db.stmts.insertVPEC, "INSERT INTO vpecs (id, run_id, org_id, issued_at, body) VALUES (?, ?, ?, ?, ?)"},
		{&db.stmts.setVPECID, "UPDATE runs SET vpec_id = ? WHERE id = ?"},
	} {
		var err error
		if *s.stmt, err = db.w.PrepareContext(ctx, s.query); err != nil {
			return fmt.Errorf("prepare %q: %w", s.query, err)
		}
	}
	return nil
}

func (st *writerStmts) close() error {
	var errs []error
	for _, s := range st.all() {
		if s != nil {
			errs = append(errs, s.Close())
		}
	}
	return errors.Join(errs...)
}

// A writeOp is one write waiting for the writer goroutine: fn runs in the
// writer's transaction (in a savepoint of its own when the batch holds
// other writes) and its outcome is sent on done once the transaction has
// committed, or failed.
type writeOp struct {
	ctx  context.Context // the caller's: checked before fn runs
	fn   func(ctx context.Context, tx *wtx) error
	done chan error // buffered: the writer never waits for the caller
}

// write runs fn in a write transaction and returns its error, or the
// commit's, once the transaction is durable. fn runs on the writer
// goroutine and may be batched with other writes, whose effects it sees in
// tx as if they had committed just before. fn must use only tx and ctx
// (the writer's, not the caller's), must not call write (the writer would
// wait for itself), and must return its results through variables that
// the caller reads only when write returns nil: the caller may return
// early (below) while fn runs.
//
// The caller's ctx is honoured while the write waits to be taken by the
// writer and while it waits in a batch for its turn: a write whose ctx is
// done by then returns ctx.Err() and changes nothing. If ctx ends once fn
// has started, the caller still returns ctx.Err() at once, but the write
// commits with its batch (unless fn or the commit fails): like a response
// lost on the network, the error then does not mean that nothing was
// written (a retried AppendRecord reports duplicate=true).
func (db *DB) write(ctx context.Context, fn func(ctx context.Context, tx *wtx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op := &writeOp{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case db.ops <- op:
	case <-ctx.Done():
		return ctx.Err()
	case <-db.stop:
		return ErrClosed
	}
	select {
	case err := <-op.done:
		return err
	case <-ctx.Done():
		select {
		case err := <-op.done: // answered at the same moment: prefer the answer
			return err
		default:
			return ctx.Err()
		}
	}
}

// writer is the DB's writer goroutine, the only user of the writer
// connection once Open has returned. It takes the first waiting write, then
// every other write already waiting (up to MaxBatch), runs them all in one
// BEGIN IMMEDIATE transaction, commits once (one WAL fsync for the batch)
// and only then answers them. While it commits, new writes queue up and
// form the next batch: under load, batches grow by themselves and no write
// waits for a timer. It returns when stop is closed, after answering the
// batch in hand.
func (db *DB) writer() {
	defer close(db.stopped)
	batch := make([]*writeOp, 0, MaxBatch)
	errs := make([]error, MaxBatch)
	for {
		select { // stop first: writes still queued fail with ErrClosed
		case <-db.stop:
			return
		default:
		}
		select {
		case <-db.stop:
			return
		case op := <-db.ops:
			batch = append(batch[:0], op)
		}
	fill:
		for len(batch) < MaxBatch {
			select {
			case op := <-db.ops:
				batch = append(batch, op)
			default:
				break fill
			}
		}
		res := errs[:len(batch)]
		clear(res)
		if err := db.runBatch(batch, res); err != nil {
			for i := range res {
				res[i] = err
			}
		}
		for i, op := range batch {
			op.done <- res[i]
		}
		clear(batch) // let the answered ops be collected
	}
}

// runBatch runs the live writes of batch in one transaction and commits
// it. errs[i] receives the outcome of batch[i]; a non-nil result is a
// failure of the whole transaction (begin, savepoint bookkeeping or
// commit), which every write of the batch must report, whatever errs says:
// nothing of the batch was committed.
//
// A batch of one live write runs it directly in the transaction, rolled
// back if it fails. With several, each runs in its own savepoint, rolled
// back to if the write fails, so a failed write (ErrSealed, ErrConflict,
// a constraint...) undoes only itself.
func (db *DB) runBatch(batch []*writeOp, errs []error) error {
	// The batch's statements run under the writer's own context: one
	// caller giving up must not interrupt the others' transaction.
	ctx := context.Background()
	live := 0
	for i, op := range batch {
		if err := op.ctx.Err(); err != nil {
			errs[i] = err
		} else {
			live++
		}
	}
	if live == 0 {
		return nil
	}
	sqltx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer sqltx.Rollback()
	tx := &wtx{Tx: sqltx, stmts: &db.stmts, bound: make(map[*sql.Stmt]*sql.Stmt)}
	if live == 1 {
		for i, op := range batch {
			if errs[i] == nil {
				if errs[i] = op.fn(ctx, tx); errs[i] != nil {
					return nil // rolled back by the deferred Rollback
				}
			}
		}
	} else {
		for i, op := range batch {
			if errs[i] != nil {
				continue
			}
			// A caller whose context ended while earlier writes of the
			// batch ran is still answered before its write runs.
			if errs[i] = op.ctx.Err(); errs[i] != nil {
				continue
			}
			if _, err := tx.stmt(ctx, db.stmts.savepoint).ExecContext(ctx); err != nil {
				return fmt.Errorf("savepoint: %w", err)
			}
			if errs[i] = op.fn(ctx, tx); errs[i] != nil {
				// If the failure rolled the whole transaction back (an I/O
				// error, a full disk), the savepoint is gone and ROLLBACK TO
				// fails: the batch is lost, and every write reports it.
				if _, err := tx.stmt(ctx, db.stmts.rollbackTo).ExecContext(ctx); err != nil {
					return fmt.Errorf("roll back to savepoint after %v: %w", errs[i], err)
				}
			}
			if _, err := tx.stmt(ctx, db.stmts.release).ExecContext(ctx); err != nil {
				return fmt.Errorf("release savepoint: %w", err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	db.commits.Add(1)
	db.committed.Add(int64(live))
	return nil
}
