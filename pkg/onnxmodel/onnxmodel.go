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
	Float = 1
	Int64 = 7
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

// Attr is a node attribute: an int, a float or a list of ints.
type Attr struct {
	Name  string
	Int   *int64
	Float *float32
	Ints  []int64
}

// ValueInfo names a graph input or output and its tensor type. A
// dimension below 0 is symbolic (written as dim_param "d<i>").
type ValueInfo struct {
	Name     string
	ElemType int32
	Shape    []int64
}

// Tensor is a float32 or int64 initializer.
type Tensor struct {
	Name   string
	Dims   []int64
	Floats []float32
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
	attrFloat = 1
	attrInt   = 2
	attrInts  = 7
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
		if d < 0 {
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
