package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/svc-gov/svc/internal/svctest"
	"github.com/svc-gov/svc/pkg/client"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/telemetry"
)

// TestTraces: a run driven by pkg/client inside a caller's span gives
// server spans in the caller's trace (W3C trace context sent by the
// client, accepted by the server), with the store, TSA and signing spans
// inside the request's span.
func TestTraces(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := telemetry.NewProvider(telemetry.Config{ServiceName: "svc-test"}, sdktrace.NewSimpleSpanProcessor(exp))
	s := svctest.New(t, nil, func(c *server.Config) { c.Tracing = tp })

	caller := sdktrace.NewTracerProvider() // the application's own tracing
	ctx, root := caller.Tracer("app").Start(context.Background(), "handle claim")
	p := s.Pipeline(t)
	run, err := p.Open(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := run.Record(ctx, "pii_scan", "sha256:"+fmt.Sprintf("%064x", 1), vpec.ResultPass, []byte("claim")); err != nil {
		t.Fatal(err)
	}
	if _, err := run.Close(ctx); err != nil {
		t.Fatal(err)
	}
	root.End()
	want := root.SpanContext().TraceID()

	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, sp := range spans {
		byName[sp.Name] = sp
		byID[sp.SpanContext.SpanID()] = sp
	}
	for _, name := range []string{"POST /api/v1/runs", "POST /api/v1/runs/{run_id}/records", "POST /api/v1/runs/{run_id}/close"} {
		sp, ok := byName[name]
		switch {
		case !ok:
			t.Errorf("no server span %q", name)
		case sp.SpanContext.TraceID() != want:
			t.Errorf("span %q in trace %s, want the caller's %s", name, sp.SpanContext.TraceID(), want)
		case sp.SpanKind != trace.SpanKindServer:
			t.Errorf("span %q kind %v", name, sp.SpanKind)
		}
	}
	// Work spans nest in their request's span.
	for child, parent := range map[string]string{
		"store.AppendRecord": "POST /api/v1/runs/{run_id}/records",
		"store.SealRecords":  "POST /api/v1/runs/{run_id}/close",
		"tsa.timestamp":      "POST /api/v1/runs/{run_id}/close",
		"sign":               "POST /api/v1/runs/{run_id}/close",
		"store.StoreVPEC":    "POST /api/v1/runs/{run_id}/close",
	} {
		sp, ok := byName[child]
		if !ok {
			t.Errorf("no span %q", child)
			continue
		}
		top := sp
		for top.Parent.IsValid() {
			up, ok := byID[top.Parent.SpanID()]
			if !ok {
				break
			}
			top = up
			if top.Name == parent {
				break
			}
		}
		if top.Name != parent {
			t.Errorf("span %q is not inside %q (outermost %q)", child, parent, top.Name)
		}
	}
}

// TestTracingTransport: a plain http.Client with client.TracingTransport
// sends the trace context; the server continues the trace and answers
// with the request id.
func TestTracingTransport(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := telemetry.NewProvider(telemetry.Config{}, sdktrace.NewSimpleSpanProcessor(exp))
	s := svctest.New(t, nil, func(c *server.Config) { c.Tracing = tp })
	ctx, root := sdktrace.NewTracerProvider().Tracer("app").Start(context.Background(), "probe")
	defer root.End()
	for _, c := range []struct {
		name  string
		rt    http.RoundTripper
		joins bool
	}{
		{"TracingTransport", client.TracingTransport{}, true},
		{"plain transport", http.DefaultTransport, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp.Reset()
			req, _ := http.NewRequestWithContext(ctx, "GET", s.URL+"/healthz", nil)
			resp, err := (&http.Client{Transport: c.rt}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			spans := exp.GetSpans()
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			if got := spans[0].SpanContext.TraceID() == root.SpanContext().TraceID(); got != c.joins {
				t.Errorf("server span joined the caller's trace: %v, want %v", got, c.joins)
			}
		})
	}
}
