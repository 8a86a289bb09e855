package ceremony_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/zk/ceremony"
)

// A ceremony directory from elsewhere (a download) whose transcript.json
// is huge: Open refuses it without reading it (a sparse file: no disk
// used). Found: Open read the whole file into memory first.
func TestHostileHugeTranscript(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, ceremony.TranscriptFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(4 << 30); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	for name, call := range map[string]func() error{
		"open":       func() error { _, err := ceremony.Open(dir); return err },
		"contribute": func() error { _, err := (&ceremony.Ceremony{Dir: dir}).Contribute("Mallory"); return err },
		"verify":     func() error { _, err := ceremony.Verify(dir, ceremony.VerifyOptions{}); return err },
	} {
		if err := call(); !errors.Is(err, ceremony.ErrStateFile) {
			t.Errorf("%s: %v, want ErrStateFile", name, err)
		}
	}
}
