package verify

import (
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestCheckProfile: bounded-inference.json's operator_bound record
// (sequence 4) against the profile it names, pii-detection-v1.0.0.json (cpu and
// a10g; production traces of 9 operators), from real profile sets.
func TestCheckProfile(t *testing.T) {
	trust := vectorTrust(t)
	profilePath := filepath.Join(vectors, "profile", "pii-detection-v1.0.0.json")
	set := func(t *testing.T, explicit ...string) ProfileSource {
		s := profile.NewSet()
		if _, err := s.AddFile(profilePath); err != nil {
			t.Fatal(err)
		}
		for _, p := range explicit {
			if err := s.AddExplicit(p); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	bounded := func(v *vpec.VPEC) *vpec.BoundedInference {
		for i := range v.Records {
			if v.Records[i].BoundedInference != nil {
				return v.Records[i].BoundedInference
			}
		}
		t.Fatal("no operator_bound record")
		return nil
	}
	cases := []struct {
		name     string
		file     string
		edit     func(v *vpec.VPEC)
		profiles func(t *testing.T) ProfileSource
		trust    *signing.Bundle
		want     want
	}{
		{"consistent", "bounded-inference.json", nil, func(t *testing.T) ProfileSource { return set(t) }, trust,
			want{Pass, "", false, "profile consistent (svc-test/pii-detection-class/v1.0.0 · cpu)"}},
		{"no Bounded Inference records", "clean.json", nil, func(t *testing.T) ProfileSource { return nil }, trust,
			want{NotApplicable, "", false, "no Bounded Inference records"}},
		{"no profiles given", "bounded-inference.json", nil, func(t *testing.T) ProfileSource { return nil }, trust,
			want{Fail, "PROFILE NOT AVAILABLE", true, "pass it with --profile or put it in the profile directory"}},
		{"a set without it", "bounded-inference.json", nil, func(t *testing.T) ProfileSource { return profile.NewSet() }, trust,
			want{Fail, "PROFILE NOT AVAILABLE", true, "profile not checked: sequence 4: profile svc-test/pii-detection-class/v1.0.0"}},
		{"a GPU class it was not calibrated on", "bounded-inference.json", func(v *vpec.VPEC) { bounded(v).GPUClass = "h100" },
			func(t *testing.T) ProfileSource { return set(t) }, trust,
			want{Fail, "PROFILE MISMATCH (gpu_class h100)", false, "is not among svc-test/pii-detection-class/v1.0.0's calibrated classes [cpu a10g]"}},
		{"another model", "bounded-inference.json", func(v *vpec.VPEC) { bounded(v).ONNXModelHash = commitment.String([]byte("other")) },
			func(t *testing.T) ProfileSource { return set(t) }, trust, want{Fail, "PROFILE MISMATCH", false, "is not covered by profile"}},
		{"another operator count", "bounded-inference.json", func(v *vpec.VPEC) { bounded(v).OperatorCount = 10 },
			func(t *testing.T) ProfileSource { return set(t) }, trust,
			want{Fail, "PROFILE MISMATCH", false, "operator_count 10 in production mode, profile svc-test/pii-detection-class/v1.0.0 gives 9"}},
		{"signed by a key not trusted", "bounded-inference.json", nil, func(t *testing.T) ProfileSource { return set(t) }, rootsOnly(t),
			want{Fail, "PROFILE INVALID", false, "profile inconsistent: sequence 4: profile svc-test/pii-detection-class/v1.0.0: "}},
		{"a given profile that is not one", "clean.json", nil,
			func(t *testing.T) ProfileSource {
				return set(t, filepath.Join(vectors, "profile", "invalid-tampered-threshold.json"))
			}, trust, want{Fail, "PROFILE INVALID", false, "--profile "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := vector(t, "vpec/valid/"+c.file)
			if c.edit != nil {
				c.edit(&d.VPEC)
			}
			c.want.check(t, CheckProfile, checkProfile(&d.VPEC, c.profiles(t), c.trust, nil))
		})
	}
}
