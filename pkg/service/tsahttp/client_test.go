package tsahttp_test

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/service/tsahttp"
)

func TestClientAndChain(t *testing.T) {
	a, err := timestamp.InitAuthority(t.TempDir(), timestamp.AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	good := httptest.NewServer(tsahttp.Handler(a))
	defer good.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/timestamp-reply")
		w.Write([]byte("not DER"))
	}))
	defer garbage.Close()

	digest := sha256.Sum256([]byte("signature bytes"))
	tok, err := (&tsahttp.Client{URL: good.URL}).Timestamp(context.Background(), digest[:])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := timestamp.Verify(tok, digest[:], timestamp.VerifyOptions{Roots: []*x509.Certificate{a.Root()}}); err != nil {
		t.Fatalf("remote token does not verify: %v", err)
	}
	if _, err := (&tsahttp.Client{URL: down.URL}).Timestamp(context.Background(), digest[:]); err == nil {
		t.Fatal("503 accepted")
	}
	if _, err := (&tsahttp.Client{URL: garbage.URL}).Timestamp(context.Background(), digest[:]); !errors.Is(err, timestamp.ErrMalformed) {
		t.Fatalf("garbage: %v", err)
	}
	chain := timestamp.Chain{&tsahttp.Client{URL: down.URL}, &tsahttp.Client{URL: garbage.URL}, &tsahttp.Client{URL: good.URL}}
	if _, err := chain.Timestamp(context.Background(), digest[:]); err != nil {
		t.Fatalf("chain did not fall through to the working authority: %v", err)
	}
	if _, err := chain[:2].Timestamp(context.Background(), digest[:]); err == nil {
		t.Fatal("a chain of failing authorities succeeded")
	}
	resp, err := http.Get(good.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
}
