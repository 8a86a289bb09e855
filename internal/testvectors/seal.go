package testvectors

import (
	"context"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/issue"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// UnsignedOffline returns the unsigned offline VPEC a client would have
// written for the run of v: schema vpec.OfflineSchema, the signature
// members empty, a system_unavailable gap (docs/FORMATS.md).
func UnsignedOffline(v *vpec.VPEC) *vpec.VPEC {
	off := clone(v)
	off.Schema = vpec.OfflineSchema
	off.SigningKeyID, off.Signature, off.TimestampRFC3161 = "", "", ""
	off.Gaps = append(off.Gaps, vpec.Gap{GapID: "gap_unsigned-offline", GapType: gap.SystemUnavailable,
		Severity: gap.SeverityOf(gap.SystemUnavailable), Timestamp: off.IssuedAt})
	off.IsClean = false
	return off
}

// SealRecords issues a VPEC for run runID over records as a service would:
// chain hashes from genesis, derived fields, Ed25519 signature and RFC 3161
// timestamp; it returns the document. Tests use it for VPECs a service
// should never have signed.
func SealRecords(runID string, records []vpec.Record, s *signing.Signer, tsa timestamp.Timestamper) ([]byte, error) {
	v := &vpec.VPEC{VPECID: names.NewID("vpec_"), RunID: runID, WorkflowID: "test", OrgID: "org_test",
		Environment: vpec.Production, APIKeyID: "pk_live_test", Records: records, IssuedAt: vpec.FormatTime(time.Now())}
	if _, err := issue.Chain(vpec.Genesis(runID), v.Records); err != nil {
		return nil, err
	}
	jcs, err := issue.RecordsJCS(v.Records)
	if err != nil {
		return nil, err
	}
	v.Gaps = issue.Gaps(runID, v.Records, jcs, v.IssuedAt)
	issue.Finish(v, jcs)
	if err := issue.Seal(context.Background(), v, s, tsa); err != nil {
		return nil, err
	}
	return document.MarshalIndent(v)
}
