package timestamp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Client obtains tokens from a remote RFC 3161 authority over HTTP
// (RFC 3161 section 3.4: POST application/timestamp-query).
//
// Deprecated: use tsahttp.Client. Client is the last reason package
// timestamp (and so pkg/vpec and svc-verify) links net/http; it goes once
// pkg/cli/serve.go uses tsahttp.Client.
type Client struct {
	// URL of the authority.
	URL string
	// HTTP is the client to use; nil means one with a 10 s timeout.
	HTTP *http.Client
}

// maxResponse bounds a TimeStampResp read from the network.
const maxResponse = 1 << 20

// Timestamp requests a token over a SHA-256 digest with a fresh nonce and
// the TSA certificate included, and checks that the answer is granted and
// is over that digest with that nonce. Trust in the authority is checked by
// verifiers against their trust bundle, not here.
func (c *Client) Timestamp(digest []byte) ([]byte, error) {
	return c.TimestampContext(context.Background(), digest)
}

// TimestampContext is Timestamp with a context.
func (c *Client) TimestampContext(ctx context.Context, digest []byte) ([]byte, error) {
	nonce, err := NewNonce()
	if err != nil {
		return nil, err
	}
	req, err := NewRequest(digest, nonce, true)
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
		return nil, fmt.Errorf("%w: %s: response larger than %d bytes", ErrMalformed, c.URL, maxResponse)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/timestamp-reply") {
		return nil, fmt.Errorf("%w: %s: content type %q, want application/timestamp-reply", ErrMalformed, c.URL, ct)
	}
	info, err := ParseResponse(body)
	if err != nil {
		return nil, fmt.Errorf("timestamp: %s: %w", c.URL, err)
	}
	if info.HashAlgorithm.Size() != sha256.Size {
		return nil, fmt.Errorf("%w: %s answered with another hash algorithm", ErrImprintMismatch, c.URL)
	}
	if info.Nonce == nil || info.Nonce.Cmp(nonce) != 0 {
		return nil, fmt.Errorf("%w: %s", ErrNonceMismatch, c.URL)
	}
	return body, nil
}

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

// Handler serves the authority over HTTP as RFC 3161 section 3.4
// describes, so other services can use it as a remote TSA.
//
// Deprecated: use tsahttp.Handler.
func (a *Authority) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "POST an application/timestamp-query", http.StatusMethodNotAllowed)
			return
		}
		req, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		if err != nil {
			http.Error(w, "read request", http.StatusBadRequest)
			return
		}
		resp, err := a.Respond(req)
		if err != nil {
			if resp, err = RejectionResponse(err); err != nil {
				http.Error(w, "cannot answer", http.StatusInternalServerError)
				return
			}
		}
		w.Header().Set("Content-Type", "application/timestamp-reply")
		w.Write(resp)
	})
}
