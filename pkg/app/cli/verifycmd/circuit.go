package verifycmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
	"github.com/svc-gov/svc/pkg/zk/zkverify/ceremonycheck"
)

// circuitOptions are verify's flags for signed circuit entries.
type circuitOptions struct {
	files []string
	dir   string
}

// DefaultCircuitDir is the cache of signed circuit entries verify reads
// (svc's client writes the entries it fetches there).
func DefaultCircuitDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "svc", "circuits")
	}
	return ""
}

func (o *circuitOptions) add(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&o.files, "circuit", nil, "signed circuit entry JSON for records with a zk_proof (repeatable)")
	cmd.Flags().StringVar(&o.dir, "circuit-dir", "", "directory of cached signed circuit entries (default: svc/circuits in the user cache directory; env SVC_CIRCUIT_DIR)")
}

// load reads the cache directory, then the explicit files (which win),
// as every verifier surface does (zkverify.Load).
func (o *circuitOptions) load(a *clicore.App) (*zkverify.Set, error) {
	dir := o.dir
	if dir == "" {
		dir = a.Streams.Getenv("SVC_CIRCUIT_DIR")
	}
	if dir == "" {
		dir = DefaultCircuitDir()
	}
	set, warnings, err := zkverify.Load(zkverify.Sources{Dir: dir})
	for _, w := range warnings {
		fmt.Fprintf(a.Streams.Err, "%s: warning: skipping cached circuit entry: %s\n", a.Name, clicore.Safe(w.Error()))
	}
	if err != nil {
		return nil, &clicore.Error{Code: clicore.ExitUsage, Err: err, Hint: "--circuit-dir takes a directory of signed circuit entry JSON files"}
	}
	for _, p := range o.files {
		if err := set.AddExplicit(p); err != nil {
			if errors.Is(err, zkverify.ErrAmbiguous) {
				return nil, &clicore.Error{Code: clicore.ExitUsage, Err: err, Hint: "pass each circuit entry once: which of the two is meant cannot be decided for you"}
			}
			// Named and not to be had: trust material missing (exit 3).
			return nil, &clicore.Error{Code: clicore.ExitTrust, Err: err, Hint: "--circuit takes a signed circuit entry JSON file ('svc registry get-circuit' writes one)"}
		}
		if err := wrongKind(set.Explicit(), "--circuit", p); err != nil {
			return nil, err
		}
	}
	return set, nil
}

// verifier is the proof verifier of svc verify: the entries load gave,
// a problem with one named by its --circuit flag.
func verifier(trust *signing.Bundle, root *trustroot.Root, set *zkverify.Set) *zkverify.Verifier {
	return &zkverify.Verifier{Trust: trust, Root: root, Circuits: set, Given: "--circuit"}
}

// circuitAdvice is what svc verify tells a user whose VPEC has a proof
// without its circuit entry.
const circuitAdvice = "pass the signed circuit entry with --circuit or put it in the circuit directory"

// verifyCircuitOptions are the flags and argument of verify-circuit.
type verifyCircuitOptions struct {
	path       string // the circuit entry
	trust      clicore.TrustOptions
	transcript string
	output     string
}

// circuitReport is the JSON result of verify-circuit.
type circuitReport struct {
	Valid          bool     `json:"valid"`
	Verdict        string   `json:"verdict"`
	CircuitID      string   `json:"circuit_id,omitempty"`
	Circuit        string   `json:"circuit,omitempty"`
	ONNXModelHash  string   `json:"onnx_model_hash,omitempty"`
	TranscriptHash string   `json:"transcript_hash,omitempty"`
	Contributors   []string `json:"contributors,omitempty"`
	// TranscriptChecked is true when --transcript was given and matched.
	TranscriptChecked bool              `json:"transcript_checked"`
	SigningKeyID      string            `json:"signing_key_id,omitempty"`
	Error             string            `json:"error,omitempty"`
	TrustRoot         *verify.TrustRoot `json:"trust_root,omitempty"`
}

// VerifyCircuit is the verify-circuit command.
func VerifyCircuit(a *clicore.App) *cobra.Command { return newCmdVerifyCircuit(a, nil) }

// newCmdVerifyCircuit builds the verify-circuit command; runF, when not
// nil, gets the parsed options instead of the run (a test's seam).
func newCmdVerifyCircuit(a *clicore.App, runF func(*verifyCircuitOptions) error) *cobra.Command {
	o := &verifyCircuitOptions{}
	cmd := &cobra.Command{
		Use:   "verify-circuit CIRCUIT",
		Short: "Verify a signed circuit entry offline",
		Long: `Verify a signed circuit entry offline: strict schema, the circuit id is the
SHA-256 of the verifying key, and the Ed25519 signature by a key in the
trust bundle. The report names the setup ceremony's contributors: the
proofs made with the key are sound if at least one of them discarded
their randomness. With --transcript, the ceremony's transcript.json must
be the one the entry names (its hash), must have sealed the entry's keys
(and model), and must list the entry's contributors; check the
contributions themselves with 'svc zk ceremony verify'.

Exit codes: 0 VALID, 1 INVALID, 2 usage or unreadable input,
3 trust bundle missing or unusable.`,
		Example: fmt.Sprintf(`  %[1]s verify-circuit circuit.json --trust-root trust-bundle.pem
  %[1]s verify-circuit circuit.json --trust-root trust-bundle.pem --transcript head/transcript.json`, a.Name),
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.path = args[0]
			if err := clicore.CheckOutput(o.output); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runVerifyCircuit(a, o)
		},
	}
	o.trust.Add(a, cmd)
	cmd.Flags().StringVar(&o.transcript, "transcript", "", "the setup ceremony's transcript.json to check against the entry")
	clicore.AddOutputFlag(cmd, &o.output)
	return cmd
}

// runVerifyCircuit verifies the circuit entry (and its transcript).
func runVerifyCircuit(a *clicore.App, o *verifyCircuitOptions) error {
	doc, err := a.ReadInput(o.path, "circuit entry")
	if err != nil {
		return err
	}
	if err := document.CheckInput(doc); err != nil {
		return &clicore.Error{Code: clicore.ExitUsage, Err: fmt.Errorf("read circuit entry: %s", clicore.Safe(err.Error())), Hint: "a circuit entry is the signed JSON document 'svc registry get-circuit' writes"}
	}
	root, trust, err := o.trust.LoadRoot()
	if err != nil {
		return err
	}
	var tr []byte
	if o.transcript != "" {
		if tr, err = os.ReadFile(o.transcript); err != nil {
			return &clicore.Error{Code: clicore.ExitUsage, Err: fmt.Errorf("read transcript: %w", err)}
		}
	}
	e, verr := zkverify.VerifyEntryWithRoot(doc, trust, root)
	if verr == nil && tr != nil {
		verr = ceremonycheck.CheckTranscript(e, tr)
	}
	rep := circuitReport{Valid: verr == nil, Verdict: "VALID", TrustRoot: &verify.TrustRoot{File: o.trust.TrustRoot, Source: o.trust.Source}}
	if e != nil {
		rep.CircuitID, rep.Circuit, rep.ONNXModelHash = e.CircuitID, e.Circuit, e.ONNXModelHash
		rep.TranscriptHash, rep.Contributors, rep.SigningKeyID = e.Ceremony.TranscriptHash, e.Ceremony.Contributors, e.SigningKeyID
	}
	rep.TranscriptChecked = verr == nil && tr != nil
	if verr != nil {
		rep.Error = verr.Error()
		rep.Verdict = "INVALID — " + circuitCode(verr)
	}
	if o.output == clicore.OutputJSON {
		if err := a.WriteJSON(rep); err != nil {
			return err
		}
	} else {
		printCircuitReport(a, rep, verr)
	}
	if verr != nil {
		return clicore.ExitError{Code: clicore.ExitInvalid}
	}
	return nil
}

func circuitCode(err error) string {
	var ke *trustroot.KeyError
	switch {
	case errors.As(err, &ke):
		// Refused by the trust root at published_at: CIRCUIT KEY
		// EXPIRED, NOT YET VALID, COMPROMISED, WRONG PURPOSE, UNKNOWN, as
		// svc verify's zk_proofs check names it.
		return "CIRCUIT KEY " + strings.ToUpper(strings.ReplaceAll(strings.TrimSuffix(trustroot.Code(ke.Err), "-key"), "-", " "))
	case errors.Is(err, signing.ErrUnknownKey):
		return "UNKNOWN SIGNING KEY"
	case errors.Is(err, signing.ErrBadSignature):
		return "SIGNATURE INVALID"
	case errors.Is(err, zkverify.ErrEntryUnsigned):
		return "UNSIGNED"
	case errors.Is(err, ceremonycheck.ErrTranscript):
		return "TRANSCRIPT MISMATCH"
	default:
		return "SCHEMA ERROR"
	}
}

func printCircuitReport(a *clicore.App, r circuitReport, err error) {
	p := a.Palette()
	w := a.Streams.Out
	safe := clicore.Safe
	if r.CircuitID != "" {
		fmt.Fprintf(w, "circuit %s\n", p.Bold(safe(r.CircuitID)))
		line := "  " + safe(r.Circuit)
		if r.ONNXModelHash != "" {
			line += " · model " + safe(r.ONNXModelHash)
		}
		fmt.Fprintln(w, line)
		fmt.Fprintf(w, "  setup contributors: %s (transcript %s)\n", safe(strings.Join(r.Contributors, ", ")), safe(r.TranscriptHash))
	}
	if tr := r.TrustRoot; tr != nil {
		fmt.Fprintf(w, "  trust root %s (from %s)\n", safe(tr.File), tr.Source)
	}
	if err == nil {
		fmt.Fprintf(w, "  %s schema valid (circuit id is the SHA-256 of the verifying key)\n", a.Mark(verify.Pass))
		fmt.Fprintf(w, "  %s signature valid (Ed25519, key %s)\n", a.Mark(verify.Pass), safe(r.SigningKeyID))
		if r.TranscriptChecked {
			fmt.Fprintf(w, "  %s transcript matches (its hash, the sealed keys and the contributors)\n", a.Mark(verify.Pass))
		}
		fmt.Fprintln(w, p.Green(r.Verdict))
		return
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		fmt.Fprintf(w, "  %s %s\n", a.Mark(verify.Fail), safe(line))
	}
	fmt.Fprintln(w, p.Red(r.Verdict))
}
