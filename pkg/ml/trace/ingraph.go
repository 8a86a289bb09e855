package trace

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// statNames are the two graph outputs WithStats adds for value k: the
// float64 mean and mean of squares of the value's elements.
func statNames(g *Graph, k int) (mean, meanSq string) {
	base := fmt.Sprintf("svc.stats.%d", k)
	for g.ElemType(base+".mean") != TypeUnknown || g.ElemType(base+".meansq") != TypeUnknown {
		base += "_"
	}
	return base + ".mean", base + ".meansq"
}

// WithStats returns the model with, for each named float value, nodes
// that compute its mean and its mean of squares in float64 inside the
// graph (Cast to DOUBLE, ReduceMean over every axis; Mul, ReduceMean), and
// those two one-element tensors as graph outputs instead of the value:
// ONNX Runtime returns 16 bytes per traced operator instead of the
// tensor. The statistics are the trace's (mean and RMS of the output,
// summed in float64), summed in ONNX Runtime's order. It returns the
// added output names, two per value, in order.
func WithStats(model []byte, g *Graph, names []string) ([]byte, []string) {
	var nodes, outs []byte
	var added []string
	node := func(name, op string, in []string, out string, attrs ...[]byte) {
		var n []byte
		for _, v := range in {
			n = protowire.AppendBytes(protowire.AppendTag(n, 1, protowire.BytesType), []byte(v))
		}
		n = protowire.AppendBytes(protowire.AppendTag(n, 2, protowire.BytesType), []byte(out))
		n = protowire.AppendBytes(protowire.AppendTag(n, 3, protowire.BytesType), []byte(name))
		n = protowire.AppendBytes(protowire.AppendTag(n, 4, protowire.BytesType), []byte(op))
		for _, a := range attrs {
			n = protowire.AppendBytes(protowire.AppendTag(n, 5, protowire.BytesType), a)
		}
		nodes = protowire.AppendBytes(protowire.AppendTag(nodes, 1, protowire.BytesType), n)
	}
	intAttr := func(name string, v int64) []byte {
		a := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte(name))
		a = protowire.AppendVarint(protowire.AppendTag(a, 3, protowire.VarintType), uint64(v))
		return protowire.AppendVarint(protowire.AppendTag(a, 20, protowire.VarintType), 2) // AttributeProto.INT
	}
	output := func(name string) {
		tensor := protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), TypeDouble)
		typ := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), tensor)
		vi := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte(name))
		vi = protowire.AppendBytes(protowire.AppendTag(vi, 2, protowire.BytesType), typ)
		outs = protowire.AppendBytes(protowire.AppendTag(outs, 12, protowire.BytesType), vi)
	}
	for k, v := range names {
		mean, meanSq := statNames(g, k)
		d, sq := mean+".f64", meanSq+".sq"
		node(d, "Cast", []string{v}, d, intAttr("to", TypeDouble))
		node(mean, "ReduceMean", []string{d}, mean)
		node(sq, "Mul", []string{d, d}, sq)
		node(meanSq, "ReduceMean", []string{sq}, meanSq)
		output(mean)
		output(meanSq)
		added = append(added, mean, meanSq)
	}
	out := append([]byte(nil), model...)
	if len(names) == 0 {
		return out, nil
	}
	return protowire.AppendBytes(protowire.AppendTag(out, 7, protowire.BytesType), append(nodes, outs...)), added
}

// statsFromGraph turns the two one-element outputs of WithStats into a
// mean and an RMS.
func statsFromGraph(mean, meanSq []float64) (float64, float64) {
	if len(mean) != 1 || len(meanSq) != 1 {
		return math.NaN(), math.NaN()
	}
	return mean[0], math.Sqrt(meanSq[0])
}
