// Package onnxmodel writes ONNX models (ModelProto, protobuf wire format)
// from Go, without generated code: graphs of nodes, float32 initializers and
// typed inputs and outputs. It is the writer behind generated test models.
package onnxmodel

import (
	"encoding/binary"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// Element types (onnx.TensorProto.DataType).
const (
	Float   = 1
	Int64   = 7
	Float16 = 10
)

// Model is an ONNX model with one graph.
type Model struct {
	Name         string
	Opset        int64 // default 17
	Nodes        []Node
	Inputs       []ValueInfo
	Outputs      []ValueInfo
	Initializers []Tensor
}

// Node is one operator of the graph.
type Node struct {
	Name    string
	OpType  string
	Inputs  []string
	Outputs []string
	Attrs   []Attr
}

// Attr is a node attribute: an int, a float, a tensor (as the value of a
// Constant node) or a list of ints.
type Attr struct {
	Name   string
	Int    *int64
	Float  *float32
	Tensor *Tensor
	Ints   []int64
}

// ValueInfo names a graph input or output and its tensor type. A
// dimension below 0 is symbolic: written as dim_param DimParams[i] when
// DimParams (parallel to Shape) has a non-empty name there, else as
// dim_param "d<i>". A non-empty DimParams[i] makes dimension i symbolic
// whatever Shape[i] holds.
type ValueInfo struct {
	Name      string
	ElemType  int32
	Shape     []int64
	DimParams []string
}

// Tensor is a float32, float16 or int64 initializer: exactly one of
// Floats, Halves (binary16 bits, see Float16Bits) and Ints is set.
type Tensor struct {
	Name   string
	Dims   []int64
	Floats []float32
	Halves []uint16
	Ints   []int64
}

// Marshal encodes the model as an ONNX ModelProto (IR version 8).
func (m *Model) Marshal() []byte {
	opset := m.Opset
	if opset == 0 {
		opset = 17
	}
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType) // ir_version
	b = protowire.AppendVarint(b, 8)
	b = appendBytes(b, 2, []byte("svc")) // producer_name
	b = appendBytes(b, 7, m.graph())     // graph
	var os []byte
	os = appendBytes(os, 1, nil) // domain "" (default)
	os = protowire.AppendTag(os, 2, protowire.VarintType)
	os = protowire.AppendVarint(os, uint64(opset))
	b = appendBytes(b, 8, os) // opset_import
	return b
}

func (m *Model) graph() []byte {
	var g []byte
	for _, n := range m.Nodes {
		g = appendBytes(g, 1, n.marshal())
	}
	g = appendBytes(g, 2, []byte(m.Name))
	for _, t := range m.Initializers {
		g = appendBytes(g, 5, t.marshal())
	}
	for _, v := range m.Inputs {
		g = appendBytes(g, 11, v.marshal())
	}
	for _, v := range m.Outputs {
		g = appendBytes(g, 12, v.marshal())
	}
	return g
}

func (n Node) marshal() []byte {
	var b []byte
	for _, in := range n.Inputs {
		b = appendBytes(b, 1, []byte(in))
	}
	for _, out := range n.Outputs {
		b = appendBytes(b, 2, []byte(out))
	}
	b = appendBytes(b, 3, []byte(n.Name))
	b = appendBytes(b, 4, []byte(n.OpType))
	for _, a := range n.Attrs {
		b = appendBytes(b, 5, a.marshal())
	}
	return b
}

// Attribute types (onnx.AttributeProto.AttributeType).
const (
	attrFloat  = 1
	attrInt    = 2
	attrTensor = 4
	attrInts   = 7
)

func (a Attr) marshal() []byte {
	b := appendBytes(nil, 1, []byte(a.Name))
	switch {
	case a.Float != nil:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(*a.Float))
		b = appendVarint(b, 20, attrFloat)
	case a.Int != nil:
		b = appendVarint(b, 3, uint64(*a.Int))
		b = appendVarint(b, 20, attrInt)
	case a.Tensor != nil:
		b = appendBytes(b, 5, a.Tensor.marshal()) // t
		b = appendVarint(b, 20, attrTensor)
	default:
		for _, v := range a.Ints {
			b = appendVarint(b, 8, uint64(v))
		}
		b = appendVarint(b, 20, attrInts)
	}
	return b
}

func (v ValueInfo) marshal() []byte {
	var shape []byte
	for i, d := range v.Shape {
		var dim []byte
		if i < len(v.DimParams) && v.DimParams[i] != "" {
			dim = appendBytes(dim, 2, []byte(v.DimParams[i])) // dim_param
		} else if d < 0 {
			dim = appendBytes(dim, 2, []byte{'d', byte('0' + i%10)}) // dim_param
		} else {
			dim = appendVarint(dim, 1, uint64(d)) // dim_value
		}
		shape = appendBytes(shape, 1, dim)
	}
	tensor := appendVarint(nil, 1, uint64(v.ElemType))
	tensor = appendBytes(tensor, 2, shape)
	typ := appendBytes(nil, 1, tensor) // tensor_type
	b := appendBytes(nil, 1, []byte(v.Name))
	return appendBytes(b, 2, typ)
}

func (t Tensor) marshal() []byte {
	var b []byte
	for _, d := range t.Dims {
		b = appendVarint(b, 1, uint64(d))
	}
	if t.Ints != nil {
		b = appendVarint(b, 2, Int64) // data_type
		raw := make([]byte, 8*len(t.Ints))
		for i, v := range t.Ints {
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
		}
		b = appendBytes(b, 8, []byte(t.Name))
		return appendBytes(b, 9, raw) // raw_data
	}
	if t.Halves != nil {
		b = appendVarint(b, 2, Float16)
		raw := make([]byte, 2*len(t.Halves))
		for i, v := range t.Halves {
			binary.LittleEndian.PutUint16(raw[2*i:], v)
		}
		b = appendBytes(b, 8, []byte(t.Name))
		return appendBytes(b, 9, raw)
	}
	b = appendVarint(b, 2, Float)
	raw := make([]byte, 4*len(t.Floats))
	for i, v := range t.Floats {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(v))
	}
	b = appendBytes(b, 8, []byte(t.Name))
	return appendBytes(b, 9, raw)
}

func appendBytes(b []byte, field protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, field, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendVarint(b []byte, field protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, field, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// Float16Bits converts f to IEEE 754 binary16 bits, rounding to nearest
// even (overflow to infinity; NaN is not expected).
func Float16Bits(f float32) uint16 {
	u := math.Float32bits(f)
	sign := uint16(u>>16) & 0x8000
	exp := int((u>>23)&0xff) - 127 + 15
	mant := u & 0x7fffff
	switch {
	case exp >= 31:
		return sign | 0x7c00
	case exp <= 0: // subnormal or zero
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint(14 - exp)
		r := mant >> shift
		rem, halfway := mant&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > halfway || rem == halfway && r&1 == 1 {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(exp)<<10 | mant>>13
	if rem := mant & 0x1fff; rem > 0x1000 || rem == 0x1000 && r&1 == 1 {
		r++ // may carry into the exponent, which is right
	}
	return sign | uint16(r)
}

// Float16Value converts binary16 bits to float32.
func Float16Value(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch {
	case exp == 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	case exp == 0:
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp-15+127)<<23 | mant<<13)
}
