package timestamp

import (
	"context"
	"errors"
	"fmt"
)

// Timestamper obtains a token over a SHA-256 digest. ctx bounds the call:
// a remote authority is abandoned when it is done, and the error then wraps
// ctx.Err().
type Timestamper interface {
	Timestamp(ctx context.Context, digest []byte) ([]byte, error)
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
// A cancelled ctx is not a failure of the primary: the fallback is not
// asked (nor OnFallback called), and the error wraps ctx.Err().
func (f *Fallback) Timestamp(ctx context.Context, digest []byte) ([]byte, error) {
	tok, perr := f.Primary.Timestamp(ctx, digest)
	if perr == nil {
		return tok, nil
	}
	if cerr := ctx.Err(); cerr != nil {
		return nil, fmt.Errorf("timestamp: primary abandoned: %w", errors.Join(cerr, perr))
	}
	tok, serr := f.Secondary.Timestamp(ctx, digest)
	if serr != nil {
		return nil, fmt.Errorf("timestamp: primary failed (%w) and the fallback failed: %w", perr, serr)
	}
	f.OnFallback(fmt.Errorf("%w: %w", ErrFallbackUsed, perr))
	return tok, nil
}
