package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
	"github.com/svc-gov/svc/pkg/service/store/internal/backend"
)

// CreateCalibrationRequest implements store.CalibrationStore. The GPU
// classes are kept as a text[].
func (db *DB) CreateCalibrationRequest(ctx context.Context, r store.CalibrationRequest) error {
	_, err := db.pool.Exec(ctx, "INSERT INTO calibration_requests ("+backend.CalCols+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		r.ID, r.OrgID, r.ModelHash, r.ModelDescription, r.HubModelID, backend.NonNilList(r.GPUClasses), r.NotifyEmail, r.Status,
		r.EstimatedCompletion, r.ProfileID, r.Note, r.CreatedAt, r.UpdatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create calibration request %s of org %s: %w", r.ID, r.OrgID, mapErr(err))
	}
	return nil
}

func scanCal(row backend.Scanner) (store.CalibrationRequest, error) {
	return backend.ScanCalibration(row, textArray)
}

// CalibrationRequest implements store.CalibrationReader.
func (db *DB) CalibrationRequest(ctx context.Context, orgID, id string) (store.CalibrationRequest, error) {
	c, err := scanCal(db.pool.QueryRow(ctx, "SELECT "+backend.CalCols+" FROM calibration_requests WHERE id = $1 AND org_id = $2", id, orgID))
	if err != nil {
		return store.CalibrationRequest{}, fmt.Errorf("postgres: calibration request %s of org %s: %w", id, orgID, mapErr(err))
	}
	return c, nil
}

// CalibrationRequestsOfOrg implements store.CalibrationReader.
func (db *DB) CalibrationRequestsOfOrg(ctx context.Context, orgID string) ([]store.CalibrationRequest, error) {
	out, err := list(ctx, db, scanCal, "SELECT "+backend.CalCols+` FROM calibration_requests WHERE org_id = $1
		ORDER BY created_at, id COLLATE "C" LIMIT $2`, orgID, store.MaxListLimit)
	if err != nil {
		return nil, fmt.Errorf("postgres: calibration requests of org %s: %w", orgID, err)
	}
	return out, nil
}

// CalibrationRequestsByModel implements store.CalibrationReader.
func (db *DB) CalibrationRequestsByModel(ctx context.Context, modelHash string) ([]store.CalibrationRequest, error) {
	out, err := list(ctx, db, scanCal, "SELECT "+backend.CalCols+` FROM calibration_requests WHERE model_hash = $1
		ORDER BY created_at, id COLLATE "C"`, modelHash)
	if err != nil {
		return nil, fmt.Errorf("postgres: calibration requests of model %s: %w", modelHash, err)
	}
	return out, nil
}

// UpdateCalibrationRequest implements store.CalibrationStore. Status
// transitions are the caller's to check.
func (db *DB) UpdateCalibrationRequest(ctx context.Context, id string, from []string, status, profileID, note string, at time.Time) error {
	tag, err := db.pool.Exec(ctx, "UPDATE calibration_requests SET status = $2, profile_id = $3, note = $4, updated_at = $5 WHERE id = $1 AND (coalesce(cardinality($6::text[]), 0) = 0 OR status = ANY($6::text[]))",
		id, status, profileID, note, at, from)
	if err == nil && tag.RowsAffected() == 0 {
		var one int
		if err = mapErr(db.pool.QueryRow(ctx, "SELECT 1 FROM calibration_requests WHERE id = $1", id).Scan(&one)); err == nil {
			err = store.ErrConflict
		}
	}
	if err != nil {
		return fmt.Errorf("postgres: update calibration request %s: %w", id, err)
	}
	return nil
}
