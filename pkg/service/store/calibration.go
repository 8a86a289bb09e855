package store

import (
	"context"
	"time"
)

// CalibrationRequest is a request to calibrate a drift profile for a model.
type CalibrationRequest struct {
	ID                  string // cal_req_<uuid>
	OrgID               string
	ModelHash           string // onnx_model_hash
	ModelDescription    string
	HubModelID          string
	GPUClasses          []string
	NotifyEmail         string
	Status              string // queued, in_progress, published, rejected
	EstimatedCompletion string // "7d" or "48h"
	ProfileID           string // set when published
	Note                string // reason when rejected
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// CalibrationReader reads calibration requests.
type CalibrationReader interface {
	// CalibrationRequest returns a request of the organisation; ErrNotFound otherwise.
	CalibrationRequest(ctx context.Context, orgID, id string) (CalibrationRequest, error)
	// CalibrationRequestsOfOrg lists the organisation's calibration
	// requests, oldest first (ties by id).
	CalibrationRequestsOfOrg(ctx context.Context, orgID string) ([]CalibrationRequest, error)
	// CalibrationRequestsByModel returns every organisation's requests for a
	// model, oldest first, ties by id (publishing a profile updates them
	// all); none is an empty list, not an error.
	CalibrationRequestsByModel(ctx context.Context, modelHash string) ([]CalibrationRequest, error)
}

// CalibrationStore is the calibration requests role.
type CalibrationStore interface {
	CalibrationReader
	// CreateCalibrationRequest stores a request; ErrExists if the id is
	// taken, ErrNotFound for an unknown organisation.
	CreateCalibrationRequest(ctx context.Context, r CalibrationRequest) error
	// UpdateCalibrationRequest sets status, profile id, note and the update
	// time of a request (any organisation's), atomically and only if its
	// current status is one of from (any status when from is empty):
	// ErrConflict otherwise, ErrNotFound if absent.
	UpdateCalibrationRequest(ctx context.Context, id string, from []string, status, profileID, note string, at time.Time) error
}
