package verify

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckProfile: each Bounded Inference record's profile is signed by a
// trusted key and covers the record's GPU class, model and operator
// count; every profile given explicitly is valid.
const CheckProfile CheckName = "profile"

// ProfileSource finds model profiles by profile id. It returns the raw
// signed document; the verifier checks its signature itself.
type ProfileSource interface {
	Profile(profileID string) ([]byte, error)
}

// ErrProfileNotFound is returned by a ProfileSource without the profile.
var ErrProfileNotFound = profile.ErrNotFound

func (s *state) profile() Check {
	c := checkProfile(&s.doc.VPEC, s.opts.Profiles, s.opts.Trust, s.opts.Root)
	return c
}

// profileKey checks, with a trust root, that the key that signed prof is
// trusted for profile-signing at its signed calibration_date, and that it
// was never compromised: a profile carries no timestamp, so a compromised
// key refuses every profile whatever its date (docs/KEYS.md, "Which time
// a window is checked against"). Nil without a root or for a PEM bundle.
func profileKey(root *trustroot.Root, prof *profile.Profile) error {
	if root == nil || root.Legacy() {
		return nil
	}
	at, err := time.Parse("2006-01-02", prof.CalibrationDate)
	if err != nil {
		return fmt.Errorf("calibration_date %q: %w", prof.CalibrationDate, err)
	}
	k, err := root.KeyFor(trustroot.PurposeProfile, prof.SigningKeyID, at)
	if err != nil {
		return err
	}
	if !k.Window.CompromisedAt.IsZero() {
		return &trustroot.KeyError{KeyID: k.KeyID, Purpose: k.Purpose, At: at, Window: k.Window, Err: trustroot.ErrCompromised}
	}
	return nil
}

// checkProfile checks each Bounded Inference record of v against its
// profile from profiles, each signed by a key of trust; profiles given
// explicitly (a source with Explicit) are all checked.
func checkProfile(v *vpec.VPEC, profiles ProfileSource, trust *signing.Bundle, root *trustroot.Root) Check {
	c := Check{Name: CheckProfile}
	type key struct{ id, gpu string }
	var seen []key
	cache := map[string]*profile.Profile{}
	missing, invalid := 0, false
	var keyErr error // the first key a trust root refused
	var mismatchGPU string
	// Profiles given explicitly are all checked: a corrupt or forged one is
	// PROFILE INVALID even when no record needs it, never "not available".
	if ex, ok := profiles.(interface{ Explicit() []profile.File }); ok {
		for _, f := range ex.Explicit() {
			err := f.Err
			if err == nil {
				if trust == nil {
					continue
				}
				var p *profile.Profile
				if p, err = profile.Verify(f.Doc, trust); err == nil {
					err = profileKey(root, p)
				}
			}
			if err != nil {
				c.Details = append(c.Details, "--profile "+f.Path+": "+profileProblem(err))
				invalid = true
				if ke := (*trustroot.KeyError)(nil); errors.As(err, &ke) && keyErr == nil {
					keyErr = err
				}
			}
		}
	}
	for i := range v.Records {
		r := &v.Records[i]
		bi := r.BoundedInference
		if bi == nil {
			continue
		}
		if k := (key{bi.ProfileID, bi.GPUClass}); !slices.Contains(seen, k) {
			seen = append(seen, k)
		}
		prof, ok := cache[bi.ProfileID]
		if !ok {
			var err error
			prof, err = resolveProfile(bi.ProfileID, profiles, trust)
			if err == nil {
				err = profileKey(root, prof)
			}
			if err != nil {
				c.Details = append(c.Details, fmt.Sprintf("sequence %d: profile %s: %v", r.Sequence, bi.ProfileID, err))
				if errors.Is(err, ErrProfileNotFound) {
					missing++
				} else {
					invalid = true
				}
				if ke := (*trustroot.KeyError)(nil); errors.As(err, &ke) && keyErr == nil {
					keyErr = err
				}
				cache[bi.ProfileID] = nil
				continue
			}
			cache[bi.ProfileID] = prof
		}
		if prof == nil {
			continue
		}
		if !prof.CoversGPU(bi.GPUClass) {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d: gpu_class %s is not among %s's calibrated classes %v", r.Sequence, bi.GPUClass, prof.ProfileID, prof.CalibratedGPUClasses))
			mismatchGPU = bi.GPUClass
			continue
		}
		m, ok := prof.Model(bi.ONNXModelHash)
		if !ok {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d: model %s is not covered by profile %s", r.Sequence, commitment.Short(bi.ONNXModelHash), prof.ProfileID))
			continue
		}
		if want, ok := m.OperatorCounts[bi.TraceMode]; !ok || want != bi.OperatorCount {
			c.Details = append(c.Details, fmt.Sprintf("sequence %d: operator_count %d in %s mode, profile %s gives %d for this model", r.Sequence, bi.OperatorCount, bi.TraceMode, prof.ProfileID, want))
		}
	}
	if len(seen) == 0 && len(c.Details) == 0 {
		c.Status, c.Message = NotApplicable, "profile: no Bounded Inference records"
		return c
	}
	var names []string
	for _, k := range seen {
		names = append(names, k.id+" · "+k.gpu)
	}
	if len(c.Details) > 0 {
		code := "PROFILE MISMATCH"
		if invalid {
			code = "PROFILE INVALID"
		}
		if mismatchGPU != "" && !invalid {
			code = "PROFILE MISMATCH (gpu_class " + mismatchGPU + ")"
		}
		if keyErr != nil {
			f := keyFail(c, "PROFILE", keyErr)
			code = f.Code
		}
		if missing > 0 && len(c.Details) == missing {
			return fail(c, "PROFILE NOT AVAILABLE", "profile not checked: "+c.Details[0]+"; pass it with --profile or put it in the profile directory", true)
		}
		return fail(c, code, "profile inconsistent: "+c.Details[0], false)
	}
	c.Status, c.Message = Pass, "profile consistent ("+strings.Join(names, "; ")+")"
	return c
}

// resolveProfile finds profile id in profiles and checks its signature.
func resolveProfile(id string, profiles ProfileSource, trust *signing.Bundle) (*profile.Profile, error) {
	if profiles == nil {
		return nil, ErrProfileNotFound
	}
	doc, err := profiles.Profile(id)
	if err != nil {
		return nil, err
	}
	if trust == nil {
		return nil, fmt.Errorf("%w: no trust bundle to check its signature", ErrProfileNotFound)
	}
	prof, err := profile.Verify(doc, trust)
	if err != nil {
		return nil, err
	}
	if prof.ProfileID != id {
		return nil, fmt.Errorf("source returned profile %s", prof.ProfileID)
	}
	return prof, nil
}

// profileProblem says in one line what is wrong with a profile given to
// the verifier: the first of several schema problems (with their count),
// and for an unsigned one (what svc calibrate run writes) how to get it
// signed.
func profileProblem(err error) string {
	if errors.Is(err, profile.ErrUnsigned) {
		return err.Error() + ": it is what 'svc calibrate run' writes; the service signs it on 'svc registry publish', and 'svc registry get' gives the signed one"
	}
	msg := err.Error()
	if first, rest, ok := strings.Cut(msg, "\n"); ok {
		return fmt.Sprintf("%s (and %d more problems)", first, strings.Count(rest, "\n")+1)
	}
	return msg
}
