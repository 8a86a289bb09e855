//go:build cgo

package inference_test

import (
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
)

// scaleSession loads a model with an int64 input ids of shape [1, n] and
// two float outputs, Y = 2·ids and Z = 2·ids + 1, whose values say which
// input they were computed from.
func scaleSession(t *testing.T, depth int) *inference.Session {
	t.Helper()
	ortest.Init(t)
	to := int64(onnxmodel.Float)
	m := &onnxmodel.Model{
		Name: "scale",
		Nodes: []onnxmodel.Node{
			{Name: "cast", OpType: "Cast", Inputs: []string{"ids"}, Outputs: []string{"X"}, Attrs: []onnxmodel.Attr{{Name: "to", Int: &to}}},
			{Name: "scale", OpType: "Mul", Inputs: []string{"X", "two"}, Outputs: []string{"Y"}},
			{Name: "shift", OpType: "Add", Inputs: []string{"Y", "one"}, Outputs: []string{"Z"}},
		},
		Inputs: []onnxmodel.ValueInfo{{Name: "ids", ElemType: onnxmodel.Int64, Shape: []int64{1, -1}, DimParams: []string{"", "n"}}},
		Outputs: []onnxmodel.ValueInfo{
			{Name: "Y", ElemType: onnxmodel.Float, Shape: []int64{1, -1}, DimParams: []string{"", "n"}},
			{Name: "Z", ElemType: onnxmodel.Float, Shape: []int64{1, -1}, DimParams: []string{"", "n"}},
		},
		Initializers: []onnxmodel.Tensor{{Name: "two", Dims: []int64{1}, Floats: []float32{2}}, {Name: "one", Dims: []int64{1}, Floats: []float32{1}}},
	}
	s, err := inference.NewSession(m.Marshal(), []string{"ids"}, []string{"Y", "Z"}, inference.Options{Threads: 1, HoldDepth: depth})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// checkHeld fails unless h holds the outputs of ids.
func checkHeld(t *testing.T, h *inference.Held, ids []int64) {
	t.Helper()
	outs := h.Outputs()
	if len(outs) != 2 || outs[0].Name != "Y" || outs[1].Name != "Z" {
		t.Fatalf("outputs %+v, want Y and Z", outs)
	}
	for i, v := range ids {
		if outs[0].F32[i] != float32(2*v) || outs[1].F32[i] != float32(2*v+1) {
			t.Fatalf("ids %v: Y %v Z %v: not this input's outputs", ids, outs[0].F32, outs[1].F32)
		}
	}
	if len(outs[0].F32) != len(ids) {
		t.Fatalf("ids %v: Y has %d values", ids, len(outs[0].F32))
	}
}

// TestHoldKeepsOutputs: a held run's outputs stay that run's while the
// session runs other inputs of the same and other lengths (first run at a
// length, preallocated sets, sets reused after Release); All sees the same
// values as Hold; Release twice is harmless.
func TestHoldKeepsOutputs(t *testing.T) {
	s := scaleSession(t, 2)
	inputs := [][]int64{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10, 11, 12, 13}, {14, 15, 16, 17}, {18, 19, 20}}
	var prev *inference.Held
	var prevIDs []int64
	for round := range 3 {
		for _, ids := range inputs {
			h, err := s.Hold([][]int64{ids})
			if err != nil {
				t.Fatal(err)
			}
			checkHeld(t, h, ids)
			if prev != nil {
				checkHeld(t, prev, prevIDs) // not overwritten by this run
				prev.Release()
				prev.Release()
			}
			if got := s.HeldSets(); got != 1 {
				t.Fatalf("round %d: %d sets held, want 1", round, got)
			}
			var all [][]float32
			err = s.All([][]int64{ids}, func(outs []inference.Output) error {
				for _, o := range outs {
					all = append(all, slices.Clone(o.F32))
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if outs := h.Outputs(); !slices.Equal(all[0], outs[0].F32) || !slices.Equal(all[1], outs[1].F32) {
				t.Fatalf("All %v, Hold %v", all, outs)
			}
			prev, prevIDs = h, ids
		}
	}
	prev.Release()
	if got := s.HeldSets(); got != 0 {
		t.Fatalf("%d sets held after every Release", got)
	}
}

// TestHoldWaitsForRelease: with HoldDepth sets held, Hold waits until one
// is released (from another goroutine), then runs.
func TestHoldWaitsForRelease(t *testing.T) {
	s := scaleSession(t, 2)
	a, err := s.Hold([][]int64{{1, 2}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Hold([][]int64{{3, 4, 5}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *inference.Held)
	go func() {
		c, err := s.Hold([][]int64{{6, 7}})
		if err != nil {
			t.Error(err)
		}
		done <- c
	}()
	select {
	case <-done:
		t.Fatal("a third Hold ran while two sets were held (depth 2)")
	case <-time.After(100 * time.Millisecond):
	}
	var wg sync.WaitGroup
	wg.Go(a.Release)
	c := <-done
	wg.Wait()
	checkHeld(t, b, []int64{3, 4, 5})
	checkHeld(t, c, []int64{6, 7})
	b.Release()
	c.Release()
}

// TestHoldAfterClose: sets held when the session closes stay readable and
// are released without harm; Hold on a closed session is an error.
func TestHoldAfterClose(t *testing.T) {
	s := scaleSession(t, 2)
	for range 2 { // the second run at this length uses a preallocated set
		h, err := s.Hold([][]int64{{1, 2, 3}})
		if err != nil {
			t.Fatal(err)
		}
		h.Release()
	}
	h, err := s.Hold([][]int64{{4, 5, 6}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, h, []int64{4, 5, 6})
	h.Release()
	if _, err := s.Hold([][]int64{{1}}); err == nil {
		t.Fatal("Hold on a closed session succeeded")
	}
}
