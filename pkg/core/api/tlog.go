package api

// Transparency log (docs/TRANSPARENCY.md).
const (
	// HeaderLogIndex is the response header of a close (and of GET
	// /api/v1/vpecs/{id} and its receipt) giving the VPEC's index in the
	// service's transparency log, in decimal: a durable promise that the
	// VPEC's leaf is in the log at that index. Absent when the service
	// runs without a log.
	HeaderLogIndex = "Svc-Log-Index"
	// HeaderReceiptWitnessed is the response header of GET
	// /api/v1/vpecs/{id}/receipt: "true" when the receipt's checkpoint
	// carries the cosignatures the service's witness policy requires,
	// "false" when it does not (HeaderReceiptUnwitnessed says why), absent
	// without a policy.
	HeaderReceiptWitnessed = "Svc-Receipt-Witnessed"
	// HeaderReceiptUnwitnessed is why a receipt is unwitnessed.
	HeaderReceiptUnwitnessed = "Svc-Receipt-Unwitnessed-Reason"
	// LogPath is where a service serves its transparency log read-only in
	// the C2SP tlog-tiles layout: LogPath + "checkpoint", LogPath +
	// "tile/...".
	LogPath = "/log/"
	// MaxReceiptWaitSeconds bounds the wait query parameter of GET
	// /api/v1/vpecs/{id}/receipt.
	MaxReceiptWaitSeconds = 60
)

// LogInfo is the body of GET /api/v1/log/org-key: the caller's
// organisation's monitoring key, which an auditor gives `svc log monitor`
// to list the organisation's VPECs in the log, and the log it is for.
type LogInfo struct {
	// OrgID is the caller's organisation.
	OrgID string `json:"org_id"`
	// OrgKey is its monitoring key, svc-org-key-v1+<org_id>+<64 hex>.
	OrgKey string `json:"org_key"`
	// LogKey is the log's C2SP note verifier key (also in the trust
	// bundle).
	LogKey string `json:"log_key"`
	// LogPath is where the service serves the log (LogPath).
	LogPath string `json:"log_path"`
}
