package client

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// injectTrace adds the W3C trace context (traceparent, tracestate, the
// format the service accepts) of ctx's span, if it has one, to
// h: the service's spans of the request then join the caller's trace.
func injectTrace(ctx context.Context, h http.Header) {
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
}

// TracingTransport is an http.RoundTripper sending the W3C trace context
// (traceparent, tracestate) of each request's context, for HTTP clients
// other than the Pipeline's own (which always sends it). Base nil means
// http.DefaultTransport.
type TracingTransport struct {
	Base http.RoundTripper
}

// RoundTrip sends req with the trace context of req.Context() added; req
// itself is not modified.
func (t TracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	h := http.Header{}
	injectTrace(req.Context(), h)
	if len(h) == 0 {
		return base.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	for k, v := range h {
		req.Header[k] = v
	}
	return base.RoundTrip(req)
}
