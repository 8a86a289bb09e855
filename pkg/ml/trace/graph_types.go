package trace

// ElemType returns the element type of a value (onnx.TensorProto.DataType:
// 1 FLOAT, 6 INT32, 7 INT64, 9 BOOL, 10 FLOAT16, 11 DOUBLE, ...; 0 when
// unknown): the type the model declares for it (graph inputs,
// initializers, value_info, outputs), else the type inferred from the
// operator producing it. A graph from ReadGraph has its types inferred
// once; for a Graph built by hand they are inferred on every call.
func (g *Graph) ElemType(value string) int32 {
	if g.elem != nil {
		return g.elem[value]
	}
	return g.inferTypes()[value]
}

// Traceable reports whether node i's first output can be traced: the node
// has an output, its element type is FLOAT (32-bit), and it is not a
// Constant nor computed from constants only (a weight Cast from float16,
// say: the same for every input, and folded away by ONNX Runtime).
func (g *Graph) Traceable(i int) bool {
	if i < 0 || i >= len(g.Nodes) {
		return false
	}
	n := g.Nodes[i]
	if len(n.Outputs) == 0 || n.Outputs[0] == "" || n.OpType == "Constant" || g.ElemType(n.Outputs[0]) != TypeFloat {
		return false
	}
	consts := g.consts
	if consts == nil {
		consts = newIndex(g).consts
	}
	return !consts[n.Outputs[0]]
}

// Operators by the element type of their outputs.
var (
	// int64Ops output INT64 indices or shapes.
	int64Ops = set("Shape", "Size", "NonZero", "ArgMax", "ArgMin", "NonMaxSuppression")
	// boolOps output BOOL.
	boolOps = set("Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or", "Xor", "IsNaN", "IsInf")
	// dataOps output their first input's type (later inputs are indices,
	// shapes, axes or pads).
	dataOps = set("Gather", "GatherElements", "GatherND", "Slice", "Reshape", "Unsqueeze", "Squeeze", "Transpose",
		"Expand", "Tile", "Identity", "Flatten", "Split", "Pad", "Range", "Softmax", "LogSoftmax", "LayerNormalization",
		"Erf", "Tanh", "Sqrt", "Pow", "Reciprocal", "Neg", "Abs", "Exp", "Log", "Relu", "Sigmoid", "Dropout", "TopK",
		"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "CumSum", "Trilu", "Resize",
		"ScatterND", "ScatterElements", "Scatter", "Unique", "Compress", "DepthToSpace", "SpaceToDepth", "Clip")
	// anyOps output the type shared by their inputs: the first known.
	anyOps = set("Add", "Sub", "Mul", "Div", "Mod", "Max", "Min", "Sum", "Mean", "Concat", "MatMul", "Gemm", "Einsum")
	// fusedOps are ONNX Runtime contrib operators with float outputs.
	fusedOps = set("Gelu", "FastGelu", "BiasGelu", "QuickGelu", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
		"SimplifiedLayerNormalization", "Attention", "MultiHeadAttention", "FusedMatMul", "BiasAdd", "BiasSoftmax")
	// opaqueOps have outputs of no type derivable from their inputs.
	opaqueOps = set("If", "Loop", "Scan", "SequenceAt", "SequenceConstruct", "SplitToSequence", "ConcatFromSequence", "Optional", "OptionalGetElement")
)

func set(ops ...string) map[string]bool {
	m := make(map[string]bool, len(ops))
	for _, op := range ops {
		m[op] = true
	}
	return m
}

// inferTypes returns the element type of every value: declared types
// first, then each node's outputs from its inputs, over the nodes in
// topological order (the file's, unless it is not sorted).
func (g *Graph) inferTypes() map[string]int32 {
	types := map[string]int32{}
	for k, v := range g.Initializers {
		types[k] = v
	}
	for _, in := range g.Inputs {
		if in.ElemType != TypeUnknown {
			types[in.Name] = in.ElemType
		}
	}
	for k, v := range g.declared {
		if v != TypeUnknown {
			types[k] = v
		}
	}
	declared := make(map[string]bool, len(types))
	for k := range types {
		declared[k] = true
	}
	order := topoOrder(g.Nodes)
	for pass := 0; pass < 2; pass++ { // a second pass settles cycles (invalid models)
		for _, i := range order {
			n := g.Nodes[i]
			for k, o := range n.Outputs {
				if o == "" || declared[o] {
					continue
				}
				if t := outputType(n, k, types); t != TypeUnknown {
					types[o] = t
				}
			}
		}
	}
	return types
}

// topoOrder returns the node indexes in a topological order: file order
// when the file is sorted, as ONNX requires; nodes on a cycle (invalid)
// come last, in file order.
func topoOrder(nodes []Node) []int {
	producer := map[string]int{}
	for i, n := range nodes {
		for _, o := range n.Outputs {
			if _, ok := producer[o]; !ok && o != "" {
				producer[o] = i
			}
		}
	}
	sorted := true
	pending := make([]int, len(nodes))
	next := make([][]int, len(nodes))
	for i, n := range nodes {
		for _, in := range n.Inputs {
			if p, ok := producer[in]; ok && p != i {
				pending[i]++
				next[p] = append(next[p], i)
				if p > i {
					sorted = false
				}
			}
		}
	}
	order := make([]int, 0, len(nodes))
	if sorted {
		for i := range nodes {
			order = append(order, i)
		}
		return order
	}
	for i := range nodes {
		if pending[i] == 0 {
			order = append(order, i)
		}
	}
	for k := 0; k < len(order); k++ {
		for _, c := range next[order[k]] {
			if pending[c]--; pending[c] == 0 {
				order = append(order, c)
			}
		}
	}
	for i := range nodes {
		if pending[i] > 0 {
			order = append(order, i)
		}
	}
	return order
}

// outputType infers the element type of output k of node n.
func outputType(n Node, k int, types map[string]int32) int32 {
	in := func(i int) int32 {
		if i < len(n.Inputs) && n.Inputs[i] != "" {
			return types[n.Inputs[i]]
		}
		return TypeUnknown
	}
	anyIn := func() int32 {
		for i := range n.Inputs {
			if t := in(i); t != TypeUnknown {
				return t
			}
		}
		return TypeUnknown
	}
	attrInt := func(name string, def int32) int32 {
		if a, ok := n.Attrs[name]; ok && a.HasInt {
			return int32(a.Int)
		}
		return def
	}
	op := n.OpType
	// Secondary outputs.
	if k > 0 {
		switch op {
		case "Split":
			return in(0)
		case "TopK", "MaxPool", "Unique":
			return TypeInt64
		case "Dropout":
			return TypeBool
		case "LayerNormalization", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization", "SimplifiedLayerNormalization":
			if k == 3 && op == "SkipLayerNormalization" { // input + skip (+ bias)
				return in(0)
			}
			return TypeFloat // mean, inverse std dev (stash_type float)
		case "EmbedLayerNormalization":
			if k == 1 {
				return TypeInt32 // mask index
			}
			return TypeFloat
		case "DynamicQuantizeLinear":
			if k == 1 {
				return TypeFloat
			}
			return TypeUint8
		}
		return TypeUnknown
	}
	switch {
	case op == "Cast":
		return attrInt("to", TypeUnknown)
	case op == "CastLike":
		return in(1)
	case op == "Constant":
		return constantType(n)
	case op == "ConstantOfShape":
		if a, ok := n.Attrs["value"]; ok && a.Tensor != nil {
			return a.Tensor.DataType
		}
		return TypeFloat
	case op == "EyeLike", op == "RandomNormalLike", op == "RandomUniformLike", op == "Bernoulli":
		if t := attrInt("dtype", TypeUnknown); t != TypeUnknown {
			return t
		}
		return in(0)
	case op == "RandomNormal", op == "RandomUniform":
		return attrInt("dtype", TypeFloat)
	case op == "Multinomial":
		return attrInt("dtype", TypeInt32)
	case int64Ops[op]:
		return TypeInt64
	case boolOps[op]:
		return TypeBool
	case op == "Where":
		if t := in(1); t != TypeUnknown {
			return t
		}
		return in(2)
	case op == "OneHot":
		return in(2)
	case op == "MatMulInteger", op == "ConvInteger":
		return TypeInt32
	case op == "QuantizeLinear", op == "DynamicQuantizeLinear":
		if t := in(2); t != TypeUnknown && op == "QuantizeLinear" {
			return t
		}
		return TypeUint8
	case op == "DequantizeLinear":
		if t := in(1); t != TypeUnknown {
			return t
		}
		return TypeFloat
	case op == "EmbedLayerNormalization":
		if t := in(2); t != TypeUnknown { // word embedding
			return t
		}
		return TypeFloat
	case fusedOps[op]:
		if t := in(0); t != TypeUnknown {
			return t
		}
		return TypeFloat
	case anyOps[op]:
		return anyIn()
	case opaqueOps[op]:
		return TypeUnknown
	case dataOps[op]:
		return in(0)
	}
	return in(0) // an unknown operator: its first input's type
}

// constantType is the element type of a Constant node's value.
func constantType(n Node) int32 {
	for name, a := range n.Attrs {
		switch name {
		case "value", "sparse_value":
			if a.Tensor != nil {
				return a.Tensor.DataType
			}
		case "value_float", "value_floats":
			return TypeFloat
		case "value_int", "value_ints":
			return TypeInt64
		case "value_string", "value_strings":
			return TypeString
		}
	}
	return TypeUnknown
}
