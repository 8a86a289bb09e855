package client_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/svc-gov/svc/pkg/client"
)

// FuzzParseBatchLines feeds arbitrary files to the --batch parser: it
// never panics; it refuses with ErrBatchFile, or returns at least one item,
// each with a valid check result.
func FuzzParseBatchLines(f *testing.F) {
	for _, s := range []string{
		`{"check":"pii","manifest_id":"sha256:ab","result":"pass","input":"x"}`,
		"{\"check\":\"pii\",\"manifest_id\":\"m\",\"result\":\"fail\",\"details\":{\"a\":\"b\"}}\n\n{\"check\":\"t\",\"manifest_id\":\"m\",\"result\":\"pass\",\"visibility\":\"transparent\"}\n",
		`{"check":"pii","manifest_id":"m","result":"maybe"}`,
		`{"check":"pii","manifest_id":"m","result":"pass","visibility":"selective"}`,
		`{"check":"pii","check":"x","manifest_id":"m","result":"pass"}`,
		"", "\n\n", "[]", "{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := client.ParseBatchLines(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, client.ErrBatchFile) {
				t.Fatalf("error %v does not match ErrBatchFile", err)
			}
			return
		}
		if len(items) == 0 {
			t.Fatal("no error and no item")
		}
		for i, it := range items {
			if !it.Result.Valid() || it.Check == "" || it.ManifestID == "" {
				t.Fatalf("item %d accepted: %+v", i, it)
			}
		}
	})
}
