package conditions

import (
	"errors"
	"math"
	"testing"
)

// TestQuantizeScore pins the fixed-point mapping of docs/PROOFS.md.
func TestQuantizeScore(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want uint32
	}{
		{0, 0},
		{math.SmallestNonzeroFloat64, 0},
		{0x1p-32, 1},
		{math.Nextafter(0x1p-32, 0), 0},
		{0.25, 1 << 30},
		{0.5, 1 << 31},
		{math.Nextafter(0.5, 0), 1<<31 - 1},
		{math.Nextafter(0.5, 1), 1 << 31},
		{0.3, 1288490188}, // 0.3·2^32 = 1288490188.8
		{math.Nextafter(1, 0), MaxValue},
		{1, MaxValue},
	} {
		got, err := QuantizeScore(tc.p)
		if err != nil || got != tc.want {
			t.Errorf("Q(%v) = %d, %v; want %d", tc.p, got, err, tc.want)
		}
	}
	for _, p := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), -0x1p-1074, math.Nextafter(1, 2), 2} {
		if _, err := QuantizeScore(p); !errors.Is(err, ErrScore) {
			t.Errorf("Q(%v): %v, want ErrScore", p, err)
		}
	}
}

// TestScoreBelow: the quantised verdict at and around the threshold. It
// never passes a score at or above the threshold; just below a threshold
// off the 2^-32 grid it fails (the documented, conservative disagreement).
func TestScoreBelow(t *testing.T) {
	for _, tc := range []struct {
		score, threshold float64
		want             bool
	}{
		{0.5, 0.5, false},
		{math.Nextafter(0.5, 0), 0.5, true},
		{math.Nextafter(0.5, 1), 0.5, false},
		{0, 0.5, true},
		{1, 0.5, false},
		{1, 1, false},
		{math.Nextafter(1, 0), 1, false}, // Q(1) is clamped to 2^32-1
		{0.5, 1, true},
		{0.3, 0.3, false},
		{math.Nextafter(0.3, 0), 0.3, false}, // float says pass: within 2^-32 below a threshold off the grid
		{math.Nextafter(0.3, 1), 0.3, false},
		{1288490188.0 / (1 << 32), 0.3, false},
		{1288490187.0 / (1 << 32), 0.3, true},
	} {
		got, err := ScoreBelow(tc.score, tc.threshold)
		if err != nil || got != tc.want {
			t.Errorf("ScoreBelow(%v, %v) = %v, %v; want %v", tc.score, tc.threshold, got, err, tc.want)
		}
		if got && !(tc.score < tc.threshold) {
			t.Errorf("ScoreBelow(%v, %v) passes a score the float comparison fails", tc.score, tc.threshold)
		}
	}
	if _, err := ScoreBelow(math.NaN(), 0.5); !errors.Is(err, ErrScore) {
		t.Fatalf("NaN score: %v", err)
	}
}

// FuzzScoreBelow: the quantised verdict implies the float one, and the two
// disagree only within 2^-32 below the threshold.
func FuzzScoreBelow(f *testing.F) {
	f.Add(0.5, 0.5)
	f.Add(0.3, 0.3)
	f.Add(math.Nextafter(0.3, 0), 0.3)
	f.Fuzz(func(t *testing.T, s, th float64) {
		got, err := ScoreBelow(s, th)
		if err != nil {
			if !errors.Is(err, ErrScore) {
				t.Fatal(err)
			}
			return
		}
		if got && !(s < th) {
			t.Fatalf("pass for %v >= %v", s, th)
		}
		if !got && s < th && th-s >= 0x1p-32 {
			t.Fatalf("fail for %v, more than 2^-32 below %v", s, th)
		}
	})
}
