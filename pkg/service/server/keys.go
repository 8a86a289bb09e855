package server

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/store"
)

// apiKey finds the valid key whose SHA-256 is hash: from the key cache
// (entries live keyCacheTTL, so a revocation or deletion in the database
// reaches every process within that time), else from the store. An
// unknown or revoked key is a 401 naming why; a store failure is returned
// as is (a 5xx).
func (s *Server) apiKey(ctx context.Context, hash []byte) (store.APIKey, error) {
	k, ok := s.keys.get(hash, s.cfg.Now())
	s.metrics.KeyCache(ok)
	if ok {
		return k, nil
	}
	return s.freshAPIKey(ctx, hash)
}

// freshAPIKey is apiKey reading the store, never the key cache (which it
// refreshes): for the dashboard's sign-in, where a key revoked within
// keyCacheTTL must not create a session that outlives the revocation's
// reach into the cache.
func (s *Server) freshAPIKey(ctx context.Context, hash []byte) (store.APIKey, error) {
	now := s.cfg.Now()
	k, err := s.cfg.Storage.Orgs.APIKeyByHash(ctx, hash)
	switch {
	case errors.Is(err, store.ErrRevoked):
		s.metrics.RevokedKeyRefused()
		return store.APIKey{}, &httpError{http.StatusUnauthorized, api.CodeUnauthorized,
			fmt.Sprintf("API key %s was revoked at %s: ask the service's administrator for a new key", k.ID, vpec.FormatTime(k.RevokedAt)), ""}
	case errors.Is(err, store.ErrNotFound) || (err == nil && subtle.ConstantTimeCompare(k.Hash, hash) != 1):
		return store.APIKey{}, &httpError{http.StatusUnauthorized, api.CodeUnauthorized, "unknown API key", ""}
	case err != nil:
		return store.APIKey{}, err
	}
	s.keys.put(k, now)
	return k, nil
}
