//go:build cgo

package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/app/cli"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
)

// svc calibrate run writes the same profile bytes (and the same
// measurements file) whatever --workers says: the executions overlap, the
// measurement does not change.
func TestCalibrateRunWorkersSameProfile(t *testing.T) {
	_, dir := ortest.Model(t, modelgen.Config{Layers: 1, Hidden: 16, Heads: 2, SeqLen: 8})
	tmp := t.TempDir()
	var profiles, meas [][]byte
	for _, workers := range []string{"1", "2", "5"} {
		var out, errb bytes.Buffer
		s := &cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
		p, m := filepath.Join(tmp, "p"+workers+".json"), filepath.Join(tmp, "m"+workers+".json")
		code := cli.Main([]string{"calibrate", "run", "--model", dir, "--passes", "24", "--seed", "3", "--workers", workers, "--out", p, "--measurements-out", m}, s)
		if code != 0 {
			t.Fatalf("--workers %s: exit %d: %s", workers, code, errb.String())
		}
		pb, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		mb, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		profiles, meas = append(profiles, pb), append(meas, mb)
	}
	for i := 1; i < len(profiles); i++ {
		if !bytes.Equal(profiles[0], profiles[i]) {
			t.Errorf("profile %d differs from --workers 1's:\n%s\nwant\n%s", i, profiles[i], profiles[0])
		}
		if !bytes.Equal(meas[0], meas[i]) {
			t.Errorf("measurements %d differ from --workers 1's", i)
		}
	}
}
