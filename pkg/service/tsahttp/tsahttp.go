// Package tsahttp is RFC 3161 over HTTP (RFC 3161 section 3.4: POST
// application/timestamp-query): a client that obtains tokens from a remote
// authority, and a handler that serves an [timestamp.Authority].
//
// It is the only part of the time-stamp code that links net/http, kept out
// of package timestamp so that verification (pkg/core/verify, svc-verify) never
// links an HTTP stack.
package tsahttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/timestamp"
)

// Client obtains tokens from a remote RFC 3161 authority over HTTP.
type Client struct {
	// URL of the authority.
	URL string
	// HTTP is the client to use; nil means one with a 10 s timeout.
	HTTP *http.Client
}

// maxResponse bounds a TimeStampResp read from the network.
const maxResponse = 1 << 20

// maxRequest bounds a TimeStampReq the handler reads.
const maxRequest = 64 << 10

// Timestamp requests a token over a SHA-256 digest with a fresh nonce and
// the TSA certificate included, and checks that the answer is granted and
// is over that digest with that nonce. Trust in the authority is checked by
// verifiers against their trust bundle, not here. ctx bounds the whole
// exchange (the HTTP client's timeout still applies): when it is done the
// request is abandoned and the error wraps ctx.Err().
func (c *Client) Timestamp(ctx context.Context, digest []byte) ([]byte, error) {
	nonce, err := timestamp.NewNonce()
	if err != nil {
		return nil, err
	}
	req, err := timestamp.NewRequest(digest, nonce, true)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(req))
	if err != nil {
		return nil, fmt.Errorf("timestamp: %s: %w", c.URL, err)
	}
	hreq.Header.Set("Content-Type", "application/timestamp-query")
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Second}
	}
	resp, err := hc.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("timestamp: %s: %w", c.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, fmt.Errorf("timestamp: %s: read response: %w", c.URL, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("timestamp: %s: HTTP %d", c.URL, resp.StatusCode)
	}
	if len(body) > maxResponse {
		return nil, fmt.Errorf("%w: %s: response larger than %d bytes", timestamp.ErrMalformed, c.URL, maxResponse)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/timestamp-reply") {
		return nil, fmt.Errorf("%w: %s: content type %q, want application/timestamp-reply", timestamp.ErrMalformed, c.URL, ct)
	}
	info, err := timestamp.ParseResponse(body)
	if err != nil {
		return nil, fmt.Errorf("timestamp: %s: %w", c.URL, err)
	}
	if info.HashAlgorithm.Size() != sha256.Size {
		return nil, fmt.Errorf("%w: %s answered with another hash algorithm", timestamp.ErrImprintMismatch, c.URL)
	}
	if info.Nonce == nil || info.Nonce.Cmp(nonce) != 0 {
		return nil, fmt.Errorf("%w: %s", timestamp.ErrNonceMismatch, c.URL)
	}
	return body, nil
}

// Handler serves the authority over HTTP as RFC 3161 section 3.4
// describes, so other services can use it as a remote TSA.
func Handler(a *timestamp.Authority) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "POST an application/timestamp-query", http.StatusMethodNotAllowed)
			return
		}
		req, err := io.ReadAll(io.LimitReader(r.Body, maxRequest))
		if err != nil {
			http.Error(w, "read request", http.StatusBadRequest)
			return
		}
		resp, err := a.Respond(req)
		if err != nil {
			if resp, err = timestamp.RejectionResponse(err); err != nil {
				http.Error(w, "cannot answer", http.StatusInternalServerError)
				return
			}
		}
		w.Header().Set("Content-Type", "application/timestamp-reply")
		w.Write(resp)
	})
}
