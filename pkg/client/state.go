package client

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// RunState is a Run's position in its chain, saved between processes (the
// command line keeps it in a state file) so that a later process continues
// the same chain, even while the service is unreachable: Run.State reads
// it, Pipeline.RestoreRun makes a Run from it. Keep it as the program
// likes (it is plain JSON); the client does not write it anywhere.
type RunState struct {
	RunID string `json:"run_id"`
	// BaseURL is the address of the service the run was opened on
	// (absent in state files written before it was kept).
	BaseURL            string            `json:"base_url,omitempty"`
	WorkflowID         string            `json:"workflow_id"`
	OrgID              string            `json:"org_id,omitempty"`
	Environment        vpec.Environment  `json:"environment"`
	PolicySnapshotHash string            `json:"policy_snapshot_hash,omitempty"`
	Sequence           int64             `json:"sequence"`
	BaseSequence       int64             `json:"base_sequence"`
	ChainHash          string            `json:"chain_hash"`
	Records            []json.RawMessage `json:"records"`
	LastCommitment     string            `json:"last_commitment,omitempty"`
	Sealed             bool              `json:"sealed"`
}

// State returns the run's current position.
func (r *Run) State() RunState {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := RunState{RunID: r.id, BaseURL: r.p.baseURL, WorkflowID: r.workflowID, OrgID: r.orgID, Environment: r.env,
		PolicySnapshotHash: r.policySnapshotHash, Sequence: r.seq, BaseSequence: r.baseSeq,
		ChainHash: commitment.OfSHA256(r.prev).String(), LastCommitment: r.lastCommitment, Sealed: r.sealed,
		Records: make([]json.RawMessage, len(r.bodies))}
	for i, b := range r.bodies {
		st.Records[i] = json.RawMessage(b)
	}
	return st
}

// RestoreRun makes a Run from a saved state; it needs no network.
func (p *Pipeline) RestoreRun(st RunState) (*Run, error) {
	prev, err := commitment.ParseSHA256(st.ChainHash)
	if err != nil {
		return nil, fmt.Errorf("svc client: restore run %s: chain_hash: %w", st.RunID, err)
	}
	if !strings.HasPrefix(st.RunID, "run_") || st.Sequence < st.BaseSequence {
		return nil, fmt.Errorf("svc client: restore run: the state is not a run's (run_id %q, sequence %d)", st.RunID, st.Sequence)
	}
	r := &Run{p: p, id: st.RunID, workflowID: st.WorkflowID, orgID: st.OrgID, env: st.Environment,
		policySnapshotHash: st.PolicySnapshotHash, seq: st.Sequence, baseSeq: st.BaseSequence, prev: prev,
		lastCommitment: st.LastCommitment, sealed: st.Sealed}
	for _, b := range st.Records {
		r.bodies = append(r.bodies, []byte(b))
	}
	return r, nil
}
