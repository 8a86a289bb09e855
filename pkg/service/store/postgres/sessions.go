package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/svc-gov/svc/pkg/service/store"
)

// CreateReviewerKey implements store.Store.
func (db *DB) CreateReviewerKey(ctx context.Context, k store.ReviewerKey) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO reviewer_keys (org_id, key_id, public_key, name, created_at) VALUES ($1, $2, $3, $4, $5)",
		k.OrgID, k.KeyID, nonNil(k.PublicKey), k.Name, k.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create reviewer key %s of org %s: %w", k.KeyID, k.OrgID, mapErr(err))
	}
	return nil
}

// ReviewerKey implements store.Store.
func (db *DB) ReviewerKey(ctx context.Context, orgID, keyID string) (store.ReviewerKey, error) {
	var k store.ReviewerKey
	err := db.pool.QueryRow(ctx, "SELECT org_id, key_id, public_key, name, created_at FROM reviewer_keys WHERE org_id = $1 AND key_id = $2", orgID, keyID).
		Scan(&k.OrgID, &k.KeyID, &k.PublicKey, &k.Name, &k.CreatedAt)
	if err != nil {
		return store.ReviewerKey{}, fmt.Errorf("postgres: reviewer key %s of org %s: %w", keyID, orgID, mapErr(err))
	}
	k.CreatedAt = k.CreatedAt.UTC()
	return k, nil
}

// shareOpenRun takes a share lock on the run's row for the rest of the
// transaction and checks that it belongs to the organisation and is open.
// Session writes of one run do not wait for each other, but they exclude
// SealRun (and appends, which lock the row FOR UPDATE): a session write
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

// CreateSession implements store.Store. The session is stored open
// whatever s's ClosedAt, CommitmentHash and CloseTST say; a session id that
// is taken gives store.ErrExists.
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

// Session implements store.Store.
func (db *DB) Session(ctx context.Context, orgID, id string) (store.Session, error) {
	var s store.Session
	var closed *time.Time
	var commitment, record *string
	err := db.pool.QueryRow(ctx, `SELECT id, org_id, run_id, kind, check_name, manifest_id, reviewer_key_id,
		min_duration_seconds, opened_at, open_tst, closed_at, commitment_hash, close_tst, record_id
		FROM sessions WHERE id = $1 AND org_id = $2`, id, orgID).
		Scan(&s.ID, &s.OrgID, &s.RunID, &s.Kind, &s.Check, &s.ManifestID, &s.ReviewerKeyID,
			&s.MinDurationSeconds, &s.OpenedAt, &s.OpenTST, &closed, &commitment, &s.CloseTST, &record)
	if err != nil {
		return store.Session{}, fmt.Errorf("postgres: session %s of org %s: %w", id, orgID, mapErr(err))
	}
	s.OpenedAt = s.OpenedAt.UTC()
	if closed != nil {
		s.ClosedAt = closed.UTC()
	}
	if commitment != nil {
		s.CommitmentHash = *commitment
	}
	if record != nil {
		s.RecordID = *record
	}
	return s, nil
}

// CloseSession implements store.Store. The run is checked first: closing a
// session of a sealed run gives store.ErrSealed, even as a retry of a
// close that succeeded. Of concurrent closes (in any process), the first
// to update the row wins; the others wait for it, then compare their
// commitment hash with the stored one.
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
		if stored != commitmentHash {
			return fmt.Errorf("the session was closed on commitment %s: %w", stored, store.ErrConflict)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: close session %s of org %s: %w", id, orgID, err)
	}
	return nil
}

// CreateCalibrationRequest implements store.Store. A request of an unknown
// organisation gives store.ErrNotFound.
func (db *DB) CreateCalibrationRequest(ctx context.Context, r store.CalibrationRequest) error {
	classes := r.GPUClasses
	if classes == nil {
		classes = []string{}
	}
	_, err := db.pool.Exec(ctx, `INSERT INTO calibration_requests (id, org_id, model_hash, model_description,
		hub_model_id, gpu_classes, notify_email, status, estimated_completion, profile_id, note, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		r.ID, r.OrgID, r.ModelHash, r.ModelDescription, r.HubModelID, classes, r.NotifyEmail, r.Status,
		r.EstimatedCompletion, r.ProfileID, r.Note, r.CreatedAt, r.UpdatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create calibration request %s of org %s: %w", r.ID, r.OrgID, mapErr(err))
	}
	return nil
}

const calCols = `id, org_id, model_hash, model_description, hub_model_id, gpu_classes, notify_email, status,
	estimated_completion, profile_id, note, created_at, updated_at`

func scanCal(row pgx.Row) (store.CalibrationRequest, error) {
	var c store.CalibrationRequest
	err := row.Scan(&c.ID, &c.OrgID, &c.ModelHash, &c.ModelDescription, &c.HubModelID, &c.GPUClasses, &c.NotifyEmail,
		&c.Status, &c.EstimatedCompletion, &c.ProfileID, &c.Note, &c.CreatedAt, &c.UpdatedAt)
	if err != nil {
		return store.CalibrationRequest{}, err
	}
	if c.GPUClasses == nil {
		c.GPUClasses = []string{}
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

// CalibrationRequest implements store.Store.
func (db *DB) CalibrationRequest(ctx context.Context, orgID, id string) (store.CalibrationRequest, error) {
	c, err := scanCal(db.pool.QueryRow(ctx, "SELECT "+calCols+" FROM calibration_requests WHERE id = $1 AND org_id = $2", id, orgID))
	if err != nil {
		return store.CalibrationRequest{}, fmt.Errorf("postgres: calibration request %s of org %s: %w", id, orgID, mapErr(err))
	}
	return c, nil
}

// CalibrationRequestsByModel implements store.Store. Requests created at
// the same instant are ordered by id (byte order). A model without
// requests gives an empty list, not an error.
func (db *DB) CalibrationRequestsByModel(ctx context.Context, modelHash string) ([]store.CalibrationRequest, error) {
	rows, err := db.pool.Query(ctx, "SELECT "+calCols+` FROM calibration_requests WHERE model_hash = $1
		ORDER BY created_at, id COLLATE "C"`, modelHash)
	if err != nil {
		return nil, fmt.Errorf("postgres: calibration requests of model %s: %w", modelHash, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.CalibrationRequest, error) { return scanCal(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: calibration requests of model %s: %w", modelHash, err)
	}
	if out == nil {
		out = []store.CalibrationRequest{}
	}
	return out, nil
}

// UpdateCalibrationRequest implements store.Store. It sets updated_at to
// at; status transitions are the caller's to check.
func (db *DB) UpdateCalibrationRequest(ctx context.Context, id string, from []string, status, profileID, note string, at time.Time) error {
	tag, err := db.pool.Exec(ctx, "UPDATE calibration_requests SET status = $2, profile_id = $3, note = $4, updated_at = $5 WHERE id = $1 AND (coalesce(cardinality($6::text[]), 0) = 0 OR status = ANY($6::text[]))",
		id, status, profileID, note, at, from)
	if err == nil && tag.RowsAffected() == 0 {
		var one int
		switch qerr := db.pool.QueryRow(ctx, "SELECT 1 FROM calibration_requests WHERE id = $1", id).Scan(&one); {
		case errors.Is(qerr, pgx.ErrNoRows):
			err = store.ErrNotFound
		case qerr != nil:
			err = qerr
		default:
			err = store.ErrConflict
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: update calibration request %s: %w", id, err)
	}
	return nil
}
