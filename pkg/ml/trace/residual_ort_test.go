//go:build cgo

package trace_test

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// TestResidualGenerated: on both generated styles residual mode traces
// production's operators plus, per layer, the attention and feed-forward
// outputs (Linear bias Adds, before the residual sum), the word embedding
// lookup (the position lookup of the fixed-length bert style is a
// constant) and, in the bert style that ends in Softmax, the logits.
func TestResidualGenerated(t *testing.T) {
	for _, style := range modelgen.Styles() {
		m, _ := ortest.Model(t, modelgen.Config{Style: style})
		prod, err := m.TracedNodes(trace.Production)
		if err != nil {
			t.Fatal(err)
		}
		res, err := m.TracedNodes(trace.Residual)
		if err != nil {
			t.Fatal(err)
		}
		var extra []int
		for _, i := range res {
			if !slices.Contains(prod, i) {
				extra = append(extra, i)
			}
		}
		for _, i := range prod {
			if !slices.Contains(res, i) {
				t.Errorf("%s: production operator %s missing from residual mode", style, m.Graph.Nodes[i].Name)
			}
		}
		layers := modelgen.Config{Style: style}.WithDefaults().Layers
		linear, other := 0, 0
		for _, i := range extra {
			n := m.Graph.Nodes[i]
			switch m.Class(i) {
			case profile.Linear:
				linear++
				if n.OpType != "Add" {
					t.Errorf("%s: extra Linear operator %s is a %s, want a bias Add", style, n.Name, n.OpType)
				}
			case profile.Other:
				other++ // embedding lookups
			default:
				t.Errorf("%s: extra operator %s of class %s", style, n.Name, m.Class(i))
			}
		}
		wantLinear, wantOther := 2*layers, 2
		if style == modelgen.StyleBERT {
			wantLinear, wantOther = 2*layers+1, 1
		}
		if linear != wantLinear || other != wantOther {
			t.Errorf("%s: residual mode adds %d Linear and %d Other operators, want %d and %d", style, linear, other, wantLinear, wantOther)
		}
		tr, err := trace.Run(m, []byte("please call jane doe"), trace.Residual)
		if err != nil {
			t.Fatal(err)
		}
		if tr.Mode != trace.Residual || int(tr.OperatorCount) != len(res) {
			t.Fatalf("%s: residual trace mode %s, %d operators, want %d", style, tr.Mode, tr.OperatorCount, len(res))
		}
		if err := tr.Verify(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestResidualKeepsFusions: exposing residual mode's values as outputs
// leaves ONNX Runtime's optimised graph the same, operator for operator,
// as production mode's and the untraced model's (in the bert style 4
// SkipLayerNormalization fusions; exposing the residual sums instead
// would split each into Add and LayerNormalization), while full mode's
// is not.
func TestResidualKeepsFusions(t *testing.T) {
	for _, style := range modelgen.Styles() {
		m, _ := ortest.Model(t, modelgen.Config{Style: style})
		optimised := func(mode string) map[string]int {
			t.Helper()
			names := []string{m.Graph.Outputs[0]}
			if mode != "" {
				nodes, err := m.TracedNodes(mode)
				if err != nil {
					t.Fatal(err)
				}
				for _, i := range nodes {
					if o := m.Graph.Nodes[i].Outputs[0]; o != names[0] {
						names = append(names, o)
					}
				}
			}
			o, err := ort.NewSessionOptions()
			if err != nil {
				t.Fatal(err)
			}
			defer o.Destroy()
			path := filepath.Join(t.TempDir(), "optimised.onnx")
			if err := o.SetOptimizedModelFilePath(path); err != nil {
				t.Fatal(err)
			}
			var inputs []string
			for _, in := range m.Graph.Inputs {
				inputs = append(inputs, in.Name)
			}
			s, err := ort.NewDynamicAdvancedSessionWithONNXData(trace.WithOutputs(m.Bytes, m.Graph, names), inputs, names, o)
			if err != nil {
				t.Fatal(err)
			}
			s.Destroy()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			g, err := trace.ReadGraph(data)
			if err != nil {
				t.Fatal(err)
			}
			count := map[string]int{}
			for _, n := range g.Nodes {
				count[n.OpType]++
			}
			return count
		}
		untraced, prod, res, full := optimised(""), optimised(trace.Production), optimised(trace.Residual), optimised(trace.Full)
		if !maps.Equal(res, prod) || !maps.Equal(res, untraced) {
			t.Errorf("%s: optimised graph in residual mode %v, production %v, untraced %v", style, res, prod, untraced)
		}
		if maps.Equal(full, untraced) {
			t.Errorf("%s: full mode kept every fusion (%v): the test cannot tell", style, full)
		}
		if style == modelgen.StyleBERT && res["SkipLayerNormalization"] == 0 {
			t.Errorf("%s: no SkipLayerNormalization in the optimised graph %v", style, res)
		}
		t.Logf("%s: optimised graph, residual mode: %v", style, res)
	}
}

// TestResidualYieldsProduction: on both generated styles, the production
// trace narrowed from a residual run (Model.Narrow) equals a production
// run's trace bit for bit, records, Merkle root and output, on inputs of
// every length up to truncation: one residual inference gives
// calibration both modes' statistics. Narrowing the other way fails.
func TestResidualYieldsProduction(t *testing.T) {
	words := strings.Fields("please call jane doe at 555 0100 her ssn is 078-05-1120 and the account number is 4111 1111 1111 1111 thanks")
	for _, style := range modelgen.Styles() {
		m, _ := ortest.Model(t, modelgen.Config{Style: style})
		prod, err := trace.NewTracer(m, trace.Production, inference.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer prod.Close()
		res, err := trace.NewTracer(m, trace.Residual, inference.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		full, err := trace.NewTracer(m, trace.Full, inference.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer full.Close()
		fullDiffers := false
		for n := 1; n <= 3*len(words); n += 4 {
			var in []string
			for k := 0; k < n; k++ {
				in = append(in, words[(k*7)%len(words)])
			}
			input := []byte(strings.Join(in, " "))
			want, err := prod.Trace(input)
			if err != nil {
				t.Fatal(err)
			}
			rt, err := res.Trace(input)
			if err != nil {
				t.Fatal(err)
			}
			got, err := m.Narrow(rt, trace.Production)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s, %d words: production trace narrowed from residual\n%+v\nwant\n%+v", style, n, got, want)
			}
			if _, err := m.Narrow(want, trace.Residual); err == nil {
				t.Fatalf("%s: narrowing a production trace to residual mode succeeded", style)
			}
			ft, err := full.Trace(input)
			if err != nil {
				t.Fatal(err)
			}
			if nf, err := m.Narrow(ft, trace.Production); err != nil {
				t.Fatal(err)
			} else if !reflect.DeepEqual(nf, want) {
				fullDiffers = true
			}
		}
		if !fullDiffers {
			t.Errorf("%s: the production trace narrowed from full mode (fusions split) equals production's too: the comparison cannot tell", style)
		}
	}
}
