package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
)

// KeyRing holds the VPEC signing keys a running service may use and the
// trust root whose vpec-signing windows say when each may sign: the
// current key and the next one (svc serve --next-signing-key), so that
// a rotation written by `svc keys rotate` takes effect at its instant T
// without a restart (docs/KEYS.md, "Rotation"). A close signs with the
// key whose window contains the time, and keeps a VPEC only if the key's
// window contains its RFC 3161 genTime: one signed by the old key whose
// genTime is at or after T is signed again with the new key and
// timestamped again, so no VPEC the service returns would verify as
// expired. SetRoot replaces the root (svc serve reloads it on SIGHUP).
// A KeyRing is safe for concurrent use.
type KeyRing struct {
	signers []*signing.Signer

	mu   sync.RWMutex
	root *trustroot.Root
}

// ErrNoValidKey reports that no key of a KeyRing is valid, for
// vpec-signing, at the time asked: the current key's window ended and the
// next key is not configured or not in the trust root yet.
var ErrNoValidKey = errors.New("no VPEC signing key of the service is valid at this time")

// NewKeyRing returns the ring of signers (the current key first) under
// root. A nil root, or a legacy PEM bundle, has no windows: the first
// signer signs everything, as a service did before trust roots.
func NewKeyRing(root *trustroot.Root, signers ...*signing.Signer) (*KeyRing, error) {
	if len(signers) == 0 || slices.Contains(signers, nil) {
		return nil, errors.New("server: a key ring needs at least one signer, none nil")
	}
	return &KeyRing{signers: slices.Clone(signers), root: root}, nil
}

// SetRoot makes root the ring's trust root (a new version written by
// `svc keys rotate` or `svc keys compromise`).
func (k *KeyRing) SetRoot(root *trustroot.Root) {
	k.mu.Lock()
	k.root = root
	k.mu.Unlock()
}

// Root returns the ring's trust root.
func (k *KeyRing) Root() *trustroot.Root {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.root
}

// Signers returns the ring's signers, the current key first.
func (k *KeyRing) Signers() []*signing.Signer { return slices.Clone(k.signers) }

// At returns the signer whose vpec-signing window contains t; when
// several do (overlapping windows), the one whose window started last.
// The error matches ErrNoValidKey and names each key's refusal.
func (k *KeyRing) At(t time.Time) (*signing.Signer, error) {
	root := k.Root()
	if root == nil || root.Legacy() {
		return k.signers[0], nil
	}
	var (
		best     *signing.Signer
		bestFrom time.Time
		why      []error
	)
	for _, s := range k.signers {
		e, err := root.KeyFor(trustroot.PurposeVPEC, s.KeyID(), t)
		if err != nil {
			why = append(why, err)
			continue
		}
		if best == nil || e.Window.From.After(bestFrom) {
			best, bestFrom = s, e.Window.From
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w (%s): %w", ErrNoValidKey, trustroot.FormatTime(t), errors.Join(why...))
	}
	return best, nil
}

// ordered returns the ring's signers, the one valid at t first (when one
// is), then the others in ring order.
func (k *KeyRing) ordered(t time.Time) []*signing.Signer {
	first, err := k.At(t)
	if err != nil {
		return k.Signers()
	}
	out := []*signing.Signer{first}
	for _, s := range k.signers {
		if s != first {
			out = append(out, s)
		}
	}
	return out
}

// Valid reports whether s may sign a VPEC whose genTime is t: nil, or the
// trust root's refusal (a *trustroot.KeyError).
func (k *KeyRing) Valid(s *signing.Signer, t time.Time) error {
	root := k.Root()
	if root == nil || root.Legacy() {
		return nil
	}
	_, err := root.KeyFor(trustroot.PurposeVPEC, s.KeyID(), t)
	return err
}

// genTimeSlack is how far a VPEC's genTime may be from its issued_at
// (svc-verify's TIMESTAMP TIME MISMATCH bound, 15 minutes): a key whose
// open window began earlier than that before now is valid at any genTime
// a verifier accepts.
const genTimeSlack = 15 * time.Minute

// errKeyRotated: the VPEC just sealed has a genTime outside its key's
// window, and another key of the ring is valid then; issue again.
type errKeyRotated struct {
	genTime time.Time
	err     error
}

func (e *errKeyRotated) Error() string {
	return fmt.Sprintf("the VPEC's genTime %s is outside its key's window: %v", trustroot.FormatTime(e.genTime), e.err)
}

func (e *errKeyRotated) Unwrap() error { return e.err }

// keyTimeKey is the context key of the time a retried close selects its
// key at: the genTime its previous attempt got.
type keyTimeKey struct{}

// maxKeyAttempts bounds the closes a rotation can make one request seal:
// the first with the old key, the second with the new one; a third covers
// a timestamp authority whose clock disagrees with the service's.
const maxKeyAttempts = 3

// vpecSigner is the key a close signs with: the ring's key valid now, or
// at the genTime a previous attempt of this close got.
func (s *Server) vpecSigner(ctx context.Context) (*signing.Signer, error) {
	at := s.cfg.Now()
	if t, ok := ctx.Value(keyTimeKey{}).(time.Time); ok {
		at = t
	}
	return s.ring.At(at)
}

// checkGenTime checks the sealed token's genTime against the window of
// the key that signed: nil when it is inside; *errKeyRotated when another
// key of the ring is valid then (issue again with it); a 503
// signing_failed when none is.
func (s *Server) checkGenTime(r *http.Request, signer *signing.Signer, token []byte) error {
	root := s.ring.Root()
	if root == nil || root.Legacy() {
		return nil
	}
	if e := root.Key(trustroot.PurposeVPEC, signer.KeyID()); e != nil && e.Window.Until.IsZero() && e.Window.CompromisedAt.IsZero() &&
		s.cfg.Now().Sub(e.Window.From) > genTimeSlack {
		// An open window that began long before: no genTime the
		// verifier accepts for this VPEC (within genTimeSlack of its
		// issued_at) falls outside it. Parsing the token (about 0.2 ms)
		// is left to closes near a window's edge.
		return nil
	}
	info, err := timestamp.ParseResponse(token)
	if err != nil {
		return fmt.Errorf("read the VPEC's timestamp: %w", err)
	}
	verr := s.ring.Valid(signer, info.GenTime)
	if verr == nil {
		return nil
	}
	if _, err := s.ring.At(info.GenTime); err == nil {
		return &errKeyRotated{genTime: info.GenTime, err: verr}
	}
	if cerr := r.Context().Err(); cerr != nil {
		return fmt.Errorf("sign VPEC: %w", errors.Join(cerr, verr))
	}
	return &httpError{http.StatusServiceUnavailable, api.CodeSigningFailed, "could not seal the VPEC: no signing key of the service is valid at its timestamp's genTime " + trustroot.FormatTime(info.GenTime) + " (" + verr.Error() + "); configure the next key (--next-signing-key) and its rotation (svc keys rotate), then close again (with the same Idempotency-Key)", ""}
}

// issueInWindow issues the VPEC of run with the key valid at its genTime:
// a close whose genTime fell past its key's end (a rotation instant
// between signing and timestamping) is issued again, selecting the key at
// that genTime.
func (s *Server) issueInWindow(r *http.Request, run store.Run) (v *vpec.VPEC, body []byte, digest [32]byte, err error) {
	for range maxKeyAttempts {
		v, body, digest, err = s.issue(r, run)
		var rot *errKeyRotated
		if !errors.As(err, &rot) {
			return v, body, digest, err
		}
		s.log.Info("close issued again with the key valid at its genTime", "run_id", run.ID, "reason", rot.Error())
		r = r.WithContext(context.WithValue(r.Context(), keyTimeKey{}, rot.genTime))
	}
	return nil, nil, digest, &httpError{http.StatusServiceUnavailable, api.CodeSigningFailed, "could not seal the VPEC: " + err.Error() + "; close again (with the same Idempotency-Key) to retry", ""}
}

// ErrRootReload reports a trust root file that a running service will not
// take: not a newer version chained from the one in use.
var ErrRootReload = errors.New("trust root not reloaded")

// ReloadTrustRoot reads dir's trust root (written by svc keys rotate and
// svc keys compromise) and, if it is a newer version than the key ring's,
// checks that it chains from it (each version in between read from
// trust-root/N.json, trustroot.VerifyChain) before the ring signs by its
// windows and /.well-known/svc/trust-root.json serves it. It returns the
// root in use afterwards and whether it changed. svc serve calls it on
// SIGHUP.
func (s *Server) ReloadTrustRoot(dir string) (*trustroot.Root, bool, error) {
	cur := s.ring.Root()
	next, doc, err := ReadTrustRoot(dir)
	if err != nil {
		return cur, false, err
	}
	if cur != nil && !cur.Legacy() {
		if next.Version <= cur.Version {
			return cur, false, nil
		}
		var updates []*trustroot.Root
		for v := cur.Version + 1; v < next.Version; v++ {
			b, err := os.ReadFile(filepath.Join(dir, TrustRootHistoryDir, strconv.FormatInt(v, 10)+".json"))
			if err != nil {
				return cur, false, fmt.Errorf("%w: version %d between %d and %d: %w", ErrRootReload, v, cur.Version, next.Version, err)
			}
			u, err := trustroot.Parse(b)
			if err != nil {
				return cur, false, fmt.Errorf("%w: version %d: %w", ErrRootReload, v, err)
			}
			updates = append(updates, u)
		}
		if _, err := trustroot.VerifyChain(cur, append(updates, next)...); err != nil {
			return cur, false, fmt.Errorf("%w: version %d does not chain from version %d in use: %w", ErrRootReload, next.Version, cur.Version, err)
		}
	}
	s.ring.SetRoot(next)
	s.rootDoc.Store(&doc)
	return next, true, nil
}
