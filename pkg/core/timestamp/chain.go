package timestamp

import (
	"context"
	"errors"
	"fmt"
)

// Chain tries timestampers in order and returns the first token obtained.
type Chain []Timestamper

// Timestamp asks each member in turn; the error lists every failure. When
// ctx is done it stops at once: the remaining members are not asked, and the
// error wraps ctx.Err().
func (c Chain) Timestamp(ctx context.Context, digest []byte) ([]byte, error) {
	if len(c) == 0 {
		return nil, errors.New("timestamp: no authority configured")
	}
	var errs []error
	for _, t := range c {
		if cerr := ctx.Err(); cerr != nil {
			return nil, fmt.Errorf("timestamp: %w", errors.Join(append(errs, cerr)...))
		}
		tok, err := t.Timestamp(ctx, digest)
		if err == nil {
			return tok, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("timestamp: every authority failed: %w", errors.Join(errs...))
}
