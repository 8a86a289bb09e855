// Package headref computes float reference logits of an MLP head for the
// quantisation report of pkg/zk/head: with ONNX Runtime when it is
// available (pkg/ml/inference), else with the head's pure-Go float64
// evaluation. It is a test reference, kept out of pkg/zk/head so that the verifier side
// (svc-verify) does not link ONNX Runtime.
package headref

import (
	"fmt"

	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/zk/head"
)

// Logits returns the float logits of the ONNX model (bytes model, loaded
// as m) on every corpus vector and the name of what computed them: ONNX
// Runtime (one batched run) when ortLib or the usual places
// (inference.LibraryPath) give a loadable runtime, else m.Eval.
func Logits(model []byte, m *head.Model, corpus [][]float32, ortLib string) ([][]float64, string, error) {
	if len(corpus) == 0 {
		return nil, "", fmt.Errorf("headref: empty corpus")
	}
	path, err := inference.LibraryPath(ortLib)
	if err == nil {
		err = inference.Init(path)
	}
	if err != nil && ortLib != "" {
		return nil, "", fmt.Errorf("headref: %w", err)
	}
	if err == nil {
		d := m.Dims()
		in := make([]float32, 0, len(corpus)*d[0])
		for k, x := range corpus {
			if len(x) != d[0] {
				return nil, "", fmt.Errorf("headref: corpus vector %d has %d values, the model takes %d", k, len(x), d[0])
			}
			in = append(in, x...)
		}
		n, classes := int64(len(corpus)), int64(d[len(d)-1])
		out, err := inference.RunFloat(model, m.Input, []int64{n, int64(d[0])}, in, m.Output, []int64{n, classes})
		if err != nil {
			return nil, "", fmt.Errorf("headref: %w", err)
		}
		ref := make([][]float64, len(corpus))
		for k := range ref {
			ref[k] = make([]float64, classes)
			for j := range ref[k] {
				ref[k][j] = float64(out[int64(k)*classes+int64(j)])
			}
		}
		return ref, "onnxruntime " + inference.Version(), nil
	}
	ref := make([][]float64, len(corpus))
	for k, x := range corpus {
		f, err := m.Eval(x)
		if err != nil {
			return nil, "", err
		}
		ref[k] = f
	}
	return ref, "pure-Go float64", nil
}
