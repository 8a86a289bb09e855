package trace_test

import (
	"math"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// sampleTrace is a well-formed trace built without a runtime.
func sampleTrace(t testing.TB) []byte {
	ops := []trace.Operator{
		{Index: 0, Node: "ln0", OpType: "LayerNormalization", Class: "LayerNorm", Mean: 1e-9, RMS: 0.99},
		{Index: 1, Node: "out", OpType: "Softmax", Class: "Softmax", Mean: 0.5, RMS: 0.52},
	}
	root, err := trace.Root(ops)
	if err != nil {
		t.Fatal(err)
	}
	tr := trace.Trace{Schema: trace.Schema, ONNXModelHash: "sha256:" + strings.Repeat("a", 64), InputCommitment: "sha256:" + strings.Repeat("b", 64),
		Mode: trace.Production, OperatorCount: 2, MerkleRoot: root, Tokens: 5, Output: []float64{0.4, 0.6}, Probabilities: []float64{0.4, 0.6}, Operators: ops}
	doc, err := document.MarshalIndent(tr)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestParse(t *testing.T) {
	good := string(sampleTrace(t))
	tests := []struct {
		name, doc, err string
	}{
		{"valid", good, ""},
		{"unknown field", strings.Replace(good, `"mode"`, `"extra": 1, "mode"`, 1), "extra"},
		{"other schema", strings.Replace(good, "svc.trace/v1", "svc.trace/v9", 1), "schema"},
		{"bad mode", strings.Replace(good, `"production"`, `"fast"`, 1), "mode"},
		{"doctored mean", strings.Replace(good, `"mean": 0.5`, `"mean": 0.51`, 1), "merkle_root"},
		{"wrong count", strings.Replace(good, `"operator_count": 2`, `"operator_count": 3`, 1), "operator_count"},
		{"not json", "{", "trace"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := trace.Parse([]byte(tc.doc))
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want one naming %q", err, tc.err)
			}
		})
	}
}

// FuzzParseTrace: trace files come from whoever hands an auditor one; the
// parser never panics, and what it accepts re-verifies.
func FuzzParseTrace(f *testing.F) {
	f.Add(sampleTrace(f))
	for _, d := range fuzzedge.Documents(sampleTrace(f), 400) { // index, operator_count, tokens at the maxima and int64 edges
		f.Add(d)
	}
	f.Add([]byte(`{"schema":"svc.trace/v1"}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		tr, err := trace.Parse(doc)
		if err != nil {
			return
		}
		if err := tr.Verify(); err != nil {
			t.Fatalf("accepted trace does not verify: %v", err)
		}
	})
}

// TestLeafMatchesMarshal: the hand-written leaf encoding gives the bytes
// of the generic RFC 8785 encoder, for awkward names and numbers too.
func TestLeafMatchesMarshal(t *testing.T) {
	names := []string{"", "/bert/encoder/layer.0/output/LayerNorm/Add_1", "quote\" back\\slash", "tab\tnl\n\x01<>&", "ünïcode ✓", "bad\xffutf8"}
	numbers := []float64{0, math.Copysign(0, -1), 1, -1, 1e-9, 0.000011, 1e21, 123456789.125, 5e-324, math.MaxFloat64, -2.5e-7}
	for i, name := range names {
		for j, x := range numbers {
			o := trace.Operator{Index: int64(i*100 + j), Node: name, OpType: names[(i+1)%len(names)], Class: "LayerNorm", Mean: x, RMS: numbers[(j+3)%len(numbers)]}
			got, err := o.Leaf()
			if err != nil {
				t.Fatal(err)
			}
			want, err := canonical.Marshal(o)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("leaf %s\nwant %s", got, want)
			}
		}
	}
	if _, err := (trace.Operator{Mean: math.NaN()}).Leaf(); err == nil {
		t.Fatal("NaN mean encoded")
	}
}
