package present

import (
	"errors"
	"fmt"
	"io"

	"github.com/svc-gov/svc/pkg/app/cli/internal/statefile"
	"github.com/svc-gov/svc/pkg/client"
)

// Written is a signed VPEC written over an unsigned offline VPEC.
type Written struct {
	RunID  string `json:"run_id"`
	VPECID string `json:"vpec_id"`
	Path   string `json:"path"`
}

// Flush is what svc queue flush reports: entries delivered and pending,
// the runs sealed, the signed VPECs written over unsigned ones, and
// warnings (a changed unsigned copy left alone, a state file that could
// not be saved).
type Flush struct {
	Delivered int
	Pending   int
	Sealed    []client.SealedRun
	Written   []Written
	Warnings  []string
	Err       error
}

// NewFlush sorts what statefile.File.Flush did, and its error, into a Flush.
func NewFlush(f statefile.Flushed, err error) Flush {
	out := Flush{Delivered: f.Delivered, Pending: f.Pending, Sealed: f.Sealed, Err: err}
	for _, r := range f.Copies {
		switch {
		case r.Err == nil:
			out.Written = append(out.Written, Written{RunID: r.RunID, VPECID: r.VPECID, Path: r.Path})
		case errors.Is(r.Err, statefile.ErrNotUnsignedCopy):
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s changed since the offline close of %s: left alone; fetch the signed VPEC with 'svc vpec get %s --out FILE'", r.Path, r.RunID, r.RunID))
		}
	}
	if f.StateErr != nil {
		out.Warnings = append(out.Warnings, f.StateErr.Error())
	}
	return out
}

// JSON is the --output json object: delivered, pending, sealed and written
// always (empty lists as []), error and warnings when there are any.
func (f Flush) JSON() map[string]any {
	out := map[string]any{"delivered": f.Delivered, "pending": f.Pending, "sealed": NonNil(f.Sealed), "written": NonNil(f.Written)}
	if f.Err != nil {
		out["error"] = f.Err.Error()
	}
	if len(f.Warnings) > 0 {
		out["warnings"] = f.Warnings
	}
	return out
}

// Print writes the counts, each sealed run and written VPEC to out, and
// the warnings to errw as "name: warning:" lines.
func (f Flush) Print(out, errw io.Writer, name string) {
	fmt.Fprintf(out, "%d delivered, %d pending\n", f.Delivered, f.Pending)
	for _, s := range f.Sealed {
		fmt.Fprintf(out, "%s sealed: %s\n", s.RunID, OrUnknown(s.VPECID))
	}
	for _, w := range f.Written {
		fmt.Fprintf(out, "%s: signed VPEC %s written over the unsigned offline VPEC %s\n", w.RunID, w.VPECID, w.Path)
	}
	for _, w := range f.Warnings {
		fmt.Fprintf(errw, "%s: warning: %s\n", name, w)
	}
}

// NonNil returns s, or an empty slice for nil (JSON [] rather than null).
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// OrUnknown returns s, or says the VPEC id was not reported.
func OrUnknown(s string) string {
	if s == "" {
		return "(VPEC id not reported)"
	}
	return s
}

// QueueStatus prints svc queue status: the queue's pending count, then
// each other queue holding entries and how to deliver them.
func QueueStatus(w io.Writer, st client.QueueStatus, name string) {
	if st.Path != "" {
		fmt.Fprintf(w, "%d pending in %s\n", st.Pending, st.Path)
	}
	for _, q := range st.Others {
		switch {
		case q.BaseURL != "":
			fmt.Fprintf(w, "%d pending for %s (key %s) in %s: deliver them with: %s queue flush --base-url %s\n", q.Pending, q.BaseURL, q.KeyID, q.Path, name, q.BaseURL)
		default:
			fmt.Fprintf(w, "%d pending for another service or key in %s (its address was not recorded): deliver them with %s queue flush --base-url URL --api-key KEY of that service\n", q.Pending, q.Path, name)
		}
	}
}
