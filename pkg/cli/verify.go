package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/document"
	"github.com/svc-gov/svc/pkg/profile"
	"github.com/svc-gov/svc/pkg/signing"
	"github.com/svc-gov/svc/pkg/vpec"
)

const trustHint = "pass --trust-root bundle.pem (or set SVC_TRUST_ROOT); an operator prints it with 'svc serve trust-bundle', and a service publishes it at /.well-known/svc/trust-bundle.pem"

// trustEnv is the one environment variable trust material may come from.
const trustEnv = "SVC_TRUST_ROOT"

// trustOptions is the flag group for trust material. Trust material comes
// only from the --trust-root flag or the SVC_TRUST_ROOT environment
// variable, never from a config file: a trust root that silently sits in a
// config file would make every verification VALID against it.
type trustOptions struct {
	trustRoot string
	// fromFlag records whether --trust-root was on the command line, taken
	// before the config file and environment fill unset flags.
	fromFlag bool
	// source says where the bundle's name came from, once loaded.
	source string
}

// add registers --trust-root on cmd and a pre-run hook that notes whether
// the flag was given before the app's config loading fills unset flags.
func (o *trustOptions) add(a *app, cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.trustRoot, "trust-root", "", "trust bundle PEM: service public keys and TSA root certificates (env "+trustEnv+"; never read from a config file)")
	cmd.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		o.fromFlag = c.Flags().Changed("trust-root")
		return a.loadConfig(c)
	}
}

func (o *trustOptions) load() (*signing.Bundle, error) {
	switch env := os.Getenv(trustEnv); {
	case o.fromFlag:
		o.source = "flag --trust-root"
	case o.trustRoot != "" && o.trustRoot == env:
		o.source = "environment " + trustEnv
	case o.trustRoot != "":
		return nil, errorf(ExitTrust, trustHint+"; remove trust-root from the config file",
			"trust root %s comes from a config file: trust material is read only from --trust-root or %s", safe(o.trustRoot), trustEnv)
	default:
		return nil, errorf(ExitTrust, trustHint, "no trust root given")
	}
	b, err := signing.LoadBundle(o.trustRoot)
	if err != nil {
		return nil, &Error{Code: ExitTrust, Err: err, Hint: "the trust bundle must be a PEM file of PUBLIC KEY (Ed25519) and CERTIFICATE blocks; " + trustHint}
	}
	if len(b.KeyIDs()) == 0 {
		return nil, errorf(ExitTrust, "add the service's PUBLIC KEY block to the bundle", "trust bundle %s holds no Ed25519 public key", o.trustRoot)
	}
	return b, nil
}

// readInput reads a document from path, or standard input when path is "-".
func (a *app) readInput(path, what string) ([]byte, error) {
	var data []byte
	var err error
	// Never read more than one byte past the limit: a larger document is
	// refused at once (exit 2), however large the file or stream.
	if path == "-" {
		data, err = io.ReadAll(io.LimitReader(a.streams.In, document.MaxSize+1))
	} else {
		var f *os.File
		if f, err = os.Open(path); err == nil {
			if st, serr := f.Stat(); serr == nil && st.Mode().IsRegular() && st.Size() > document.MaxSize {
				f.Close()
				return nil, errorf(ExitUsage, "a document is at most 256 MiB", "read %s: %s is %d bytes, larger than %d bytes (256 MiB)", what, safe(path), st.Size(), document.MaxSize)
			}
			data, err = io.ReadAll(io.LimitReader(f, document.MaxSize+1))
			f.Close()
		}
	}
	if err != nil {
		return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("read %s: %w", what, err), Hint: "check the path; use - to read standard input"}
	}
	if len(data) > document.MaxSize {
		return nil, errorf(ExitUsage, "a document is at most 256 MiB", "read %s: %s is larger than %d bytes (256 MiB)", what, safe(path), document.MaxSize)
	}
	return data, nil
}

type verifyOptions struct {
	trust        trustOptions
	profiles     []string
	profileDir   string
	output       string
	requireClean bool
	// The replay audit of one trace.
	traceFile, model, inputFile string
	mo                          modelOptions
}

func defaultProfileDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "svc", "profiles")
	}
	return ""
}

func (a *app) verifyCmd() *cobra.Command {
	o := &verifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify <vpec.json>",
		Short: "Verify a VPEC offline",
		Long: `Verify a VPEC offline: schema, Ed25519 signature by a key in the trust
bundle, hash chain from genesis, Merkle root, RFC 3161 timestamp, gaps,
summary counts, witnessed reviews and, for Bounded Inference records, the
signed model profile. Every check is reported by name; the last line is
the verdict.

--trace audits one Bounded Inference record: the trace's Merkle root and
operator count are recomputed and must be the record's, the input must
hash to the record's commitment, and the inference is re-executed on the
reference execution (ONNX Runtime, unoptimised, one thread): every
operator's drift must be within the profile's bounds for its class, else
INVALID — PROFILE MISMATCH naming the GPU class. The audit needs a build
with cgo and ONNX Runtime (svc, not svc-verify).

Trust material comes only from --trust-root or SVC_TRUST_ROOT, never from
a config file; the report names the bundle and where it came from. Every
--profile file is checked: a corrupt or forged one is PROFILE INVALID. A
valid VPEC with gaps is VALID and not clean; --require-clean makes that
exit 1.

Exit codes: 0 VALID, 1 INVALID, 2 usage or unreadable input (empty,
binary, not JSON), 3 trust material (trust bundle, TSA root, profile)
missing or unusable.`,
		Example: `  svc verify vpec.json --trust-root trust-bundle.pem
  svc verify vpec.json --trust-root trust-bundle.pem --profile profile.json
  svc verify vpec.json --trust-root trust-bundle.pem --trace note.trace.json --model pii-model --input-file note.txt
  svc verify - --trust-root trust-bundle.pem --output json < vpec.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return a.runVerify(o, args[0]) },
	}
	o.trust.add(a, cmd)
	cmd.Flags().StringArrayVar(&o.profiles, "profile", nil, "signed model profile JSON for Bounded Inference records (repeatable)")
	cmd.Flags().StringVar(&o.profileDir, "profile-dir", "", "directory of cached signed profiles (default: svc/profiles in the user cache directory; env SVC_PROFILE_DIR)")
	cmd.Flags().BoolVar(&o.requireClean, "require-clean", false, "treat governance gaps and declared chain breaks as invalid (exit 1)")
	cmd.Flags().StringVar(&o.traceFile, "trace", "", "audit this operator trace of a Bounded Inference record by replaying it (needs --model and --input-file)")
	cmd.Flags().StringVar(&o.model, "model", "", "with --trace: the model directory or model.onnx the trace claims")
	cmd.Flags().StringVar(&o.inputFile, "input-file", "", "with --trace: the raw input the record commits to")
	o.mo.addRuntime(cmd)
	addOutputFlag(cmd, &o.output)
	return cmd
}

func (a *app) runVerify(o *verifyOptions, path string) error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	doc, err := a.readInput(path, "VPEC")
	if err != nil {
		return err
	}
	trust, err := o.trust.load()
	if err != nil {
		return err
	}
	set := profile.NewSet()
	if o.profileDir == "" {
		o.profileDir = defaultProfileDir()
	}
	if o.profileDir != "" {
		for _, err := range set.AddDir(o.profileDir) {
			fmt.Fprintf(a.streams.Err, "%s: warning: skipping cached profile: %s\n", a.name, safe(err.Error()))
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
			return &Error{Code: ExitUsage, Err: err, Hint: hint}
		}
	}
	// Verification allocates about ten times the document's size and the
	// process exits right after: collect garbage only past a memory limit.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(max(512<<20, 24*int64(len(doc)))))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	report := vpec.Verify(doc, vpec.Options{Trust: trust, Profiles: set})
	report.TrustRoot = &vpec.TrustRoot{File: o.trust.trustRoot, Source: o.trust.source}
	if o.traceFile != "" && !report.Unreadable {
		c, err := a.audit(o, doc, trust, set)
		if err != nil {
			return err
		}
		report.Add(c)
	}
	code := ExitValid
	switch {
	case report.Unreadable:
		code = ExitUsage
	case report.Valid && o.requireClean && !report.IsClean:
		code = ExitInvalid
		report.Verdict = "INVALID — NOT CLEAN (--require-clean)"
		report.Valid = false
	case report.Valid:
	case report.MissingTrust():
		code = ExitTrust
	default:
		code = ExitInvalid
	}
	if o.output == outputJSON {
		if err := a.writeJSON(report); err != nil {
			return err
		}
	} else {
		a.printReport(report)
	}
	if code != ExitValid {
		return exitError{code}
	}
	return nil
}

func (a *app) writeJSON(v any) error {
	b, err := document.MarshalIndent(v)
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if _, err := a.streams.Out.Write(b); err != nil {
		return &Error{Code: ExitFailure, Err: fmt.Errorf("write output: %w", err)}
	}
	return nil
}

// mark returns the status marker: symbols with color on a TTY, words otherwise.
func (a *app) mark(st vpec.Status) string {
	p := a.palette()
	if !a.streams.MarksOut() {
		switch st {
		case vpec.Pass:
			return "[ok]  "
		case vpec.Fail:
			return "[FAIL]"
		case vpec.Warn:
			return "[warn]"
		default:
			return "[n/a] "
		}
	}
	switch st {
	case vpec.Pass:
		return p.green("✓")
	case vpec.Fail:
		return p.red("✗")
	case vpec.Warn:
		return p.yellow("!")
	default:
		return p.dim("–")
	}
}

func (a *app) printReport(r *vpec.Report) {
	p := a.palette()
	w := a.streams.Out
	if r.VPECID != "" {
		fmt.Fprintf(w, "VPEC %s\n", p.bold(safe(r.VPECID)))
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
			fmt.Fprintf(w, "  %s %s: %s\n", a.mark(c.Status), safe(c.Message), safe(strings.Join(names, ", ")))
			continue
		}
		fmt.Fprintf(w, "  %s %s\n", a.mark(c.Status), safe(c.Message))
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
	if r.ProofLevelFloor != "" && r.Check(vpec.CheckSchema).Status == vpec.Pass {
		fmt.Fprintf(w, "  proof_level_floor: %s\n", p.bold(safe(string(r.ProofLevelFloor))))
	}
	verdict := safe(r.Verdict)
	switch {
	case r.Valid && r.IsClean:
		verdict = p.green(verdict)
	case r.Valid:
		fmt.Fprintf(w, "  %s\n", p.yellow(fmt.Sprintf("not clean: %d governance gap(s) (see gaps); --require-clean exits 1", r.Gaps)))
		verdict = p.yellow(verdict)
	default:
		verdict = p.red(verdict)
	}
	fmt.Fprintln(w, verdict)
}

// safe makes text from a document fit to print on a terminal: C0 and C1
// controls, DEL, bidi controls, line and paragraph separators and invalid
// UTF-8 are written as visible escapes (\x1b, \u202e), so no document can
// move the cursor, clear the screen or reorder what a person reads.
func safe(s string) string {
	clean := true
	for _, r := range s {
		if vpec.IsControl(r) || r == utf8.RuneError || r == 0x2028 || r == 0x2029 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case r < 0x80 && vpec.IsControl(r):
			fmt.Fprintf(&b, "\\x%02x", r)
		case vpec.IsControl(r) || r == 0x2028 || r == 0x2029:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

type verifyProfileOptions struct {
	trust  trustOptions
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
	TrustRoot *vpec.TrustRoot `json:"trust_root,omitempty"`
}

func (a *app) verifyProfileCmd() *cobra.Command {
	o := &verifyProfileOptions{}
	cmd := &cobra.Command{
		Use:   "verify-profile <profile.json>",
		Short: "Verify a model drift profile's signature offline",
		Long: `Verify a signed model drift profile offline: strict schema, field rules,
and the Ed25519 signature by a key in the trust bundle. Any change to a
signed field makes it fail.

Exit codes: 0 VALID, 1 INVALID, 2 usage or unreadable input,
3 trust bundle missing or unusable.`,
		Example: `  svc verify-profile profile.json --trust-root trust-bundle.pem`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			doc, err := a.readInput(args[0], "profile")
			if err != nil {
				return err
			}
			if err := document.CheckInput(doc); err != nil {
				return &Error{Code: ExitUsage, Err: fmt.Errorf("read profile: %s", safe(err.Error())), Hint: "a profile is the signed JSON document 'svc profile' writes"}
			}
			trust, err := o.trust.load()
			if err != nil {
				return err
			}
			prof, verr := profile.Verify(doc, trust)
			rep := profileReport{Valid: verr == nil, Verdict: "VALID", TrustRoot: &vpec.TrustRoot{File: o.trust.trustRoot, Source: o.trust.source}}
			if prof != nil {
				rep.ProfileID, rep.ModelClass, rep.CalibratedGPUClasses = prof.ProfileID, prof.ModelClass, prof.CalibratedGPUClasses
				rep.Models, rep.SigningKeyID = len(prof.Models), prof.SigningKeyID
			}
			if verr != nil {
				rep.Error = verr.Error()
				rep.Verdict = "INVALID — " + profileCode(verr)
			}
			if o.output == outputJSON {
				if err := a.writeJSON(rep); err != nil {
					return err
				}
			} else {
				a.printProfileReport(rep, verr)
			}
			if verr != nil {
				return exitError{ExitInvalid}
			}
			return nil
		},
	}
	o.trust.add(a, cmd)
	addOutputFlag(cmd, &o.output)
	return cmd
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

func (a *app) printProfileReport(r profileReport, err error) {
	p := a.palette()
	w := a.streams.Out
	if r.ProfileID != "" {
		fmt.Fprintf(w, "profile %s\n", p.bold(safe(r.ProfileID)))
		fmt.Fprintf(w, "  model class %s · GPU classes %s · %d model(s)\n", safe(r.ModelClass), safe(strings.Join(r.CalibratedGPUClasses, ", ")), r.Models)
	}
	if tr := r.TrustRoot; tr != nil {
		fmt.Fprintf(w, "  trust root %s (from %s)\n", safe(tr.File), tr.Source)
	}
	if err == nil {
		fmt.Fprintf(w, "  %s schema valid\n", a.mark(vpec.Pass))
		fmt.Fprintf(w, "  %s signature valid (Ed25519, key %s)\n", a.mark(vpec.Pass), safe(r.SigningKeyID))
		fmt.Fprintln(w, p.green(r.Verdict))
		return
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "  %s %s\n", a.mark(vpec.Fail), safe(line))
	}
	fmt.Fprintln(w, p.red(r.Verdict))
}
