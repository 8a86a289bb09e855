package modelgen

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// fields returns the bytes-typed fields of a protobuf message by number.
func fields(t *testing.T, b []byte) map[protowire.Number][][]byte {
	t.Helper()
	out := map[protowire.Number][][]byte{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			t.Fatal(protowire.ParseError(n))
		}
		b = b[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				t.Fatal(protowire.ParseError(m))
			}
			out[num] = append(out[num], v)
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			t.Fatal(protowire.ParseError(m))
		}
		b = b[m:]
	}
	return out
}

// TestGraphStructure decodes the default model: node names are unique, op
// counts match a 2-layer BERT, every initializer is present once (float16
// ones included).
func TestGraphStructure(t *testing.T) {
	model, _, err := Generate(Config{})
	if err != nil {
		t.Fatal(err)
	}
	graphs := fields(t, model)[7]
	if len(graphs) != 1 {
		t.Fatalf("%d graph fields, want 1", len(graphs))
	}
	ops := map[string]int{}
	names := map[string]bool{}
	var inits []string
	for _, g := range graphs {
		gf := fields(t, g)
		for _, n := range gf[1] {
			nf := fields(t, n)
			name, op := string(nf[3][0]), string(nf[4][0])
			if names[name] {
				t.Errorf("duplicate node name %q", name)
			}
			names[name] = true
			ops[op]++
		}
		for _, init := range gf[5] {
			inits = append(inits, string(fields(t, init)[8][0]))
		}
	}
	seen := map[string]bool{}
	for _, n := range inits {
		if seen[n] {
			t.Errorf("duplicate initializer %q", n)
		}
		seen[n] = true
	}
	for _, n := range []string{"embeddings/word_embeddings", "layer1/attention/query/weight", "const/cls_index", "classifier/bias"} {
		if !seen[n] {
			t.Errorf("missing initializer %q", n)
		}
	}
	for _, n := range []string{"layer0/attention/query/MatMul", "layer1/intermediate/gelu/Erf", "pooler/Tanh", "classifier/Softmax"} {
		if !names[n] {
			t.Errorf("missing node %q", n)
		}
	}
	const L = 2
	want := map[string]int{
		"Gather":             2,
		"LayerNormalization": 1 + 2*L,
		"Softmax":            L + 1,
		"Erf":                L,
		"Tanh":               1,
		"Reshape":            4 * L,
		"Transpose":          4 * L,
		"MatMul":             8*L + 2,
		"Cast":               1 + 1 + 6*L + 2,
	}
	for op, n := range want {
		if ops[op] != n {
			t.Errorf("%d %s nodes, want %d", ops[op], op, n)
		}
	}
}
