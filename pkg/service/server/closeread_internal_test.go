package server

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// chainInput cuts what a canonical record's chain hash covers out of its
// stored bytes, and refuses (nil) any form the cut cannot vouch for.
func TestChainInput(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		cut        bool // a cut is expected; else nil
	}{
		{"middle", `{"a":1,"chain_hash":"sha256:ab","z":[1,{"chain_hash":"x"}]}`, true},
		{"first", `{"chain_hash":"sha256:ab","check":"pii"}`, true},
		{"last", `{"check":"pii","chain_hash":"sha256:ab"}`, true},
		{"only", `{"chain_hash":"sha256:ab"}`, true},
		{"absent", `{"check":"pii","details":{"chain_hash":"x"}}`, true},
		{"nested only", `{"a":{"chain_hash":"x"}}`, true},
		{"not a string", `{"a":1,"chain_hash":{"b":2}}`, false},
		{"space before the value", `{"a":1,"chain_hash": "sha256:ab"}`, false},
		{"escaped name", `{"a":1,"chain\u005fhash":"sha256:ab"}`, false},
		{"not an object", `["chain_hash"]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := document.ParseTree([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			got := chainInput([]byte(tc.body), tree)
			if !tc.cut {
				if got != nil {
					t.Fatalf("cut %s, want none", got)
				}
				return
			}
			if want := tree.Canonical("chain_hash"); !bytes.Equal(got, want) {
				t.Fatalf("cut %s, canonical form without chain_hash is %s", got, want)
			}
		})
	}
}

// A body in another key order verifies over the cut only by chance: the
// cut is then not the canonical form, and issue's fallback must find
// that out (TestCloseNonCanonicalStoredRecord covers the close).
func TestChainInputNotCanonical(t *testing.T) {
	body := []byte(`{"z":1,"chain_hash":"sha256:ab","a":2}`)
	tree, err := document.ParseTree(body)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := chainInput(body, tree), tree.Canonical("chain_hash"); bytes.Equal(got, want) {
		t.Fatalf("cut %s equals the canonical form %s", got, want)
	}
}

func FuzzChainInput(f *testing.F) {
	f.Add([]byte(`{"a":1,"chain_hash":"sha256:ab","z":2}`))
	f.Add([]byte(`{"chain_hash":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		tree, err := document.ParseTree(body)
		if err != nil {
			return
		}
		got := chainInput(body, tree)
		if got == nil {
			return
		}
		// Over a canonical body the cut is exactly the canonical form.
		if canon := tree.Canonical(); bytes.Equal(canon, body) {
			if want := tree.Canonical("chain_hash"); !bytes.Equal(got, want) {
				t.Fatalf("cut %q of canonical %q, want %q", got, body, want)
			}
		}
	})
}

// decodeAgrees fails t unless decodeForClose and document.Parse agree on
// body: both refuse it, or both decode it to the same record, except that
// decodeForClose leaves details out of a record that cannot raise
// model_profile_missing.
func decodeAgrees(t *testing.T, body []byte) {
	t.Helper()
	var full, light vpec.Record
	_, fullErr := document.Parse(body, &full)
	_, lightErr := decodeForClose(body, &light)
	if (fullErr == nil) != (lightErr == nil) {
		t.Fatalf("document.Parse: %v; decodeForClose: %v\nrecord %s", fullErr, lightErr, body)
	}
	if fullErr != nil {
		return
	}
	if !full.RaisesProfileMissing() {
		full.Details = nil
	}
	if !reflect.DeepEqual(full, light) {
		t.Fatalf("decodeForClose gave %+v, document.Parse %+v\nrecord %s", light, full, body)
	}
}

// vectorRecords returns every record (its canonical bytes) of every VPEC
// among the repository's test vectors, valid and invalid.
func vectorRecords(t testing.TB) [][]byte {
	paths, err := filepath.Glob("../../../testdata/vectors/vpec/*/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no VPEC vectors (%v)", err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		tree, err := document.ParseTree(b)
		if err != nil || tree.Kind() != canonical.KindObject {
			continue // an invalid vector that is not a JSON object
		}
		recs := tree.Get("records")
		if recs == nil || recs.Kind() != canonical.KindArray {
			continue
		}
		for _, r := range recs.Elements() {
			out = append(out, r.Canonical())
		}
	}
	return out
}

// The close's lighter decode agrees with the full one on every record
// shape in the vectors (and on a few made-up ones around details).
func TestDecodeForClose(t *testing.T) {
	bodies := vectorRecords(t)
	if len(bodies) < 50 {
		t.Fatalf("%d vector records: the vectors moved?", len(bodies))
	}
	// No vector record raises model_profile_missing: make some that do,
	// from every vector record that decodes.
	for _, b := range vectorRecords(t) {
		var r vpec.Record
		if _, err := document.Parse(b, &r); err != nil {
			continue
		}
		r.StageType, r.StagePart = stage.OpenSourceML, ""
		for _, d := range []map[string]any{nil, {stage.DetailGPUClass: "a100"}, {"k": []any{1.5, "x"}}} {
			r.Details = d
			j, err := json.Marshal(&r)
			if err != nil {
				t.Fatal(err)
			}
			bodies = append(bodies, j)
		}
	}
	for _, extra := range []string{
		`{"details":null}`,
		`{"details":{}}`,
		`{"details":[1]}`,
		`{"details":{"a":1e400}}`,
		`{"details":{"gpu_class":"a100"},"stage_type":"open_source_ml"}`,
	} {
		bodies = append(bodies, []byte(extra))
	}
	for i, b := range bodies {
		t.Run(strconv.Itoa(i), func(t *testing.T) { decodeAgrees(t, b) })
	}
}

func FuzzDecodeForClose(f *testing.F) {
	for _, b := range vectorRecords(f) {
		f.Add(b)
	}
	f.Fuzz(decodeAgrees)
}
