package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzIdempotencyKey: the Idempotency-Key header is accepted exactly when
// it is one value of 1-128 characters of [A-Za-z0-9._:-], and refused with
// a 400 naming the header otherwise; nothing panics.
func FuzzIdempotencyKey(f *testing.F) {
	for _, s := range []string{"", "k", "close:2f1c-4a", "a b", "ü", "\x00", string(make([]byte, 129)), "k\r\nX: y"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, key string, twice bool) {
		r := httptest.NewRequest("POST", "/api/v1/runs/x/close", nil)
		r.Header["Idempotency-Key"] = []string{key}
		if twice {
			r.Header["Idempotency-Key"] = append(r.Header["Idempotency-Key"], key)
		}
		got, err := idempotencyKey(r)
		valid := !twice && len(key) >= 1 && len(key) <= 128
		for i := 0; valid && i < len(key); i++ {
			c := key[i]
			valid = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == ':' || c == '-'
		}
		var he *httpError
		switch {
		case valid && (err != nil || got != key):
			t.Fatalf("key %q refused: %v", key, err)
		case !valid && (!errors.As(err, &he) || he.status != http.StatusBadRequest || he.field != "Idempotency-Key"):
			t.Fatalf("key %q (twice %v): %q, %v; want 400 naming Idempotency-Key", key, twice, got, err)
		}
	})
}
