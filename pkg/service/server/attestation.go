package server

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/svc-gov/svc/internal/httpbody"
	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	"github.com/svc-gov/svc/pkg/service/store"
)

// getAttestation serves GET /api/v1/vpecs/{vpec_id}/attestation: the VPEC
// as an in-toto Statement v1 (subject: the VPEC signed bytes; predicate:
// the VPEC) in a DSSE envelope signed by the service key, time-stamped over
// the DSSE signature, as a Sigstore bundle v0.3 (see sigstore.Attest and
// docs/FORMATS.md). The VPEC is admitted within LoadBytes before it is
// read (attestCost or sealCost times its size); the envelope is
// signed and time-stamped once per VPEC by this process (attestations) and
// streamed from that seal to every later request: the same bytes each
// time, one RFC 3161 request per VPEC, not per call.
func (s *Server) getAttestation(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("vpec_id")
	cost := int64(attestCost)
	if !s.attests.has(id) {
		cost = sealCost
	}
	v, release, err := s.loadVPEC(r, id, cost)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	defer release()
	seal, err := s.attestationSeal(r.Context(), v)
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
	// A write error is a cut response, which ServeHTTP logs.
	sigstore.WriteAttestation(httpbody.NewWriter(w, s.cfg.WriteStall), v.Body, seal)
}

// attestCost and sealCost are how many times its VPEC's size an
// attestation request takes of LoadBytes: writing from a seal holds the
// VPEC and buffers (measured: 1.6-1.8x), sealing also parses it,
// takes its signed bytes and builds the statement's PAE to sign it
// (measured: 5.1x, TestAttestationSealedOnce).
const (
	attestCost = 2
	sealCost   = 8
)

// attestationSeal returns the seal of v's attestation, made once per VPEC
// by this process.
func (s *Server) attestationSeal(ctx context.Context, v store.VPEC) (*sigstore.AttestationSeal, error) {
	return s.attests.get(ctx, v.ID, func(ctx context.Context) (*sigstore.AttestationSeal, error) {
		// The attestation is signed by the key that signed the VPEC: after a
		// hot rotation (keyring.go) that may be any key of the ring; the
		// key valid now is tried first (most requests are for new VPECs).
		var err error
		for _, signer := range s.ring.ordered(s.cfg.Now()) {
			var seal *sigstore.AttestationSeal
			if seal, err = sigstore.SealAttestation(ctx, v.Body, signer, s.cfg.Timestamper); !errors.Is(err, sigstore.ErrUnknownKey) {
				return seal, err
			}
		}
		return nil, err
	})
}

// maxAttestations bounds the seals a process keeps (each a few kilobytes:
// a signature and a timestamp response).
const maxAttestations = 4096

// attestations are the attestation seals made by this process, by VPEC
// id: a VPEC and its attestation never change, so a seal is made once
// (concurrent requests for one VPEC wait for the one being made) and kept
// until the cache is full, when it starts again empty.
type attestations struct {
	mu  sync.Mutex
	m   map[string]*attestEntry
	max int
}

type attestEntry struct {
	done chan struct{}
	seal *sigstore.AttestationSeal
	err  error
}

// has reports whether the seal of VPEC id is made (or being made).
func (a *attestations) has(id string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.m[id]
	return ok
}

// get returns the seal of VPEC id, making it with mk (under ctx) when no
// request of this process made it or is making it. A request whose maker
// failed because its own client went away makes it again itself.
func (a *attestations) get(ctx context.Context, id string, mk func(context.Context) (*sigstore.AttestationSeal, error)) (*sigstore.AttestationSeal, error) {
	for {
		a.mu.Lock()
		e, ok := a.m[id]
		if !ok {
			if a.m == nil || len(a.m) >= a.max {
				a.m = map[string]*attestEntry{}
			}
			e = &attestEntry{done: make(chan struct{})}
			a.m[id] = e
			a.mu.Unlock()
			e.seal, e.err = mk(ctx)
			if e.err != nil {
				a.mu.Lock()
				if a.m[id] == e {
					delete(a.m, id)
				}
				a.mu.Unlock()
			}
			close(e.done)
			return e.seal, e.err
		}
		a.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err == nil || ctx.Err() != nil || !(errors.Is(e.err, context.Canceled) || errors.Is(e.err, context.DeadlineExceeded)) {
			return e.seal, e.err
		}
	}
}
