package statefile

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// ErrNotUnsignedCopy: the file a signed VPEC was to replace is no longer
// the unsigned offline VPEC of that run (it was edited, replaced or
// removed); it is left alone.
var ErrNotUnsignedCopy = errors.New("svc client: the file is not the unsigned offline VPEC of the run")

// UnsignedCopy is where an offline close wrote the unsigned VPEC of a run
// (kept in the state file, State.UnsignedCopies), so that the signed VPEC
// can replace it once the queued close is delivered, and only while the
// file still holds exactly those bytes.
type UnsignedCopy struct {
	RunID string `json:"run_id"`
	// Path is the file's absolute path.
	Path string `json:"path"`
	// SHA256 is the commitment hash (sha256:…) of the bytes written.
	SHA256 string `json:"sha256"`
}

// NewUnsignedCopy describes the unsigned VPEC raw of run runID written
// to path.
func NewUnsignedCopy(runID, path string, raw []byte) (UnsignedCopy, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return UnsignedCopy{}, fmt.Errorf("svc client: unsigned copy %s: %w", path, err)
	}
	return UnsignedCopy{RunID: runID, Path: abs, SHA256: commitment.String(raw)}, nil
}

// Replace writes the signed VPEC over the unsigned copy, atomically, if
// the file still holds exactly the bytes written; otherwise it returns
// ErrNotUnsignedCopy and leaves the file alone. A file that already holds
// signed is left as it is, without error. signed must be a signed VPEC of
// the same run.
func (c UnsignedCopy) Replace(signed []byte) error {
	if err := checkSigned(signed, c.RunID); err != nil {
		return err
	}
	cur, err := os.ReadFile(c.Path)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNotUnsignedCopy, c.Path, err)
	}
	if bytes.Equal(cur, signed) {
		return nil // replaced before (svc vpec get, an earlier flush)
	}
	if commitment.String(cur) != c.SHA256 {
		return fmt.Errorf("%w: %s changed since the offline close of %s", ErrNotUnsignedCopy, c.Path, c.RunID)
	}
	if err := fsutil.WriteReplace(c.Path, signed, 0o644); err != nil {
		return fmt.Errorf("svc client: write signed VPEC of %s: %w", c.RunID, err)
	}
	return nil
}

// ReplaceUnsigned writes the signed VPEC of run runID over path if path
// holds an unsigned offline VPEC (schema vpec.OfflineSchema) of the same
// run; otherwise it returns ErrNotUnsignedCopy and leaves the file alone.
func ReplaceUnsigned(path, runID string, signed []byte) error {
	if err := checkSigned(signed, runID); err != nil {
		return err
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrNotUnsignedCopy, path, err)
	}
	var head struct {
		Schema string `json:"schema"`
		RunID  string `json:"run_id"`
	}
	if json.Unmarshal(cur, &head) != nil || head.Schema != vpec.OfflineSchema || head.RunID != runID {
		return fmt.Errorf("%w: %s is not the unsigned offline VPEC of %s", ErrNotUnsignedCopy, path, runID)
	}
	if err := fsutil.WriteReplace(path, signed, 0o644); err != nil {
		return fmt.Errorf("svc client: write signed VPEC of %s: %w", runID, err)
	}
	return nil
}

// WriteVPEC writes the signed VPEC res to path: a new file; with force,
// over any file; else only over the unsigned offline VPEC of the same run
// (ReplaceUnsigned), an error matching ErrNotUnsignedCopy otherwise.
func WriteVPEC(path string, force bool, res *client.VPECResult) error {
	if _, err := os.Stat(path); err != nil {
		return fsutil.WriteNew(path, res.Raw, 0o644)
	}
	if force {
		return fsutil.WriteReplace(path, res.Raw, 0o644)
	}
	return ReplaceUnsigned(path, res.VPEC.RunID, res.Raw)
}

// checkSigned refuses to write anything but a signed VPEC of run runID.
func checkSigned(signed []byte, runID string) error {
	var head struct {
		Schema string `json:"schema"`
		RunID  string `json:"run_id"`
	}
	if err := json.NewDecoder(bytes.NewReader(signed)).Decode(&head); err != nil {
		return fmt.Errorf("svc client: signed VPEC of %s: %w", runID, err)
	}
	if head.Schema != vpec.Schema || head.RunID != runID {
		return fmt.Errorf("svc client: the VPEC to write is not a signed VPEC of %s (schema %q, run %q)", runID, head.Schema, head.RunID)
	}
	return nil
}

// CopyResult is what ReplaceCopies did with one unsigned copy.
type CopyResult struct {
	UnsignedCopy
	// VPECID is the signed VPEC's id, when it was fetched.
	VPECID string
	// Err is nil when the signed VPEC was written over the copy. It
	// wraps ErrNotUnsignedCopy when the file changed since and was left
	// alone; any other error (the run has no VPEC yet, the service is
	// unreachable) leaves the copy for a later try.
	Err error
}

// ReplaceCopies fetches the signed VPEC of each copy's run from p and
// writes it over the copy (UnsignedCopy.Replace). It returns what it did
// with each, and the copies to try again later (those whose VPEC could not
// be fetched or written for another reason than ErrNotUnsignedCopy).
func ReplaceCopies(ctx context.Context, p *client.Pipeline, copies []UnsignedCopy) (results []CopyResult, keep []UnsignedCopy) {
	for _, c := range copies {
		r := CopyResult{UnsignedCopy: c}
		res, err := p.FetchVPEC(ctx, c.RunID)
		if err == nil {
			r.VPECID = res.VPEC.VPECID
			err = c.Replace(res.Raw)
		}
		r.Err = err
		if err != nil && !errors.Is(err, ErrNotUnsignedCopy) {
			keep = append(keep, c)
		}
		results = append(results, r)
	}
	return results, keep
}
