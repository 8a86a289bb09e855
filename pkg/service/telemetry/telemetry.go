// Package telemetry sets up OpenTelemetry tracing for svc serve: OTLP
// export over HTTP when an endpoint is configured (--otel-endpoint or the
// standard OTEL_EXPORTER_OTLP_* environment variables), nothing otherwise.
// The server makes its spans with the TracerProvider it is given
// (server.Config.Tracing); W3C trace context (traceparent, tracestate) is
// the propagation format on both sides.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of svc's spans.
const ScopeName = "github.com/svc-gov/svc"

// Propagator is the W3C trace context propagator svc uses on incoming
// requests (pkg/client sends the same headers).
func Propagator() propagation.TextMapPropagator { return propagation.TraceContext{} }

// ErrEndpoint: the OTLP endpoint is not an http(s) URL.
var ErrEndpoint = errors.New("telemetry: the OTLP endpoint must be an http:// or https:// URL")

// Config configures Setup.
type Config struct {
	// Endpoint is the OTLP/HTTP endpoint URL (e.g.
	// http://127.0.0.1:4318); "" uses the OTEL_EXPORTER_OTLP_ENDPOINT or
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT environment variable, and
	// without either tracing is off.
	Endpoint string
	// ServiceName and Version name this process in the spans' resource.
	ServiceName, Version string
	// Getenv reads the environment (default os.Getenv).
	Getenv func(string) string
}

// Enabled reports whether c asks for export: an endpoint given, or one
// in the environment.
func (c Config) Enabled() bool {
	get := c.Getenv
	if get == nil {
		get = os.Getenv
	}
	return c.Endpoint != "" || get("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup returns the TracerProvider c asks for and the function that
// flushes and stops it. Without an endpoint it is a no-op provider and
// exports nothing. The exporter reads the other OTEL_EXPORTER_OTLP_*
// variables (headers, timeout, compression, certificates) itself.
func Setup(ctx context.Context, c Config) (trace.TracerProvider, func(context.Context) error, error) {
	if !c.Enabled() {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	var opts []otlptracehttp.Option
	if c.Endpoint != "" {
		if !ValidEndpoint(c.Endpoint) {
			return nil, nil, fmt.Errorf("%w: got %q", ErrEndpoint, c.Endpoint)
		}
		u, _ := url.Parse(c.Endpoint)
		if u.Path == "" || u.Path == "/" {
			// A collector's base URL: traces go to its /v1/traces.
			u.Path = "/v1/traces"
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	tp := NewProvider(c, sdktrace.NewBatchSpanProcessor(exp))
	return tp, tp.Shutdown, nil
}

// ValidEndpoint reports whether e is an http:// or https:// URL with a
// host, as Config.Endpoint must be.
func ValidEndpoint(e string) bool {
	u, err := url.Parse(e)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// NewProvider is an SDK TracerProvider naming the service as c does,
// sending spans to sp (a test passes a tracetest recorder or a
// synchronous processor over an in-memory exporter).
func NewProvider(c Config, sp sdktrace.SpanProcessor) *sdktrace.TracerProvider {
	name := c.ServiceName
	if name == "" {
		name = "svc"
	}
	res := resource.NewSchemaless(semconv.ServiceName(name), semconv.ServiceVersion(c.Version))
	return sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sp), sdktrace.WithResource(res))
}
