package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/tlog"
)

// defaultReceiptWait is how long svc vpec get waits for a receipt: a few
// checkpoint intervals of a default service (1 s).
const defaultReceiptWait = 10 * time.Second

// saveReceipt writes the receipt of the VPEC written to vpecPath beside it
// (tlog.ReceiptPath), replacing an older one. It fails open: a VPEC
// without a receipt yet, or from a service without a log, gets a note on
// stderr, not an error. get fetches the receipt.
func (a *app) saveReceipt(vpecPath, vpecID string, get func() ([]byte, error)) (string, error) {
	data, err := get()
	if errors.Is(err, client.ErrNoReceipt) {
		fmt.Fprintf(a.streams.Err, "%s: note: no transparency log receipt for %s: the service runs without a log\n", a.name, vpecID)
		return "", nil
	}
	if err != nil {
		fmt.Fprintf(a.streams.Err, "%s: warning: no transparency log receipt for %s yet (%v); fetch it later with: %s vpec get %s --out %s\n", a.name, vpecID, err, a.name, vpecID, vpecPath)
		return "", nil
	}
	path := tlog.ReceiptPath(vpecPath)
	if err := fsutil.WriteReplace(path, data, 0o644); err != nil {
		return "", &Error{Code: ExitFailure, Err: fmt.Errorf("write the receipt: %w", err), Hint: fmt.Sprintf("the VPEC is in %s; fetch its receipt again with: %s vpec get %s --out %s", vpecPath, a.name, vpecID, vpecPath)}
	}
	return path, nil
}

// awaitReceipt is the get of saveReceipt for a VPEC just closed: its
// background fetch, waited for up to wait.
func awaitReceipt(ctx context.Context, res *client.VPECResult, wait time.Duration) func() ([]byte, error) {
	return func() ([]byte, error) {
		ctx, cancel := context.WithTimeout(ctx, wait)
		defer cancel()
		return res.AwaitReceipt(ctx)
	}
}
