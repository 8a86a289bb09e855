package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/document"
)

// RecordDelegation hands the run over to another process or agent at its
// current point: queued entries of the run are delivered, then the service
// signs a lineage token bound to the run's last sequence and chain hash and
// to the delegation (a description such as {"to": "agent-7"}; not personal
// data). The delegate continues with Pipeline.ResumeFromLineage; this Run
// should then stop recording (the delegate's records take the next
// sequence numbers). It needs the service.
func (r *Run) RecordDelegation(ctx context.Context, delegation map[string]any) (string, error) {
	p := r.p
	if err := p.enter(); err != nil {
		return "", err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return "", fmt.Errorf("svc client: delegate run %s: %w", r.id, ErrRunSealed)
	}
	if delegation == nil {
		delegation = map[string]any{}
	}
	body, err := document.Marshal(api.DelegationRequest{Delegation: delegation})
	if err != nil {
		return "", fmt.Errorf("svc client: delegate run %s: %w", r.id, err)
	}
	if err := p.flushFor(ctx, r.id); err != nil {
		return "", fmt.Errorf("svc client: delegate run %s: %w", r.id, err)
	}
	data, _, err := p.call(ctx, http.MethodPost, "/api/v1/runs/"+url.PathEscape(r.id)+"/delegations", body)
	if err != nil {
		p.noteFailure(err)
		if errors.Is(err, ErrRunSealed) {
			r.sealed = true
		}
		return "", fmt.Errorf("svc client: delegate run %s: %w", r.id, err)
	}
	var res api.DelegationResult
	if err := json.Unmarshal(data, &res); err != nil || res.LineageToken == "" {
		return "", fmt.Errorf("svc client: delegate run %s: answer has no lineage token", r.id)
	}
	return res.LineageToken, nil
}

// ResumeFromLineage continues a run handed over with a lineage token (from
// RecordDelegation): the returned Run has the same run id and records from
// the token's last sequence on, chaining from its last chain hash. The
// service checks the token (POST /api/v1/runs/resume). When it is
// unreachable the token's payload is read locally and the records are
// queued; the service checks the chain when they are delivered.
func (p *Pipeline) ResumeFromLineage(ctx context.Context, token string) (*Run, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	body, err := json.Marshal(api.ResumeRequest{LineageToken: token})
	if err != nil {
		return nil, err
	}
	p.autoFlush(ctx)
	if !p.down.Load() {
		data, _, err := p.call(ctx, http.MethodPost, "/api/v1/runs/resume", body)
		switch {
		case err == nil:
			var ar api.Run
			if err := json.Unmarshal(data, &ar); err != nil {
				return nil, fmt.Errorf("svc client: resume from lineage: answer: %w", err)
			}
			return p.continueRun(ar)
		case !unreachable(err):
			return nil, fmt.Errorf("svc client: resume from lineage: %w", err)
		}
		p.noteFailure(err)
	}
	p64, _, ok := strings.Cut(token, ".")
	raw, derr := base64.RawURLEncoding.DecodeString(p64)
	var l api.Lineage
	if !ok || derr != nil || json.Unmarshal(raw, &l) != nil || l.RunID == "" {
		return nil, fmt.Errorf("svc client: resume from lineage: the service is unreachable and the token is not <base64url payload>.<signature>: %w", ErrUnavailable)
	}
	r, err := p.continueRun(api.Run{RunID: l.RunID, OrgID: l.OrgID, LastSequence: l.LastSequence, LastChainHash: l.LastChainHash})
	if err != nil {
		return nil, err
	}
	return r, nil
}
