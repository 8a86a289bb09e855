//go:build cgo

package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/stage"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/ml/calibration"
	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestAuditDishonestVPECs runs `svc verify --trace` on VPECs signed by a
// service key that carry false Bounded Inference claims the service itself
// would refuse (as an older or compromised service might sign): a GPU
// class the profile does not cover, and the root of a doctored trace. Both
// end INVALID — PROFILE MISMATCH naming the GPU class; the honest claim is
// VALID with "profile consistent".
func TestAuditDishonestVPECs(t *testing.T) {
	m, modelDir := ortest.Model(t, modelgen.Config{Style: modelgen.StyleTorch})
	lib, err := inference.LibraryPath("")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("SVC_ORT_LIB", lib) // the binary runs with its own cache directory
	dir := t.TempDir()
	mat, err := server.LoadMaterial(filepath.Join(dir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	prof, err := calibration.Calibrate(m, calibration.Meta{ProfileID: "acme/toxicity-class/v1.0.0", ModelClass: "toxicity", Architecture: "distilbert", Date: time.Now()}, calibration.Options{Passes: 30})
	if err != nil {
		t.Fatal(err)
	}
	if err := profile.Sign(prof, mat.Signer, "test"); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	marshal := func(v any) []byte {
		b, err := document.MarshalIndent(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	profPath, bundle := write("profile.json", marshal(prof)), write("bundle.pem", mat.Trust.Marshal())
	input := []byte("You are an idiot and I will find where you live.")
	inputPath := write("input.txt", input)
	honest, err := trace.Run(m, input, trace.Production)
	if err != nil {
		t.Fatal(err)
	}
	doctored := *honest
	doctored.Operators = append([]trace.Operator(nil), honest.Operators...)
	doctored.Operators[1].Mean += 1e-3 * doctored.Operators[1].RMS
	doctored.MerkleRoot, _ = trace.Root(doctored.Operators)

	// sealed writes a one-record VPEC, signed with the service key, whose
	// record claims tr on gpu.
	sealed := func(name, gpu string, tr *trace.Trace) string {
		rec := vpec.Record{RecordID: names.NewID("rec_"), Sequence: 1, Check: "toxicity", ManifestID: "m", CheckResult: vpec.ResultPass,
			ProofLevel: vpec.OperatorBound, CommitmentAlgorithm: "sha256", CommitmentHash: tr.InputCommitment, Visibility: vpec.Opaque,
			RecordedAt: vpec.FormatTime(time.Now()), StageType: stage.BoundCommittedInference, StagePart: stage.PartInference,
			BoundedInference: &vpec.BoundedInference{ProfileID: prof.ProfileID, GPUClass: gpu, ONNXModelHash: tr.ONNXModelHash,
				TraceMode: tr.Mode, OperatorCount: tr.OperatorCount, MerkleRoot: tr.MerkleRoot}}
		doc, err := testvectors.SealRecords("run_00000000-0000-4000-8000-000000000001", []vpec.Record{rec}, mat.Signer, mat.TSA)
		if err != nil {
			t.Fatal(err)
		}
		return write(name, doc)
	}
	tests := []struct {
		name, gpu string
		tr        *trace.Trace
		exit      int
		want      []string
	}{
		{"honest", "cpu", honest, 0, []string{"profile consistent (acme/toxicity-class/v1.0.0 · cpu), sequence 1: 6 operators replayed", "\nVALID"}},
		{"uncalibrated gpu class", "a100", honest, 1, []string{"gpu_class a100 is not among", "INVALID — PROFILE MISMATCH (gpu_class a100)"}},
		{"doctored mean", "cpu", &doctored, 1, []string{"profile inconsistent (acme/toxicity-class/v1.0.0 · cpu)", "drift beyond the p99.99 bound", "INVALID — PROFILE MISMATCH (gpu_class cpu)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vpecPath := sealed(strings.ReplaceAll(tc.name, " ", "-")+".json", tc.gpu, tc.tr)
			tracePath := write(strings.ReplaceAll(tc.name, " ", "-")+".trace.json", marshal(tc.tr))
			out, code := run(t, t.TempDir(), "svc", "verify", vpecPath, "--trust-root", bundle, "--profile", profPath,
				"--trace", tracePath, "--model", modelDir, "--input-file", inputPath)
			if code != tc.exit {
				t.Fatalf("exit %d, want %d\n%s", code, tc.exit, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
