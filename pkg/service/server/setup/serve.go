package setup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/service/server"
	"github.com/svc-gov/svc/pkg/service/tsahttp"
)

// Timestamper is the authority a service timestamps with: builtin when no
// URL is given; else the external RFC 3161 authorities at urls, asked in
// order and nothing else, unless fallback lets builtin answer when they
// all fail (logged on log as a warning every time).
func Timestamper(urls []string, fallback bool, builtin *timestamp.Authority, log *slog.Logger) timestamp.Timestamper {
	return timestamperOf(urls, fallback, builtin, log, nil)
}

// observe wraps one authority (label "builtin" or "external") and counts
// fallbacks; nil observes nothing.
type observe struct {
	wrap       func(t timestamp.Timestamper, label string) timestamp.Timestamper
	onFallback func()
}

// timestamperOf is Timestamper with each authority wrapped by o.
func timestamperOf(urls []string, fallback bool, builtin *timestamp.Authority, log *slog.Logger, o *observe) timestamp.Timestamper {
	wrap := func(t timestamp.Timestamper, label string) timestamp.Timestamper {
		if o == nil {
			return t
		}
		return o.wrap(t, label)
	}
	in := wrap(builtin, "builtin")
	if len(urls) == 0 {
		return in
	}
	var ext timestamp.Chain
	for _, u := range urls {
		ext = append(ext, wrap(&tsahttp.Client{URL: u}, "external"))
	}
	if !fallback {
		return ext
	}
	return &timestamp.Fallback{Primary: ext, Secondary: in, OnFallback: func(err error) {
		if o != nil {
			o.onFallback()
		}
		log.Warn("external timestamp authorities failed: timestamped with the built-in TSA (--tsa-fallback-builtin)",
			"tsa", builtin.Certificate().Subject.CommonName, "tsa_urls", strings.Join(urls, " "), "error", err.Error())
	}}
}

// AddTSARoots reads PEM root certificates of external authorities from
// files and adds them to the trust bundle m publishes.
func AddTSARoots(m *server.Material, files []string) error {
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read TSA root: %w", err)
		}
		certs, err := timestamp.ParseCertificatesPEM(data)
		if err != nil {
			return fmt.Errorf("TSA root %s: %w", f, err)
		}
		for _, c := range certs {
			m.Trust.AddRoot(c)
		}
	}
	return nil
}

// ErrListen: the address could not be listened on.
var ErrListen = errors.New("listen")

// HTTP are the HTTP server settings of Serve.
type HTTP struct {
	// Addr is the address to listen on (host:port; port 0 for any).
	Addr string
	// ShutdownTimeout bounds how long requests in flight may take to
	// finish once ctx is done.
	ShutdownTimeout time.Duration
	// Listening, if set, is called with the address listened on once the
	// server accepts connections; an error stops the server and is
	// returned.
	Listening func(addr net.Addr) error
}

// Serve serves h on o.Addr until ctx is done, then shuts down gracefully:
// requests in flight finish within o.ShutdownTimeout, after which their
// connections are closed. A listen failure matches ErrListen. The server
// bounds slow clients: 10 s to send headers, a minute to send a request,
// two minutes to take a response, two minutes idle; large responses (VPECs,
// attestations, /verify) are written with progress deadlines instead
// (server.Config.WriteStall per 256 KiB), so a slow client that keeps
// reading gets them whole.
func Serve(ctx context.Context, h http.Handler, o HTTP, log *slog.Logger) error {
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrListen, err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, WriteTimeout: 2 * time.Minute, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	if o.Listening != nil {
		if err := o.Listening(ln.Addr()); err != nil {
			hs.Close()
			return err
		}
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing requests in flight", "timeout", o.ShutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), o.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		// Closing the connections cancels the requests still in flight:
		// their timestamp requests are abandoned, and a close among them
		// stays sealed without a VPEC until its client retries.
		hs.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	log.Info("stopped")
	return nil
}
