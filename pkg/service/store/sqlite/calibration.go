package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// CreateCalibrationRequest implements store.CalibrationStore. The GPU
// classes are kept as a JSON array.
func (db *DB) CreateCalibrationRequest(ctx context.Context, r store.CalibrationRequest) error {
	classes, err := json.Marshal(backend.NonNilList(r.GPUClasses))
	if err == nil {
		err = db.write(ctx, func(ctx context.Context, tx *wtx) error {
			_, err := tx.ExecContext(ctx, "INSERT INTO calibration_requests ("+backend.CalCols+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				r.ID, r.OrgID, r.ModelHash, r.ModelDescription, r.HubModelID, string(classes), r.NotifyEmail, r.Status,
				r.EstimatedCompletion, r.ProfileID, r.Note, fmtTime(r.CreatedAt), fmtTime(r.UpdatedAt))
			return mapErr(err)
		})
	}
	if err != nil {
		return fmt.Errorf("sqlite: create calibration request %s of org %s: %w", r.ID, r.OrgID, err)
	}
	return nil
}

func scanCal(row backend.Scanner) (store.CalibrationRequest, error) {
	return backend.ScanCalibration(row, backend.JSONList)
}

// CalibrationRequest implements store.CalibrationReader.
func (db *DB) CalibrationRequest(ctx context.Context, orgID, id string) (store.CalibrationRequest, error) {
	c, err := scanCal(db.queryRow(ctx, "SELECT "+backend.CalCols+" FROM calibration_requests WHERE id = ? AND org_id = ?", id, orgID))
	if err != nil {
		return store.CalibrationRequest{}, fmt.Errorf("sqlite: calibration request %s of org %s: %w", id, orgID, mapErr(err))
	}
	return c, nil
}

// CalibrationRequestsOfOrg implements store.CalibrationReader.
func (db *DB) CalibrationRequestsOfOrg(ctx context.Context, orgID string) ([]store.CalibrationRequest, error) {
	out, err := list(ctx, db, scanCal, "SELECT "+backend.CalCols+" FROM calibration_requests WHERE org_id = ? ORDER BY created_at, id LIMIT ?",
		orgID, store.MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: calibration requests of org %s: %w", orgID, err)
	}
	return out, nil
}

// CalibrationRequestsByModel implements store.CalibrationReader.
func (db *DB) CalibrationRequestsByModel(ctx context.Context, modelHash string) ([]store.CalibrationRequest, error) {
	out, err := list(ctx, db, scanCal, "SELECT "+backend.CalCols+" FROM calibration_requests WHERE model_hash = ? ORDER BY created_at, id", modelHash)
	if err != nil {
		return nil, fmt.Errorf("sqlite: calibration requests of model %s: %w", modelHash, err)
	}
	return out, nil
}

// UpdateCalibrationRequest implements store.CalibrationStore. Status
// transitions are the caller's to check.
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
		if n, err := res.RowsAffected(); err != nil || n > 0 {
			return err
		}
		var one int
		if err := tx.QueryRowContext(ctx, "SELECT 1 FROM calibration_requests WHERE id = ?", id).Scan(&one); err != nil {
			return mapErr(err)
		}
		return store.ErrConflict
	})
	if err != nil {
		return fmt.Errorf("sqlite: update calibration request %s: %w", id, err)
	}
	return nil
}
