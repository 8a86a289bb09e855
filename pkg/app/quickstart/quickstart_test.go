package quickstart_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/app/quickstart"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/ml/inference"
)

// Run end to end, as svc quickstart does: every file it names exists, the
// VPEC verifies offline, and with ONNX Runtime the replay audit ran and
// passed; without it the classifier step is skipped and said so.
func TestRun(t *testing.T) {
	var said []string
	res, err := quickstart.Run(context.Background(), quickstart.Options{Dir: t.TempDir(), Version: "test",
		Say: func(format string, args ...any) { said = append(said, fmt.Sprintf(format, args...)) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.VerifyErr != nil || !res.Report.Valid {
		t.Fatalf("verdict %s: %v", res.Report.Verdict, res.VerifyErr)
	}
	for _, p := range []string{res.VPECPath, res.TrustBundlePath} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	lib, ortErr := inference.LibraryPath("")
	if ortErr == nil {
		ortErr = inference.Init(lib)
	}
	var audit *verify.Check
	for i, c := range res.Report.Checks {
		if c.Name == verify.CheckAudit {
			audit = &res.Report.Checks[i]
		}
	}
	if ortErr != nil {
		if res.Bounded != nil || audit != nil || !strings.Contains(strings.Join(said, "\n"), "skipping Bounded Inference") {
			t.Fatalf("no runtime, yet bounded %+v audit %+v", res.Bounded, audit)
		}
		return
	}
	if res.Bounded == nil || audit == nil || audit.Status != verify.Pass || !strings.Contains(audit.Message, "operators replayed") {
		t.Fatalf("bounded %+v audit %+v", res.Bounded, audit)
	}
	for _, p := range []string{res.Bounded.ModelDir, res.Bounded.TracePath, res.Bounded.ProfilePath, res.Bounded.InputPath} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if b, _ := os.ReadFile(res.VPECPath); strings.Contains(string(b), "Jane Roe") {
		t.Error("the raw input is in the VPEC")
	}
}
