package verifycmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// Audit is an extra check svc adds to verify: the replay audit of a
// Bounded Inference trace, which needs cgo and ONNX Runtime and so is not
// part of svc-verify.
type Audit struct {
	// Long is a paragraph of help text; Example, lines of examples.
	Long, Example string
	// AddFlags registers the audit's flags on the verify command.
	AddFlags func(cmd *cobra.Command)
	// Validate, when not nil, checks the audit's flags alone, before
	// anything is read.
	Validate func() error
	// Run returns the audit's check, or ok false when its flags did not
	// ask for an audit. It runs only on a readable document.
	Run func(doc []byte, trust *signing.Bundle, set *profile.Set) (c verify.Check, ok bool, err error)
}

// VerifyOptions are the flags and argument of verify (a test of the
// command's flags reads them through NewCmdVerify's runF).
type VerifyOptions struct {
	path          string // the VPEC, or - for standard input
	trust         clicore.TrustOptions
	profiles      []string
	profileDir    string
	circuits      circuitOptions
	output        string
	requireClean  bool
	requirePassed bool
	log           logOptions
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
exit 1. Clean is not passed: a VPEC whose recorded checks include a fail
or an error is VALID (the service attests the check ran and failed);
--require-passed makes that exit 1 (NOT PASSED). skipped, degraded and
override results pass the gate.

--trust-root takes a svc.trust-root/v1 JSON document (keys with purposes
and validity windows: a VPEC key is accepted only for vpec-signing with the
timestamp's genTime inside its window) or a PEM trust bundle (every key
valid forever, and the report says so). Each --trust-root-update is checked
against the root before it (signed by its root keys) before it is used.
--receipt checks the VPEC's transparency log receipt (the transparency
check) against the trust root's log-checkpoint key and witness policy;
without one the check is reported as not applicable, and --require-log
makes that exit 1 (NO LOG RECEIPT).

Exit codes: 0 VALID, 1 INVALID, 2 usage or unreadable input (empty,
binary, not JSON), 3 trust material (trust root or bundle, a refused
--trust-root-update, witness policy, log key, TSA root, profile, circuit
entry) missing or unusable.`

// Verify is the verify command; audit, when not nil, adds the replay
// audit (svc only).
func Verify(a *clicore.App, audit *Audit) *cobra.Command { return NewCmdVerify(a, audit, nil) }

// NewCmdVerify builds the verify command; runF, when not nil, gets the
// parsed options instead of the run (a test's seam, gh's NewCmdX).
func NewCmdVerify(a *clicore.App, audit *Audit, runF func(*VerifyOptions) error) *cobra.Command {
	o := &VerifyOptions{}
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
		RunE: func(cmd *cobra.Command, args []string) error {
			o.path = args[0]
			if err := clicore.CheckOutput(o.output); err != nil {
				return err
			}
			if audit != nil && audit.Validate != nil {
				if err := audit.Validate(); err != nil {
					return err
				}
			}
			if err := o.log.check(a); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runVerify(a, o, audit)
		},
	}
	o.trust.Add(a, cmd)
	cmd.Flags().StringArrayVar(&o.profiles, "profile", nil, "signed model profile JSON for Bounded Inference records (repeatable)")
	cmd.Flags().StringVar(&o.profileDir, "profile-dir", "", "directory of cached signed profiles (default: svc/profiles in the user cache directory; env SVC_PROFILE_DIR)")
	o.circuits.add(cmd)
	cmd.Flags().BoolVar(&o.requireClean, "require-clean", false, "treat governance gaps and declared chain breaks as invalid (exit 1)")
	cmd.Flags().BoolVar(&o.requirePassed, "require-passed", false, "treat a recorded check whose result is fail or error as invalid (exit 1); skipped, degraded and override pass")
	o.log.add(cmd)
	if audit != nil && audit.AddFlags != nil {
		audit.AddFlags(cmd)
	}
	clicore.AddOutputFlag(cmd, &o.output)
	return cmd
}

// runVerify verifies the VPEC (vpec.Verify) and writes the verdict.
// verifyMemoryLimit is the heap size past which svc verify collects
// garbage, for a document of n bytes: 512 MiB, or 24 times the document.
func verifyMemoryLimit(n int) int64 { return max(512<<20, 24*int64(n)) }

func runVerify(a *clicore.App, o *VerifyOptions, audit *Audit) error {
	// Verification allocates about ten times the document's size and the
	// process exits right after: collect garbage only past a memory limit,
	// from before the document is read (its buffer alone would start a
	// collection), raised once its size is known.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(verifyMemoryLimit(0)))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	doc, err := a.ReadInput(o.path, "VPEC")
	debug.SetMemoryLimit(verifyMemoryLimit(len(doc)))
	// A document above 256 MiB is refused before it is read whole, and
	// reported like any other unreadable input: a report whose verdict is
	// UNREADABLE — TOO LARGE (exit 2), so --output json always gives one.
	var tooLarge *document.SyntaxError
	if err != nil && (!errors.As(err, &tooLarge) || !errors.Is(tooLarge, document.ErrTooLarge)) {
		return err
	}
	root, _, err := o.trust.LoadRoot()
	if err != nil {
		return err
	}
	if root, err = o.log.updateRoot(root); err != nil {
		return err
	}
	trust := verify.TrustFor(root)
	if tooLarge != nil {
		report, _ := verify.Unreadable(tooLarge, verify.Options{Trust: trust})
		return writeVerdict(a, o, trust, report, clicore.ExitUsage)
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
			if errors.Is(err, profile.ErrAmbiguous) {
				return &clicore.Error{Code: clicore.ExitUsage, Err: err, Hint: "pass each profile once: which of the two is meant cannot be decided for you"}
			}
			// A profile named and not to be had is trust material
			// missing, as a --trust-root that does not exist is.
			return &clicore.Error{Code: clicore.ExitTrust, Err: err, Hint: "--profile takes a signed model profile JSON file ('svc registry get HASH' prints one)"}
		}
		if err := wrongKind(set.Explicit(), "--profile", p); err != nil {
			return err
		}
	}
	circuits, err := o.circuits.load(a)
	if err != nil {
		return err
	}
	// Circuit entries are checked against every key of the root: the
	// verifier's root then refuses a key of another purpose by name
	// (CIRCUIT KEY WRONG PURPOSE), as svc-verify verify-circuit does.
	// doc was read for this call and is never changed: Owned.
	opts := verify.Options{Trust: trust, Root: root, Profiles: set, RequireClean: o.requireClean, RequirePassed: o.requirePassed, Proofs: verifier(trust, root, circuits), CircuitAdvice: circuitAdvice, Owned: true}
	if err := o.log.apply(&opts); err != nil {
		return err
	}
	if audit != nil && audit.Run != nil {
		opts.Extra = append(opts.Extra, func(doc []byte) (verify.Check, bool, error) { return audit.Run(doc, trust, set) })
	}
	report, err := verify.Verify(doc, opts)
	code := clicore.ExitValid
	switch {
	case err == nil:
	case errors.Is(err, verify.ErrUnreadable):
		code = clicore.ExitUsage
	case errors.Is(err, verify.ErrUnverified):
		code = clicore.ExitTrust
	case errors.Is(err, verify.ErrInvalid):
		code = clicore.ExitInvalid
	default:
		// Not a verdict: the audit's own error (flags, files).
		return err
	}
	return writeVerdict(a, o, trust, report, code)
}

// writeVerdict prints the report (text or JSON) and exits with code.
func writeVerdict(a *clicore.App, o *VerifyOptions, trust *signing.Bundle, report *verify.Report, code int) error {
	report.TrustRoot = &verify.TrustRoot{File: o.trust.TrustRoot, Source: o.trust.Source}
	if o.output == clicore.OutputJSON {
		if err := a.WriteJSON(report); err != nil {
			return err
		}
	} else {
		PrintReport(a, report)
		if c := report.Check(verify.CheckSignature); c != nil && c.Code == codeUnknownSigningKey {
			// The checks after it fail too (timestamp, proofs): say
			// what they most likely have in common.
			fmt.Fprintf(a.Streams.Err, "%s: hint: the VPEC is signed by key %s, and %s holds key(s) %s: it is probably not the trust bundle of the service that issued this VPEC; get that service's (%s, or 'svc serve trust-bundle' on it) and verify again\n",
				a.Name, clicore.Safe(report.SigningKeyID), clicore.Safe(o.trust.TrustRoot), strings.Join(trust.KeyIDs(), ", "), trustBundlePath)
		}
	}
	if code != clicore.ExitValid {
		return clicore.ExitError{Code: code}
	}
	return nil
}

// PrintReport prints a verification report for a person: one line per
// check, then the verdict.
func PrintReport(a *clicore.App, r *verify.Report) {
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
		if c.Status == verify.NotApplicable && (c.Message == verify.NotCheckedSchema || c.Message == verify.NotCheckedUnreadable) {
			var names []string
			for ; i < len(r.Checks) && r.Checks[i].Message == c.Message; i++ {
				names = append(names, string(r.Checks[i].Name))
			}
			i--
			fmt.Fprintf(w, "  %s %s: %s\n", a.Mark(c.Status), safe(c.Message), safe(strings.Join(names, ", ")))
			continue
		}
		fmt.Fprintf(w, "  %s %s\n", a.MarkCheck(c), safe(c.Message))
		if (c.Status == verify.Fail || c.Status == verify.Warn) && !(len(c.Details) == 1 && strings.HasSuffix(c.Message, c.Details[0])) {
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
	if r.ProofLevelFloor != "" && r.Check(verify.CheckSchema).Status == verify.Pass {
		fmt.Fprintf(w, "  proof_level_floor: %s\n", p.Bold(safe(string(r.ProofLevelFloor))))
	}
	// Only an authentic VPEC's counts mean anything (no check failed).
	if r.Check(verify.CheckSchema).Status == verify.Pass && r.FirstFailure() == nil && !r.Passed() {
		fmt.Fprintf(w, "  %s\n", p.Yellow(fmt.Sprintf("not passed: %s; --require-passed exits 1", notPassed(r))))
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

// notPassed says how many recorded checks failed or hit an error.
func notPassed(r *verify.Report) string {
	var parts []string
	if r.ChecksFailed > 0 {
		parts = append(parts, fmt.Sprintf("%d check(s) failed", r.ChecksFailed))
	}
	if r.ChecksErrored > 0 {
		parts = append(parts, fmt.Sprintf("%d check(s) hit an error", r.ChecksErrored))
	}
	return strings.Join(parts, ", ")
}

// codeUnknownSigningKey is the signature check's documented code
// (docs/FORMATS.md) for a key the trust bundle does not hold.
const codeUnknownSigningKey = "UNKNOWN SIGNING KEY"

// trustBundlePath is where a service publishes its trust bundle.
const trustBundlePath = "GET /.well-known/svc/trust-bundle.pem"

// wrongKind returns a usage error when the last explicit file of a set
// (given with flag) is not a document of the set's kind but of the other
// kind: a signed circuit entry given to --profile, or a model profile
// given to --circuit. Other unparseable files are left to the checks
// (PROFILE INVALID, ...).
func wrongKind(files []document.SetFile, flag, path string) error {
	if len(files) == 0 || files[len(files)-1].Err == nil {
		return nil
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	switch flag {
	case "--profile":
		if _, err := zkverify.ParseEntry(doc); err == nil {
			return &clicore.Error{Code: clicore.ExitUsage, Err: fmt.Errorf("%s is a signed circuit entry, not a model profile", clicore.Safe(path)), Hint: "pass it with --circuit " + clicore.Safe(path)}
		}
	case "--circuit":
		if _, err := profile.Parse(doc); err == nil {
			return &clicore.Error{Code: clicore.ExitUsage, Err: fmt.Errorf("%s is a model profile, not a signed circuit entry", clicore.Safe(path)), Hint: "pass it with --profile " + clicore.Safe(path)}
		}
	}
	return nil
}
