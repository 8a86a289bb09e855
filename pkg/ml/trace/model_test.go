package trace_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/onnxmodel"
	"github.com/svc-gov/svc/pkg/ml/tokenizer"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// graphWithInputs is a one-node model (Identity of the first input) with
// the given inputs.
func graphWithInputs(inputs ...onnxmodel.ValueInfo) []byte {
	m := onnxmodel.Model{Name: "m", Opset: 17, Inputs: inputs,
		Nodes:   []onnxmodel.Node{{Name: "id", OpType: "Identity", Inputs: []string{inputs[0].Name}, Outputs: []string{"out"}}},
		Outputs: []onnxmodel.ValueInfo{{Name: "out", ElemType: inputs[0].ElemType, Shape: []int64{1, 4}}}}
	return m.Marshal()
}

func TestNewModel(t *testing.T) {
	tok, err := tokenizer.FromVocab([]byte(strings.Join(modelgen.Vocabulary(), "\n")), tokenizer.Options{Lowercase: true})
	if err != nil {
		t.Fatal(err)
	}
	ids := onnxmodel.ValueInfo{Name: "input_ids", ElemType: onnxmodel.Int64, Shape: []int64{1, 4}}
	tests := []struct {
		name   string
		inputs []onnxmodel.ValueInfo
		err    string
		seq    int
	}{
		{"ids of fixed length", []onnxmodel.ValueInfo{ids}, "", 4},
		{"ids, mask and types", []onnxmodel.ValueInfo{ids, {Name: "attention_mask", ElemType: onnxmodel.Int64, Shape: []int64{1, 4}},
			{Name: "token_type_ids", ElemType: onnxmodel.Int64, Shape: []int64{1, 4}}}, "", 4},
		{"one input of any name", []onnxmodel.ValueInfo{{Name: "x", ElemType: onnxmodel.Int64, Shape: []int64{1, 4}}}, "", 4},
		{"float input", []onnxmodel.ValueInfo{{Name: "pixels", ElemType: onnxmodel.Float, Shape: []int64{1, 4}}}, "want int64 token ids", 0},
		{"unknown second input", []onnxmodel.ValueInfo{ids, {Name: "pixel_values", ElemType: onnxmodel.Int64, Shape: []int64{1, 4}}}, "is not input_ids", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := trace.NewModel(graphWithInputs(tc.inputs...), tok)
			if tc.err != "" {
				if !errors.Is(err, trace.ErrModel) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want ErrModel naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.SeqLen != tc.seq {
				t.Fatalf("SeqLen %d, want %d", m.SeqLen, tc.seq)
			}
		})
	}
	if _, err := trace.NewModel([]byte("not onnx"), tok); !errors.Is(err, trace.ErrModel) {
		t.Fatalf("garbage: err = %v", err)
	}
}

func TestLoadModelErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := trace.LoadModel(filepath.Join(dir, "nowhere")); err == nil || !strings.Contains(err.Error(), "read model") {
		t.Fatalf("missing: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "model.onnx"), graphWithInputs(onnxmodel.ValueInfo{Name: "input_ids", ElemType: onnxmodel.Int64, Shape: []int64{1, 4}}), 0o644)
	if _, err := trace.LoadModel(dir); !errors.Is(err, trace.ErrNoTokenizer) || !strings.Contains(err.Error(), "vocab.txt") {
		t.Fatalf("no tokenizer: %v", err)
	}
}

// A model whose weights live in an external data file is refused with
// the fix named.
func TestExternalData(t *testing.T) {
	tok, err := tokenizer.FromVocab([]byte(strings.Join(modelgen.Vocabulary(), "\n")), tokenizer.Options{Lowercase: true})
	if err != nil {
		t.Fatal(err)
	}
	model := graphWithInputs(onnxmodel.ValueInfo{Name: "input_ids", ElemType: onnxmodel.Int64, Shape: []int64{1, 4}})
	// Append a graph field with one initializer whose data_location is
	// EXTERNAL (protobuf merges repeated graph fields).
	tensor := protowire.AppendBytes(protowire.AppendTag(nil, 8, protowire.BytesType), []byte("encoder.weight"))
	tensor = protowire.AppendVarint(protowire.AppendTag(tensor, 2, protowire.VarintType), 1)
	tensor = protowire.AppendVarint(protowire.AppendTag(tensor, 14, protowire.VarintType), 1)
	graph := protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), tensor)
	model = protowire.AppendBytes(protowire.AppendTag(model, 7, protowire.BytesType), graph)
	_, err = trace.NewModel(model, tok)
	if !errors.Is(err, trace.ErrModel) || !strings.Contains(err.Error(), "encoder.weight") || !strings.Contains(err.Error(), "save_as_external_data=False") {
		t.Fatalf("err = %v", err)
	}
}
