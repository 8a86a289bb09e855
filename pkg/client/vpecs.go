package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/svc-gov/svc/pkg/core/api"
)

// ErrNotIssued: the run has no VPEC yet (it is open, or its queued close
// was not delivered).
var ErrNotIssued = errors.New("svc client: no VPEC issued for the run yet")

// FetchVPEC returns the VPEC the service issued for a sealed run (GET
// /api/v1/runs/{id}, then GET /api/v1/vpecs/{vpec_id}): for example the
// one issued when a queued close was delivered after an offline Close.
// Queued entries of the run are delivered first. It needs the service.
func (p *Pipeline) FetchVPEC(ctx context.Context, runID string) (*VPECResult, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	ar, err := p.serverRun(ctx, runID, "fetch VPEC of")
	if err != nil {
		return nil, err
	}
	if ar.VPECID == "" {
		return nil, fmt.Errorf("svc client: fetch VPEC of %s: the run is %s: %w", runID, ar.Status, ErrNotIssued)
	}
	data, _, err := p.call(ctx, http.MethodGet, "/api/v1/vpecs/"+url.PathEscape(ar.VPECID), nil)
	if err != nil {
		p.noteFailure(err)
		return nil, fmt.Errorf("svc client: fetch VPEC %s: %w", ar.VPECID, err)
	}
	res := &VPECResult{Raw: data}
	if err := json.Unmarshal(data, &res.VPEC); err != nil {
		return nil, fmt.Errorf("svc client: fetch VPEC %s: %w", ar.VPECID, err)
	}
	return res, nil
}

// GetVPEC returns the signed VPEC the service issued, by run id (run_…,
// as FetchVPEC) or by VPEC id (vpec_…). A run without a VPEC yet gives
// ErrNotIssued.
func (p *Pipeline) GetVPEC(ctx context.Context, id string) (*VPECResult, error) {
	if !strings.HasPrefix(id, "vpec_") {
		return p.FetchVPEC(ctx, id)
	}
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	data, _, err := p.call(ctx, http.MethodGet, "/api/v1/vpecs/"+url.PathEscape(id), nil)
	if err != nil {
		p.noteFailure(err)
		return nil, fmt.Errorf("svc client: fetch VPEC %s: %w", id, err)
	}
	res := &VPECResult{Raw: data}
	if err := json.Unmarshal(data, &res.VPEC); err != nil {
		return nil, fmt.Errorf("svc client: fetch VPEC %s: %w", id, err)
	}
	return res, nil
}

// issuedID asks the service which VPEC it issued for run runID.
func (p *Pipeline) issuedID(ctx context.Context, runID string) (string, error) {
	data, _, err := p.call(ctx, http.MethodGet, "/api/v1/runs/"+url.PathEscape(runID), nil)
	if err != nil {
		return "", err
	}
	var ar api.Run
	if err := json.Unmarshal(data, &ar); err != nil {
		return "", err
	}
	return ar.VPECID, nil
}

// issuedVPECID reads vpec_id from a close answer (the issued VPEC).
func issuedVPECID(data []byte) string {
	var v struct {
		VPECID string `json:"vpec_id"`
	}
	if json.Unmarshal(data, &v) != nil {
		return ""
	}
	return v.VPECID
}
