package server

import (
	"errors"
	"net/http"

	"github.com/svc-gov/svc/pkg/api"
	"github.com/svc-gov/svc/pkg/sigstore"
)

// getAttestation serves GET /api/v1/vpecs/{vpec_id}/attestation: the VPEC
// as an in-toto Statement v1 (subject: the VPEC signed bytes; predicate:
// the VPEC) in a DSSE envelope signed by the service key, time-stamped over
// the DSSE signature, as a Sigstore bundle v0.3 (see sigstore.Attest and
// docs/FORMATS.md). Ed25519 is deterministic, so every response carries the
// same envelope; each carries a fresh timestamp over it.
func (s *Server) getAttestation(w http.ResponseWriter, r *http.Request) {
	v, err := s.cfg.Store.VPEC(r.Context(), caller(r).OrgID, r.PathValue("vpec_id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	b, err := sigstore.Attest(r.Context(), v.Body, s.cfg.Signer, s.cfg.Timestamper)
	switch {
	case errors.Is(err, sigstore.ErrUnknownKey):
		s.fail(w, r, &httpError{http.StatusNotImplemented, api.CodeNotImplemented,
			"the VPEC is signed by a key this service no longer signs with; export it with 'svc export --format sigstore-bundle' instead", ""})
		return
	case errors.Is(err, sigstore.ErrNotVPEC), errors.Is(err, sigstore.ErrTimestamp):
		s.fail(w, r, err)
		return
	case err != nil:
		s.fail(w, r, timestampFailed(r, "attestation", "; retry", err))
		return
	}
	w.Header().Set("Content-Type", sigstore.BundleMediaType)
	w.Write(b)
}
