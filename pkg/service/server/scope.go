package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/service/store"
)

// runScope is what the environment check needs of a run: both never
// change once the run exists, so they are cached without expiry.
type runScope struct {
	orgID, environment string
}

// checkEnvironment refuses a key acting on a run of another environment:
// a sandbox key must not record into, close, read, delegate or resume a
// production run of its organisation (its VPEC would be a production
// credential), nor a production key a sandbox run.
func checkEnvironment(key store.APIKey, runID, runEnv string) error {
	if key.Environment == runEnv {
		return nil
	}
	return &httpError{http.StatusForbidden, api.CodeEnvironmentMismatch,
		fmt.Sprintf("run %s is a %s run and API key %s is a %s key: a key acts only on runs of its own environment; use a %s key",
			runID, runEnv, key.ID, key.Environment, runEnv), ""}
}

// CheckRunScope refuses the caller's key acting on run when run belongs to
// another environment (403 environment_mismatch naming both). Handlers
// that load a run by other means than the {run_id} path (resume) call it
// on the run they load.
func (s *Server) checkRunScope(r *http.Request, run store.Run) error {
	return checkEnvironment(caller(r), run.ID, run.Environment)
}

// scopeRunPath applies the environment check to the run named by the
// {run_id} path value, if the route has one, before the handler runs, so
// that every run-scoped endpoint is covered in one place. An unknown run,
// or another organisation's, passes: the handler answers 404 for it.
func (s *Server) scopeRunPath(r *http.Request, key store.APIKey) error {
	id := r.PathValue("run_id")
	if id == "" {
		return nil
	}
	sc, ok := s.scopes.get(id)
	if !ok {
		run, err := s.cfg.Storage.Runs.Run(r.Context(), key.OrgID, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		sc = runScope{run.OrgID, run.Environment}
		s.scopes.put(id, sc)
	}
	if sc.orgID != key.OrgID {
		return nil
	}
	return checkEnvironment(key, id, sc.environment)
}

// runFor loads the caller's run runID and refuses it if it belongs to
// another environment than the caller's key.
func (s *Server) runFor(r *http.Request, runID string) (store.Run, error) {
	run, err := s.cfg.Storage.Runs.Run(r.Context(), caller(r).OrgID, runID)
	if err != nil {
		return store.Run{}, err
	}
	if err := s.checkRunScope(r, run); err != nil {
		return store.Run{}, err
	}
	return run, nil
}

// openRunFor is runFor on the run named in the path, required open.
func (s *Server) openRunFor(r *http.Request) (store.Run, error) {
	run, err := s.runFor(r, r.PathValue("run_id"))
	if err == nil && run.Sealed {
		err = store.ErrSealed
	}
	return run, err
}
