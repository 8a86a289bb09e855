package vpec

import (
	"fmt"
)

// OfflineSchema is the schema of an unsigned offline VPEC: the local copy a
// client writes when it closes a run while the service is unreachable
// (docs/FORMATS.md, "Unsigned offline VPEC"). It has the members of a v1
// VPEC, with signing_key_id, signature and timestamp_rfc3161 empty. It is
// not a credential: Verify reports it as UNSIGNED OFFLINE VPEC, never
// VALID, and names the command that fetches the signed one.
const OfflineSchema = "svc.vpec.unsigned-offline/v1"

// CodeUnsignedOffline is the code of the schema check, and the verdict,
// of an unsigned offline VPEC.
const CodeUnsignedOffline = "UNSIGNED OFFLINE VPEC"

// FetchHint is the command that fetches the signed VPEC of run runID (or
// of RUN_ID when runID is not a run id).
func FetchHint(runID string) string {
	if !ValidPrefixedID(runID, "run_") {
		runID = "RUN_ID"
	}
	return "svc vpec get " + runID
}

// unsignedOffline fills r for an unsigned offline VPEC: the schema check
// fails with CodeUnsignedOffline, nothing else runs (NotCheckedSchema: it
// is not a v1 VPEC), and the verdict
// says what the document is and how to get the signed one.
func (r *Report) unsignedOffline(p *parsed) {
	r.fetchHint = FetchHint(p.v.RunID)
	// Other schema problems (parse leaves out the schema value and the
	// empty signature members, which make it an offline VPEC) are listed.
	r.Checks = append(r.Checks, Check{Name: CheckSchema, Status: Fail, Code: CodeUnsignedOffline,
		Message: fmt.Sprintf("unsigned offline VPEC (schema %s): fetch the signed one with %s", OfflineSchema, r.fetchHint),
		Details: p.schemaErrs})
	for _, n := range checks[1:] {
		r.Checks = append(r.Checks, Check{Name: n, Status: NotApplicable, Message: NotCheckedSchema})
	}
	r.finish()
}
