package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/svc-gov/svc/pkg/app/cli/internal/statefile"
	"github.com/svc-gov/svc/pkg/client"
)

// The exit codes scripts see for a run kept in a state file: usage (2)
// for what the user can fix with another command or flag, failure (4)
// otherwise; a command error passes through unchanged.
func TestRunErrorExitCodes(t *testing.T) {
	so := &stateOptions{path: "s.json"}
	own := errorf(ExitTrust, "h", "own")
	tests := []struct {
		name string
		err  error
		code int
		hint string
	}{
		{"no state file", fmt.Errorf("%w: x", statefile.ErrNoOpenRun), ExitUsage, "open one first with 'svc run open' (or pass --state)"},
		{"bad state", fmt.Errorf("%w: x", statefile.ErrBadState), ExitUsage, "remove the file and open a new run"},
		{"still open", &statefile.RunStillOpenError{RunID: "run_1", Path: "s.json"}, ExitUsage, "close it with 'svc close', or remove s.json"},
		{"sealed", client.ErrRunSealed, ExitUsage, "sealed hint"},
		{"lock", fmt.Errorf("%w: x", statefile.ErrStateLock), ExitFailure, "check the directory of --state is writable"},
		{"out exists", fmt.Errorf("v.json: %w", fs.ErrExist), ExitUsage, "choose another --out or pass --force"},
		{"anything else", errors.New("boom"), ExitFailure, ""},
		{"a command error", own, ExitTrust, "h"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var ce *Error
			if err := so.runError(tc.err, "sealed hint"); !errors.As(err, &ce) || ce.Code != tc.code || ce.Hint != tc.hint || !errors.Is(err, tc.err) {
				t.Fatalf("runError(%v) = %#v, want code %d hint %q", tc.err, err, tc.code, tc.hint)
			}
		})
	}
}
