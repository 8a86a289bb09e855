package present

import (
	"fmt"
	"io"
	"strings"

	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// Calibrated prints a calibrated profile written to out: its id, classes,
// passes and margin, each operator class's bounds in the order of
// profile.OperatorClasses, and each model's operator counts.
func Calibrated(w io.Writer, p *profile.Profile, out string) {
	fmt.Fprintf(w, "%s (%s, %d passes, margin %gx) -> %s\n", p.ProfileID, strings.Join(p.CalibratedGPUClasses, ","), p.CalibrationPasses, p.SafetyMargin, out)
	for _, c := range profile.OperatorClasses() {
		if b, ok := p.Operators[c]; ok {
			fmt.Fprintf(w, "  %-10s p99 %.3g  p99.9 %.3g  p99.99 %.3g\n", c, b.P99, b.P99_9, b.P9999)
		}
	}
	for _, m := range p.Models {
		fmt.Fprintf(w, "  model %s operators full %d, production %d", m.ONNXModelHash, m.OperatorCounts[trace.Full], m.OperatorCounts[trace.Production])
		if n, ok := m.OperatorCounts[trace.Residual]; ok {
			fmt.Fprintf(w, ", residual %d", n)
		}
		fmt.Fprintln(w)
	}
}
