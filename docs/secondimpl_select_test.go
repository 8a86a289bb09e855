package docs_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

const secondImplSelect = "../testdata/secondimpl/onnxsel.py"

type pySelection struct {
	File       string   `json:"file"`
	Error      string   `json:"error"`
	Classes    []string `json:"classes"`
	Full       []int    `json:"full"`
	Production []int    `json:"production"`
	Residual   []int    `json:"residual"`
}

// TestSecondImplTraceSelection: testdata/secondimpl/onnxsel.py, written from
// docs/BOUNDED.md alone (operator classes, the trace's float-output rule, the
// three trace modes and the numbered residual rule), gives every node of a
// generated model the class trace.Classes gives, and selects for each mode
// exactly the nodes trace.Selected selects, in the same order: what an
// auditor replaying a trace must reproduce. Models of both styles, several
// shapes, a substituted-weights variant (float32 weights instead of
// float16 plus Cast), the bert style without its final Softmax and the
// torch style with one appended.
func TestSecondImplTraceSelection(t *testing.T) {
	py := python3(t)
	dir := t.TempDir()
	cfgs := map[string]modelgen.Config{
		"bert":             {},
		"bert-l1-h32-c3":   {Layers: 1, Hidden: 32, Heads: 2, Classes: 3, SeqLen: 16},
		"bert-l3":          {Layers: 3, Seed: 7},
		"bert-variant":     {Variant: &modelgen.Variant{Layer: 0, Epsilon: 1e-3, Seed: 2}},
		"torch":            {Style: modelgen.StyleTorch},
		"torch-l1-h32-c3":  {Style: modelgen.StyleTorch, Layers: 1, Hidden: 32, Heads: 2, Classes: 3, SeqLen: 16},
		"torch-l3":         {Style: modelgen.StyleTorch, Layers: 3, Seed: 7},
		"torch-variant-q8": {Style: modelgen.StyleTorch, Variant: &modelgen.Variant{Layer: -1, Quantize: true, Seed: 3}},
	}
	var paths []string
	for name, cfg := range cfgs {
		files, err := modelgen.Files(cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := filepath.Join(dir, name+".onnx")
		if err := os.WriteFile(p, files["model.onnx"], 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	// The second implementation edits the graphs itself: a bert-style model
	// returning logits, a torch-style one returning probabilities.
	for _, e := range [][3]string{
		{"strip-softmax", "bert", "bert-logits"},
		{"strip-softmax", "bert-l1-h32-c3", "bert-l1-h32-c3-logits"},
		{"add-softmax", "torch", "torch-softmax"},
		{"add-softmax", "torch-l1-h32-c3", "torch-l1-h32-c3-softmax"},
	} {
		out := filepath.Join(dir, e[2]+".onnx")
		if b, err := exec.Command(py, secondImplSelect, e[0], filepath.Join(dir, e[1]+".onnx"), out).CombinedOutput(); err != nil {
			t.Fatalf("onnxsel.py %s: %v\n%s", e[0], err, b)
		}
		paths = append(paths, out)
	}
	slices.Sort(paths)

	out := selectBatch(t, py, paths)
	got := map[string]pySelection{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var s pySelection
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			t.Fatalf("onnxsel.py output %q: %v", sc.Text(), err)
		}
		got[s.File] = s
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".onnx")
		s, ok := got[p]
		if !ok || s.Error != "" {
			t.Errorf("%s: second implementation gave no selection (%s)", name, s.Error)
			continue
		}
		g, err := trace.ReadGraph(mustRead(t, p))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		classes := trace.Classes(g)
		if !slices.Equal(classes, s.Classes) {
			for i := range min(len(classes), len(s.Classes)) {
				if classes[i] != s.Classes[i] {
					t.Errorf("%s: node %d (%s %s): trace.Classes %s, second implementation %s", name, i,
						g.Nodes[i].OpType, trace.NodeID(g.Nodes[i]), classes[i], s.Classes[i])
				}
			}
			if len(classes) != len(s.Classes) {
				t.Errorf("%s: %d classes, second implementation %d", name, len(classes), len(s.Classes))
			}
		}
		for mode, want := range map[string][]int{trace.Full: s.Full, trace.Production: s.Production, trace.Residual: s.Residual} {
			all, err := trace.Selected(g, classes, mode)
			if err != nil {
				t.Fatalf("%s %s: %v", name, mode, err)
			}
			// "Then, as in every mode, only nodes with a 32-bit float
			// output are kept."
			sel := slices.DeleteFunc(all, func(i int) bool { return !g.Traceable(i) })
			if !slices.Equal(sel, want) {
				t.Errorf("%s %s mode: trace.Selected %d nodes %v\nsecond implementation %d nodes %v\n%s", name, mode,
					len(sel), sel, len(want), want, describeDiff(g, sel, want))
			}
		}
	}
}

// describeDiff names the nodes one selection has and the other lacks.
func describeDiff(g *trace.Graph, a, b []int) string {
	var out []string
	for _, i := range a {
		if !slices.Contains(b, i) {
			out = append(out, "only Go: "+g.Nodes[i].OpType+" "+trace.NodeID(g.Nodes[i]))
		}
	}
	for _, i := range b {
		if !slices.Contains(a, i) {
			out = append(out, "only Python: "+g.Nodes[i].OpType+" "+trace.NodeID(g.Nodes[i]))
		}
	}
	return strings.Join(out, "\n")
}

// selectBatch runs the second implementation's selection on the ONNX
// models at paths (onnxsel.py select-batch) and returns its JSON output.
func selectBatch(t *testing.T, py string, paths []string) []byte {
	t.Helper()
	cmd := exec.Command(py, secondImplSelect, "select-batch")
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\n") + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("onnxsel.py select-batch: %v\n%s", err, stderr.String())
	}
	return out
}
