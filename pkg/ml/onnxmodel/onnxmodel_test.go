package onnxmodel_test

import (
	"bytes"
	"encoding/hex"
	"math"
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
)

func TestFloat16(t *testing.T) {
	cases := []struct {
		in   float32
		want uint16
	}{
		{0, 0x0000}, {1, 0x3c00}, {-2, 0xc000}, {0.5, 0x3800}, {65504, 0x7bff},
		{1e6, 0x7c00}, {float32(math.Inf(-1)), 0xfc00}, {5.960464477539063e-8, 0x0001}, {1e-9, 0x0000},
	}
	for _, c := range cases {
		if got := onnxmodel.Float16Bits(c.in); got != c.want {
			t.Errorf("Float16Bits(%g) = %#04x, want %#04x", c.in, got, c.want)
		}
	}
	for _, f := range []float32{0.02, -0.0131, 1.5, 1000} {
		back := onnxmodel.Float16Value(onnxmodel.Float16Bits(f))
		if d := math.Abs(float64(back-f)) / math.Abs(float64(f)); d > 1e-3 {
			t.Errorf("round trip of %g gives %g", f, back)
		}
	}
}

// dims decodes the dimensions of a graph input's tensor type: dim_value
// as a number, dim_param as a string.
func dims(t *testing.T, model []byte) []any {
	t.Helper()
	get := func(b []byte, want protowire.Number) []byte {
		for len(b) > 0 {
			num, typ, n := protowire.ConsumeTag(b)
			b = b[n:]
			if typ == protowire.BytesType {
				v, m := protowire.ConsumeBytes(b)
				if num == want {
					return v
				}
				b = b[m:]
				continue
			}
			b = b[protowire.ConsumeFieldValue(num, typ, b):]
		}
		t.Fatalf("field %d not found", want)
		return nil
	}
	shape := get(get(get(get(get(model, 7), 11), 2), 1), 2)
	var out []any
	for len(shape) > 0 {
		_, _, n := protowire.ConsumeTag(shape)
		dim, m := protowire.ConsumeBytes(shape[n:])
		shape = shape[n+m:]
		num, typ, k := protowire.ConsumeTag(dim)
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, _ := protowire.ConsumeVarint(dim[k:])
			out = append(out, int64(v))
		case num == 2 && typ == protowire.BytesType:
			v, _ := protowire.ConsumeBytes(dim[k:])
			out = append(out, string(v))
		default:
			t.Fatalf("bad dimension %x", dim)
		}
	}
	return out
}

func TestDimParams(t *testing.T) {
	tests := []struct {
		name string
		in   onnxmodel.ValueInfo
		want []any
	}{
		{"values", onnxmodel.ValueInfo{Shape: []int64{1, 32}}, []any{int64(1), int64(32)}},
		{"negative without names", onnxmodel.ValueInfo{Shape: []int64{-1, 8, -1}}, []any{"d0", int64(8), "d2"}},
		{"named", onnxmodel.ValueInfo{Shape: []int64{-1, -1}, DimParams: []string{"batch_size", "sequence_length"}},
			[]any{"batch_size", "sequence_length"}},
		{"partly named", onnxmodel.ValueInfo{Shape: []int64{-1, 3}, DimParams: []string{"batch_size"}}, []any{"batch_size", int64(3)}},
		{"empty name keeps the value", onnxmodel.ValueInfo{Shape: []int64{-1, 3}, DimParams: []string{"", ""}}, []any{"d0", int64(3)}},
		{"name wins over a value", onnxmodel.ValueInfo{Shape: []int64{0, 3}, DimParams: []string{"n"}}, []any{"n", int64(3)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Name, tt.in.ElemType = "x", onnxmodel.Int64
			m := onnxmodel.Model{Inputs: []onnxmodel.ValueInfo{tt.in}}
			got := dims(t, m.Marshal())
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("dims %v, want %v", got, tt.want)
			}
		})
	}
	// Without DimParams the bytes are what they always were.
	plain := onnxmodel.Model{Inputs: []onnxmodel.ValueInfo{{Name: "x", ElemType: 7, Shape: []int64{-1, 4}}}}
	empty := onnxmodel.Model{Inputs: []onnxmodel.ValueInfo{{Name: "x", ElemType: 7, Shape: []int64{-1, 4}, DimParams: []string{}}}}
	if !bytes.Equal(plain.Marshal(), empty.Marshal()) {
		t.Error("empty DimParams changed the bytes")
	}
	// ir_version 8, producer "svc", graph { name "", input x int64
	// [dim_param "d0", dim_value 4] }, opset 17.
	const want = "0808120373766" + "33a1912005a150a017812100a0e0807120a0a04120264300a020804" + "42040a001011"
	if got := hex.EncodeToString(plain.Marshal()); got != want {
		t.Errorf("plain model %s, want %s", got, want)
	}
}

func TestConstantTensorAttr(t *testing.T) {
	f := float32(0.5)
	m := onnxmodel.Model{Nodes: []onnxmodel.Node{
		{Name: "c", OpType: "Constant", Outputs: []string{"y"}, Attrs: []onnxmodel.Attr{
			{Name: "value", Tensor: &onnxmodel.Tensor{Dims: []int64{2}, Ints: []int64{1, -1}}}}},
		{Name: "f", OpType: "Constant", Outputs: []string{"z"}, Attrs: []onnxmodel.Attr{
			{Name: "value", Tensor: &onnxmodel.Tensor{Floats: []float32{f}}}}},
	}}
	b := m.Marshal()
	// AttributeProto: name "value", t (field 5) = TensorProto, type TENSOR (4).
	ints := []byte{0x0a, 0x05, 'v', 'a', 'l', 'u', 'e', 0x2a}
	if !bytes.Contains(b, ints) {
		t.Fatalf("no tensor attribute in %x", b)
	}
	tensor := []byte{0x08, 0x02, 0x10, 0x07, 0x42, 0x00, 0x4a, 0x10, 1, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	if !bytes.Contains(b, append([]byte{0x2a, byte(len(tensor))}, append(tensor, 0xa0, 0x01, 0x04)...)) {
		t.Errorf("int64 [2] constant not encoded as expected: %x", b)
	}
	scalar := []byte{0x10, 0x01, 0x42, 0x00, 0x4a, 0x04, 0, 0, 0, 0x3f} // no dims: a scalar
	if !bytes.Contains(b, append([]byte{0x2a, byte(len(scalar))}, scalar...)) {
		t.Errorf("float scalar constant not encoded as expected: %x", b)
	}
}
