package logmonitor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/tlog"
)

// maxStateBytes bounds a state file: one checkpoint (32 KiB at most).
const maxStateBytes = 64 << 10

// Watch is Run that remembers: it starts from the checkpoint in the file
// statePath (from the log's start when the file does not exist, or from
// opts.Since when that is set), and once the run has verified the log's
// latest checkpoint it writes it to statePath (atomically), for the next
// Watch. On any error the state file is left as it was, so a split view
// or a shrinking log keeps failing until someone looks.
func Watch(ctx context.Context, src Source, opts Options, statePath string) (*Result, error) {
	if opts.Since == nil {
		data, err := readState(statePath)
		if err != nil {
			return nil, err
		}
		opts.Since = data
	}
	res, err := Run(ctx, src, opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(statePath), 0o700); err != nil {
		return nil, fmt.Errorf("monitor: state directory: %w", err)
	}
	if err := fsutil.WriteReplace(statePath, res.To.Note, 0o600); err != nil {
		return nil, fmt.Errorf("monitor: save the verified checkpoint: %w", err)
	}
	return res, nil
}

// readState reads a state file: nil when it does not exist.
func readState(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("monitor: state: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStateBytes+1))
	if err != nil {
		return nil, fmt.Errorf("monitor: state %s: %w", path, err)
	}
	if n := len(data); n > maxStateBytes {
		return nil, fmt.Errorf("monitor: state %s is larger than a checkpoint (%d bytes)", path, maxStateBytes)
	}
	return data, nil
}

// CheckConsistency verifies that the checkpoint newer extends older (both
// signed notes, verified by v): with proof (RFC 6962 consistency proof
// hashes) when given, else with the proof read from src's tiles. It
// returns both checkpoints, or tlog.ErrInconsistent (two histories),
// tlog.ErrLogShrank (newer is smaller), or the verifier's errors.
func CheckConsistency(ctx context.Context, v *tlog.Verifier, older, newer []byte, proof [][]byte, src Source) (*tlog.Checkpoint, *tlog.Checkpoint, error) {
	o, err := v.VerifyCheckpoint(older)
	if err != nil {
		return nil, nil, fmt.Errorf("monitor: the older checkpoint: %w", err)
	}
	n, err := v.VerifyCheckpoint(newer)
	if err != nil {
		return nil, nil, fmt.Errorf("monitor: the newer checkpoint: %w", err)
	}
	if proof == nil && o.Size > 0 && o.Size < n.Size {
		if src == nil {
			return nil, nil, fmt.Errorf("monitor: no consistency proof given and no log to read one from")
		}
		if proof, err = ConsistencyProof(ctx, src, o.Size, n.Size); err != nil {
			return nil, nil, err
		}
	}
	if err := v.VerifyConsistency(o, n, proof); err != nil {
		return nil, nil, fmt.Errorf("monitor: %w", err)
	}
	return o, n, nil
}
