package setup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/service/metrics"
	"github.com/svc-gov/svc/pkg/service/server"
)

// ObservedTimestamper is Timestamper with every authority observed
// (server.ObservedTimestamper: svc_tsa_requests_total{tsa="builtin"} or
// {tsa="external"}, a span each) and every fallback to the built-in
// authority counted (svc_tsa_fallbacks_total) as well as logged.
func ObservedTimestamper(urls []string, fallback bool, builtin *timestamp.Authority, log *slog.Logger, m *metrics.Metrics, tp trace.TracerProvider) timestamp.Timestamper {
	return timestamperOf(urls, fallback, builtin, log, &observe{
		wrap: func(t timestamp.Timestamper, label string) timestamp.Timestamper {
			return server.ObservedTimestamper(t, label, m, tp)
		},
		onFallback: m.TimestampFallback,
	})
}

// ServeMetrics serves h (the metrics) on its own listener at addr until
// ctx ends (svc serve --metrics-addr); it returns the address listened
// on and a channel that gets the server's end.
func ServeMetrics(ctx context.Context, addr string, h http.Handler) (net.Addr, <-chan error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: metrics: %w", ErrListen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+server.MetricsPath, h)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}
	done := make(chan error, 1)
	go func() {
		err := hs.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		done <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	return ln.Addr(), done, nil
}
