package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// CreateReviewerKey implements store.Store.
func (db *DB) CreateReviewerKey(ctx context.Context, k store.ReviewerKey) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		_, err := tx.ExecContext(ctx, "INSERT INTO reviewer_keys (org_id, key_id, public_key, name, created_at) VALUES (?, ?, ?, ?, ?)",
			k.OrgID, k.KeyID, nonNil(k.PublicKey), k.Name, fmtTime(k.CreatedAt))
		return mapErr(err)
	})
	if err != nil {
		return fmt.Errorf("sqlite: create reviewer key %s of org %s: %w", k.KeyID, k.OrgID, err)
	}
	return nil
}

// ReviewerKey implements store.Store.
func (db *DB) ReviewerKey(ctx context.Context, orgID, keyID string) (store.ReviewerKey, error) {
	var k store.ReviewerKey
	var created string
	err := db.queryRow(ctx, "SELECT org_id, key_id, public_key, name, created_at FROM reviewer_keys WHERE org_id = ? AND key_id = ?", orgID, keyID).
		Scan(&k.OrgID, &k.KeyID, &k.PublicKey, &k.Name, &created)
	if err == nil {
		k.CreatedAt, err = parseTime(created)
	}
	if err != nil {
		return store.ReviewerKey{}, fmt.Errorf("sqlite: reviewer key %s of org %s: %w", keyID, orgID, mapErr(err))
	}
	return k, nil
}

// CreateSession implements store.Store. The session is stored open
// whatever s's ClosedAt, CommitmentHash and CloseTST say; a session id that
// is taken gives store.ErrExists.
func (db *DB) CreateSession(ctx context.Context, s store.Session) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		if err := db.lockOpenRun(ctx, tx, s.OrgID, s.RunID); err != nil {
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

// Session implements store.Store.
func (db *DB) Session(ctx context.Context, orgID, id string) (store.Session, error) {
	var s store.Session
	var opened string
	var closed, commitment, record sql.NullString
	err := db.queryRow(ctx, `SELECT id, org_id, run_id, kind, check_name, manifest_id, reviewer_key_id,
		min_duration_seconds, opened_at, open_tst, closed_at, commitment_hash, close_tst, record_id
		FROM sessions WHERE id = ? AND org_id = ?`, id, orgID).
		Scan(&s.ID, &s.OrgID, &s.RunID, &s.Kind, &s.Check, &s.ManifestID, &s.ReviewerKeyID,
			&s.MinDurationSeconds, &opened, &s.OpenTST, &closed, &commitment, &s.CloseTST, &record)
	if err == nil {
		s.OpenedAt, err = parseTime(opened)
	}
	if err == nil && closed.Valid {
		s.ClosedAt, err = parseTime(closed.String)
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("sqlite: session %s of org %s: %w", id, orgID, mapErr(err))
	}
	s.CommitmentHash, s.RecordID = commitment.String, record.String
	return s, nil
}

// CloseSession implements store.Store. The run is checked first: closing a
// session of a sealed run gives store.ErrSealed, even as a retry of a
// close that succeeded.
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
		case closed && stored == commitmentHash:
			return nil
		case closed:
			return fmt.Errorf("the session was closed on commitment %s: %w", stored, store.ErrConflict)
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

// CreateCalibrationRequest implements store.Store. A request of an unknown
// organisation gives store.ErrNotFound.
func (db *DB) CreateCalibrationRequest(ctx context.Context, r store.CalibrationRequest) error {
	classes := r.GPUClasses
	if classes == nil {
		classes = []string{}
	}
	list, err := json.Marshal(classes)
	if err == nil {
		err = db.write(ctx, func(ctx context.Context, tx *wtx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO calibration_requests (id, org_id, model_hash, model_description,
				hub_model_id, gpu_classes, notify_email, status, estimated_completion, profile_id, note, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				r.ID, r.OrgID, r.ModelHash, r.ModelDescription, r.HubModelID, string(list), r.NotifyEmail, r.Status,
				r.EstimatedCompletion, r.ProfileID, r.Note, fmtTime(r.CreatedAt), fmtTime(r.UpdatedAt))
			return mapErr(err)
		})
	}
	if err != nil {
		return fmt.Errorf("sqlite: create calibration request %s of org %s: %w", r.ID, r.OrgID, err)
	}
	return nil
}

const calCols = `id, org_id, model_hash, model_description, hub_model_id, gpu_classes, notify_email, status,
	estimated_completion, profile_id, note, created_at, updated_at`

func scanCal(row interface{ Scan(...any) error }) (store.CalibrationRequest, error) {
	var c store.CalibrationRequest
	var list, created, updated string
	err := row.Scan(&c.ID, &c.OrgID, &c.ModelHash, &c.ModelDescription, &c.HubModelID, &list, &c.NotifyEmail,
		&c.Status, &c.EstimatedCompletion, &c.ProfileID, &c.Note, &created, &updated)
	if err != nil {
		return store.CalibrationRequest{}, err
	}
	if err := json.Unmarshal([]byte(list), &c.GPUClasses); err != nil {
		return store.CalibrationRequest{}, fmt.Errorf("gpu classes of calibration request %s: %w", c.ID, err)
	}
	if c.GPUClasses == nil { // a stored null
		c.GPUClasses = []string{}
	}
	if c.CreatedAt, err = parseTime(created); err != nil {
		return store.CalibrationRequest{}, err
	}
	c.UpdatedAt, err = parseTime(updated)
	return c, err
}

// CalibrationRequest implements store.Store.
func (db *DB) CalibrationRequest(ctx context.Context, orgID, id string) (store.CalibrationRequest, error) {
	c, err := scanCal(db.queryRow(ctx, "SELECT "+calCols+" FROM calibration_requests WHERE id = ? AND org_id = ?", id, orgID))
	if err != nil {
		return store.CalibrationRequest{}, fmt.Errorf("sqlite: calibration request %s of org %s: %w", id, orgID, mapErr(err))
	}
	return c, nil
}

// CalibrationRequestsByModel implements store.Store. Requests created at
// the same instant are ordered by id. A model without requests gives an
// empty list, not an error.
func (db *DB) CalibrationRequestsByModel(ctx context.Context, modelHash string) ([]store.CalibrationRequest, error) {
	rows, err := db.query(ctx, "SELECT "+calCols+" FROM calibration_requests WHERE model_hash = ? ORDER BY created_at, id", modelHash)
	if err != nil {
		return nil, fmt.Errorf("sqlite: calibration requests of model %s: %w", modelHash, err)
	}
	defer rows.Close()
	out := []store.CalibrationRequest{}
	for rows.Next() {
		c, err := scanCal(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: calibration requests of model %s: %w", modelHash, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: calibration requests of model %s: %w", modelHash, err)
	}
	return out, nil
}

// UpdateCalibrationRequest implements store.Store. It sets updated_at to
// at; status transitions are the caller's to check.
func (db *DB) UpdateCalibrationRequest(ctx context.Context, id string, from []string, status, profileID, note string, at time.Time) error {
	err := db.write(ctx, func(ctx context.Context, tx *wtx) error {
		q := "UPDATE calibration_requests SET status = ?, profile_id = ?, note = ?, updated_at = ? WHERE id = ?"
		args := []any{status, profileID, note, fmtTime(at), id}
		if len(from) > 0 {
			q += " AND status IN (?" + strings.Repeat(", ?", len(from)-1) + ")"
			for _, f := range from {
				args = append(args, f)
			}
		}
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n > 0 {
			return nil
		}
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM calibration_requests WHERE id = ?", id).Scan(&one); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return store.ErrNotFound
			}
			return err
		}
		return store.ErrConflict
	})
	if err != nil {
		return fmt.Errorf("sqlite: update calibration request %s: %w", id, err)
	}
	return nil
}
