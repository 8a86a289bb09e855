package server

import (
	"testing"
	"time"
)

// TestIntegrationPending: entries added out of index order are covered in
// index order, each once, and the tracked set stays bounded.
func TestIntegrationPending(t *testing.T) {
	var g integration
	t0 := time.Unix(0, 0)
	for _, i := range []uint64{2, 0, 3, 1} {
		g.add(i, t0.Add(time.Duration(i)*time.Second))
	}
	for _, c := range []struct {
		size uint64
		want []int64 // seconds of the covered append times
	}{
		{0, nil},
		{2, []int64{0, 1}},
		{2, nil},
		{10, []int64{2, 3}},
	} {
		got := g.covered(c.size)
		if len(got) != len(c.want) {
			t.Fatalf("covered(%d) = %v, want %v", c.size, got, c.want)
		}
		for i, at := range got {
			if at.Unix() != c.want[i] {
				t.Errorf("covered(%d)[%d] = %v, want %ds", c.size, i, at, c.want[i])
			}
		}
	}
	for i := range uint64(maxPendingIntegration + 10) {
		g.add(i, t0)
	}
	if n := len(g.pending); n != maxPendingIntegration {
		t.Errorf("%d entries tracked, want the bound %d", n, maxPendingIntegration)
	}
}
