package server

import (
	"fmt"
	"net/http"

	"github.com/svc-gov/svc/internal/httpbody"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
)

// busyError is the 503 service_busy (with Retry-After) of a request that
// would take LoadBytes past its bound.
type busyError struct{ size int64 }

func (e *busyError) Error() string {
	return fmt.Sprintf("the service is serving other large VPECs (this one is %d bytes): retry after the Retry-After seconds", e.size)
}

// busyRetryAfter is the Retry-After of a busyError, in seconds.
const busyRetryAfter = 5

// loadVPEC loads the caller's VPEC id for a response: 404 unless it is
// the caller's organisation's, 403 environment_mismatch unless it belongs
// to a run of the caller key's environment (as the run routes answer), and
// admitted within LoadBytes for cost times its size before its body is
// read (a *busyError otherwise). On success the caller calls release once
// the response is written.
func (s *Server) loadVPEC(r *http.Request, id string, cost int64) (v store.VPEC, release func(), err error) {
	key := caller(r)
	info, err := s.cfg.Storage.VPECs.VPECInfo(r.Context(), key.OrgID, id)
	if err != nil {
		return v, nil, err
	}
	if key.Environment != info.Environment {
		return v, nil, &httpError{http.StatusForbidden, api.CodeEnvironmentMismatch,
			fmt.Sprintf("VPEC %s is the VPEC of %s run %s and API key %s is a %s key: a key reads only its own environment's VPECs; use a %s key",
				info.ID, info.Environment, info.RunID, key.ID, key.Environment, info.Environment), ""}
	}
	n, sandbox := cost*info.Size, key.Environment == string(vpec.Sandbox)
	if !s.loads.Take(n, sandbox) {
		return v, nil, &busyError{info.Size}
	}
	release = func() { s.loads.Release(n, sandbox) }
	if v, err = s.cfg.Storage.VPECs.VPEC(r.Context(), key.OrgID, id); err != nil {
		release()
		return v, nil, err
	}
	return v, release, nil
}

// getVPEC serves GET /api/v1/vpecs/{vpec_id}: the VPEC as issued, within
// LoadBytes, written with progress deadlines.
func (s *Server) getVPEC(w http.ResponseWriter, r *http.Request) {
	v, release, err := s.loadVPEC(r, r.PathValue("vpec_id"), 1)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer release()
	if s.cfg.Log != nil {
		setLogIndex(w, v.Logged, v.LogIndex)
	}
	s.writeBody(w, http.StatusOK, "application/json", v.Body)
}

// writeBody answers status with body, in chunks with progress deadlines
// (WriteStall); a cut response is logged by ServeHTTP.
func (s *Server) writeBody(w http.ResponseWriter, status int, ctype string, body []byte) {
	httpbody.Write(w, status, ctype, body, s.cfg.WriteStall)
}
