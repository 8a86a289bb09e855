package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/document"
)

// CalibrationRequest asks the service to calibrate a drift profile for a
// model (docs/API.md, plus notify_email). It is the API's wire type,
// api.CalibrationRequestInput.
type CalibrationRequest = api.CalibrationRequestInput

// CalibrationStatus is a calibration request as the service reports it
// (docs/API.md and its status). It is the API's wire type,
// api.CalibrationRequestView.
type CalibrationStatus = api.CalibrationRequestView

// getJSON performs one call that needs the service and decodes its answer.
func (p *Pipeline) getJSON(ctx context.Context, method, path string, in, out any) error {
	if err := p.enter(); err != nil {
		return err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	var body []byte
	if in != nil {
		var err error
		if body, err = document.Marshal(in); err != nil {
			return fmt.Errorf("svc client: %s %s: %w", method, path, err)
		}
	}
	data, _, err := p.call(ctx, method, path, body)
	if err != nil {
		p.noteFailure(err)
		return fmt.Errorf("svc client: %w", err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("svc client: %s %s: answer: %w", method, path, err)
	}
	return nil
}

// Profiles lists the registry's published profiles (docs/API.md).
func (p *Pipeline) Profiles(ctx context.Context) ([]api.ProfileSummary, error) {
	var list api.ProfileList
	err := p.getJSON(ctx, http.MethodGet, "/api/v1/registry/profiles", nil, &list)
	return list.Profiles, err
}

// Lookup looks a model up by its onnx_model_hash (docs/API.md). A model
// without a profile gives Found false and no error.
func (p *Pipeline) Lookup(ctx context.Context, modelHash string) (api.Lookup, error) {
	var lk api.Lookup
	err := p.getJSON(ctx, http.MethodGet, "/api/v1/registry/lookup?hash="+url.QueryEscape(modelHash), nil, &lk)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return api.Lookup{Found: false}, nil
	}
	return lk, err
}

// ProfileDocument returns the full signed profile covering a model
// (docs/FORMATS.md, model profile), as the service sent it; verify it with profile.Verify.
func (p *Pipeline) ProfileDocument(ctx context.Context, modelHash string) ([]byte, error) {
	var raw json.RawMessage
	err := p.getJSON(ctx, http.MethodGet, "/api/v1/registry/profiles?model_hash="+url.QueryEscape(modelHash), nil, &raw)
	return raw, err
}

// RequestCalibration files a calibration request (status queued).
func (p *Pipeline) RequestCalibration(ctx context.Context, req CalibrationRequest) (CalibrationStatus, error) {
	var st CalibrationStatus
	err := p.getJSON(ctx, http.MethodPost, "/api/v1/registry/calibration-requests", req, &st)
	return st, err
}

// Calibration returns the status of a calibration request.
func (p *Pipeline) Calibration(ctx context.Context, requestID string) (CalibrationStatus, error) {
	var st CalibrationStatus
	err := p.getJSON(ctx, http.MethodGet, "/api/v1/registry/calibration-requests/"+url.PathEscape(requestID), nil, &st)
	return st, err
}
