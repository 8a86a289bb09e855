package telemetry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/trace/noop"

	"github.com/svc-gov/svc/pkg/service/telemetry"
)

// TestSetupExportsOTLP: with an endpoint, spans reach an OTLP/HTTP
// receiver on loopback (at /v1/traces, as protobuf) once the provider is
// stopped.
func TestSetupExportsOTLP(t *testing.T) {
	var mu sync.Mutex
	var got []string
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		mu.Unlock()
		if len(b) == 0 {
			t.Error("empty export")
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer recv.Close()
	for _, c := range []struct{ name, endpoint, env string }{
		{"--otel-endpoint", recv.URL, ""},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "", recv.URL},
	} {
		t.Run(c.name, func(t *testing.T) {
			mu.Lock()
			got = nil
			mu.Unlock()
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.env)
			tp, stop, err := telemetry.Setup(context.Background(), telemetry.Config{Endpoint: c.endpoint, ServiceName: "svc", Version: "test"})
			if err != nil {
				t.Fatal(err)
			}
			_, sp := tp.Tracer("t").Start(context.Background(), "work")
			sp.End()
			if err := stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) == 0 || got[0] != "POST /v1/traces application/x-protobuf" {
				t.Fatalf("receiver got %q", got)
			}
		})
	}
}

// TestSetupOff: without an endpoint tracing is a no-op provider; a bad
// endpoint is ErrEndpoint.
func TestSetupOff(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	tp, stop, err := telemetry.Setup(context.Background(), telemetry.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tp.(noop.TracerProvider); !ok {
		t.Errorf("provider %T, want the no-op one", tp)
	}
	if err := stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"127.0.0.1:4318", "ftp://x", "http://"} {
		if _, _, err := telemetry.Setup(context.Background(), telemetry.Config{Endpoint: e}); !errors.Is(err, telemetry.ErrEndpoint) {
			t.Errorf("endpoint %q: %v, want ErrEndpoint", e, err)
		}
	}
}
