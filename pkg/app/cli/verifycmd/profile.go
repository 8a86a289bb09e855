package verifycmd

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
)

type verifyProfileOptions struct {
	trust  clicore.TrustOptions
	output string
}

// profileReport is the JSON result of verify-profile.
type profileReport struct {
	Valid                bool     `json:"valid"`
	Verdict              string   `json:"verdict"`
	ProfileID            string   `json:"profile_id,omitempty"`
	ModelClass           string   `json:"model_class,omitempty"`
	CalibratedGPUClasses []string `json:"calibrated_gpu_classes,omitempty"`
	Models               int      `json:"models"`
	SigningKeyID         string   `json:"signing_key_id,omitempty"`
	Error                string   `json:"error,omitempty"`
	// TrustRoot names the trust bundle and where its name came from.
	TrustRoot *verify.TrustRoot `json:"trust_root,omitempty"`
}

// VerifyProfile is the verify-profile command.
func VerifyProfile(a *clicore.App) *cobra.Command {
	o := &verifyProfileOptions{}
	cmd := &cobra.Command{
		Use:   "verify-profile PROFILE",
		Short: "Verify a model drift profile's signature offline",
		Long: `Verify a signed model drift profile offline: strict schema, field rules,
and the Ed25519 signature by a key in the trust bundle. Any change to a
signed field makes it fail.

Exit codes: 0 VALID, 1 INVALID, 2 usage or unreadable input,
3 trust bundle missing or unusable.`,
		Example: fmt.Sprintf(`  %s verify-profile profile.json --trust-root trust-bundle.pem`, a.Name),
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return runVerifyProfile(a, o, args[0]) },
	}
	o.trust.Add(a, cmd)
	clicore.AddOutputFlag(cmd, &o.output)
	return cmd
}

func runVerifyProfile(a *clicore.App, o *verifyProfileOptions, path string) error {
	if err := clicore.CheckOutput(o.output); err != nil {
		return err
	}
	doc, err := a.ReadInput(path, "profile")
	if err != nil {
		return err
	}
	if err := document.CheckInput(doc); err != nil {
		return &clicore.Error{Code: clicore.ExitUsage, Err: fmt.Errorf("read profile: %s", clicore.Safe(err.Error())), Hint: "a profile is the signed JSON document 'svc profile' writes"}
	}
	trust, err := o.trust.Load()
	if err != nil {
		return err
	}
	prof, verr := profile.Verify(doc, trust)
	rep := profileReport{Valid: verr == nil, Verdict: "VALID", TrustRoot: &verify.TrustRoot{File: o.trust.TrustRoot, Source: o.trust.Source}}
	if prof != nil {
		rep.ProfileID, rep.ModelClass, rep.CalibratedGPUClasses = prof.ProfileID, prof.ModelClass, prof.CalibratedGPUClasses
		rep.Models, rep.SigningKeyID = len(prof.Models), prof.SigningKeyID
	}
	if verr != nil {
		rep.Error = verr.Error()
		rep.Verdict = "INVALID — " + profileCode(verr)
	}
	if o.output == clicore.OutputJSON {
		if err := a.WriteJSON(rep); err != nil {
			return err
		}
	} else {
		printProfileReport(a, rep, verr)
	}
	if verr != nil {
		return clicore.ExitError{Code: clicore.ExitInvalid}
	}
	return nil
}

func profileCode(err error) string {
	switch {
	case errors.Is(err, signing.ErrUnknownKey):
		return "UNKNOWN SIGNING KEY"
	case errors.Is(err, signing.ErrBadSignature):
		return "SIGNATURE INVALID"
	case errors.Is(err, profile.ErrUnsigned):
		return "UNSIGNED"
	default:
		return "SCHEMA ERROR"
	}
}

func printProfileReport(a *clicore.App, r profileReport, err error) {
	p := a.Palette()
	w := a.Streams.Out
	safe := clicore.Safe
	if r.ProfileID != "" {
		fmt.Fprintf(w, "profile %s\n", p.Bold(safe(r.ProfileID)))
		fmt.Fprintf(w, "  model class %s · GPU classes %s · %d model(s)\n", safe(r.ModelClass), safe(strings.Join(r.CalibratedGPUClasses, ", ")), r.Models)
	}
	if tr := r.TrustRoot; tr != nil {
		fmt.Fprintf(w, "  trust root %s (from %s)\n", safe(tr.File), tr.Source)
	}
	if err == nil {
		fmt.Fprintf(w, "  %s schema valid\n", a.Mark(verify.Pass))
		fmt.Fprintf(w, "  %s signature valid (Ed25519, key %s)\n", a.Mark(verify.Pass), safe(r.SigningKeyID))
		fmt.Fprintln(w, p.Green(r.Verdict))
		return
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "  %s %s\n", a.Mark(verify.Fail), safe(line))
	}
	fmt.Fprintln(w, p.Red(r.Verdict))
}
