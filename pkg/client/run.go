package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Run is an open run: records chain onto it until Close seals it. Its
// methods are safe for concurrent use; records are serialised (they form
// a chain). A Run keeps the records it made (their JSON, under 1 KB each)
// until it is closed, to build the offline VPEC if the service is down
// then.
type Run struct {
	p *Pipeline

	mu                 sync.Mutex
	id, workflowID     string
	orgID              string
	env                vpec.Environment
	policySnapshotHash string
	seq                int64    // last sequence number used
	baseSeq            int64    // records before this Run object (resumed runs)
	prev               [32]byte // chain value after record seq
	bodies             [][]byte // the records this client made, as sent
	lastCommitment     string
	sealed             bool
	closeKey           string // the Idempotency-Key of this Run's close, made at the first Close
}

// ID is the run id (client-proposed, accepted by the service).
func (r *Run) ID() string { return r.id }

// WorkflowID is the run's workflow identity.
func (r *Run) WorkflowID() string { return r.workflowID }

// OrgID is the owning organisation, or "" when the run was opened while
// the service was unreachable.
func (r *Run) OrgID() string { return r.orgID }

// Environment is sandbox or production.
func (r *Run) Environment() vpec.Environment { return r.env }

// PolicySnapshotHash is the hash of the policy snapshot at open time
// (computed locally, as the service does, when it was unreachable).
func (r *Run) PolicySnapshotHash() string { return r.policySnapshotHash }

// LastCommitmentHash is the commitment hash of the most recent record this
// Run made, or "".
func (r *Run) LastCommitmentHash() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastCommitment
}

// Sequence is the sequence number of the last record of the run known to
// this Run (0 before the first).
func (r *Run) Sequence() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.seq
}

// Sealed reports whether the run was closed.
func (r *Run) Sealed() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sealed
}

// Open opens a Run (POST /api/v1/runs) with an optional policy pack id.
// The client proposes the run id, so when the service is unreachable the
// Run opens locally, the open is queued, and records chain from the
// genesis of that id; the service creates the run when the queue is
// delivered.
func (p *Pipeline) Open(ctx context.Context, policyPackID string) (*Run, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	runID := names.NewOrderedID("run_", time.Now())
	// opened_at: this clock's, so that records made before a queued open
	// is delivered are not dated before the run (docs/API.md).
	req := api.OpenRunRequest{RunID: runID, WorkflowID: p.workflowID, SurfaceID: p.surfaceID, Policy: p.policy,
		ProcessContextHash: p.pch, PolicyPackID: policyPackID, OpenedAt: vpec.FormatTime(time.Now())}
	body, err := document.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("svc client: open run: %w", err)
	}
	run := &Run{p: p, id: runID, workflowID: p.workflowID, env: p.env, prev: vpec.Genesis(runID),
		policySnapshotHash: policySnapshot(p.policy, policyPackID)}
	p.autoFlush(ctx)
	if !p.down.Load() {
		data, _, err := p.call(ctx, http.MethodPost, "/api/v1/runs", body)
		switch {
		case err == nil:
			var ar api.Run
			if err := json.Unmarshal(data, &ar); err != nil {
				return nil, fmt.Errorf("svc client: open run: answer: %w", err)
			}
			run.orgID, run.policySnapshotHash = ar.OrgID, ar.PolicySnapshotHash
			return run, nil
		case !unreachable(err):
			return nil, fmt.Errorf("svc client: open run: %w", err)
		}
		p.noteFailure(err)
	}
	if err := p.q.append(kindOpen, runID, body); err != nil {
		return nil, fmt.Errorf("svc client: open run while the service is unreachable: %w", err)
	}
	return run, nil
}

// policySnapshot is the policy_snapshot_hash the service computes: SHA-256
// of the canonical {"policy": sorted policies, "policy_pack_id": id}.
func policySnapshot(policy []string, packID string) string {
	sorted := append([]string(nil), policy...)
	slices.Sort(sorted)
	b, err := canonical.Marshal(map[string]any{"policy": sorted, "policy_pack_id": packID})
	if err != nil {
		return ""
	}
	return commitment.String(b)
}

// ResumeRun continues a run this organisation opened earlier (for example
// by a process that crashed) from the service's end of its chain: queued
// entries of the run are delivered first, then GET /api/v1/runs/{id}
// gives the last sequence and chain hash. It needs the service.
func (p *Pipeline) ResumeRun(ctx context.Context, runID string) (*Run, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer p.exit()
	ctx, cancel := p.callCtx(ctx)
	defer cancel()
	ar, err := p.serverRun(ctx, runID, "resume run")
	if err != nil {
		return nil, err
	}
	if ar.Status == api.RunSealed {
		return nil, fmt.Errorf("svc client: resume run %s: %w", runID, ErrRunSealed)
	}
	return p.continueRun(ar)
}

// serverRun delivers the run's queued entries, then reads the run from
// the service (GET /api/v1/runs/{id}); what names the caller in errors.
func (p *Pipeline) serverRun(ctx context.Context, runID, what string) (api.Run, error) {
	var ar api.Run
	if err := p.flushFor(ctx, runID); err != nil {
		return ar, fmt.Errorf("svc client: %s %s: %w", what, runID, err)
	}
	data, _, err := p.call(ctx, http.MethodGet, "/api/v1/runs/"+url.PathEscape(runID), nil)
	if err != nil {
		p.noteFailure(err)
		return ar, fmt.Errorf("svc client: %s %s: %w", what, runID, err)
	}
	if err := json.Unmarshal(data, &ar); err != nil {
		return ar, fmt.Errorf("svc client: %s %s: answer: %w", what, runID, err)
	}
	return ar, nil
}

// continueRun makes a Run that records after the service's last record.
func (p *Pipeline) continueRun(ar api.Run) (*Run, error) {
	prev, err := commitment.ParseSHA256(ar.LastChainHash)
	if err != nil {
		return nil, fmt.Errorf("svc client: run %s: last_chain_hash: %w", ar.RunID, err)
	}
	wf := ar.WorkflowID
	if wf == "" {
		wf = p.workflowID
	}
	env := ar.Environment
	if env == "" {
		env = p.env
	}
	return &Run{p: p, id: ar.RunID, workflowID: wf, orgID: ar.OrgID, env: env, policySnapshotHash: ar.PolicySnapshotHash,
		seq: ar.LastSequence, baseSeq: ar.LastSequence, prev: prev}, nil
}
