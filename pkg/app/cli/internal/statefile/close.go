package statefile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/client"
)

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

// CloseTo closes the run, writes its VPEC to out and saves the state. out
// must not exist unless force (an error matching fs.ErrExist), and must be
// writable: both are checked before the run is closed, so a refused out
// leaves the run open and nothing changed. If writing out still fails
// after the close (a full disk), the state is saved as closed and the
// error is a *VPECWriteError saying where the VPEC can be had again.
// When the service was unreachable the VPEC written is the unsigned
// offline one (res.Offline) and the state file remembers it, so that
// File.ReplaceCopies writes the signed VPEC over it later.
func (r *Run) CloseTo(ctx context.Context, out string, force bool) (*client.VPECResult, error) {
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
		r.copies = append(r.copies, c)
	}
	if err := r.Save(); err != nil {
		return res, errors.Join(err, werr)
	}
	if werr != nil {
		return res, &VPECWriteError{RunID: r.Run.ID(), VPECID: res.VPEC.VPECID, Path: out, Offline: res.Offline, Err: werr}
	}
	return res, nil
}

// ReplaceCopies writes the signed VPEC over each unsigned offline VPEC
// the state file lists whose run the service has sealed (ReplaceCopies),
// and keeps in the file those to try again. A state file that does not
// exist, or lists none, is no error: nothing is done.
func (s File) ReplaceCopies(ctx context.Context, p *client.Pipeline) ([]CopyResult, error) {
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
	results, keep := ReplaceCopies(ctx, p, st.UnsignedCopies)
	if len(keep) != len(st.UnsignedCopies) {
		st.UnsignedCopies = keep
		if err := s.Save(st); err != nil {
			return results, err
		}
	}
	return results, nil
}

// Flushed is what File.Flush did.
type Flushed struct {
	client.FlushResult
	// Pending counts the entries still queued after the flush.
	Pending int
	// Copies is what became of each unsigned offline VPEC the state file
	// listed (File.ReplaceCopies).
	Copies []CopyResult
	// StateErr is set when the state file could not be locked or saved.
	StateErr error
}

// Flush delivers p's queued entries in order (Pipeline.Flush) and then,
// unless the service is unreachable, writes the signed VPEC over each
// unsigned offline VPEC the state file lists (File.ReplaceCopies). The
// error is Pipeline.Flush's.
func (s File) Flush(ctx context.Context, p *client.Pipeline) (Flushed, error) {
	var out Flushed
	res, err := p.Flush(ctx)
	out.FlushResult = res
	out.Pending, _ = p.PendingQueueCount()
	if !errors.Is(err, client.ErrUnavailable) {
		out.Copies, out.StateErr = s.ReplaceCopies(ctx, p)
	}
	return out, err
}
