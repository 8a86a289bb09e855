package zkverify_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

func read(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../../testdata/vectors", rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoad: cached entries (a directory on disk, a folder in memory) are
// skipped with a warning when they are not entries; explicit ones are
// all kept and win; what stops a verification is an error.
func TestLoad(t *testing.T) {
	head, threshold := read(t, "circuit/mlp-head-16-8-2.json"), read(t, "circuit/threshold-check.json")
	profile := read(t, "profile/pii-detection-v1.0.0.json")
	e, err := zkverify.ParseEntry(head)
	if err != nil {
		t.Fatal(err)
	}
	var other bytes.Buffer // the head's entry with other bytes, same circuit id
	if err := json.Indent(&other, head, "", "\t"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"head.json": head, "profile.json": profile, "notes.txt": []byte("x")} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name     string
		src      zkverify.Sources
		ids      int
		explicit int
		warnings int
		err      error
		headDoc  []byte // the document held for the head's circuit id
	}{
		{name: "a cache directory", src: zkverify.Sources{Dir: dir}, ids: 1, warnings: 1, headDoc: head},
		{name: "a missing cache directory", src: zkverify.Sources{Dir: filepath.Join(dir, "none")}},
		{name: "a folder in memory", src: zkverify.Sources{Folder: []zkverify.Doc{{Name: "c/head.json", Data: head}, {Name: "c/t.json", Data: threshold},
			{Name: "c/profile.json", Data: profile}, {Name: "c/notes.txt", Data: []byte("x")}, {Name: "c/huge.json", Data: make([]byte, zkverify.MaxEntryBytes+1)}}},
			ids: 2, warnings: 2, headDoc: head},
		{name: "explicit files win over cached ones", src: zkverify.Sources{Dir: dir, Docs: []zkverify.Doc{{Name: "other.json", Data: other.Bytes()}}},
			ids: 1, explicit: 1, warnings: 1, headDoc: other.Bytes()},
		{name: "an explicit non-entry is kept for the verifier", src: zkverify.Sources{Docs: []zkverify.Doc{{Name: "p.json", Data: profile}}}, explicit: 1},
		{name: "the same explicit entry twice", src: zkverify.Sources{Paths: []string{filepath.Join(dir, "head.json")}, Docs: []zkverify.Doc{{Name: "h.json", Data: head}}},
			ids: 1, explicit: 2, headDoc: head},
		{name: "two explicit entries with one circuit id", src: zkverify.Sources{Docs: []zkverify.Doc{{Name: "h.json", Data: head}, {Name: "o.json", Data: other.Bytes()}}}, err: zkverify.ErrAmbiguous},
		{name: "an explicit entry too large", src: zkverify.Sources{Docs: []zkverify.Doc{{Name: "huge.json", Data: make([]byte, zkverify.MaxEntryBytes+1)}}}, err: document.ErrTooLarge},
		{name: "an explicit file that does not exist", src: zkverify.Sources{Paths: []string{filepath.Join(dir, "none.json")}}, err: fs.ErrNotExist},
	} {
		t.Run(c.name, func(t *testing.T) {
			set, warnings, err := zkverify.Load(c.src)
			if len(warnings) != c.warnings {
				t.Errorf("warnings %v, want %d", warnings, c.warnings)
			}
			if c.err != nil {
				if !errors.Is(err, c.err) || set != nil {
					t.Fatalf("Load = %v, %v; want an error matching %v", set, err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if set.Len() != c.ids || len(set.Explicit()) != c.explicit {
				t.Errorf("%d ids, %d explicit; want %d, %d", set.Len(), len(set.Explicit()), c.ids, c.explicit)
			}
			if doc, _ := set.Get(e.CircuitID); !bytes.Equal(doc, c.headDoc) {
				t.Errorf("the head's circuit id holds %d bytes, want %d", len(doc), len(c.headDoc))
			}
		})
	}
}
