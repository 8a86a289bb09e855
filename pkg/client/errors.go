package client

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Errors of the client, matchable with errors.Is.
var (
	// ErrNoAPIKey: neither Options.APIKey nor $SVC_API_KEY is set.
	ErrNoAPIKey = errors.New("svc client: no API key: set Options.APIKey or the SVC_API_KEY environment variable")
	// ErrInvalidAPIKey: the key does not start with pk_sb_ or pk_live_.
	ErrInvalidAPIKey = errors.New("svc client: API keys start with pk_sb_ (sandbox) or pk_live_ (production)")
	// ErrRunSealed: a record or close on a run that is already closed
	// (locally, or the service answered 409 run_sealed). Open a new run.
	ErrRunSealed = errors.New("svc client: the run is sealed: it was closed; open a new run")
	// ErrUnavailable: the service could not be reached (connection error,
	// timeout, or 408/429/500/502/503/504). Records and closes do not
	// return it (they fall back to the durable queue), except a record
	// whose check or review session still has to be closed by the
	// service; operations that need an answer of the service (sessions,
	// delegation, registrations, ResumeRun, FetchVPEC, FlushQueue) do.
	ErrUnavailable = errors.New("svc client: service unavailable")
	// ErrQueueLocked: another Pipeline, in this process or another one,
	// holds the queue file.
	ErrQueueLocked = errors.New("svc client: queue file is in use by another Pipeline")
	// ErrRejected: the service refused queued entries for good (for
	// example a chain mismatch); they were moved to the dead-letter file
	// <queue path>.rejected.jsonl.
	ErrRejected = errors.New("svc client: queued entries rejected by the service")
	// ErrNotFound: the service answered 404 not_found: it does not know
	// the run (or resource) in the key's organisation, e.g. a run opened
	// on another service.
	ErrNotFound = errors.New("svc client: not found")
	// ErrPipelineClosed: the Pipeline was closed.
	ErrPipelineClosed = errors.New("svc client: pipeline is closed")
	// ErrInvalidRecord: a record's parameters break the v1 record rules;
	// nothing was recorded. It is vpec.ErrInvalidRecord.
	ErrInvalidRecord = vpec.ErrInvalidRecord
)

// APIError is an answer of the service other than 2xx. errors.Is matches
// ErrRunSealed for 409 run_sealed and ErrUnavailable for the statuses that
// mean the service is unreachable or overloaded (408, 429, 500, 502, 503,
// 504).
type APIError struct {
	// Method and Path of the request.
	Method, Path string
	// Status is the HTTP status code.
	Status int
	// Code, Message and Field are the service's error body (api.Error);
	// Code is empty when the body was not one (e.g. a proxy's HTML page).
	Code, Message, Field string
	// RetryAfter is the Retry-After header of a 429 or 503, if any.
	RetryAfter time.Duration
}

// Error describes the failed request and the service's answer.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "svc client: %s %s: %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, " [field %s]", e.Field)
	}
	return b.String()
}

// Is reports whether e matches ErrRunSealed, ErrNotFound or ErrUnavailable.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrRunSealed:
		return e.Code == api.CodeRunSealed
	case ErrNotFound:
		return e.Status == http.StatusNotFound && e.Code == api.CodeNotFound
	case ErrUnavailable:
		return transientStatus(e.Status)
	}
	return false
}

// transientStatus reports whether a status means "try again later": the
// service (or a proxy in front of it) is down, overloaded or timed out.
func transientStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// RejectedEntry is a queued entry the service refused for good.
type RejectedEntry struct {
	// Kind is "open", "record" or "close".
	Kind string
	// RunID is the run the entry belongs to.
	RunID string
	// RecordID is the record's id (records only).
	RecordID string
	// Err is the service's answer.
	Err error
}

// RejectedError lists the queued entries a flush moved to the dead-letter
// file. errors.Is(err, ErrRejected) matches it.
type RejectedError struct {
	// Entries are the rejected entries in queue order.
	Entries []RejectedEntry
	// DeadLetterPath is the file they were appended to.
	DeadLetterPath string
}

// Error summarises the rejected entries.
func (e *RejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v: %d entr", ErrRejected, len(e.Entries))
	if len(e.Entries) == 1 {
		b.WriteString("y")
	} else {
		b.WriteString("ies")
	}
	fmt.Fprintf(&b, " moved to %s", e.DeadLetterPath)
	for i, r := range e.Entries {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Entries)-3)
			break
		}
		fmt.Fprintf(&b, "; %s %s %s: %v", r.Kind, r.RunID, r.RecordID, r.Err)
	}
	return b.String()
}

// Unwrap returns ErrRejected; the service's answers are in Entries.
func (e *RejectedError) Unwrap() error { return ErrRejected }
