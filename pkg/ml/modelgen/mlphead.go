package modelgen

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
)

// StyleMLPHead is the style of [MLPHead]: a small classifier head (dense
// layers with ReLU) over a pooled embedding, the model a
// verifiable_inference proof covers.
const StyleMLPHead = "mlp-head"

// DefaultMLPHeadDims returns the widths of the default head: a 768-wide
// embedding, 256 hidden units, 2 classes (197K parameters). Each call
// returns a new slice, the caller's to change.
func DefaultMLPHeadDims() []int { return []int{768, 256, 2} }

// Bounds of a generated head.
const (
	mlpMaxLayers = 8
	mlpMaxWidth  = 4096
	mlpMaxParams = 263_000
)

// MLPHeadConfig configures [MLPHead].
type MLPHeadConfig struct {
	// Dims are the layer widths: input, hidden..., classes (at least 2
	// widths; nil takes DefaultMLPHeadDims()).
	Dims []int
	// Seed selects the weights (0 is 1).
	Seed int64
}

// ParseDims parses comma-separated layer widths such as "768,256,2".
func ParseDims(s string) ([]int, error) {
	var dims []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("modelgen: dims %q: %q is not an integer", s, f)
		}
		dims = append(dims, n)
	}
	return dims, nil
}

func (c MLPHeadConfig) withDefaults() MLPHeadConfig {
	if c.Dims == nil {
		c.Dims = DefaultMLPHeadDims()
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

func (c MLPHeadConfig) validate() error {
	d := c.Dims
	if len(d) < 2 || len(d) > mlpMaxLayers+1 {
		return fmt.Errorf("modelgen: mlp-head needs 2 to %d widths (input, hidden..., classes), got %d", mlpMaxLayers+1, len(d))
	}
	params := 0
	for i, w := range d {
		if w < 1 || w > mlpMaxWidth {
			return fmt.Errorf("modelgen: mlp-head width %d is %d (1 to %d)", i, w, mlpMaxWidth)
		}
		if i > 0 {
			params += d[i-1]*w + w
		}
	}
	if d[len(d)-1] < 2 {
		return errors.New("modelgen: mlp-head needs at least 2 classes")
	}
	if params > mlpMaxParams {
		return fmt.Errorf("modelgen: mlp-head %v has %d parameters (at most %d)", d, params, mlpMaxParams)
	}
	return nil
}

// MLPHead returns an ONNX model shaped like torch.onnx.export (opset 17,
// dynamic batch) of nn.Sequential(Linear, ReLU, ..., Linear): input
// "input" float [batch_size, Dims[0]], for layer k a Gemm "/<2k>/Gemm"
// (transB=1, weight "<2k>.weight" [out, in], bias "<2k>.bias") and, but
// after the last, a Relu "/<2k+1>/Relu"; output "logits" float
// [batch_size, classes]. Weights and biases are drawn like torch's
// default Linear initialisation, uniform in ±1/sqrt(in), from a PCG
// seeded with Seed: the same config always gives the same bytes.
func MLPHead(cfg MLPHeadConfig) ([]byte, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	d := cfg.Dims
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x6d6c70))
	m := onnxmodel.Model{
		Name:    fmt.Sprintf("modelgen-mlp-head-%s-seed%d", joinInts(d), cfg.Seed),
		Opset:   17,
		Inputs:  []onnxmodel.ValueInfo{{Name: "input", ElemType: onnxmodel.Float, Shape: []int64{-1, int64(d[0])}, DimParams: []string{"batch_size", ""}}},
		Outputs: []onnxmodel.ValueInfo{{Name: "logits", ElemType: onnxmodel.Float, Shape: []int64{-1, int64(d[len(d)-1])}, DimParams: []string{"batch_size", ""}}},
	}
	one := float32(1)
	transB := int64(1)
	x := "input"
	for k := 0; k+1 < len(d); k++ {
		in, out := d[k], d[k+1]
		bound := 1 / math.Sqrt(float64(in))
		w := make([]float32, in*out)
		for i := range w {
			w[i] = float32((rng.Float64()*2 - 1) * bound)
		}
		b := make([]float32, out)
		for i := range b {
			b[i] = float32((rng.Float64()*2 - 1) * bound)
		}
		idx := 2 * k
		wn, bn := fmt.Sprintf("%d.weight", idx), fmt.Sprintf("%d.bias", idx)
		m.Initializers = append(m.Initializers,
			onnxmodel.Tensor{Name: wn, Dims: []int64{int64(out), int64(in)}, Floats: w},
			onnxmodel.Tensor{Name: bn, Dims: []int64{int64(out)}, Floats: b})
		y := fmt.Sprintf("/%d/Gemm_output_0", idx)
		if k+2 == len(d) {
			y = "logits"
		}
		m.Nodes = append(m.Nodes, onnxmodel.Node{Name: fmt.Sprintf("/%d/Gemm", idx), OpType: "Gemm", Inputs: []string{x, wn, bn}, Outputs: []string{y},
			Attrs: []onnxmodel.Attr{{Name: "alpha", Float: &one}, {Name: "beta", Float: &one}, {Name: "transB", Int: &transB}}})
		x = y
		if k+2 < len(d) {
			r := fmt.Sprintf("/%d/Relu_output_0", idx+1)
			m.Nodes = append(m.Nodes, onnxmodel.Node{Name: fmt.Sprintf("/%d/Relu", idx+1), OpType: "Relu", Inputs: []string{x}, Outputs: []string{r}})
			x = r
		}
	}
	return m.Marshal(), nil
}

// WriteMLPHead writes [MLPHead]'s model to dir/model.onnx, creating dir.
func WriteMLPHead(dir string, cfg MLPHeadConfig) error {
	b, err := MLPHead(cfg)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "model.onnx"), b, 0o644)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, "x")
}
