// Package profile defines signed per-operator drift profiles for ONNX
// classifier models (docs/FORMATS.md): the type, validation, signing and offline
// verification against a trust bundle.
package profile

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/signing"
)

// Schema is the value of the schema field of a v1 profile.
const Schema = "svc.profile/v1"

// Drift definitions (docs/BOUNDED.md "Executions and drift"): what a
// profile's bounds measure. A profile without drift_definition was
// calibrated with DriftV1 and is audited with it.
const (
	// DriftV1 is max(|Δmean|, |ΔRMS|) / RMS of the reference output.
	DriftV1 = "svc.drift/v1"
	// DriftV2 divides by the larger of the reference output's RMS and,
	// for reductions and additions (ReduceMean, ReduceSum, Add, Sub, Sum),
	// the RMS of each of their FLOAT inputs.
	DriftV2 = "svc.drift/v2"
)

// Operator classes a profile bounds.
const (
	Linear    = "Linear"
	LayerNorm = "LayerNorm"
	Softmax   = "Softmax"
	GELU      = "GELU"
	Dropout   = "Dropout"
	Other     = "Other"
)

var operatorClasses = [...]string{Linear, LayerNorm, Softmax, GELU, Dropout, Other}

// OperatorClasses returns every operator class (a new slice each call: the
// verifier's table cannot be changed through it).
func OperatorClasses() []string { return slices.Clone(operatorClasses[:]) }

// gpuClasses is the one list of GPU classes svc knows: profiles, VPEC
// bounded_inference blocks (pkg/core/vpec), calibration and the API read it.
var gpuClasses = [...]string{"cpu", "a10g", "a100", "h100"}

// GPUClasses returns the hardware classes a profile can be calibrated for
// (a new slice each call).
func GPUClasses() []string { return slices.Clone(gpuClasses[:]) }

// ValidGPUClass reports whether g is a known GPU class.
func ValidGPUClass(g string) bool { return slices.Contains(gpuClasses[:], g) }

// ValidID reports whether id is a profile id:
// <publisher>/<model_class>-class/v<major>.<minor>.<patch>.
func ValidID(id string) bool { return idPattern().MatchString(id) }

// idPattern is compiled on first use, not at every program start.
var idPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}/[a-z0-9][a-z0-9._-]{0,63}-class/v(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})\.(0|[1-9][0-9]{0,5})$`)
})

// Sentinel errors, matchable with errors.Is.
var (
	// ErrInvalid reports a profile whose fields break the v1 rules.
	ErrInvalid = errors.New("invalid profile")
	// ErrUnsigned reports a profile without a signature.
	ErrUnsigned = errors.New("profile is not signed")
)

// Profile is a model drift profile. JSON names are the wire names.
type Profile struct {
	Schema               string            `json:"schema"`
	ProfileID            string            `json:"profile_id"`
	ModelClass           string            `json:"model_class"`
	Architecture         string            `json:"architecture"`
	CalibratedGPUClasses []string          `json:"calibrated_gpu_classes" maxitems:"4"`
	CalibrationPasses    int64             `json:"calibration_passes"`
	CalibrationDate      string            `json:"calibration_date"`
	SafetyMargin         float64           `json:"safety_margin"`
	Operators            map[string]Bounds `json:"operators" maxitems:"6"`
	Models               []Model           `json:"models"`
	// DriftDefinition names the drift the bounds measure (DriftV1 when
	// absent: profiles made before it was recorded).
	DriftDefinition string `json:"drift_definition,omitempty"`
	// Measured is the drift distribution per operator class before the
	// floor and the safety margin (absent in older profiles).
	Measured map[string]Distribution `json:"measured,omitempty" maxitems:"6"`
	// Coverage lists the machines and kernel paths the measurements come
	// from (absent in older profiles).
	Coverage         []Machine `json:"coverage,omitempty" maxitems:"64"`
	SignedBy         string    `json:"signed_by,omitempty"`
	SigningKeyID     string    `json:"signing_key_id,omitempty"`
	ProfileSignature string    `json:"profile_signature,omitempty"`
}

// Bounds are the drift thresholds of one operator class: the 99th, 99.9th
// and 99.99th percentile of RMS-normalised drift, times the safety margin.
type Bounds struct {
	P99   float64 `json:"p99"`
	P99_9 float64 `json:"p99_9"`
	P9999 float64 `json:"p99_99"`
}

// Distribution is the measured drift of one operator class: the number
// of samples, their nearest-rank percentiles and the largest, before the
// 2^-20 floor and the safety margin.
type Distribution struct {
	Samples int64   `json:"samples"`
	P99     float64 `json:"p99"`
	P99_9   float64 `json:"p99_9"`
	P9999   float64 `json:"p99_99"`
	Max     float64 `json:"max"`
}

// Machine is one machine and kernel path a profile's measurements cover:
// the CPU model, the instruction set ONNX Runtime's kernels took there
// (avx512, avx2, sse4.2, neon, …), and the calibration passes made on it.
type Machine struct {
	CPU        string `json:"cpu"`
	KernelPath string `json:"kernel_path"`
	Passes     int64  `json:"passes"`
}

// Definition returns the drift definition of the profile's bounds.
func (p *Profile) Definition() string {
	if p.DriftDefinition == "" {
		return DriftV1
	}
	return p.DriftDefinition
}

// Model is one model a profile covers.
type Model struct {
	ONNXModelHash  string           `json:"onnx_model_hash"`
	HubModelID     string           `json:"hub_model_id,omitempty"`
	OperatorCounts map[string]int64 `json:"operator_counts" maxitems:"3"`
}

// Trace modes of a Bounded Inference trace: the keys of a model's
// operator_counts, and a VPEC record's bounded_inference.trace_mode.
const (
	TraceFull       = "full"
	TraceProduction = "production"
	TraceResidual   = "residual"
)

var traceModes = [...]string{TraceFull, TraceProduction, TraceResidual}

// TraceModes returns the trace modes a model's operator_counts may name
// (a new slice each call).
func TraceModes() []string { return slices.Clone(traceModes[:]) }

// Model returns the covered model with the given onnx_model_hash.
func (p *Profile) Model(onnxModelHash string) (*Model, bool) {
	for i := range p.Models {
		if p.Models[i].ONNXModelHash == onnxModelHash {
			return &p.Models[i], true
		}
	}
	return nil, false
}

// CoversGPU reports whether gpuClass is among the calibrated GPU classes.
func (p *Profile) CoversGPU(gpuClass string) bool {
	return slices.Contains(p.CalibratedGPUClasses, gpuClass)
}

// Validate checks every field against the v1 rules and returns all problems
// joined, each naming its field.
func (p *Profile) Validate() error {
	var errs []error
	bad := func(field, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%w: %s: %s", ErrInvalid, field, fmt.Sprintf(format, a...)))
	}
	if p.Schema != Schema {
		bad("schema", "is %q, want %q", p.Schema, Schema)
	}
	if !ValidID(p.ProfileID) {
		bad("profile_id", "%q is not of the form <publisher>/<model_class>-class/v<major>.<minor>.<patch>", p.ProfileID)
	}
	if p.ModelClass == "" {
		bad("model_class", "is empty")
	}
	if p.Architecture == "" {
		bad("architecture", "is empty")
	}
	if len(p.CalibratedGPUClasses) == 0 {
		bad("calibrated_gpu_classes", "is empty")
	}
	seen := map[string]bool{}
	for _, g := range p.CalibratedGPUClasses {
		if !ValidGPUClass(g) {
			bad("calibrated_gpu_classes", "%q is not one of %v", g, gpuClasses)
		}
		if seen[g] {
			bad("calibrated_gpu_classes", "%q is listed twice", g)
		}
		seen[g] = true
	}
	if p.CalibrationPasses < 1 || p.CalibrationPasses > 1<<40 {
		bad("calibration_passes", "is %d, want a positive count", p.CalibrationPasses)
	}
	if _, err := time.Parse("2006-01-02", p.CalibrationDate); err != nil {
		bad("calibration_date", "%q is not a YYYY-MM-DD date", p.CalibrationDate)
	}
	if !(p.SafetyMargin >= 1 && p.SafetyMargin <= 1000) {
		bad("safety_margin", "is %v, want a multiplier between 1 and 1000", p.SafetyMargin)
	}
	if len(p.Operators) == 0 {
		bad("operators", "is empty")
	}
	for _, name := range sortedKeys(p.Operators) {
		b := p.Operators[name]
		field := "operators." + name
		if !slices.Contains(operatorClasses[:], name) {
			bad(field, "unknown operator class, want one of %v", operatorClasses)
		}
		for _, v := range []float64{b.P99, b.P99_9, b.P9999} {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				bad(field, "thresholds must be finite and non-negative")
				break
			}
		}
		if !(b.P99 <= b.P99_9 && b.P99_9 <= b.P9999) {
			bad(field, "thresholds must satisfy p99 <= p99_9 <= p99_99")
		}
	}
	if d := p.DriftDefinition; d != "" && d != DriftV1 && d != DriftV2 {
		bad("drift_definition", "%q is not %s or %s: this verifier does not know how the bounds were measured", d, DriftV1, DriftV2)
	}
	for _, name := range sortedKeys(p.Measured) {
		d := p.Measured[name]
		field := "measured." + name
		if !slices.Contains(operatorClasses[:], name) {
			bad(field, "unknown operator class, want one of %v", operatorClasses)
		}
		ok := d.Samples >= 1
		for _, v := range []float64{d.P99, d.P99_9, d.P9999, d.Max} {
			ok = ok && !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0
		}
		if !ok || !(d.P99 <= d.P99_9 && d.P99_9 <= d.P9999 && d.P9999 <= d.Max) {
			bad(field, "want samples >= 1 and finite 0 <= p99 <= p99_9 <= p99_99 <= max")
		}
	}
	for i, mc := range p.Coverage {
		if mc.CPU == "" || mc.KernelPath == "" || mc.Passes < 1 {
			bad(fmt.Sprintf("coverage[%d]", i), "want a cpu, a kernel_path and passes >= 1")
		}
	}
	if len(p.Models) == 0 {
		bad("models", "is empty: a profile covers at least one model")
	}
	hashes := map[string]bool{}
	for i, m := range p.Models {
		field := fmt.Sprintf("models[%d]", i)
		if h, err := commitment.Parse(m.ONNXModelHash); err != nil || h.Algorithm != commitment.SHA256 {
			bad(field+".onnx_model_hash", "%q is not a sha256:<64 hex> hash", m.ONNXModelHash)
		}
		if hashes[m.ONNXModelHash] {
			bad(field+".onnx_model_hash", "model listed twice")
		}
		hashes[m.ONNXModelHash] = true
		if len(m.OperatorCounts) == 0 {
			bad(field+".operator_counts", "is empty")
		}
		for _, mode := range sortedKeys(m.OperatorCounts) {
			if !slices.Contains(traceModes[:], mode) {
				bad(field+".operator_counts."+mode, "unknown trace mode, want one of %v", traceModes)
			}
			if n := m.OperatorCounts[mode]; n < 1 || n > 1<<32 {
				bad(field+".operator_counts."+mode, "is %d, want a positive count", n)
			}
		}
	}
	return errors.Join(errs...)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// signatureField is the one field outside the profile signature.
const signatureField = "profile_signature"

// SignedBytes returns the bytes a profile signature covers: RFC 8785
// canonical JSON of the profile without profile_signature.
func SignedBytes(doc []byte) ([]byte, error) { return document.SignedBytes(doc, signatureField) }

// Sign validates p, then signs it with signer. signedBy is the locator of
// the public key (host and path of the trust bundle).
func Sign(p *Profile, signer *signing.Signer, signedBy string) error {
	p.Schema = Schema
	p.SignedBy = signedBy
	p.SigningKeyID = signer.KeyID()
	p.ProfileSignature = ""
	if err := p.Validate(); err != nil {
		return fmt.Errorf("sign profile: %w", err)
	}
	msg, err := document.MarshalSignedBytes(p, signatureField)
	if err != nil {
		return fmt.Errorf("sign profile: %w", err)
	}
	sig, err := signer.Sign(msg)
	if err != nil {
		return fmt.Errorf("sign profile: %w", err)
	}
	p.ProfileSignature = signing.FormatSignature(sig)
	return nil
}

// SignedDocument signs p (Sign) and returns the document the registry
// stores and serves for it: its indented JSON, byte for byte what `svc
// registry publish` stores and `svc registry get` and GET
// /api/v1/registry/profiles return (pkg/service/server's Publish calls it).
func SignedDocument(p *Profile, signer *signing.Signer, signedBy string) ([]byte, error) {
	if err := Sign(p, signer, signedBy); err != nil {
		return nil, err
	}
	b, err := document.MarshalIndent(p)
	if err != nil {
		return nil, fmt.Errorf("sign profile: %w", err)
	}
	return b, nil
}

// Parse decodes a profile strictly (no duplicate keys, no unknown, missing
// or mistyped fields) and validates it. It does not check the signature.
func Parse(doc []byte) (*Profile, error) {
	p, _, err := parse(doc)
	return p, err
}

func parse(doc []byte) (*Profile, *canonical.Value, error) {
	var p Profile
	tree, err := document.ParseWith(doc, &p, document.Options{CanonicalNumbers: true})
	if err != nil {
		return nil, nil, fmt.Errorf("profile: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, nil, fmt.Errorf("profile: %w", err)
	}
	return &p, tree, nil
}

// Verify parses doc and checks its signature against the trust bundle.
// Any change to any signed byte makes it fail.
func Verify(doc []byte, trust *signing.Bundle) (*Profile, error) {
	p, tree, err := parse(doc)
	if err != nil {
		return nil, err
	}
	if p.ProfileSignature == "" || p.SigningKeyID == "" {
		return p, fmt.Errorf("profile %s: %w", p.ProfileID, ErrUnsigned)
	}
	if err := trust.Verify(p.SigningKeyID, tree.Canonical(signatureField), p.ProfileSignature); err != nil {
		return p, fmt.Errorf("profile %s: %w", p.ProfileID, err)
	}
	return p, nil
}
