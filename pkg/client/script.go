package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/document"
)

// DefaultStateFile is where `svc run open` keeps the open run for the
// following `svc record` and `svc close` of a shell script.
const DefaultStateFile = ".svc-run.json"

// Errors of a state file, matchable with errors.Is.
var (
	// ErrNoOpenRun: the state file does not exist (it also matches
	// fs.ErrNotExist). Open a run first.
	ErrNoOpenRun = errors.New("no open run")
	// ErrBadState: the state file cannot be read as a run's state.
	ErrBadState = errors.New("run state unreadable")
	// ErrRunStillOpen: StateFile.Open found a run of the file that is not
	// closed yet (a *RunStillOpenError).
	ErrRunStillOpen = errors.New("a run is still open")
	// ErrStateLock: the state file's lock file cannot be made or locked.
	ErrStateLock = errors.New("cannot lock the run state")
	// ErrOtherService: StateFile.Continue with a pipeline of another
	// service than the one the run was opened on (an *OtherServiceError).
	ErrOtherService = errors.New("the run was opened on another service")
)

// OtherServiceError is the error of StateFile.Continue when the state
// file's run was opened on another base URL than the pipeline's; it
// matches ErrOtherService. Nothing was sent.
type OtherServiceError struct{ RunID, OpenedOn, BaseURL, Path string }

func (e *OtherServiceError) Error() string {
	return fmt.Sprintf("run %s in %s was opened on %s, not on %s", e.RunID, e.Path, e.OpenedOn, e.BaseURL)
}

// Is matches ErrOtherService.
func (e *OtherServiceError) Is(target error) bool { return target == ErrOtherService }

// RunStillOpenError is the error of StateFile.Open when the file's run is
// not closed yet; it matches ErrRunStillOpen.
type RunStillOpenError struct{ RunID, Path string }

func (e *RunStillOpenError) Error() string {
	return fmt.Sprintf("run %s in %s is still open", e.RunID, e.Path)
}

// Is matches ErrRunStillOpen.
func (e *RunStillOpenError) Is(target error) bool { return target == ErrRunStillOpen }

// StateFile keeps the run of a shell script between the processes of its
// commands (svc run open, svc record, svc close, svc queue flush). Every
// command holds a lock beside it (Path + ".lock") from reading the state
// to writing it back, so that two commands at once never take the same
// sequence number; each write is atomic and durable.
type StateFile struct {
	// Path is the state file (DefaultStateFile when empty).
	Path string
}

func (s StateFile) path() string {
	if s.Path == "" {
		return DefaultStateFile
	}
	return s.Path
}

// Lock waits for the state file's lock and returns its release.
func (s StateFile) Lock() (unlock func(), err error) {
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

// Load reads the saved run state: an error matching ErrNoOpenRun when the
// file does not exist, ErrBadState when it is not a run state.
func (s StateFile) Load() (RunState, error) {
	var st RunState
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
func (s StateFile) Save(st RunState) error {
	data, err := document.MarshalIndent(st)
	if err != nil {
		return err
	}
	if err := fsutil.WriteReplace(s.path(), data, 0o600); err != nil {
		return fmt.Errorf("save run state: %w", err)
	}
	return nil
}

// ScriptRun is the run of a state file, held locked (and its pipeline
// open) until Release.
type ScriptRun struct {
	Run      *Run
	Pipeline *Pipeline
	file     StateFile
	unlock   func()
}

// Release closes the pipeline and releases the state file's lock.
func (r *ScriptRun) Release() {
	if r.Pipeline != nil {
		r.Pipeline.Close()
	}
	r.unlock()
}

// Save writes the run's current position to the state file.
func (r *ScriptRun) Save() error { return r.file.Save(r.Run.State()) }

// Open opens a new run on the pipeline newPipeline makes and saves it to
// the state file. A run of the file that is not closed yet is an error
// matching ErrRunStillOpen; the unsigned offline VPECs earlier closes of
// the file left (still waiting for their signed VPEC) are carried over.
// An error of newPipeline is returned as is. Release the ScriptRun after.
func (s StateFile) Open(ctx context.Context, newPipeline func() (*Pipeline, error), policyPack string) (*ScriptRun, error) {
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
	sr := &ScriptRun{Pipeline: p, file: s, unlock: unlock}
	if sr.Run, err = p.Open(ctx, policyPack); err != nil {
		sr.Release()
		return nil, err
	}
	st := sr.Run.State()
	st.UnsignedCopies = carried
	if err := s.Save(st); err != nil {
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
// ScriptRun after.
func (s StateFile) Continue(newPipeline func(workflowID string) (*Pipeline, error)) (*ScriptRun, error) {
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
	sr := &ScriptRun{Pipeline: p, file: s, unlock: unlock}
	// Another service does not know the run (it would answer 404 to a
	// record or a close): say so before sending anything.
	if st.BaseURL != "" && st.BaseURL != p.BaseURL() {
		sr.Release()
		return nil, &OtherServiceError{RunID: st.RunID, OpenedOn: st.BaseURL, BaseURL: p.BaseURL(), Path: s.path()}
	}
	if sr.Run, err = p.RestoreRun(st); err != nil {
		sr.Release()
		return nil, fmt.Errorf("%w: %w", ErrBadState, err)
	}
	return sr, nil
}

// CloseTo closes the run, writes its VPEC to out and saves the state. out
// must not exist unless force (an error matching fs.ErrExist), and must be
// writable: both are checked before the run is closed, so a refused out
// leaves the run open and nothing changed. If writing out still fails
// after the close (a full disk), the state is saved as closed and the
// error is a *VPECWriteError saying where the VPEC can be had again.
// When the service was unreachable the VPEC written is the unsigned
// offline one (res.Offline) and the state file remembers it, so that
// ReplaceStateCopies writes the signed VPEC over it later.
func (r *ScriptRun) CloseTo(ctx context.Context, out string, force bool) (*VPECResult, error) {
	if _, err := os.Lstat(out); err == nil && !force {
		return nil, fmt.Errorf("%s: %w", out, fs.ErrExist)
	}
	if err := fsutil.CheckWritable(out); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOutNotWritable, err)
	}
	res, err := r.Run.Close(ctx)
	if err != nil {
		return nil, err
	}
	st := r.Run.State()
	var werr error
	if force {
		werr = fsutil.WriteReplace(out, res.Raw, 0o644)
	} else {
		werr = fsutil.WriteNew(out, res.Raw, 0o644)
	}
	if werr == nil && res.Offline {
		c, err := NewUnsignedCopy(r.Run.ID(), out, res.Raw)
		if err != nil {
			return nil, err
		}
		st.UnsignedCopies = append(st.UnsignedCopies, c)
	}
	if err := r.file.Save(st); err != nil {
		return res, errors.Join(err, werr)
	}
	if werr != nil {
		return res, &VPECWriteError{RunID: r.Run.ID(), VPECID: res.VPEC.VPECID, Path: out, Offline: res.Offline, Err: werr}
	}
	return res, nil
}

// ErrOutNotWritable: CloseTo's out cannot be written (checked before the
// run is closed).
var ErrOutNotWritable = errors.New("cannot write the VPEC file")

// VPECWriteError is CloseTo's error when the run was closed but its VPEC
// could not be written to Path. The run is closed and the state file says
// so; the signed VPEC is kept by the service (svc vpec get RunID), or, for
// an offline close (Offline), will be once the queue is flushed.
type VPECWriteError struct {
	RunID, VPECID, Path string
	Offline             bool
	Err                 error
}

func (e *VPECWriteError) Error() string {
	return fmt.Sprintf("run %s is closed (VPEC %s), but its VPEC could not be written: %v", e.RunID, e.VPECID, e.Err)
}

func (e *VPECWriteError) Unwrap() error { return e.Err }

// ReplaceStateCopies writes the signed VPEC over each unsigned offline
// VPEC the state file lists whose run the service has sealed
// (ReplaceCopies), and keeps in the file those to try again. A state file
// that does not exist, or lists none, is no error: nothing is done.
func (p *Pipeline) ReplaceStateCopies(ctx context.Context, s StateFile) ([]CopyResult, error) {
	if _, err := os.Stat(s.path()); err != nil {
		return nil, nil
	}
	unlock, err := s.Lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := s.Load()
	if err != nil || len(st.UnsignedCopies) == 0 {
		return nil, nil
	}
	results, keep := p.ReplaceCopies(ctx, st.UnsignedCopies)
	if len(keep) != len(st.UnsignedCopies) {
		st.UnsignedCopies = keep
		if err := s.Save(st); err != nil {
			return results, err
		}
	}
	return results, nil
}

// WriteVPEC writes the signed VPEC res to path: a new file; with force,
// over any file; else only over the unsigned offline VPEC of the same run
// (ReplaceUnsigned), an error matching ErrNotUnsignedCopy otherwise.
func WriteVPEC(path string, force bool, res *VPECResult) error {
	if _, err := os.Stat(path); err != nil {
		return fsutil.WriteNew(path, res.Raw, 0o644)
	}
	if force {
		return fsutil.WriteReplace(path, res.Raw, 0o644)
	}
	return ReplaceUnsigned(path, res.VPEC.RunID, res.Raw)
}

// StateFlush is what FlushState did.
type StateFlush struct {
	FlushResult
	// Pending counts the entries still queued after the flush.
	Pending int
	// Copies is what became of each unsigned offline VPEC the state file
	// listed (ReplaceStateCopies).
	Copies []CopyResult
	// StateErr is set when the state file could not be locked or saved.
	StateErr error
}

// FlushState delivers the queued entries in order (Flush) and then, unless
// the service is unreachable, writes the signed VPEC over each unsigned
// offline VPEC the state file lists (ReplaceStateCopies). The error is
// Flush's.
func (p *Pipeline) FlushState(ctx context.Context, s StateFile) (StateFlush, error) {
	var out StateFlush
	res, err := p.Flush(ctx)
	out.FlushResult = res
	out.Pending, _ = p.PendingQueueCount()
	if !errors.Is(err, ErrUnavailable) {
		out.Copies, out.StateErr = p.ReplaceStateCopies(ctx, s)
	}
	return out, err
}
