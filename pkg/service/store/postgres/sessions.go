package postgres

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// shareOpenRun takes a share lock on the run's row for the rest of the
// transaction and checks that it belongs to the organisation and is open.
// Session writes of one run do not wait for each other, but they exclude
// the seal (and appends, which lock the row FOR UPDATE): a session write
// either commits before the seal or sees the run sealed.
func shareOpenRun(ctx context.Context, tx pgx.Tx, orgID, runID string) error {
	var sealed bool
	if err := tx.QueryRow(ctx, "SELECT sealed FROM runs WHERE id = $1 AND org_id = $2 FOR SHARE", runID, orgID).Scan(&sealed); err != nil {
		return mapErr(err)
	}
	if sealed {
		return store.ErrSealed
	}
	return nil
}

// CreateSession implements store.SessionStore.
func (db *DB) CreateSession(ctx context.Context, s store.Session) error {
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		if err := shareOpenRun(ctx, tx, s.OrgID, s.RunID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO sessions (id, org_id, run_id, kind, check_name, manifest_id,
			reviewer_key_id, min_duration_seconds, opened_at, open_tst) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			s.ID, s.OrgID, s.RunID, s.Kind, s.Check, s.ManifestID, s.ReviewerKeyID, s.MinDurationSeconds,
			s.OpenedAt, nonNil(s.OpenTST))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("postgres: create session %s in run %s of org %s: %w", s.ID, s.RunID, s.OrgID, err)
	}
	return nil
}

// Session implements store.SessionStore.
func (db *DB) Session(ctx context.Context, orgID, id string) (store.Session, error) {
	s, err := backend.ScanSession(db.pool.QueryRow(ctx, "SELECT "+backend.SessionCols+" FROM sessions WHERE id = $1 AND org_id = $2", id, orgID))
	if err != nil {
		return store.Session{}, fmt.Errorf("postgres: session %s of org %s: %w", id, orgID, mapErr(err))
	}
	return s, nil
}

// CloseSession implements store.SessionStore. The run is checked first
// (its row taken FOR SHARE): closing a session of a sealed run gives
// store.ErrSealed, even as a retry of a close that succeeded. Of
// concurrent closes (in any process), the first to update the row wins;
// the others wait for it, then compare their commitment hash with the
// stored one.
func (db *DB) CloseSession(ctx context.Context, orgID, id string, closedAt time.Time, commitmentHash string, closeTST []byte) error {
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		var sealed bool
		err := tx.QueryRow(ctx, `SELECT r.sealed FROM sessions s JOIN runs r ON r.id = s.run_id
			WHERE s.id = $1 AND s.org_id = $2 FOR SHARE OF r`, id, orgID).Scan(&sealed)
		switch {
		case err != nil:
			return mapErr(err)
		case sealed:
			return store.ErrSealed
		}
		tag, err := tx.Exec(ctx, `UPDATE sessions SET closed_at = $2, commitment_hash = $3, close_tst = $4
			WHERE id = $1 AND closed_at IS NULL`, id, closedAt, commitmentHash, nonNil(closeTST))
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		// Already closed, possibly by a transaction the UPDATE waited for:
		// this statement's snapshot sees it.
		var stored string
		if err := tx.QueryRow(ctx, "SELECT commitment_hash FROM sessions WHERE id = $1", id).Scan(&stored); err != nil {
			return err
		}
		return backend.ClosedOn(stored, commitmentHash)
	})
	if err != nil {
		return fmt.Errorf("postgres: close session %s of org %s: %w", id, orgID, err)
	}
	return nil
}

// ClaimSession implements store.SessionStore. The session's row is locked
// FOR UPDATE: of concurrent claims (in any process) the first commits its
// record id, and the others, having waited for the lock, read it.
func (db *DB) ClaimSession(ctx context.Context, orgID, id, recordID string) error {
	err := db.inTx(ctx, func(tx pgx.Tx) error {
		var held sql.NullString
		if err := tx.QueryRow(ctx, "SELECT record_id FROM sessions WHERE id = $1 AND org_id = $2 FOR UPDATE", id, orgID).Scan(&held); err != nil {
			return mapErr(err)
		}
		if done, err := backend.Claim(held, recordID); done || err != nil {
			return err
		}
		_, err := tx.Exec(ctx, "UPDATE sessions SET record_id = $2 WHERE id = $1", id, recordID)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: claim session %s of org %s for record %s: %w", id, orgID, recordID, err)
	}
	return nil
}
