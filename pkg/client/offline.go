package client

import (
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// offlineVPEC builds the unsigned VPEC of the records this Run made, with
// the gaps the service would find in them and a system_unavailable gap.
// Its schema is vpec.OfflineSchema and its signature members are empty
// (docs/FORMATS.md, "Unsigned offline VPEC").
func (r *Run) offlineVPEC() (*VPECResult, error) {
	at := time.Now()
	now := vpec.FormatTime(at)
	v := vpec.VPEC{
		Schema: vpec.OfflineSchema, VPECID: names.NewOrderedID("vpec_", at), RunID: r.id, WorkflowID: r.workflowID, OrgID: r.orgID,
		IssuedAt: now, Environment: r.env, APIKeyID: r.p.keyID,
		Records: make([]vpec.Record, len(r.bodies)), Gaps: []vpec.Gap{},
	}
	jcs := make([][]byte, len(r.bodies))
	for i, b := range r.bodies {
		tree, err := document.Parse(b, &v.Records[i])
		if err != nil {
			return nil, fmt.Errorf("svc client: offline VPEC: record %d: %w", i+1, err)
		}
		jcs[i] = tree.Canonical("chain_hash")
	}
	// The same chain, hole and empty-run gaps the service would declare.
	v.Gaps = issue.Gaps(r.id, v.Records, jcs, now)
	for i := range v.Records {
		if rec := &v.Records[i]; rec.RaisesProfileMissing() {
			check, sq := rec.Check, rec.Sequence
			v.Gaps = append(v.Gaps, vpec.Gap{GapID: names.NewID("gap_"), GapType: gap.ModelProfileMissing, Severity: gap.Medium, Check: &check, Sequence: &sq, Timestamp: now})
		}
		if rec := &v.Records[i]; rec.RaisesCircuitMissing() {
			check, sq := rec.Check, rec.Sequence
			v.Gaps = append(v.Gaps, vpec.Gap{GapID: names.NewID("gap_"), GapType: gap.CircuitMissing, Severity: gap.Medium, Check: &check, Sequence: &sq, Timestamp: now})
		}
	}
	v.Gaps = append(v.Gaps, vpec.Gap{GapID: names.NewID("gap_"), GapType: gap.SystemUnavailable, Severity: gap.SeverityOf(gap.SystemUnavailable), Timestamp: now})
	issue.Finish(&v, jcs)
	raw, err := document.MarshalIndent(v)
	if err != nil {
		return nil, fmt.Errorf("svc client: offline VPEC: %w", err)
	}
	return &VPECResult{VPEC: v, Raw: raw, Offline: true}, nil
}
