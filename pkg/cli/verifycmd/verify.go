package verifycmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/cli/clicore"
	"github.com/svc-gov/svc/pkg/profile"
	"github.com/svc-gov/svc/pkg/signing"
	"github.com/svc-gov/svc/pkg/vpec"
)

// Audit is an extra check svc adds to verify: the replay audit of a
// Bounded Inference trace, which needs cgo and ONNX Runtime and so is not
// part of svc-verify.
type Audit struct {
	// Long is a paragraph of help text; Example, lines of examples.
	Long, Example string
	// AddFlags registers the audit's flags on the verify command.
	AddFlags func(cmd *cobra.Command)
	// Run returns the audit's check, or ok false when its flags did not
	// ask for an audit. It runs only on a readable document.
	Run func(doc []byte, trust *signing.Bundle, set *profile.Set) (c vpec.Check, ok bool, err error)
}

type verifyOptions struct {
	trust        clicore.TrustOptions
	profiles     []string
	profileDir   string
	circuits     circuitOptions
	output       string
	requireClean bool
}

// DefaultProfileDir is the cache of signed profiles verify reads.
func DefaultProfileDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "svc", "profiles")
	}
	return ""
}

const verifyLong = `Verify a VPEC offline: schema, Ed25519 signature by a key in the trust
bundle, hash chain from genesis, Merkle root, RFC 3161 timestamp, gaps,
summary counts, witnessed reviews, zero-knowledge proofs against signed
circuit entries and, for Bounded Inference records, the signed model
profile. Every check is reported by name; the last line is
the verdict.`

const verifyLongTrust = `Trust material comes only from --trust-root or SVC_TRUST_ROOT, never from
a config file; the report names the bundle and where it came from. Every
--profile file is checked: a corrupt or forged one is PROFILE INVALID. A
valid VPEC with gaps is VALID and not clean; --require-clean makes that
exit 1.

Exit codes: 0 VALID, 1 INVALID, 2 usage or unreadable input (empty,
binary, not JSON), 3 trust material (trust bundle, TSA root, profile,
circuit entry) missing or unusable.`

// Verify is the verify command; audit, when not nil, adds the replay
// audit (svc only).
func Verify(a *clicore.App, audit *Audit) *cobra.Command {
	o := &verifyOptions{}
	long := verifyLong + "\n\n"
	example := fmt.Sprintf(`  %[1]s verify vpec.json --trust-root trust-bundle.pem
  %[1]s verify vpec.json --trust-root trust-bundle.pem --profile profile.json
  %[1]s verify vpec.json --trust-root trust-bundle.pem --circuit circuit.json --circuit threshold.json
`, a.Name)
	if audit != nil {
		long += audit.Long + "\n\n"
		example += audit.Example
	}
	example += fmt.Sprintf("  %s verify - --trust-root trust-bundle.pem --output json < vpec.json", a.Name)
	cmd := &cobra.Command{
		Use:     "verify VPEC",
		Short:   "Verify a VPEC offline",
		Long:    long + verifyLongTrust,
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE:    func(cmd *cobra.Command, args []string) error { return runVerify(a, o, audit, args[0]) },
	}
	o.trust.Add(a, cmd)
	cmd.Flags().StringArrayVar(&o.profiles, "profile", nil, "signed model profile JSON for Bounded Inference records (repeatable)")
	cmd.Flags().StringVar(&o.profileDir, "profile-dir", "", "directory of cached signed profiles (default: svc/profiles in the user cache directory; env SVC_PROFILE_DIR)")
	o.circuits.add(cmd)
	cmd.Flags().BoolVar(&o.requireClean, "require-clean", false, "treat governance gaps and declared chain breaks as invalid (exit 1)")
	if audit != nil && audit.AddFlags != nil {
		audit.AddFlags(cmd)
	}
	clicore.AddOutputFlag(cmd, &o.output)
	return cmd
}

func runVerify(a *clicore.App, o *verifyOptions, audit *Audit, path string) error {
	if err := clicore.CheckOutput(o.output); err != nil {
		return err
	}
	doc, err := a.ReadInput(path, "VPEC")
	if err != nil {
		return err
	}
	trust, err := o.trust.Load()
	if err != nil {
		return err
	}
	set := profile.NewSet()
	if o.profileDir == "" {
		o.profileDir = DefaultProfileDir()
	}
	if o.profileDir != "" {
		for _, err := range set.AddDir(o.profileDir) {
			fmt.Fprintf(a.Streams.Err, "%s: warning: skipping cached profile: %s\n", a.Name, clicore.Safe(err.Error()))
		}
	}
	// Profiles named on the command line win over cached ones. Each is
	// checked: a corrupt or forged one makes the profile check fail
	// (PROFILE INVALID, exit 1); two with one profile_id and different
	// bytes are refused.
	for _, p := range o.profiles {
		if err := set.AddExplicit(p); err != nil {
			hint := "--profile takes a signed model profile JSON file"
			if errors.Is(err, profile.ErrAmbiguous) {
				hint = "pass each profile once: which of the two is meant cannot be decided for you"
			}
			return &clicore.Error{Code: clicore.ExitUsage, Err: err, Hint: hint}
		}
	}
	// Verification allocates about ten times the document's size and the
	// process exits right after: collect garbage only past a memory limit.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(max(512<<20, 24*int64(len(doc)))))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	circuits, err := o.circuits.load(a)
	if err != nil {
		return err
	}
	opts := vpec.Options{Trust: trust, Profiles: set, RequireClean: o.requireClean, Proofs: verifier(trust, circuits), CircuitAdvice: circuitAdvice}
	if audit != nil && audit.Run != nil {
		opts.Extra = append(opts.Extra, func(doc []byte) (vpec.Check, bool, error) { return audit.Run(doc, trust, set) })
	}
	report, err := vpec.Verify(doc, opts)
	code := clicore.ExitValid
	switch {
	case err == nil:
	case errors.Is(err, vpec.ErrUnreadable):
		code = clicore.ExitUsage
	case errors.Is(err, vpec.ErrUnverified):
		code = clicore.ExitTrust
	case errors.Is(err, vpec.ErrInvalid):
		code = clicore.ExitInvalid
	default:
		// Not a verdict: the audit's own error (flags, files).
		return err
	}
	report.TrustRoot = &vpec.TrustRoot{File: o.trust.TrustRoot, Source: o.trust.Source}
	if o.output == clicore.OutputJSON {
		if err := a.WriteJSON(report); err != nil {
			return err
		}
	} else {
		PrintReport(a, report)
	}
	if code != clicore.ExitValid {
		return clicore.ExitError{Code: code}
	}
	return nil
}

// PrintReport prints a verification report for a person: one line per
// check, then the verdict.
func PrintReport(a *clicore.App, r *vpec.Report) {
	p := a.Palette()
	w := a.Streams.Out
	safe := clicore.Safe
	if r.VPECID != "" {
		fmt.Fprintf(w, "VPEC %s\n", p.Bold(safe(r.VPECID)))
		fmt.Fprintf(w, "  run %s · workflow %s · org %s · %s\n", safe(r.RunID), safe(r.WorkflowID), safe(r.OrgID), safe(r.Environment))
	}
	if tr := r.TrustRoot; tr != nil {
		fmt.Fprintf(w, "  trust root %s (from %s)\n", safe(tr.File), tr.Source)
	}
	for i := 0; i < len(r.Checks); i++ {
		c := r.Checks[i]
		// Checks that did not run for one reason are one line naming them.
		if c.Status == vpec.NotApplicable && (c.Message == vpec.NotCheckedSchema || c.Message == vpec.NotCheckedUnreadable) {
			var names []string
			for ; i < len(r.Checks) && r.Checks[i].Message == c.Message; i++ {
				names = append(names, string(r.Checks[i].Name))
			}
			i--
			fmt.Fprintf(w, "  %s %s: %s\n", a.Mark(c.Status), safe(c.Message), safe(strings.Join(names, ", ")))
			continue
		}
		fmt.Fprintf(w, "  %s %s\n", a.Mark(c.Status), safe(c.Message))
		if (c.Status == vpec.Fail || c.Status == vpec.Warn) && !(len(c.Details) == 1 && strings.HasSuffix(c.Message, c.Details[0])) {
			for i, d := range c.Details {
				if i == 10 {
					fmt.Fprintf(w, "        … and %d more\n", len(c.Details)-10)
					break
				}
				fmt.Fprintf(w, "        %s\n", safe(d))
			}
		}
	}
	printDisclosed(w, r)
	if r.ProofLevelFloor != "" && r.Check(vpec.CheckSchema).Status == vpec.Pass {
		fmt.Fprintf(w, "  proof_level_floor: %s\n", p.Bold(safe(string(r.ProofLevelFloor))))
	}
	verdict := safe(r.Verdict)
	switch {
	case r.Valid && r.IsClean:
		verdict = p.Green(verdict)
	case r.Valid:
		fmt.Fprintf(w, "  %s\n", p.Yellow(fmt.Sprintf("not clean: %d governance gap(s) (see gaps); --require-clean exits 1", r.Gaps)))
		verdict = p.Yellow(verdict)
	default:
		verdict = p.Red(verdict)
	}
	fmt.Fprintln(w, verdict)
}
