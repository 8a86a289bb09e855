package vpec

import "github.com/svc-gov/svc/pkg/core/document"

// unsignedFields are the members outside the signature: the signature
// itself and the timestamp token, which is computed over the signature.
var unsignedFields = []string{"signature", "timestamp_rfc3161"}

// SignedBytes returns the bytes a VPEC's signature covers: the RFC 8785
// canonical form of the document without signature and timestamp_rfc3161.
func SignedBytes(doc []byte) ([]byte, error) { return document.SignedBytes(doc, unsignedFields...) }

// ReviewStatement returns the bytes a human reviewer signs for a record of
// run runID: JCS of the review statement (docs/FORMATS.md, "Witnessed
// reviews").
func ReviewStatement(runID string, r *Record) ([]byte, error) {
	st := map[string]any{
		"type":            "svc.review/v1",
		"run_id":          runID,
		"check":           r.Check,
		"manifest_id":     r.ManifestID,
		"check_result":    r.CheckResult,
		"commitment_hash": r.CommitmentHash,
	}
	if r.Review != nil {
		st["session_id"] = r.Review.SessionID
		if r.Review.DisplayContentHash != "" {
			st["display_content_hash"] = r.Review.DisplayContentHash
		}
		if r.Review.RationaleHash != "" {
			st["rationale_hash"] = r.Review.RationaleHash
		}
	}
	return document.MarshalSignedBytes(st)
}

// CheckOpenData is the byte string the check-open timestamp of session
// sessionID is over (its imprint is the SHA-256 of these bytes).
func CheckOpenData(sessionID string) []byte {
	return []byte("svc.check-open.v1:" + sessionID)
}

// CheckCloseData is the byte string the check-close timestamp of session
// sessionID, closed on the input commitmentHash, is over.
func CheckCloseData(sessionID, commitmentHash string) []byte {
	return []byte("svc.check-close.v1:" + sessionID + ":" + commitmentHash)
}
