package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
)

// call sends one request, bounded by ctx. It returns the answer's body for
// 2xx; otherwise an *APIError, or an error wrapping ErrUnavailable when no
// answer came.
func (p *Pipeline) call(ctx context.Context, method, path string, body []byte) ([]byte, int, error) {
	return p.callWith(ctx, method, path, body, nil)
}

// callWith is call with extra request headers.
func (p *Pipeline) callWith(ctx context.Context, method, path string, body []byte, hdr map[string]string) ([]byte, int, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, p.baseURL+path, rd)
	if err != nil {
		return nil, 0, fmt.Errorf("svc client: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	injectTrace(ctx, req.Header)
	resp, err := p.hc.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s %s: %w", ErrUnavailable, method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, resp.StatusCode, fmt.Errorf("%w: %s %s: read answer: %w", ErrUnavailable, method, path, err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return data, resp.StatusCode, nil
	}
	ae := &APIError{Method: method, Path: path, Status: resp.StatusCode}
	var eb api.ErrorBody
	if json.Unmarshal(data, &eb) == nil && eb.Error.Code != "" {
		ae.Code, ae.Message, ae.Field = eb.Error.Code, eb.Error.Message, eb.Error.Field
	} else {
		msg := strings.Join(strings.Fields(string(data)), " ")
		if len(msg) > 200 {
			msg = msg[:200] + "…"
		}
		ae.Message = msg
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
		ae.RetryAfter = time.Duration(s) * time.Second
	}
	return data, resp.StatusCode, ae
}

// unreachable reports whether err means the service did not (usefully)
// answer.
func unreachable(err error) bool { return errors.Is(err, ErrUnavailable) }

// permanent reports whether err is the service refusing a queued entry
// for good: retrying the same bytes cannot succeed.
func permanent(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.Status {
	case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge,
		http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity:
		return true
	case http.StatusNotFound:
		// The run does not exist (its open was refused), as opposed to a
		// misrouted base URL, which would refuse everything.
		return ae.Code == api.CodeNotFound
	}
	return false
}
