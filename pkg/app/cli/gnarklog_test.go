package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/consensys/gnark/logger"
	"github.com/rs/zerolog"

	"github.com/svc-gov/svc/pkg/app/cli"
)

// TestGnarkLoggingOff: the proof libraries leave gnark's logger to the
// program, and svc and svc-verify turn it off, so that verifying a VPEC's
// Groth16 proofs prints svc's results and no "DBG verifier done" line. A
// test binary's gnark logger is silent by default, so the test gives it a
// debug-level writer first, as a real binary has.
func TestGnarkLoggingOff(t *testing.T) {
	args := []string{"verify", vectorsDir + "/vpec/valid/proofs.json", "--trust-root", vectorsDir + "/keys/trust-bundle.pem",
		"--circuit-dir", vectorsDir + "/circuit"}
	for _, c := range []struct {
		name string
		main func([]string, *cli.Streams) int
	}{{"svc", cli.Main}, {"svc-verify", cli.VerifyMain}} {
		t.Run(c.name, func(t *testing.T) {
			var gnark, out, errb bytes.Buffer
			logger.Set(zerolog.New(&gnark).Level(zerolog.DebugLevel))
			t.Cleanup(func() { logger.Set(zerolog.Nop()) })
			s := &cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}
			if code := c.main(args, s); code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
			}
			if !strings.Contains(out.String(), "ZK proofs valid") {
				t.Fatalf("no proofs verified:\n%s", out.String())
			}
			if gnark.Len() != 0 {
				t.Errorf("gnark logged while svc ran:\n%s", gnark.String())
			}
		})
	}
}
