package testvectors

import (
	"math"
	mrand "math/rand/v2"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/ml/calibration"
)

// The published profile vector: a profile exactly as `svc calibrate run`
// and `svc registry publish` make it today, through their code path
// (calibration.Build on measurements, the unsigned document calibrate run
// writes, profile.Parse as publish reads it, profile.SignedDocument as the
// service signs and stores it), with every optional member a published
// profile has: drift_definition, measured, coverage,
// hub_model_id, signed_by, and a residual operator count.
const (
	PublishedProfileFile = "profile/published-pii-v1.0.0.json"
	// PublishedProfileID is its profile id.
	PublishedProfileID = "svc-test/published-pii-class/v1.0.0"
	// PublishedModelHash is the model it covers.
	PublishedModelHash = "sha256:0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9a0b1c2d3e4f50"
)

// publishedBounded is the published profile's model traced in residual
// mode (what the client's auto mode picks with such a profile).
var publishedBounded = boundedSpec{PublishedProfileID, PublishedModelHash, profile.TraceResidual, 23}

// publishedCounts are the model's operator counts in each trace mode.
var publishedCounts = map[string]int64{"full": 412, "production": 9, "residual": 23}

// measurement is one machine's drift samples of the model: for each trace
// mode and operator class, drift values spread over about two orders of
// magnitude from a fixed seed (Dropout exactly 0, as on real executions).
func measurement(seed uint64, m profile.Machine) *calibration.Measurement {
	r := mrand.New(mrand.NewPCG(seed, 0x5eed))
	scale := map[string]float64{profile.Linear: 1.2e-7, profile.LayerNorm: 5.5e-7, profile.Softmax: 1.6e-7, profile.GELU: 1.4e-7, profile.Dropout: 0, profile.Other: 2.1e-7}
	meas := &calibration.Measurement{ONNXModelHash: PublishedModelHash, OperatorCounts: publishedCounts, Passes: 200,
		Drift: map[string]map[string][]float64{}, Machines: []profile.Machine{m}}
	for mode := range publishedCounts {
		meas.Drift[mode] = map[string][]float64{}
		for class, s := range scale {
			samples := make([]float64, 400)
			for i := range samples {
				samples[i] = s * math.Exp2(4*r.Float64()-2)
			}
			meas.Drift[mode][class] = samples
		}
	}
	return meas
}

func (g *gen) publishedProfile() error {
	// One machine, one model: what one `svc calibrate run --model DIR` measures.
	ms := []*calibration.Measurement{measurement(1, profile.Machine{CPU: "AMD EPYC 7B13 64-Core Processor", KernelPath: "avx2", Passes: 200})}
	p, err := calibration.Build(ms, calibration.Meta{ProfileID: PublishedProfileID, ModelClass: "pii", Architecture: "distilbert",
		HubModelIDs: []string{"svc-test/pii-distilbert-small"}, Date: g.clk.now()}, calibration.Options{Passes: 200})
	if err != nil {
		return err
	}
	unsigned, err := document.MarshalIndent(p) // what calibrate run writes
	if err != nil {
		return err
	}
	read, err := profile.Parse(unsigned) // what registry publish reads
	if err != nil {
		return err
	}
	signed, err := profile.SignedDocument(read, g.service, "svc.test/.well-known/svc/trust-bundle.pem") // what the service stores
	if err != nil {
		return err
	}
	if err := writeFile(g.dir+"/"+PublishedProfileFile, signed); err != nil {
		return err
	}
	g.add(Vector{Name: "profile-published", Kind: "profile", File: PublishedProfileFile, Valid: true, Exit: 0,
		Description: "a profile made as svc calibrate run and svc registry publish make it (calibration.Build, profile.Parse, profile.SignedDocument), every optional member present: drift_definition svc.drift/v2, measured, coverage (the machine measured), hub_model_id, signed_by, full, production and residual operator counts"})
	return nil
}
