package timestamp

import (
	"errors"
	"fmt"
)

// Timestamper obtains a token over a SHA-256 digest.
type Timestamper interface {
	Timestamp(digest []byte) ([]byte, error)
}

// ErrFallbackUsed is passed (wrapped) to Fallback.OnFallback: the primary
// authorities failed and the fallback one answered.
var ErrFallbackUsed = errors.New("timestamp: primary authority failed; used the fallback authority")

// Fallback timestamps with Primary and, only when Primary fails, with
// Secondary. It exists for `svc serve --tsa-fallback-builtin`: falling back
// from an external authority to the built-in one changes who vouches for
// the time, so it happens only when asked for and never silently: every
// fallback calls OnFallback (a warning in the log). The token itself names
// the authority that signed it (its certificate is included).
type Fallback struct {
	Primary, Secondary Timestamper
	// OnFallback is called with the primary's error, wrapped with
	// ErrFallbackUsed, each time Secondary answers instead. Required.
	OnFallback func(err error)
}

// Timestamp asks Primary, then Secondary; the error names both failures.
func (f *Fallback) Timestamp(digest []byte) ([]byte, error) {
	tok, perr := f.Primary.Timestamp(digest)
	if perr == nil {
		return tok, nil
	}
	tok, serr := f.Secondary.Timestamp(digest)
	if serr != nil {
		return nil, fmt.Errorf("timestamp: primary failed (%w) and the fallback failed: %w", perr, serr)
	}
	f.OnFallback(fmt.Errorf("%w: %w", ErrFallbackUsed, perr))
	return tok, nil
}
