package calibration

import (
	"math"

	"github.com/svc-gov/svc/pkg/ml/trace"
)

// unitRoundoff is u = 2^-24, the unit roundoff of IEEE-754 binary32.
const unitRoundoff = 1.0 / (1 << 24)

// gamma is γ_n = n·u / (1 − n·u), the bound on the relative error of n
// rounded operations (Higham, Accuracy and Stability of Numerical
// Algorithms, §3.1); +Inf when n·u ≥ 1.
func gamma(n float64) float64 {
	nu := n * unitRoundoff
	if nu >= 1 {
		return math.Inf(1)
	}
	return nu / (1 - nu)
}

// exactOps move or copy elements without arithmetic.
var exactOps = map[string]bool{"Identity": true, "Reshape": true, "Squeeze": true, "Unsqueeze": true, "Flatten": true,
	"Transpose": true, "Dropout": true, "Expand": true, "Neg": true, "Abs": true, "Relu": true}

// analyticBounds computes, for every node the full-mode reference traces
// (nodes, in trace order), a worst-case bound E on the RMS of the
// elementwise difference between its output on any IEEE-754 binary32
// execution of the same graph and on the reference: a forward error
// analysis along the graph, each operator's own rounding (any summation
// order, with or without FMA) plus the propagation of its inputs'
// bounds. |Δmean| ≤ E and |ΔRMS| ≤ E, so E bounds the trace statistics'
// difference (docs/BOUNDED.md "The analytic rule"). Operators without a
// rule (transcendentals, whose accuracy the standard does not fix,
// products of two perturbed values, divisions by one) get +Inf, and so
// does everything computed from them.
func analyticBounds(m *trace.Model, nodes []int, r *Reference) []float64 {
	g := m.Graph
	E := map[string]float64{} // value -> bound; absent: 0 for inputs and initializers
	bound := func(v string) float64 {
		if v == "" {
			return 0
		}
		if e, ok := E[v]; ok {
			return e
		}
		return 0 // a graph input (token ids) or an initializer: identical on every machine
	}
	for _, n := range g.Nodes {
		e := nodeBound(g, n, bound, r)
		for _, out := range n.Outputs {
			if out != "" {
				E[out] = math.Inf(1)
			}
		}
		if len(n.Outputs) > 0 && n.Outputs[0] != "" {
			E[n.Outputs[0]] = e
		}
	}
	out := make([]float64, len(nodes))
	for k, i := range nodes {
		out[k] = E[g.Nodes[i].Outputs[0]]
	}
	return out
}

// nodeBound is the bound of node n's first output given its inputs'.
func nodeBound(g *trace.Graph, n trace.Node, bound func(string) float64, r *Reference) float64 {
	inf := math.Inf(1)
	if len(n.Outputs) == 0 || n.Outputs[0] == "" {
		return inf
	}
	y := n.Outputs[0]
	in := func(k int) string {
		if k < len(n.Inputs) {
			return n.Inputs[k]
		}
		return ""
	}
	if g.ElemType(y) != trace.TypeFloat {
		// Integer and boolean values (shapes, masks) are exact when all
		// their inputs are; a comparison of perturbed floats is not.
		for _, v := range n.Inputs {
			if bound(v) != 0 {
				return inf
			}
		}
		return 0
	}
	ys, haveY := r.value(y)
	// local is the own rounding of a correctly rounded elementwise
	// operation, for both executions: |fl(x) − x| ≤ u|x| ≤ u/(1−u)·|fl(x)|.
	local := func() float64 {
		if !haveY {
			return inf
		}
		return 2 * unitRoundoff / (1 - unitRoundoff) * ys.RMS
	}
	switch op := n.OpType; {
	case n.Domain != "" && n.Domain != "ai.onnx":
		return inf
	case op == "Constant":
		return 0
	case exactOps[op]:
		// Same elements (Expand repeats each one equally often, which
		// keeps the RMS of the difference).
		return bound(in(0))
	case op == "Gather" || op == "Slice":
		for _, v := range n.Inputs[min(1, len(n.Inputs)):] {
			if bound(v) != 0 {
				return inf // indices, starts or ends that may differ
			}
		}
		e := bound(in(0))
		if e == 0 {
			return 0 // an embedding row of the weights: no arithmetic
		}
		if op == "Gather" {
			return inf // indices may repeat an element
		}
		xs, ok := r.value(in(0))
		if !ok || !haveY || ys.N == 0 {
			return inf
		}
		return e * math.Sqrt(float64(xs.N)/float64(ys.N)) // a subset carries at most all of the difference
	case op == "Cast":
		switch g.ElemType(in(0)) {
		case trace.TypeFloat, trace.TypeFloat16, trace.TypeBF16:
			return bound(in(0)) // widening (or no change): exact
		}
		if bound(in(0)) != 0 {
			return inf
		}
		if haveY && ys.MaxAbs <= 1<<24 {
			return 0 // integers of at most 2^24 are exact in binary32
		}
		return local()
	case op == "Add" || op == "Sub":
		return (1+unitRoundoff)*(bound(in(0))+bound(in(1))) + local()
	case op == "Mul" || op == "Div":
		ea, eb := bound(in(0)), bound(in(1))
		switch {
		case ea == 0 && eb == 0:
			return local()
		case ea != 0 && eb != 0:
			return inf // δa·δb needs the elementwise maximum of a difference
		case op == "Mul":
			// One perturbed factor x, one exact c: |δx·c| ≤ |δx|·max|c|.
			c, e := in(1), ea
			if eb != 0 {
				c, e = in(0), eb
			}
			cs, ok := r.value(c)
			if !ok {
				return inf
			}
			return (1+unitRoundoff)*e*cs.MaxAbs + local()
		case eb != 0:
			return inf // a perturbed divisor
		}
		cs, ok := r.value(in(1))
		if !ok || cs.MinAbs == 0 {
			return inf
		}
		return (1+unitRoundoff)*ea/cs.MinAbs + local()
	case op == "Sqrt":
		e := bound(in(0))
		if e == 0 {
			return local()
		}
		xs, ok := r.value(in(0))
		if !ok || xs.MinAbs == 0 {
			return inf
		}
		// |√a − √b| = |a − b| / (√a + √b) ≤ |a − b| / √min.
		return (1+unitRoundoff)*e/math.Sqrt(xs.MinAbs) + local()
	case op == "ReduceMean" || op == "ReduceSum":
		e := bound(in(0))
		xs, ok := r.value(in(0))
		if !ok || !haveY || ys.N == 0 || xs.N%ys.N != 0 {
			return inf
		}
		k := float64(xs.N / ys.N)
		// Each output sums k inputs in some order: |error| ≤ γ_k Σ|x|
		// (γ_{k+1} with the division of a mean). Over outputs of equal
		// group size, RMS(mean|x|) ≤ RMS(x): Jensen.
		if op == "ReduceMean" {
			return e + 2*gamma(k+1)*(xs.RMS+e)
		}
		return k*e + 2*gamma(k)*k*(xs.RMS+e)
	case op == "MatMul" || op == "Gemm":
		return matmulBound(g, n, bound, r, ys, haveY)
	}
	return inf
}

// matmulBound bounds Y = A·B (Gemm: α·op(A)·op(B) + β·C) where B (and C)
// are unperturbed two-dimensional weights [K, N] (or [N, K] transposed):
// each element's rounding is at most γ_{K+2}·(|α|Σ_k|a_ik b_kj| + |β c_j|)
// for any summation order, with or without FMA, and over the rows
// RMS(Σ_k|a_ik||b_kj|) ≤ sqrt(mean_i Σ_k a_ik² · mean_j Σ_k b_kj²) =
// K·rms(A)·rms(B) (Cauchy–Schwarz; exact factorisation because B is shared
// by every row). A perturbation δA propagates as ‖δA·B‖_F ≤ ‖δA‖_F·‖B‖_F,
// that is RMS(δY) ≤ K·rms(B)·RMS(δA).
func matmulBound(g *trace.Graph, n trace.Node, bound func(string) float64, r *Reference, ys trace.ValueStats, haveY bool) float64 {
	inf := math.Inf(1)
	if len(n.Inputs) < 2 || !haveY {
		return inf
	}
	a, b := n.Inputs[0], n.Inputs[1]
	w := g.Tensor(b)
	if w == nil || w.Stats == nil || len(w.Dims) != 2 || bound(b) != 0 {
		return inf
	}
	as, ok := r.value(a)
	if !ok {
		return inf
	}
	ea := bound(a)
	k := float64(w.Dims[0])
	alpha, beta, rmsC := 1.0, 0.0, 0.0
	if n.OpType == "Gemm" {
		if at, ok := n.Attrs["transB"]; ok && at.Int != 0 {
			k = float64(w.Dims[1])
		}
		if at, ok := n.Attrs["alpha"]; ok && at.HasFloat {
			alpha = math.Abs(float64(at.Float))
		}
		if len(n.Inputs) > 2 && n.Inputs[2] != "" {
			beta = 1
			if at, ok := n.Attrs["beta"]; ok && at.HasFloat {
				beta = math.Abs(float64(at.Float))
			}
			cs, ok := r.value(n.Inputs[2])
			if !ok || bound(n.Inputs[2]) != 0 {
				return inf
			}
			rmsC = cs.RMS
		}
	}
	rmsB := w.Stats.RMS
	prop := (1 + unitRoundoff) * alpha * k * rmsB * ea
	own := 2 * gamma(k+2) * (alpha*k*(as.RMS+ea)*rmsB + beta*rmsC)
	return prop + own
}
