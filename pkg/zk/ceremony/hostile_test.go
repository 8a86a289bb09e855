package ceremony_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
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

// A downloaded ceremony whose phase-1 state or sealed parameters were
// replaced by a huge file: Verify refuses it by its length, before reading
// it (found: every file was read whole, then hashed, then its length
// checked).
func TestHostileHugeStateFile(t *testing.T) {
	for _, name := range []string{ceremony.StateFile(1, 1), ceremony.StateFile(1, 0), ceremony.SRSFile} {
		t.Run(name, func(t *testing.T) {
			p1, p2 := fixture(t)
			if err := os.Truncate(filepath.Join(p1, name), 4<<30); err != nil {
				t.Skipf("no sparse file here: %v", err)
			}
			_, err := ceremony.Verify(p2, ceremony.VerifyOptions{Phase1Dir: p1})
			if !errors.Is(err, ceremony.ErrStateFile) || !strings.Contains(err.Error(), "4294967296 bytes") {
				t.Fatalf("got %v, want ErrStateFile naming the length", err)
			}
		})
	}
}
