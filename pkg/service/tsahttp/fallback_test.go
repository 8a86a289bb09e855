package tsahttp_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/service/tsahttp"
)

// A failing external authority falls back to the built-in one only through
// Fallback, and every fallback is reported; the token names the authority
// that signed it.
func TestFallback(t *testing.T) {
	builtin, err := timestamp.InitAuthority(t.TempDir(), timestamp.AuthorityOptions{Name: "svc built-in TSA"})
	if err != nil {
		t.Fatal(err)
	}
	external, err := timestamp.InitAuthority(t.TempDir(), timestamp.AuthorityOptions{Name: "External TSA"})
	if err != nil {
		t.Fatal(err)
	}
	healthy := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !healthy {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		tsahttp.Handler(external).ServeHTTP(w, r)
	}))
	defer srv.Close()
	digest := sha256.Sum256([]byte("vpec signature"))
	client := &tsahttp.Client{URL: srv.URL}

	var reports []error
	f := &timestamp.Fallback{Primary: timestamp.Chain{client}, Secondary: builtin, OnFallback: func(err error) { reports = append(reports, err) }}
	signer := func(tok []byte) string {
		info, err := timestamp.ParseResponse(tok)
		if err != nil {
			t.Fatal(err)
		}
		return info.Signer.Subject.CommonName
	}
	tok, err := f.Timestamp(context.Background(), digest[:])
	if err != nil || len(reports) != 0 || signer(tok) != external.Certificate().Subject.CommonName {
		t.Fatalf("healthy external TSA: %v, %d fallbacks", err, len(reports))
	}

	healthy = false
	// Without Fallback (no --tsa-fallback-builtin) the failure stands.
	if _, err := (timestamp.Chain{client}).Timestamp(context.Background(), digest[:]); err == nil {
		t.Fatal("a failing external TSA gave a token")
	}
	for i := 1; i <= 2; i++ {
		tok, err := f.Timestamp(context.Background(), digest[:])
		if err != nil {
			t.Fatal(err)
		}
		if len(reports) != i || !errors.Is(reports[i-1], timestamp.ErrFallbackUsed) {
			t.Fatalf("fallback %d reported %d times: %v", i, len(reports), reports)
		}
		if got := signer(tok); got != builtin.Certificate().Subject.CommonName {
			t.Fatalf("fallback token signed by %q", got)
		}
	}

	// Both failing: the error names both.
	broken := &timestamp.Fallback{Primary: timestamp.Chain{client}, Secondary: timestamp.Chain{}, OnFallback: func(error) { t.Fatal("fallback reported without a token") }}
	if _, err := broken.Timestamp(context.Background(), digest[:]); err == nil {
		t.Fatal("no authority answered, yet a token")
	}
}
