package docs_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// TestSecondImplTraces: traces svc makes with ONNX Runtime, in every mode and
// for both generated styles, are what an auditor with only docs/ expects:
// testdata/secondimpl/onnxsel.py selects the same nodes in the same order
// (BOUNDED.md "Which nodes are traced, exactly"), finds each record's
// index, node, op_type and class, and recomputes the Merkle root from the
// records' RFC 8785 forms (BOUNDED.md "The trace"). A residual trace with
// two operators swapped, or one dropped, is refused.
func TestSecondImplTraces(t *testing.T) {
	py := python3(t)
	ortLib, err := inference.LibraryPath("")
	if err != nil {
		t.Skipf("tracing needs ONNX Runtime (make ort): %v", err)
	}
	if err := inference.Init(ortLib); err != nil {
		t.Fatalf("ONNX Runtime %s: %v", ortLib, err)
	}
	dir := t.TempDir()
	check := func(name string, tr *trace.Trace, model string) (bool, string) {
		t.Helper()
		b, err := json.Marshal(tr)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".trace.json")
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(py, secondImplSelect, "trace", p, model).Output()
		if ee, ok := err.(*exec.ExitError); ok && len(out) == 0 {
			t.Fatalf("%s: onnxsel.py trace: %v\n%s", name, err, ee.Stderr)
		}
		var r struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("%s: onnxsel.py trace: %v: %s", name, err, out)
		}
		return r.OK, r.Error
	}
	for _, cfg := range []modelgen.Config{{Layers: 1}, {Style: modelgen.StyleTorch, Layers: 1}} {
		style := "bert"
		if cfg.Style != "" {
			style = cfg.Style
		}
		md := filepath.Join(dir, style)
		if err := modelgen.WriteDir(md, cfg); err != nil {
			t.Fatal(err)
		}
		m, err := trace.LoadModel(md)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range trace.Modes() {
			tr, err := trace.Run(m, []byte("patient john doe was seen on tuesday"), mode)
			if err != nil {
				t.Fatalf("%s %s: %v", style, mode, err)
			}
			if ok, msg := check(style+"-"+mode, tr, filepath.Join(md, "model.onnx")); !ok {
				t.Errorf("%s %s mode: the second implementation refuses svc's trace: %s", style, mode, msg)
			}
			if mode != trace.Residual {
				continue
			}
			swapped := *tr
			swapped.Operators = append([]trace.Operator(nil), tr.Operators...)
			swapped.Operators[1], swapped.Operators[2] = swapped.Operators[2], swapped.Operators[1]
			swapped.Operators[1].Index, swapped.Operators[2].Index = 1, 2
			if swapped.MerkleRoot, err = trace.Root(swapped.Operators); err != nil {
				t.Fatal(err)
			}
			if ok, msg := check(style+"-swapped", &swapped, filepath.Join(md, "model.onnx")); ok || !strings.Contains(msg, "operators[1]") {
				t.Errorf("%s: two residual operators swapped: ok=%v %q", style, ok, msg)
			}
			dropped := *tr
			dropped.Operators = append([]trace.Operator(nil), tr.Operators[:len(tr.Operators)-1]...)
			dropped.OperatorCount--
			if dropped.MerkleRoot, err = trace.Root(dropped.Operators); err != nil {
				t.Fatal(err)
			}
			if ok, msg := check(style+"-dropped", &dropped, filepath.Join(md, "model.onnx")); ok || !strings.Contains(msg, "selects") {
				t.Errorf("%s: the logits dropped from a residual trace: ok=%v %q", style, ok, msg)
			}
		}
	}
}
