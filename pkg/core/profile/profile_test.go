package profile_test

import (
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
)

func testSigner(t testing.TB) (*signing.Signer, *signing.Bundle) {
	t.Helper()
	pub, priv, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	s, err := signing.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	b := signing.NewBundle()
	b.AddKey(pub)
	return s, b
}

func sample() *profile.Profile {
	return &profile.Profile{
		ProfileID:            "acme/toxicity-class/v1.2.3",
		ModelClass:           "toxicity",
		Architecture:         "distilbert",
		CalibratedGPUClasses: []string{"cpu"},
		CalibrationPasses:    1000,
		CalibrationDate:      "2026-11-20",
		SafetyMargin:         2,
		Operators: map[string]profile.Bounds{
			profile.Linear:    {P99: 1e-7, P99_9: 2e-7, P9999: 3.5e-7},
			profile.LayerNorm: {P99: 4e-6, P99_9: 5e-6, P9999: 9e-6},
		},
		Models: []profile.Model{{ONNXModelHash: "sha256:" + strings.Repeat("ab", 32), OperatorCounts: map[string]int64{"full": 100, "production": 9}}},
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	s, trust := testSigner(t)
	p := sample()
	if err := profile.Sign(p, s, "svc.example/.well-known/svc/trust-bundle.pem"); err != nil {
		t.Fatal(err)
	}
	doc, err := document.MarshalIndent(p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := profile.Verify(doc, trust)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if got.ProfileID != p.ProfileID || !got.CoversGPU("cpu") || got.CoversGPU("a100") {
		t.Errorf("round trip lost data: %+v", got)
	}
	if m, ok := got.Model(p.Models[0].ONNXModelHash); !ok || m.OperatorCounts["production"] != 9 {
		t.Errorf("Model lookup failed: %+v %v", m, ok)
	}
}

// Every change to any signed byte must be detected: flip each value.
func TestTamperDetected(t *testing.T) {
	s, trust := testSigner(t)
	p := sample()
	if err := profile.Sign(p, s, "svc.example/k.pem"); err != nil {
		t.Fatal(err)
	}
	doc, _ := document.MarshalIndent(p)
	tampers := map[string]func(q *profile.Profile){
		"profile_id":   func(q *profile.Profile) { q.ProfileID = "acme/toxicity-class/v1.2.4" },
		"model_class":  func(q *profile.Profile) { q.ModelClass = "pii" },
		"architecture": func(q *profile.Profile) { q.Architecture = "bert" },
		"gpu classes":  func(q *profile.Profile) { q.CalibratedGPUClasses = []string{"cpu", "h100"} },
		"passes":       func(q *profile.Profile) { q.CalibrationPasses = 999 },
		"date":         func(q *profile.Profile) { q.CalibrationDate = "2026-11-21" },
		"margin":       func(q *profile.Profile) { q.SafetyMargin = 3 },
		"threshold": func(q *profile.Profile) {
			q.Operators[profile.Linear] = profile.Bounds{P99: 1e-7, P99_9: 2e-7, P9999: 3.6e-7}
		},
		"operator added": func(q *profile.Profile) { q.Operators[profile.GELU] = profile.Bounds{} },
		"model hash":     func(q *profile.Profile) { q.Models[0].ONNXModelHash = "sha256:" + strings.Repeat("cd", 32) },
		"operator count": func(q *profile.Profile) { q.Models[0].OperatorCounts["full"] = 101 },
		"signed_by":      func(q *profile.Profile) { q.SignedBy = "evil.example/k.pem" },
		"signature garbled": func(q *profile.Profile) {
			// Another character than the one there (a fixed "A" left a
			// signature with an "A" at 10 unchanged: 1 run in 64 passed).
			c := "A"
			if q.ProfileSignature[10] == 'A' {
				c = "B"
			}
			q.ProfileSignature = q.ProfileSignature[:10] + c + q.ProfileSignature[11:]
		},
	}
	for name, f := range tampers {
		t.Run(name, func(t *testing.T) {
			q, err := profile.Parse(doc)
			if err != nil {
				t.Fatal(err)
			}
			f(q)
			bad, _ := document.MarshalIndent(q)
			if _, err := profile.Verify(bad, trust); err == nil {
				t.Fatal("tampered profile verified")
			}
		})
	}
}

func TestVerifyErrors(t *testing.T) {
	s, trust := testSigner(t)
	other, _ := testSigner(t)
	p := sample()
	if err := profile.Sign(p, other, "x/y"); err != nil {
		t.Fatal(err)
	}
	doc, _ := document.MarshalIndent(p)
	if _, err := profile.Verify(doc, trust); !errors.Is(err, signing.ErrUnknownKey) {
		t.Errorf("foreign key: %v, want ErrUnknownKey", err)
	}
	u := sample()
	u.Schema = profile.Schema
	doc, _ = document.MarshalIndent(u)
	if _, err := profile.Verify(doc, trust); !errors.Is(err, profile.ErrUnsigned) {
		t.Errorf("unsigned: %v, want ErrUnsigned", err)
	}
	_ = s
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(p *profile.Profile)
		field  string
	}{
		{"id", func(p *profile.Profile) { p.ProfileID = "acme/toxicity/v1" }, "profile_id"},
		{"gpu", func(p *profile.Profile) { p.CalibratedGPUClasses = []string{"tpu"} }, "calibrated_gpu_classes"},
		{"dup gpu", func(p *profile.Profile) { p.CalibratedGPUClasses = []string{"cpu", "cpu"} }, "listed twice"},
		{"passes", func(p *profile.Profile) { p.CalibrationPasses = 0 }, "calibration_passes"},
		{"date", func(p *profile.Profile) { p.CalibrationDate = "20-11-2026" }, "calibration_date"},
		{"margin", func(p *profile.Profile) { p.SafetyMargin = 0.5 }, "safety_margin"},
		{"order", func(p *profile.Profile) { p.Operators[profile.Linear] = profile.Bounds{P99: 3, P99_9: 2, P9999: 1} }, "p99 <= p99_9"},
		{"negative", func(p *profile.Profile) { p.Operators[profile.Linear] = profile.Bounds{P99: -1, P99_9: 2, P9999: 3} }, "non-negative"},
		{"op class", func(p *profile.Profile) { p.Operators["Conv"] = profile.Bounds{} }, "unknown operator class"},
		{"no models", func(p *profile.Profile) { p.Models = nil }, "models"},
		{"mode", func(p *profile.Profile) { p.Models[0].OperatorCounts = map[string]int64{"fast": 3} }, "unknown trace mode"},
		{"hash", func(p *profile.Profile) { p.Models[0].ONNXModelHash = "sha256:XYZ" }, "onnx_model_hash"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := sample()
			p.Schema = profile.Schema
			c.mutate(p)
			err := p.Validate()
			if !errors.Is(err, profile.ErrInvalid) || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("Validate() = %v, want ErrInvalid naming %q", err, c.field)
			}
		})
	}
}

func TestParseStrict(t *testing.T) {
	for name, doc := range map[string]string{
		"duplicate": `{"schema":"svc.profile/v1","schema":"svc.profile/v1"}`,
		"unknown":   `{"schema":"svc.profile/v1","extra":1}`,
		"type":      `{"calibration_passes":"1000"}`,
		"missing":   `{"schema":"svc.profile/v1"}`,
	} {
		if _, err := profile.Parse([]byte(doc)); !errors.Is(err, document.ErrSchema) {
			t.Errorf("%s: %v, want ErrSchema", name, err)
		}
	}
}

// TestParseInputErrors: a profile file that is empty, binary or too large
// gives a typed error a person can read (the CLI exits 2 on ErrNotJSON and
// ErrTooLarge), and empty optional members and nulls are refused (D2, D3).
func TestParseInputErrors(t *testing.T) {
	for name, c := range map[string]struct {
		doc  string
		want error
		msg  string
	}{
		"empty":     {"", document.ErrNotJSON, "the document is empty"},
		"binary":    {"\x00\x01", document.ErrNotJSON, "binary data"},
		"bom":       {"\ufeff{}", document.ErrNotJSON, "byte order mark"},
		"cut":       {`{"schema":`, document.ErrSyntax, "not valid JSON"},
		"null":      {`{"models":null}`, document.ErrSchema, "models: is null, want an array"},
		"empty opt": {`{"signed_by":""}`, document.ErrSchema, "signed_by: empty; omit the member instead"},
	} {
		_, err := profile.Parse([]byte(c.doc))
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) || strings.Contains(err.Error(), "canonical") {
			t.Errorf("%s: %v, want %v %q", name, err, c.want, c.msg)
		}
	}
	if _, err := profile.Parse(make([]byte, document.MaxSize+1)); !errors.Is(err, document.ErrTooLarge) {
		t.Errorf("oversized: %v", err)
	}
}

// TestItemLimits: lists and maps whose valid contents are bounded are
// refused above that bound before they are decoded (a profile of a
// million empty GPU classes cost 9 times its size to decode), and the
// bounds match the lists of valid values.
func TestItemLimits(t *testing.T) {
	for field, want := range map[string]int{"CalibratedGPUClasses": len(profile.GPUClasses()), "Operators": len(profile.OperatorClasses())} {
		f, _ := reflect.TypeFor[profile.Profile]().FieldByName(field)
		if got, _ := strconv.Atoi(f.Tag.Get("maxitems")); got != want {
			t.Errorf("%s: maxitems %d, want %d", field, got, want)
		}
	}
	f, _ := reflect.TypeFor[profile.Model]().FieldByName("OperatorCounts")
	if got, _ := strconv.Atoi(f.Tag.Get("maxitems")); got != len(profile.TraceModes()) {
		t.Errorf("OperatorCounts: maxitems %d", got)
	}
	doc := `{"calibrated_gpu_classes":[` + strings.Repeat(`"",`, 1000) + `""]}`
	if _, err := profile.Parse([]byte(doc)); !errors.Is(err, document.ErrSchema) || !strings.Contains(err.Error(), "calibrated_gpu_classes: has 1001 items, at most 4") {
		t.Errorf("1001 GPU classes: %v", err)
	}
}

func TestSet(t *testing.T) {
	s, _ := testSigner(t)
	p := sample()
	if err := profile.Sign(p, s, "x/y"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	doc, _ := document.MarshalIndent(p)
	os.WriteFile(dir+"/a.json", doc, 0o644)
	os.WriteFile(dir+"/broken.json", []byte("{"), 0o644)
	set := profile.NewSet()
	errs := set.AddDir(dir)
	if len(errs) != 1 || set.Len() != 1 {
		t.Fatalf("AddDir: %d profiles, errors %v", set.Len(), errs)
	}
	if _, err := set.Profile(p.ProfileID); err != nil {
		t.Error(err)
	}
	if _, err := set.Profile("acme/x-class/v1.0.0"); !errors.Is(err, profile.ErrNotFound) {
		t.Errorf("missing profile: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	if b, err := os.ReadFile("../../../testdata/vectors/profile/pii-detection-v1.0.0.json"); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"operators":{"Linear":{}}}`))
	// Nulls, empty values and number spellings at every depth.
	if b, err := os.ReadFile("../../../testdata/vectors/profile/pii-detection-v1.0.0.json"); err == nil {
		for _, edit := range [][2]string{
			{`"models": [`, `"models": null, "x": [`}, {`"models": [`, `"models": [null, `},
			{`"operators": {`, `"operators": null, "x": {`}, {`"operators": {`, `"operators": {"GELU": null, `},
			{`"hub_model_id"`, `"hub_model_id": null, "y"`}, {`"hub_model_id"`, `"hub_model_id": "", "y"`},
			{`"signed_by"`, `"signed_by": "", "y"`}, {`"calibration_passes": `, `"calibration_passes": 1e3, "y": `},
			{`"safety_margin": `, `"safety_margin": 1.50, "y": `}, {`"profile_signature": "Ed25519:`, `"profile_signature": "Ed25519:\r\n`},
		} {
			f.Add([]byte(strings.Replace(string(b), edit[0], edit[1], 1)))
		}
	}
	// Every integer of the profiles svc publishes (coverage, measured,
	// operator counts, passes) at the documented maxima and int64 edges.
	for _, p := range []string{"pii-detection-v1.0.0.json", "published-pii-v1.0.0.json"} {
		if b, err := os.ReadFile("../../../testdata/vectors/profile/" + p); err == nil {
			f.Add(b)
			for _, d := range fuzzedge.Documents(b, 600) {
				f.Add(d)
			}
		}
	}
	_, trust := testSigner(f)
	f.Fuzz(func(t *testing.T, doc []byte) {
		p, err := profile.Parse(doc)
		if err != nil && !errors.Is(err, document.ErrSchema) && !errors.Is(err, profile.ErrInvalid) {
			t.Fatalf("error %v is neither a schema error nor an invalid profile", err)
		}
		if err == nil && p.Validate() != nil {
			t.Fatal("Parse accepted an invalid profile")
		}
		if _, err := profile.Verify(doc, trust); err == nil {
			t.Fatal("a fuzzed profile verified under a fresh key")
		}
	})
}
