//go:build cgo

package cli_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/app/cli"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
)

// svc calibrate run draws a progress bar on a terminal's stderr, and
// nothing of it through a pipe.
func TestCalibrationProgressBar(t *testing.T) {
	_, dir := ortest.Model(t, modelgen.Config{Layers: 1, Hidden: 16, Heads: 2, SeqLen: 8})
	for _, tty := range []bool{true, false} {
		var out, errb bytes.Buffer
		s := &cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, OutIsTTY: tty, ErrIsTTY: tty, Getenv: func(string) string { return "" }}
		code := cli.Main([]string{"calibrate", "run", "--model", dir, "--passes", "30", "--out", filepath.Join(t.TempDir(), "p.json")}, s)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		bar := strings.Contains(errb.String(), "\r") && strings.Contains(errb.String(), "30/30 passes")
		if bar != tty {
			t.Errorf("tty=%v: stderr %q", tty, errb.String())
		}
		if !strings.Contains(out.String(), "(cpu, 30 passes, margin 2x)") {
			t.Errorf("stdout %q", out.String())
		}
	}
}
