package trace

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/ml/tokenizer"
)

// Model is a classifier ready to trace: the ONNX bytes, their hash
// (onnx_model_hash), the graph with its operator classes, and the
// tokenizer whose output feeds it.
type Model struct {
	Bytes     []byte
	Hash      string
	Graph     *Graph
	Tokenizer *tokenizer.Tokenizer
	// SeqLen is the model's fixed sequence length, or 0 when the sequence
	// dimension is dynamic (inputs are then not padded).
	SeqLen int
	// MaxLen is the longest token sequence a dynamic model takes: the
	// tokenizer's maximum, lowered to max_position_embeddings of a
	// config.json beside the model.
	MaxLen int

	classes             []string
	roles               []inputRole
	output              string
	outputIsProbability bool
}

// inputRole is what the tokenizer gives a model input.
type inputRole struct {
	name string
	kind int // roleIDs, roleMask, roleTypes
}

const (
	roleIDs = iota
	roleMask
	roleTypes
)

// ErrNoTokenizer reports a model directory without a tokenizer.
var ErrNoTokenizer = errors.New("no tokenizer")

// LoadModel loads a model directory (model.onnx with tokenizer.json or
// vocab.txt) or a model file (its tokenizer files beside it).
func LoadModel(path string) (*Model, error) {
	file, dir := path, filepath.Dir(path)
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("read model: %w", err)
	} else if st.IsDir() {
		file, dir = filepath.Join(path, "model.onnx"), path
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read model: %w", err)
	}
	tok, err := tokenizer.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("%w for model %s: %v", ErrNoTokenizer, file, err)
	}
	m, err := NewModel(b, tok)
	if err != nil {
		return nil, err
	}
	var cfg struct {
		MaxPositions int `json:"max_position_embeddings"`
	}
	if data, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
		if json.Unmarshal(data, &cfg) == nil && cfg.MaxPositions > 1 && cfg.MaxPositions < m.MaxLen {
			m.MaxLen = cfg.MaxPositions
		}
	}
	return m, nil
}

// NewModel prepares model bytes and their tokenizer for tracing. The
// model's inputs must be int64 token sequences the tokenizer gives
// (input_ids, attention_mask, token_type_ids); its first output is the
// classifier's output.
func NewModel(model []byte, tok *tokenizer.Tokenizer) (*Model, error) {
	g, err := ReadGraph(model)
	if err != nil {
		return nil, err
	}
	m := &Model{Bytes: model, Hash: commitment.String(model), Graph: g, Tokenizer: tok, classes: Classes(g), MaxLen: tok.MaxLength()}
	if len(g.Outputs) == 0 {
		return nil, fmt.Errorf("%w: the graph has no output", ErrModel)
	}
	if g.External != "" {
		return nil, fmt.Errorf("%w: weight %s is stored in an external data file, which is not supported: save the model with its weights inside model.onnx (onnx.save_model(m, path, save_as_external_data=False))", ErrModel, g.External)
	}
	m.output = g.Outputs[0]
	for _, n := range g.Nodes {
		if contains(n.Outputs, m.output) && n.OpType == "Softmax" {
			m.outputIsProbability = true
		}
	}
	if len(g.Inputs) == 0 {
		return nil, fmt.Errorf("%w: the graph has no input", ErrModel)
	}
	for _, in := range g.Inputs {
		if in.ElemType != TypeInt64 {
			return nil, fmt.Errorf("%w: input %s has element type %d, want int64 token ids (a text classifier)", ErrModel, in.Name, in.ElemType)
		}
		name := strings.ToLower(in.Name)
		r := inputRole{name: in.Name, kind: roleIDs}
		switch {
		case strings.Contains(name, "mask"):
			r.kind = roleMask
		case strings.Contains(name, "type") || strings.Contains(name, "segment"):
			r.kind = roleTypes
		case strings.Contains(name, "ids") || len(g.Inputs) == 1:
		default:
			return nil, fmt.Errorf("%w: input %s is not input_ids, attention_mask or token_type_ids", ErrModel, in.Name)
		}
		if r.kind == roleIDs && len(in.Dims) > 0 {
			if d := in.Dims[len(in.Dims)-1]; d > 0 {
				m.SeqLen = int(d)
			}
		}
		m.roles = append(m.roles, r)
	}
	return m, nil
}

// Encode tokenizes text deterministically for this model: padded to its
// fixed sequence length, or unpadded up to MaxLen.
func (m *Model) Encode(text []byte) tokenizer.Encoding {
	if m.SeqLen > 0 {
		return m.Tokenizer.Encode(string(text), m.SeqLen)
	}
	e := m.Tokenizer.Encode(string(text), m.MaxLen)
	e.IDs, e.AttentionMask, e.TypeIDs = e.IDs[:e.Tokens], e.AttentionMask[:e.Tokens], e.TypeIDs[:e.Tokens]
	return e
}

func (m *Model) inputNames() []string {
	names := make([]string, len(m.roles))
	for i, r := range m.roles {
		names[i] = r.name
	}
	return names
}

func (m *Model) inputs(enc tokenizer.Encoding) [][]int64 {
	in := make([][]int64, len(m.roles))
	for i, r := range m.roles {
		switch r.kind {
		case roleMask:
			in[i] = enc.AttentionMask
		case roleTypes:
			in[i] = enc.TypeIDs
		default:
			in[i] = enc.IDs
		}
	}
	return in
}

// Parse reads a trace file strictly: the v1 schema, known fields only, and
// a Merkle root and operator count that match its operators.
func Parse(doc []byte) (*Trace, error) {
	t, err := Decode(doc)
	if err != nil {
		return nil, err
	}
	if err := t.Verify(); err != nil {
		return nil, err
	}
	return t, nil
}

// Decode reads a trace file strictly (v1 schema, known fields only)
// without checking its Merkle root: Verify does.
func Decode(doc []byte) (*Trace, error) {
	var t Trace
	if _, err := document.Parse(doc, &t); err != nil {
		return nil, fmt.Errorf("trace: %w", err)
	}
	if t.Schema != Schema {
		return nil, fmt.Errorf("trace: schema %q, want %q", t.Schema, Schema)
	}
	if !ValidMode(t.Mode) {
		return nil, fmt.Errorf("trace: mode %q: want %s, %s or %s", t.Mode, Full, Production, Residual)
	}
	return &t, nil
}
