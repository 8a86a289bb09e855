package client

import (
	"encoding/json"
	"log/slog"

	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// LogEvent is what a logger callback receives for every record: it links application logs to the VPEC through the commitment hash.
// It carries no raw data.
type LogEvent struct {
	RecordID       string `json:"svc_record_id"`
	CommitmentHash string `json:"svc_commitment_hash"`
	CheckResult    string `json:"svc_check_result"`
	ProofLevel     string `json:"svc_proof_level"`
	WorkflowID     string `json:"svc_workflow_id"`
	RunID          string `json:"svc_run_id"`
	RecordedAt     string `json:"svc_recorded_at"`
	// GapTypesEmitted lists the gap types the record raises
	// (model_profile_missing for an open_source_ml stage). It is nil unless
	// the logger was set with includeGapTypes; then it is non-nil, possibly
	// empty. In JSON it is present only when non-nil.
	GapTypesEmitted []string `json:"gap_types_emitted"`
}

// MarshalJSON writes the event with the documented log event names; gap_types_emitted
// is present only when gap types are enabled (GapTypesEmitted non-nil).
func (e LogEvent) MarshalJSON() ([]byte, error) {
	type plain LogEvent
	if e.GapTypesEmitted != nil {
		return json.Marshal(plain(e))
	}
	return json.Marshal(struct {
		plain
		GapTypesEmitted []string `json:"gap_types_emitted,omitempty"`
	}{plain: plain(e)})
}

// Attrs returns the event as slog attributes with the documented log event names, for
// logger.LogAttrs(ctx, level, msg, ev.Attrs()...).
func (e LogEvent) Attrs() []slog.Attr {
	attrs := []slog.Attr{
		slog.String("svc_record_id", e.RecordID),
		slog.String("svc_commitment_hash", e.CommitmentHash),
		slog.String("svc_check_result", e.CheckResult),
		slog.String("svc_proof_level", e.ProofLevel),
		slog.String("svc_workflow_id", e.WorkflowID),
		slog.String("svc_run_id", e.RunID),
		slog.String("svc_recorded_at", e.RecordedAt),
	}
	if e.GapTypesEmitted != nil {
		attrs = append(attrs, slog.Any("gap_types_emitted", e.GapTypesEmitted))
	}
	return attrs
}

// SetLogger attaches a callback that receives one LogEvent per record
// (docs/API.md), on the recording goroutine after the record is made (sent
// or queued) and before Record returns, outside the client's locks. With includeGapTypes the event's GapTypesEmitted is set
// (possibly empty); otherwise it is nil. A nil callback detaches.
func (p *Pipeline) SetLogger(cb func(LogEvent), includeGapTypes bool) {
	p.logMu.Lock()
	p.logger, p.logGaps = cb, includeGapTypes
	p.logMu.Unlock()
}

func (p *Pipeline) emit(rec *vpec.Record, runID, workflowID string) {
	p.logMu.RLock()
	cb, gaps := p.logger, p.logGaps
	p.logMu.RUnlock()
	if cb == nil {
		return
	}
	ev := LogEvent{RecordID: rec.RecordID, CommitmentHash: rec.CommitmentHash, CheckResult: string(rec.CheckResult),
		ProofLevel: string(rec.ProofLevel), WorkflowID: workflowID, RunID: runID, RecordedAt: rec.RecordedAt}
	if gaps {
		ev.GapTypesEmitted = []string{}
		if rec.RaisesCircuitMissing() {
			ev.GapTypesEmitted = append(ev.GapTypesEmitted, gap.CircuitMissing)
		}
		if rec.RaisesProfileMissing() {
			ev.GapTypesEmitted = append(ev.GapTypesEmitted, gap.ModelProfileMissing)
		}
	}
	cb(ev)
}
