package vpec

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// vectorDocs returns every VPEC test vector, by "dir/file" name
// ("valid/witnessed.json"); it fails t when fewer than ten are found.
func vectorDocs(t testing.TB) map[string][]byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("../../../testdata/vectors/vpec", "*", "*.json"))
	if len(files) < 10 {
		t.Fatalf("%d vectors", len(files))
	}
	docs := make(map[string][]byte, len(files))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p)] = b
	}
	return docs
}

// numbered is baseRecord as record k of a run: sequence k+1 and an id of
// its own.
func numbered(k int) map[string]any {
	m := baseRecord(nil)
	m["sequence"], m["record_id"] = k+1, fmt.Sprintf("rec_00000000-0000-4000-8000-%012d", k+1)
	return m
}
