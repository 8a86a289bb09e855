package timestamp

import (
	"errors"
	"fmt"
)

// Chain tries timestampers in order and returns the first token obtained.
type Chain []interface {
	Timestamp(digest []byte) ([]byte, error)
}

// Timestamp asks each member in turn; the error lists every failure.
func (c Chain) Timestamp(digest []byte) ([]byte, error) {
	if len(c) == 0 {
		return nil, errors.New("timestamp: no authority configured")
	}
	var errs []error
	for _, t := range c {
		tok, err := t.Timestamp(digest)
		if err == nil {
			return tok, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("timestamp: every authority failed: %w", errors.Join(errs...))
}
