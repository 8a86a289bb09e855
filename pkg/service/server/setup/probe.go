package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
)

// DefaultProbeURL is what svc healthcheck asks by default: the liveness
// endpoint of a service listening on 127.0.0.1:8080 (the container
// image's address).
const DefaultProbeURL = "http://127.0.0.1:8080/healthz"

// ErrUnhealthy: the service answered, but not healthy (a *ProbeError), or
// did not answer at all.
var ErrUnhealthy = errors.New("service not healthy")

// ProbeError is the error of a probe whose service answered something
// other than healthy. It matches ErrUnhealthy.
type ProbeError struct {
	URL string
	// Status is the HTTP status (0 when there was no answer).
	Status int
	// Health is the answer's status field, and Detail its detail ("" when
	// the body was not a health answer).
	Health, Detail string
	// Err is why there was no usable answer, or nil.
	Err error
}

func (e *ProbeError) Error() string {
	switch {
	case e.Status == 0:
		return fmt.Sprintf("%s: no answer: %v", e.URL, e.Err)
	case e.Err != nil:
		return fmt.Sprintf("%s: HTTP %d: %v", e.URL, e.Status, e.Err)
	case e.Detail != "":
		return fmt.Sprintf("%s: HTTP %d, status %q: %s", e.URL, e.Status, e.Health, e.Detail)
	}
	return fmt.Sprintf("%s: HTTP %d, status %q", e.URL, e.Status, e.Health)
}

// Is makes a *ProbeError match ErrUnhealthy.
func (e *ProbeError) Is(target error) bool { return target == ErrUnhealthy }

// Unwrap returns the transport or decoding error, if any.
func (e *ProbeError) Unwrap() error { return e.Err }

// Probe asks a service's health endpoint (GET /healthz, or /readyz) at
// rawURL and returns its answer when it is healthy: HTTP 200 with the
// status "ok" (/healthz) or "ready" (/readyz). Anything else, no answer
// within timeout included, is a *ProbeError. Redirects are not followed.
// It is what a container's HEALTHCHECK runs (svc healthcheck): an image
// without a shell or curl probes with the binary it already has.
func Probe(ctx context.Context, rawURL string, timeout time.Duration) (api.Health, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return api.Health{}, fmt.Errorf("probe URL %q: want http://HOST:PORT/healthz", rawURL)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return api.Health{}, fmt.Errorf("probe URL %q: %w", rawURL, err)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		return api.Health{}, &ProbeError{URL: u.String(), Err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return api.Health{}, &ProbeError{URL: u.String(), Status: resp.StatusCode, Err: err}
	}
	var h api.Health
	if err := json.Unmarshal(body, &h); err != nil {
		return api.Health{}, &ProbeError{URL: u.String(), Status: resp.StatusCode, Err: fmt.Errorf("not a health answer: %w", err)}
	}
	if resp.StatusCode != http.StatusOK || (h.Status != "ok" && h.Status != "ready") {
		return h, &ProbeError{URL: u.String(), Status: resp.StatusCode, Health: h.Status, Detail: h.Detail}
	}
	return h, nil
}
