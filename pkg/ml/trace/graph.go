package trace

import (
	"encoding/binary"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-gov/svc/internal/pbwire"
)

// ONNX element types (onnx.TensorProto.DataType) the graph model names.
const (
	TypeUnknown = 0
	TypeFloat   = 1
	TypeUint8   = 2
	TypeInt8    = 3
	TypeUint16  = 4
	TypeInt16   = 5
	TypeInt32   = 6
	TypeInt64   = 7
	TypeString  = 8
	TypeBool    = 9
	TypeFloat16 = 10
	TypeDouble  = 11
	TypeUint32  = 12
	TypeUint64  = 13
	TypeBF16    = 16
)

// Node is a node of the model graph.
type Node struct {
	Name    string
	OpType  string
	Domain  string // "" (or "ai.onnx") for standard operators, e.g. "com.microsoft"
	Inputs  []string
	Outputs []string
	// Attrs holds the node's attributes by name (nil when it has none).
	Attrs map[string]Attr
}

// Attr is a node attribute (onnx.AttributeProto); the fields its type
// uses are set. Graph attributes (If, Loop bodies) are not kept.
type Attr struct {
	Type     int32 // AttributeProto.AttributeType: 1 FLOAT, 2 INT, 3 STRING, 4 TENSOR, 6 FLOATS, 7 INTS ...
	Int      int64
	HasInt   bool
	Ints     []int64
	Float    float32
	HasFloat bool
	Floats   []float32
	String   string
	Tensor   *TensorInfo
}

// TensorInfo describes a tensor (an initializer or a Constant's value):
// its element type and dims, and the values of small tensors.
type TensorInfo struct {
	Name     string
	DataType int32
	Dims     []int64
	// Values holds the elements, as float64, of a tensor of at most
	// maxValues elements stored in the model (nil otherwise).
	Values []float64
	// External is set when the data lives in a separate file
	// (data_location EXTERNAL).
	External bool
	// Stats holds the RMS, largest and smallest magnitude of a FLOAT
	// tensor's elements (every element, however large the tensor), for the
	// analytic error bound of the operators that read it; nil when the
	// tensor is not FLOAT or its data is not in the model.
	Stats *ValueStats
}

// maxValues bounds the elements decoded of a tensor.
const maxValues = 64

// Scalar returns the value of a one-element tensor.
func (t *TensorInfo) Scalar() (float64, bool) {
	if t == nil || len(t.Values) != 1 {
		return 0, false
	}
	return t.Values[0], true
}

// ValueInfo is a typed graph input: its element type (0 unknown) and dims
// (-1 for a symbolic or unknown dimension; nil for an unknown shape).
type ValueInfo struct {
	Name     string
	ElemType int32
	Dims     []int64
}

// Graph is what tracing needs of a model: its nodes in file order (ONNX
// requires topological order), its outputs, its inputs (initializers
// excluded) and the element types of its initializers.
type Graph struct {
	Nodes   []Node
	Outputs []string
	// Inputs are the graph inputs that are not initializers: what a run
	// feeds.
	Inputs []ValueInfo
	// Initializers maps each initializer to its element type.
	Initializers map[string]int32
	// External names an initializer whose data lives in a separate file
	// ("" when every weight is inside the model).
	External string

	declared map[string]int32       // types the model states: inputs, initializers, value_info, outputs
	tensors  map[string]*TensorInfo // initializers (with the values of small ones)
	elem     map[string]int32       // inferred element types (ReadGraph)
	consts   map[string]bool        // values computed from constants only (ReadGraph)
}

// ReadGraph decodes the graph of an ONNX ModelProto: nodes (with domains
// and attributes), inputs, outputs, initializers and value_info; it infers
// the element type of every value (see ElemType).
func ReadGraph(model []byte) (*Graph, error) {
	g := &Graph{Initializers: map[string]int32{}, declared: map[string]int32{}, tensors: map[string]*TensorInfo{}}
	var inputs, infos []ValueInfo
	err := pbwire.Fields(model, func(num protowire.Number, v []byte) error {
		if num != 7 { // ModelProto.graph (repeated occurrences merge)
			return nil
		}
		return pbwire.Fields(v, func(num protowire.Number, v []byte) error {
			switch num {
			case 1: // GraphProto.node
				n, err := readNode(v)
				g.Nodes = append(g.Nodes, n)
				return err
			case 5: // initializer
				t, err := readTensor(v)
				if err != nil {
					return err
				}
				g.addInitializer(t)
			case 15: // sparse_initializer: values (field 1) carries name and type
				return pbwire.Fields(v, func(num protowire.Number, v []byte) error {
					if num != 1 {
						return nil
					}
					t, err := readTensor(v)
					if err == nil {
						t.Values = nil
						g.addInitializer(t)
					}
					return err
				})
			case 11, 12, 13: // input, output, value_info
				vi, err := readValueInfo(v)
				if err != nil {
					return err
				}
				switch num {
				case 11:
					inputs = append(inputs, vi)
				case 12:
					g.Outputs = append(g.Outputs, vi.Name)
				}
				infos = append(infos, vi)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrModel, err)
	}
	if len(g.Nodes) == 0 {
		return nil, fmt.Errorf("%w: no graph nodes", ErrModel)
	}
	for _, vi := range infos {
		if _, ok := g.declared[vi.Name]; !ok && vi.ElemType != TypeUnknown {
			g.declared[vi.Name] = vi.ElemType
		}
	}
	for _, in := range inputs {
		if _, ok := g.Initializers[in.Name]; !ok {
			g.Inputs = append(g.Inputs, in)
		}
	}
	g.elem = g.inferTypes()
	g.consts = newIndex(g).consts
	return g, nil
}

// Tensor returns the initializer named name (nil when there is none).
func (g *Graph) Tensor(name string) *TensorInfo { return g.tensors[name] }

// floatTensorStats computes the statistics of a FLOAT tensor of count
// elements from its raw_data, or else from its float_data (field 4 of the
// TensorProto b); nil when the data does not hold count elements.
func floatTensorStats(raw []byte, hasRaw bool, b []byte, count int) *ValueStats {
	var vals []float32
	if hasRaw {
		if len(raw) != 4*count {
			return nil
		}
		vals = make([]float32, count)
		for i := range vals {
			vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	} else {
		_ = pbwire.Walk(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
			if num == 4 {
				return pbwire.Repeated(typ, v, x, protowire.Fixed32Type, func(x uint64) { vals = append(vals, math.Float32frombits(uint32(x))) })
			}
			return nil
		})
		if len(vals) != count {
			return nil
		}
	}
	st := DetailStats(vals)
	return &st
}

func (g *Graph) addInitializer(t *TensorInfo) {
	if t.External && g.External == "" {
		g.External = t.Name
	}
	g.Initializers[t.Name] = t.DataType
	g.declared[t.Name] = t.DataType
	g.tensors[t.Name] = t
}

func readNode(b []byte) (Node, error) {
	var n Node
	err := pbwire.Walk(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			n.Inputs = append(n.Inputs, string(v))
		case 2:
			n.Outputs = append(n.Outputs, string(v))
		case 3:
			n.Name = string(v)
		case 4:
			n.OpType = string(v)
		case 7:
			n.Domain = string(v)
		case 5:
			name, a, err := readAttr(v)
			if err != nil {
				return err
			}
			if n.Attrs == nil {
				n.Attrs = map[string]Attr{}
			}
			n.Attrs[name] = a
		}
		return nil
	})
	return n, err
}

func readAttr(b []byte) (string, Attr, error) {
	var name string
	var a Attr
	err := pbwire.Walk(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch {
		case num == 1 && typ == protowire.BytesType:
			name = string(v)
		case num == 20 && typ == protowire.VarintType:
			a.Type = int32(x)
		case num == 2 && typ == protowire.Fixed32Type:
			a.Float, a.HasFloat = math.Float32frombits(uint32(x)), true
		case num == 3 && typ == protowire.VarintType:
			a.Int, a.HasInt = int64(x), true
		case num == 4 && typ == protowire.BytesType:
			a.String = string(v)
		case num == 5 && typ == protowire.BytesType:
			t, err := readTensor(v)
			if err != nil {
				return err
			}
			a.Tensor = t
		case num == 22 && typ == protowire.BytesType: // sparse_tensor: its values carry the type
			return pbwire.Fields(v, func(num protowire.Number, v []byte) error {
				if num != 1 {
					return nil
				}
				t, err := readTensor(v)
				if err == nil {
					t.Values = nil
					a.Tensor = t
				}
				return err
			})
		case num == 7:
			return pbwire.Repeated(typ, v, x, protowire.Fixed32Type, func(x uint64) {
				a.Floats = append(a.Floats, math.Float32frombits(uint32(x)))
			})
		case num == 8:
			return pbwire.Repeated(typ, v, x, protowire.VarintType, func(x uint64) { a.Ints = append(a.Ints, int64(x)) })
		}
		return nil
	})
	return name, a, err
}

// readTensor decodes a TensorProto's name, type and dims, and the values
// of a small one stored in the model.
func readTensor(b []byte) (*TensorInfo, error) {
	t := &TensorInfo{}
	var raw []byte
	var hasRaw bool
	var typed []float64 // float_data, int32_data, int64_data, double_data, uint64_data
	err := pbwire.Walk(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			return pbwire.Repeated(typ, v, x, protowire.VarintType, func(x uint64) { t.Dims = append(t.Dims, int64(x)) })
		case 2:
			if typ == protowire.VarintType {
				t.DataType = int32(x)
			}
		case 8:
			if typ == protowire.BytesType {
				t.Name = string(v)
			}
		case 14: // data_location
			if typ == protowire.VarintType && x == 1 {
				t.External = true
			}
		case 9:
			if typ == protowire.BytesType {
				raw, hasRaw = v, true
			}
		case 4:
			return pbwire.Repeated(typ, v, x, protowire.Fixed32Type, func(x uint64) {
				if len(typed) < maxValues {
					typed = append(typed, float64(math.Float32frombits(uint32(x))))
				}
			})
		case 5:
			return pbwire.Repeated(typ, v, x, protowire.VarintType, func(x uint64) {
				if len(typed) < maxValues {
					typed = append(typed, float64(int32(x)))
				}
			})
		case 7:
			return pbwire.Repeated(typ, v, x, protowire.VarintType, func(x uint64) {
				if len(typed) < maxValues {
					typed = append(typed, float64(int64(x)))
				}
			})
		case 10:
			return pbwire.Repeated(typ, v, x, protowire.Fixed64Type, func(x uint64) {
				if len(typed) < maxValues {
					typed = append(typed, math.Float64frombits(x))
				}
			})
		case 11:
			return pbwire.Repeated(typ, v, x, protowire.VarintType, func(x uint64) {
				if len(typed) < maxValues {
					typed = append(typed, float64(x))
				}
			})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	count, ok := elements(t.Dims)
	if ok && t.DataType == TypeFloat && !t.External {
		t.Stats = floatTensorStats(raw, hasRaw, b, int(count))
	}
	if !ok || count > maxValues {
		return t, nil
	}
	if hasRaw {
		t.Values = rawValues(t.DataType, raw, int(count))
		return t, nil
	}
	if len(typed) >= int(count) {
		vals := typed[:count]
		if t.DataType == TypeFloat16 || t.DataType == TypeBF16 { // bits in int32_data
			for i, v := range vals {
				vals[i] = halfValue(t.DataType, uint16(int64(v)))
			}
		}
		t.Values = vals
	}
	return t, nil
}

// elements returns the element count of a tensor of dims (false if a dim
// is negative or the count is over 1<<40).
func elements(dims []int64) (int64, bool) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 || d > 1<<40 {
			return 0, false
		}
		n *= d
		if n > 1<<40 {
			return 0, false
		}
	}
	return n, true
}

// rawValues decodes count little-endian elements of raw_data (nil if the
// type is not numeric or raw is too short).
func rawValues(dt int32, raw []byte, count int) []float64 {
	size := map[int32]int{TypeFloat: 4, TypeUint8: 1, TypeInt8: 1, TypeUint16: 2, TypeInt16: 2, TypeInt32: 4,
		TypeInt64: 8, TypeBool: 1, TypeFloat16: 2, TypeDouble: 8, TypeUint32: 4, TypeUint64: 8, TypeBF16: 2}[dt]
	if size == 0 || len(raw) < size*count {
		return nil
	}
	out := make([]float64, count)
	for i := range out {
		p := raw[i*size:]
		switch dt {
		case TypeFloat:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(p)))
		case TypeDouble:
			out[i] = math.Float64frombits(binary.LittleEndian.Uint64(p))
		case TypeUint8, TypeBool:
			out[i] = float64(p[0])
		case TypeInt8:
			out[i] = float64(int8(p[0]))
		case TypeUint16:
			out[i] = float64(binary.LittleEndian.Uint16(p))
		case TypeInt16:
			out[i] = float64(int16(binary.LittleEndian.Uint16(p)))
		case TypeInt32:
			out[i] = float64(int32(binary.LittleEndian.Uint32(p)))
		case TypeUint32:
			out[i] = float64(binary.LittleEndian.Uint32(p))
		case TypeInt64:
			out[i] = float64(int64(binary.LittleEndian.Uint64(p)))
		case TypeUint64:
			out[i] = float64(binary.LittleEndian.Uint64(p))
		case TypeFloat16, TypeBF16:
			out[i] = halfValue(dt, binary.LittleEndian.Uint16(p))
		}
	}
	return out
}

// halfValue converts float16 or bfloat16 bits.
func halfValue(dt int32, h uint16) float64 {
	if dt == TypeBF16 {
		return float64(math.Float32frombits(uint32(h) << 16))
	}
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, mant := int(h>>10)&0x1f, float64(h&0x3ff)
	switch exp {
	case 0x1f:
		if mant != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	case 0:
		return sign * math.Ldexp(mant, -24)
	}
	return sign * math.Ldexp(1+mant/1024, exp-15)
}

// readValueInfo decodes a ValueInfoProto: name, and the element type and
// dims of a tensor (or sparse tensor) type.
func readValueInfo(b []byte) (ValueInfo, error) {
	var vi ValueInfo
	err := pbwire.Fields(b, func(num protowire.Number, v []byte) error {
		switch num {
		case 1:
			vi.Name = string(v)
		case 2: // TypeProto
			return pbwire.Fields(v, func(num protowire.Number, v []byte) error {
				if num != 1 && num != 8 { // tensor_type, sparse_tensor_type
					return nil
				}
				return pbwire.Walk(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
					switch {
					case num == 1 && typ == protowire.VarintType:
						vi.ElemType = int32(x)
					case num == 2 && typ == protowire.BytesType: // shape
						if vi.Dims == nil {
							vi.Dims = []int64{}
						}
						return pbwire.Fields(v, func(num protowire.Number, v []byte) error {
							if num != 1 {
								return nil
							}
							d := int64(-1)
							err := pbwire.Walk(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
								if num == 1 && typ == protowire.VarintType && int64(x) >= 0 {
									d = int64(x)
								}
								return nil
							})
							vi.Dims = append(vi.Dims, d)
							return err
						})
					}
					return nil
				})
			})
		}
		return nil
	})
	return vi, err
}
