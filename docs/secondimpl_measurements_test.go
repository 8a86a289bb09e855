package docs_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
)

// TestSecondImplMeasurements: the measurements file `svc calibrate run
// --measurements-out` writes for a bert-style and a torch-style model (every
// trace mode, residual included) is read by the second implementation from
// FORMATS.md "Calibration measurements" alone, and its nodes, classes and
// per-mode selections are the ones BOUNDED.md's rules select from each model
// (testdata/secondimpl/onnxsel.py). A file whose residual selection, classes
// or node order another implementation would not reproduce is refused, as
// `svc calibrate merge` refuses files that disagree with each other.
func TestSecondImplMeasurements(t *testing.T) {
	py := python3(t)
	ortLib, err := inference.LibraryPath("")
	if err != nil {
		t.Skipf("calibration needs ONNX Runtime (make ort): %v", err)
	}
	dir := t.TempDir()
	s := &svcRunner{t: t, dir: dir, env: []string{"SVC_ORT_LIB=" + ortLib}}
	var models []string
	for _, cfg := range []modelgen.Config{{Layers: 1}, {Style: modelgen.StyleTorch, Layers: 1}} {
		name := "bert"
		if cfg.Style != "" {
			name = cfg.Style
		}
		if err := modelgen.WriteDir(filepath.Join(dir, name), cfg); err != nil {
			t.Fatal(err)
		}
		models = append(models, filepath.Join(dir, name, "model.onnx"))
	}
	s.run("calibrate", "run", "--model", filepath.Join(dir, "bert"), "--model", filepath.Join(dir, "torch"),
		"--passes", "2", "--out", filepath.Join(dir, "profile.json"), "--measurements-out", filepath.Join(dir, "m.json"))
	orig := mustRead(t, filepath.Join(dir, "m.json"))

	check := func(name string, data []byte) (bool, string) {
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(py, append([]string{secondImplSelect, "measurements", p}, models...)...).Output()
		var r struct {
			OK     bool   `json:"ok"`
			Error  string `json:"error"`
			Models []struct {
				Checked        bool           `json:"checked"`
				OperatorCounts map[string]int `json:"operator_counts"`
			} `json:"models"`
		}
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("%s: onnxsel.py measurements: %v: %s", name, err, out)
		}
		if r.OK {
			for _, m := range r.Models {
				if !m.Checked || m.OperatorCounts["residual"] == 0 {
					t.Errorf("%s: a model not checked against its graph, or without residual mode: %+v", name, m)
				}
			}
		}
		return r.OK, r.Error
	}
	if ok, msg := check("as written", orig); !ok {
		t.Fatalf("the second implementation refuses svc's measurements: %s", msg)
	}
	mutate := func(edit func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(orig, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	meta := calibration.Meta{ProfileID: "acme/pii-class/v1.0.0", ModelClass: "pii", Architecture: "bert-like", Date: time.Now()}
	other := mutate(func(m map[string]any) { m["machine"].(map[string]any)["cpu"] = "another machine" })
	if _, _, err := calibration.MergeProfile([][]byte{orig, other}, []string{"orig", "other"}, meta, calibration.Options{}); err != nil {
		t.Fatalf("svc calibrate merge of two machines' files: %v", err)
	}
	model := func(m map[string]any, i int) map[string]any { return m["models"].([]any)[i].(map[string]any) }
	for _, tc := range []struct {
		name, want string
		edit       func(m map[string]any)
	}{
		{"residual selection shifted", "selected.residual", func(m map[string]any) {
			sel := model(m, 1)["selected"].(map[string]any)["residual"].([]any)
			sel[0] = sel[0].(float64) - 1
		}},
		{"a class changed", "classes", func(m map[string]any) {
			cl := model(m, 0)["classes"].([]any)
			for i, c := range cl {
				if c == "LayerNorm" {
					cl[i] = "Other"
					break
				}
			}
		}},
		{"two nodes swapped", "nodes", func(m map[string]any) {
			n := model(m, 0)["nodes"].([]any)
			n[1], n[2] = n[2], n[1]
		}},
		{"residual count without its selection", "selected", func(m map[string]any) {
			delete(model(m, 0)["selected"].(map[string]any), "residual")
		}},
		{"an unknown member", "unknown member", func(m map[string]any) { m["note"] = "x" }},
		{"another drift definition", "drift_definition", func(m map[string]any) { m["drift_definition"] = "svc.drift/v1" }},
	} {
		bad := mutate(func(m map[string]any) {
			tc.edit(m)
			m["machine"].(map[string]any)["cpu"] = "another machine"
		})
		ok, msg := check(tc.name, bad)
		if ok || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: second implementation ok=%v %q, want refused naming %s", tc.name, ok, msg, tc.want)
		}
		// svc refuses it too, merged with the file as written
		if _, _, err := calibration.MergeProfile([][]byte{orig, bad}, []string{"orig", tc.name}, meta, calibration.Options{}); !errors.Is(err, calibration.ErrMeasurements) {
			t.Errorf("%s: svc calibrate merge: %v, want %v", tc.name, err, calibration.ErrMeasurements)
		}
	}
}
