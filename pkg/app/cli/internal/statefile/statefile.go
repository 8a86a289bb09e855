// Package statefile is the command line's shell-script state: the file
// that keeps the open run between the processes of a script's commands
// (svc run open, svc record, svc close, svc queue flush), and the unsigned
// offline VPECs an offline close wrote, for the signed VPEC to replace
// later.
//
// It uses pkg/client's public API only. The one hook it needs into a
// client Run's internals is client.RunState (Run.State and
// Pipeline.RestoreRun): a run's position in its chain, which only the
// client can read out of a Run and put back.
package statefile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/document"
)

// DefaultPath is where `svc run open` keeps the open run for the
// following `svc record` and `svc close` of a shell script.
const DefaultPath = ".svc-run.json"

// Errors of a state file, matchable with errors.Is.
var (
	// ErrNoOpenRun: the state file does not exist (it also matches
	// fs.ErrNotExist). Open a run first.
	ErrNoOpenRun = errors.New("no open run")
	// ErrBadState: the state file cannot be read as a run's state.
	ErrBadState = errors.New("run state unreadable")
	// ErrRunStillOpen: File.Open found a run of the file that is not
	// closed yet (a *RunStillOpenError).
	ErrRunStillOpen = errors.New("a run is still open")
	// ErrStateLock: the state file's lock file cannot be made or locked.
	ErrStateLock = errors.New("cannot lock the run state")
	// ErrOtherService: File.Continue with a pipeline of another service
	// than the one the run was opened on (an *OtherServiceError).
	ErrOtherService = errors.New("the run was opened on another service")
)

// OtherServiceError is the error of File.Continue when the state file's
// run was opened on another base URL than the pipeline's; it matches
// ErrOtherService. Nothing was sent.
type OtherServiceError struct{ RunID, OpenedOn, BaseURL, Path string }

func (e *OtherServiceError) Error() string {
	return fmt.Sprintf("run %s in %s was opened on %s, not on %s", e.RunID, e.Path, e.OpenedOn, e.BaseURL)
}

// Is matches ErrOtherService.
func (e *OtherServiceError) Is(target error) bool { return target == ErrOtherService }

// RunStillOpenError is the error of File.Open when the file's run is not
// closed yet; it matches ErrRunStillOpen.
type RunStillOpenError struct{ RunID, Path string }

func (e *RunStillOpenError) Error() string {
	return fmt.Sprintf("run %s in %s is still open", e.RunID, e.Path)
}

// Is matches ErrRunStillOpen.
func (e *RunStillOpenError) Is(target error) bool { return target == ErrRunStillOpen }

// State is what a state file holds: the run's position in its chain and
// the unsigned offline VPECs closes of this file wrote (this run's and
// earlier runs') whose signed VPEC has not replaced them yet.
type State struct {
	client.RunState
	UnsignedCopies []UnsignedCopy `json:"unsigned_copies,omitempty"`
}

// File keeps the run of a shell script between the processes of its
// commands. Every command holds a lock beside it (Path + ".lock") from
// reading the state to writing it back, so that two commands at once
// never take the same sequence number; each write is atomic and durable.
type File struct {
	// Path is the state file (DefaultPath when empty).
	Path string
}

func (s File) path() string {
	if s.Path == "" {
		return DefaultPath
	}
	return s.Path
}

// Lock waits for the state file's lock and returns its release.
func (s File) Lock() (unlock func(), err error) {
	f, err := os.OpenFile(s.path()+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStateLock, err)
	}
	if err := fsutil.LockFileWait(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w %s: %w", ErrStateLock, s.path(), err)
	}
	return func() { fsutil.UnlockFile(f); f.Close() }, nil
}

// Load reads the saved state: an error matching ErrNoOpenRun when the
// file does not exist, ErrBadState when it is not a run state.
func (s File) Load() (State, error) {
	var st State
	data, err := os.ReadFile(s.path())
	if errors.Is(err, fs.ErrNotExist) {
		return st, fmt.Errorf("%w: %w", ErrNoOpenRun, err)
	}
	if err != nil {
		return st, fmt.Errorf("%w: %w", ErrBadState, err)
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("%w: %s: %w", ErrBadState, s.path(), err)
	}
	return st, nil
}

// Save writes the state atomically and durably (synced, renamed into
// place): a crash leaves the previous state or this one.
func (s File) Save(st State) error {
	data, err := document.MarshalIndent(st)
	if err != nil {
		return err
	}
	if err := fsutil.WriteReplace(s.path(), data, 0o600); err != nil {
		return fmt.Errorf("save run state: %w", err)
	}
	return nil
}

// Run is the run of a state file, held locked (and its pipeline open)
// until Release.
type Run struct {
	Run      *client.Run
	Pipeline *client.Pipeline
	file     File
	unlock   func()
	copies   []UnsignedCopy // State.UnsignedCopies, kept from the load to each save
}

// Release closes the pipeline and releases the state file's lock.
func (r *Run) Release() {
	if r.Pipeline != nil {
		r.Pipeline.Close()
	}
	r.unlock()
}

// state is the run's current position with the file's unsigned copies.
func (r *Run) state() State {
	return State{RunState: r.Run.State(), UnsignedCopies: slices.Clone(r.copies)}
}

// Save writes the run's current position to the state file.
func (r *Run) Save() error { return r.file.Save(r.state()) }

// Open opens a new run on the pipeline newPipeline makes and saves it to
// the state file. A run of the file that is not closed yet is an error
// matching ErrRunStillOpen; the unsigned offline VPECs earlier closes of
// the file left (still waiting for their signed VPEC) are carried over.
// An error of newPipeline is returned as is. Release the Run after.
func (s File) Open(ctx context.Context, newPipeline func() (*client.Pipeline, error), policyPack string) (*Run, error) {
	unlock, err := s.Lock()
	if err != nil {
		return nil, err
	}
	var carried []UnsignedCopy
	if _, err := os.Stat(s.path()); err == nil {
		st, err := s.Load()
		if err == nil && !st.Sealed {
			unlock()
			return nil, &RunStillOpenError{RunID: st.RunID, Path: s.path()}
		}
		carried = st.UnsignedCopies
	}
	p, err := newPipeline()
	if err != nil {
		unlock()
		return nil, err
	}
	sr := &Run{Pipeline: p, file: s, unlock: unlock, copies: carried}
	if sr.Run, err = p.Open(ctx, policyPack); err != nil {
		sr.Release()
		return nil, err
	}
	if err := sr.Save(); err != nil {
		sr.Release()
		return nil, err
	}
	return sr, nil
}

// Continue locks the state file, loads its run and restores it on the
// pipeline newPipeline makes for the run's workflow (errors matching
// ErrNoOpenRun or ErrBadState when there is no usable state, an
// *OtherServiceError when the pipeline's base URL is not the one the run
// was opened on; an error of newPipeline is returned as is). Release the
// Run after.
func (s File) Continue(newPipeline func(workflowID string) (*client.Pipeline, error)) (*Run, error) {
	unlock, err := s.Lock()
	if err != nil {
		return nil, err
	}
	st, err := s.Load()
	if err != nil {
		unlock()
		return nil, err
	}
	p, err := newPipeline(st.WorkflowID)
	if err != nil {
		unlock()
		return nil, err
	}
	sr := &Run{Pipeline: p, file: s, unlock: unlock, copies: st.UnsignedCopies}
	// Another service does not know the run (it would answer 404 to a
	// record or a close): say so before sending anything.
	if st.BaseURL != "" && st.BaseURL != p.BaseURL() {
		sr.Release()
		return nil, &OtherServiceError{RunID: st.RunID, OpenedOn: st.BaseURL, BaseURL: p.BaseURL(), Path: s.path()}
	}
	if sr.Run, err = p.RestoreRun(st.RunState); err != nil {
		sr.Release()
		return nil, fmt.Errorf("%w: %w", ErrBadState, err)
	}
	return sr, nil
}
