package modelgen_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// TestVariant: a variant keeps the graph (same nodes, so the same traced
// operators) and changes the numbers; a variant that changes nothing
// gives the base model's bytes.
func TestVariant(t *testing.T) {
	for _, style := range modelgen.Styles() {
		base, _, err := modelgen.Generate(modelgen.Config{Style: style})
		if err != nil {
			t.Fatal(err)
		}
		same, _, err := modelgen.Generate(modelgen.Config{Style: style, Variant: &modelgen.Variant{Layer: 0}})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(base, same) {
			t.Errorf("%s: an empty variant changed the model", style)
		}
		bg, err := trace.ReadGraph(base)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []modelgen.Variant{{Layer: 1, Epsilon: 1e-6, Seed: 3}, {Layer: -1, Quantize: true}} {
			b, _, err := modelgen.Generate(modelgen.Config{Style: style, Variant: &v})
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(b, base) {
				t.Errorf("%s %+v: the variant is the base model", style, v)
			}
			g, err := trace.ReadGraph(b)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(g.Nodes, bg.Nodes, func(a, b trace.Node) bool {
				return a.Name == b.Name && a.OpType == b.OpType && slices.Equal(a.Inputs, b.Inputs)
			}) {
				t.Errorf("%s %+v: the variant's graph differs", style, v)
			}
		}
	}
}
