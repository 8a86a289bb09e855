package server

import (
	"bytes"
	"errors"
	"testing"
)

// TestKeptBodies: a close's kept record bodies come back in order, byte
// for byte (empty ones included), each capped so that appending to one
// cannot overwrite the next, and an error from fn stops the walk.
func TestKeptBodies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bodies [][]byte
	}{
		{"none", nil},
		{"one", [][]byte{[]byte(`{"a":1}`)}},
		{"several with an empty one", [][]byte{[]byte(`{"a":1}`), {}, []byte(`{"b":"xyz"}`), []byte(`{}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &keptBodies{}
			for _, b := range tc.bodies {
				k.add(b)
			}
			var got [][]byte
			if err := k.each(func(b []byte) error {
				got = append(got, b)
				_ = append(b, 'X') // must not reach the next body
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.bodies) {
				t.Fatalf("%d bodies, want %d", len(got), len(tc.bodies))
			}
			for i := range got {
				if !bytes.Equal(got[i], tc.bodies[i]) {
					t.Fatalf("body %d = %q, want %q", i, got[i], tc.bodies[i])
				}
			}
		})
	}
	k := &keptBodies{}
	k.add([]byte("a"))
	k.add([]byte("b"))
	stop := errors.New("stop")
	n := 0
	if err := k.each(func([]byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("each after an error: %v, %d calls", err, n)
	}
}
