package tsahttp_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/service/tsahttp"
)

// hangingTSA starts an authority that reads the request, reports it on
// arrived and then never answers: it returns only when the client goes away
// or the test ends.
func hangingTSA(t *testing.T) (url string, arrived <-chan struct{}) {
	t.Helper()
	got := make(chan struct{}, 16)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv.URL, got
}

// TestTimestampAbandonedOnCancel: a TSA that never answers is abandoned as
// soon as the caller's context is done, and the error says why (matchable
// with errors.Is), whether the context is cancelled while the request is
// in flight or its deadline has passed before it is sent. No timing is
// measured: the call must return at all, and with ctx's error.
func TestTimestampAbandonedOnCancel(t *testing.T) {
	builtin, err := timestamp.InitAuthority(t.TempDir(), timestamp.AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// answers regardless of ctx, as a timestamper that cannot block may:
	// only the chain and the fallback can keep it from being asked.
	answers := ignoresContext{builtin}
	digest := sha256.Sum256([]byte("vpec signature"))
	for _, tc := range []struct {
		name string
		// make returns the timestamper under test, called with ctx.
		make func(url string, fellBack *int) timestamp.Timestamper
	}{
		{"client", func(url string, _ *int) timestamp.Timestamper { return &tsahttp.Client{URL: url} }},
		{"chain", func(url string, _ *int) timestamp.Timestamper {
			// The second member would answer: a cancelled chain must not ask it.
			return timestamp.Chain{&tsahttp.Client{URL: url}, answers}
		}},
		{"fallback", func(url string, n *int) timestamp.Timestamper {
			// A cancelled primary is not a failed one: no fallback.
			return &timestamp.Fallback{Primary: timestamp.Chain{&tsahttp.Client{URL: url}}, Secondary: answers,
				OnFallback: func(error) { *n++ }}
		}},
	} {
		t.Run(tc.name+"/cancel", func(t *testing.T) {
			url, arrived := hangingTSA(t)
			var fellBack int
			ts := tc.make(url, &fellBack)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			var tok []byte
			go func() {
				var err error
				tok, err = ts.Timestamp(ctx, digest[:])
				done <- err
			}()
			<-arrived
			cancel()
			err := <-done
			if !errors.Is(err, context.Canceled) || tok != nil {
				t.Fatalf("Timestamp after cancel: token %v, error %v; want no token and context.Canceled", tok != nil, err)
			}
			if fellBack != 0 {
				t.Errorf("OnFallback called %d times on a cancelled request", fellBack)
			}
		})
		t.Run(tc.name+"/deadline", func(t *testing.T) {
			url, arrived := hangingTSA(t)
			var fellBack int
			ts := tc.make(url, &fellBack)
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			tok, err := ts.Timestamp(ctx, digest[:])
			if !errors.Is(err, context.DeadlineExceeded) || tok != nil {
				t.Fatalf("Timestamp past its deadline: token %v, error %v; want no token and context.DeadlineExceeded", tok != nil, err)
			}
			if fellBack != 0 {
				t.Errorf("OnFallback called %d times on an expired request", fellBack)
			}
			select {
			case <-arrived:
				t.Error("a request whose deadline had passed was sent")
			default:
			}
		})
	}
}

// ignoresContext asks its authority with a context that is never done.
type ignoresContext struct{ a *timestamp.Authority }

func (i ignoresContext) Timestamp(_ context.Context, digest []byte) ([]byte, error) {
	return i.a.Timestamp(context.Background(), digest)
}
