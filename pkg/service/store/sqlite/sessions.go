package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// CreateSession implements store.SessionStore.
func (db *DB) CreateSession(ctx context.Context, s store.Session) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		if _, _, err := tx.OpenRun(ctx, s.OrgID, s.RunID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (id, org_id, run_id, kind, check_name, manifest_id,
			reviewer_key_id, min_duration_seconds, opened_at, open_tst) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			s.ID, s.OrgID, s.RunID, s.Kind, s.Check, s.ManifestID, s.ReviewerKeyID, s.MinDurationSeconds,
			fmtTime(s.OpenedAt), nonNil(s.OpenTST))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create session %s in run %s of org %s: %w", s.ID, s.RunID, s.OrgID, err)
	}
	return nil
}

// Session implements store.SessionStore.
func (db *DB) Session(ctx context.Context, orgID, id string) (store.Session, error) {
	s, err := backend.ScanSession(db.queryRow(ctx, "SELECT "+backend.SessionCols+" FROM sessions WHERE id = ? AND org_id = ?", id, orgID))
	if err != nil {
		return store.Session{}, fmt.Errorf("sqlite: session %s of org %s: %w", id, orgID, mapErr(err))
	}
	return s, nil
}

// CloseSession implements store.SessionStore. The run is checked first:
// closing a session of a sealed run gives store.ErrSealed, even as a
// retry of a close that succeeded.
func (db *DB) CloseSession(ctx context.Context, orgID, id string, closedAt time.Time, commitmentHash string, closeTST []byte) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		var sealed, closed bool
		var stored string
		err := tx.QueryRowContext(ctx, `SELECT r.sealed, s.closed_at IS NOT NULL, coalesce(s.commitment_hash, '')
			FROM sessions s JOIN runs r ON r.id = s.run_id WHERE s.id = ? AND s.org_id = ?`, id, orgID).
			Scan(&sealed, &closed, &stored)
		switch {
		case err != nil:
			return mapErr(err)
		case sealed:
			return store.ErrSealed
		case closed:
			return backend.ClosedOn(stored, commitmentHash)
		}
		_, err = tx.ExecContext(ctx, "UPDATE sessions SET closed_at = ?, commitment_hash = ?, close_tst = ? WHERE id = ?",
			fmtTime(closedAt), commitmentHash, nonNil(closeTST), id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: close session %s of org %s: %w", id, orgID, err)
	}
	return nil
}

// ClaimSession implements store.SessionStore. The claim is one write
// transaction: of two concurrent claims by different records (in any
// process sharing the file) exactly one succeeds.
func (db *DB) ClaimSession(ctx context.Context, orgID, id, recordID string) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		var held sql.NullString
		if err := tx.QueryRowContext(ctx, "SELECT record_id FROM sessions WHERE id = ? AND org_id = ?", id, orgID).Scan(&held); err != nil {
			return mapErr(err)
		}
		if done, err := backend.Claim(held, recordID); done || err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, "UPDATE sessions SET record_id = ? WHERE id = ?", recordID, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: claim session %s of org %s for record %s: %w", id, orgID, recordID, err)
	}
	return nil
}
