package logwriter

import (
	"errors"
	"fmt"
	"testing"
)

func TestWitnessResult(t *testing.T) {
	for _, c := range []struct {
		ev   WitnessEvent
		want string
	}{
		{WitnessEvent{}, "cosigned"},
		{WitnessEvent{Stale: true}, "stale"},
		{WitnessEvent{Err: fmt.Errorf("send: %w", ErrWitnessUnreachable)}, "unreachable"},
		{WitnessEvent{Err: fmt.Errorf("send: %w", ErrWitnessConflict)}, "conflict"},
		{WitnessEvent{Err: ErrWitnessRejected}, "rejected"},
		{WitnessEvent{Err: errors.New("other")}, "failed"},
	} {
		if got := WitnessResult(c.ev); got != c.want {
			t.Errorf("WitnessResult(%+v) = %q, want %q", c.ev, got, c.want)
		}
	}
}
