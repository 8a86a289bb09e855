package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/zk/ceremony"
	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
)

func (a *app) zkCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "zk", Short: "Zero-knowledge proofs: the Groth16 setup ceremony"}
	cer := &cobra.Command{
		Use:   "ceremony",
		Short: "Run a multi-party Groth16 (BN254) setup: init, contribute, verify, finalize",
		Long: `A multi-party setup gives the proving and verifying keys of a circuit such
that no single party can forge proofs, provided at least one contributor
in each phase discarded their randomness. Phase 1 (powers of tau) runs
once for a domain of 2^power constraints; phase 2 runs per circuit on
phase 1's sealed parameters. Each contributor runs "contribute" on the
ceremony directory in turn; "finalize" seals a phase with a public random
beacon. transcript.json records every contribution; see docs/PROOFS.md.`,
	}
	cer.AddCommand(newCmdZKInit(a, nil), newCmdZKContribute(a, nil), newCmdZKVerify(a, nil), newCmdZKFinalize(a, nil))
	cmd.AddCommand(cer)
	return cmd
}

// zkInitOptions are the flags of svc zk ceremony init.
type zkInitOptions struct {
	opts   ceremony.InitOptions
	output string
}

// validate checks the flags alone (ceremony.InitOptions.Check).
func (o *zkInitOptions) validate() error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if o.opts.Dir == "" {
		return errorf(ExitUsage, "pass --dir DIR", "no ceremony directory")
	}
	if err := o.opts.Check(); err != nil {
		return zkError(err)
	}
	return nil
}

// newCmdZKInit builds svc zk ceremony init; runF, when not nil, gets the
// parsed options instead of the run (a test's seam).
func newCmdZKInit(a *app, runF func(*zkInitOptions) error) *cobra.Command {
	o := &zkInitOptions{}
	cmd := &cobra.Command{
		Use:   "init --dir DIR --phase 1 --power N | --phase 2 --phase1 P1DIR (--model HEAD.onnx | --quantized HEAD.json | --circuit demo | --r1cs FILE)",
		Short: "Start phase 1 for a domain, or phase 2 for a circuit on a sealed phase 1",
		Long: `Phase 1 writes the deterministic initial state for a domain of 2^power
constraints (14 covers every supported MLP head, up to 16,384 constraints).
Phase 2 copies the sealed phase 1 (transcript and srs.bin) from --phase1,
writes the circuit's constraint system and the phase's deterministic
initial state. The circuit is one of:
  --model HEAD.onnx      an ONNX MLP head, quantised with the default
                         calibration (a deterministic random corpus);
                         the quantised head is written to head.json, and
                         proofs must be made with that file
  --quantized HEAD.json  a quantised head (e.g. calibrated on real
                         embeddings), with --onnx-model-hash naming its model
  --circuit demo         a built-in circuit of 18 constraints, for trying
  --circuit threshold_check | truncation_check | below_threshold_check
                         a built-in condition circuit (475 constraints)
  --r1cs FILE            any BN254 constraint system (gnark's serialisation)`,
		Example: `  svc zk ceremony init --dir p1 --phase 1 --power 14
  svc zk ceremony init --dir head --phase 2 --phase1 p1 --model head.onnx
  svc zk ceremony init --dir demo --phase 2 --phase1 p1 --circuit demo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runZKInit(o)
		},
	}
	cmd.Flags().StringVar(&o.opts.Dir, "dir", "", "the new ceremony directory")
	cmd.Flags().IntVar(&o.opts.Phase, "phase", 1, "1 (powers of tau, once) or 2 (one circuit)")
	cmd.Flags().IntVar(&o.opts.Power, "power", 14, "phase 1: the domain is 2^power constraints (1 to 24)")
	cmd.Flags().StringVar(&o.opts.Phase1Dir, "phase1", "", "phase 2: the sealed phase-1 ceremony directory")
	cmd.Flags().StringVar(&o.opts.Model, "model", "", "phase 2: an ONNX MLP head")
	cmd.Flags().StringVar(&o.opts.Quantized, "quantized", "", "phase 2: a quantised MLP head (JSON)")
	cmd.Flags().StringVar(&o.opts.ONNXModelHash, "onnx-model-hash", "", "phase 2 with --quantized: the sha256 hash of the head's ONNX model")
	cmd.Flags().StringVar(&o.opts.Circuit, "circuit", "", "phase 2: a built-in circuit: demo, threshold_check, truncation_check or below_threshold_check")
	cmd.Flags().StringVar(&o.opts.R1CSFile, "r1cs", "", "phase 2: a BN254 constraint system file (gnark's serialisation)")
	cmd.Flags().StringVar(&o.opts.CircuitName, "name", "", "phase 2 with --r1cs: the circuit's name in the transcript (default: the file name)")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// runZKInit starts the phase (ceremony.Init).
func (a *app) runZKInit(o *zkInitOptions) error {
	c, err := ceremony.Init(o.opts)
	if err != nil {
		return zkError(err)
	}
	return a.zkReport(o.output, c.T, "", fmt.Sprintf("started phase %d in %s", o.opts.Phase, o.opts.Dir))
}

// zkContributeOptions are the flags of svc zk ceremony contribute.
type zkContributeOptions struct{ dir, name, output string }

// newCmdZKContribute builds svc zk ceremony contribute; runF, when not
// nil, gets the parsed options instead of the run (a test's seam).
func newCmdZKContribute(a *app, runF func(*zkContributeOptions) error) *cobra.Command {
	o := &zkContributeOptions{}
	cmd := &cobra.Command{
		Use:   "contribute --dir DIR --name NAME",
		Short: "Add your contribution to the phase in progress",
		Long: `Reads the latest state (its hash must be the transcript's), checks it
against its predecessor when that file is present, multiplies in secrets
drawn from crypto/rand, writes the next state file and appends your
contribution to transcript.json. The secrets exist only in this process's
memory and are never written; they are gone when it exits. Publish the
printed contribution hash so that anyone can find your contribution in
the transcript.`,
		Example: `  svc zk ceremony contribute --dir p1 --name "Example Org"`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if o.dir == "" || o.name == "" {
				return errorf(ExitUsage, "pass --dir DIR --name NAME", "no ceremony directory or contributor name")
			}
			if runF != nil {
				return runF(o)
			}
			return a.runZKContribute(o)
		},
	}
	cmd.Flags().StringVar(&o.dir, "dir", "", "the ceremony directory")
	cmd.Flags().StringVar(&o.name, "name", "", "your name or organisation, as the transcript will show it")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// runZKContribute adds a contribution (ceremony.Ceremony.Contribute).
func (a *app) runZKContribute(o *zkContributeOptions) error {
	c, err := ceremony.Open(o.dir)
	if err != nil {
		return zkError(err)
	}
	e, err := c.Contribute(o.name)
	if err != nil {
		return zkError(err)
	}
	if o.output == outputJSON {
		return a.writeJSON(e)
	}
	fmt.Fprintf(a.streams.Out, "%s\n", e.ContributionHash)
	fmt.Fprintf(a.streams.Err, "%s: contribution %d (phase %d) by %s: state %s; your secrets were drawn from crypto/rand and discarded\n",
		a.name, e.Index, e.Phase, safe(e.Contributor), e.StateHash)
	return nil
}

// zkVerifyOptions are the flags of svc zk ceremony verify.
type zkVerifyOptions struct{ dir, phase1, doc, vk, expect, output string }

// validate checks the flags alone: a directory, or a transcript and a
// verifying key.
func (o *zkVerifyOptions) validate() error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	switch {
	case o.dir != "" && (o.doc != "" || o.vk != ""):
		return errorf(ExitUsage, "pass --dir, or --transcript and --verifying-key", "both a directory and a transcript given")
	case o.dir == "" && (o.doc == "" || o.vk == ""):
		return errorf(ExitUsage, "pass --dir, or --transcript and --verifying-key", "nothing to verify")
	}
	return nil
}

// newCmdZKVerify builds svc zk ceremony verify; runF, when not nil, gets
// the parsed options instead of the run (a test's seam).
func newCmdZKVerify(a *app, runF func(*zkVerifyOptions) error) *cobra.Command {
	o := &zkVerifyOptions{}
	cmd := &cobra.Command{
		Use:   "verify (--dir DIR [--phase1 P1DIR] | --transcript FILE --verifying-key FILE [--expect-hash H])",
		Short: "Check every contribution of a ceremony, or a transcript against a verifying key offline",
		Long: `With --dir: the full check on the ceremony's files: every state file's hash
against the transcript, each phase's initial state recomputed, every
contribution's proofs (gnark's mpcsetup verification), and where sealed the
seal recomputed from the beacon (srs.bin, proving.key, verifying.key).
For a phase-2 directory, --phase1 also checks phase 1's contributions
(otherwise only srs.bin's hash).

With --transcript and --verifying-key: the offline check svc-verify can
do without the state files: the transcript's hash chain, its hash against
--expect-hash (what a circuit entry names), and that it ends in this
verifying key. It does not check the contributions' proofs.`,
		Example: `  svc zk ceremony verify --dir head --phase1 p1
  svc zk ceremony verify --transcript head/transcript.json --verifying-key head/verifying.key`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runZKVerify(o)
		},
	}
	cmd.Flags().StringVar(&o.dir, "dir", "", "the ceremony directory (full check)")
	cmd.Flags().StringVar(&o.phase1, "phase1", "", "with --dir of a phase-2 ceremony: the phase-1 directory, to check its contributions too")
	cmd.Flags().StringVar(&o.doc, "transcript", "", "a transcript file (offline check)")
	cmd.Flags().StringVar(&o.vk, "verifying-key", "", "the verifying key file the transcript must end in (offline check)")
	cmd.Flags().StringVar(&o.expect, "expect-hash", "", "the transcript hash a circuit entry names (offline check)")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// runZKVerify checks the ceremony directory (ceremony.Verify) or the
// transcript against the verifying key (transcript.Check).
func (a *app) runZKVerify(o *zkVerifyOptions) error {
	switch {
	case o.dir != "":
		r, err := ceremony.Verify(o.dir, ceremony.VerifyOptions{Phase1Dir: o.phase1})
		if err != nil {
			return zkError(err)
		}
		return a.zkReport(o.output, r.Transcript, r.TranscriptHash, verifySummary(r))
	default:
		d, err := a.readInput(o.doc, "transcript")
		if err != nil {
			return err
		}
		k, err := a.readInput(o.vk, "verifying key")
		if err != nil {
			return err
		}
		if _, err := transcript.Check(d, k, o.expect); err != nil {
			return zkError(err)
		}
		t, h, _ := transcript.Parse(d)
		return a.zkReport(o.output, t, h, "transcript consistent and ends in this verifying key (offline: contribution proofs not checked)")
	}
}

func verifySummary(r *ceremony.Result) string {
	var parts []string
	if r.Phase1Files {
		parts = append(parts, fmt.Sprintf("phase 1: %d contributions verified", r.Phase1Checked))
	} else {
		parts = append(parts, "phase 1: contributions not checked here (pass --phase1 DIR); srs.bin matches the transcript")
	}
	if r.Sealed {
		parts = append(parts, "seal recomputed")
	}
	if r.Transcript.Phase2 != nil {
		parts = append(parts, fmt.Sprintf("phase 2: %d contributions verified", r.Phase2Checked))
	}
	if r.Finalized {
		parts = append(parts, "keys recomputed")
	}
	return strings.Join(parts, "; ")
}

// zkFinalizeOptions are the flags of svc zk ceremony finalize.
type zkFinalizeOptions struct{ dir, beacon, phase1, output string }

// newCmdZKFinalize builds svc zk ceremony finalize; runF, when not nil,
// gets the parsed options instead of the run (a test's seam).
func newCmdZKFinalize(a *app, runF func(*zkFinalizeOptions) error) *cobra.Command {
	o := &zkFinalizeOptions{}
	cmd := &cobra.Command{
		Use:   "finalize --dir DIR --beacon HEX [--phase1 P1DIR]",
		Short: "Verify the phase in progress and seal it with a public random beacon",
		Long: `Runs the full check, then seals the phase with --beacon: lowercase hex of
16 to 1024 bytes of public randomness fixed only after the last
contribution (for example a drand round announced in advance). Phase 1:
writes srs.bin. Phase 2: writes proving.key and verifying.key (gnark's
compressed serialisation). The beacon and the hashes go into
transcript.json; the transcript hash printed is what a circuit entry names.`,
		Example: `  svc zk ceremony finalize --dir p1 --beacon 8f2e4d1c0b9a79685746352413021f0e
  svc zk ceremony finalize --dir head --beacon 0e1f2021324354657687a9b0c1d2e3f4 --phase1 p1`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(o.output); err != nil {
				return err
			}
			if o.dir == "" || o.beacon == "" {
				return errorf(ExitUsage, "pass --dir DIR --beacon HEX", "no ceremony directory or beacon")
			}
			if runF != nil {
				return runF(o)
			}
			return a.runZKFinalize(o)
		},
	}
	cmd.Flags().StringVar(&o.dir, "dir", "", "the ceremony directory")
	cmd.Flags().StringVar(&o.beacon, "beacon", "", "public random beacon, lowercase hex (16 to 1024 bytes)")
	cmd.Flags().StringVar(&o.phase1, "phase1", "", "phase 2: the phase-1 directory, to check its contributions too")
	addOutputFlag(cmd, &o.output)
	return cmd
}

// runZKFinalize seals the phase (ceremony.Finalize).
func (a *app) runZKFinalize(o *zkFinalizeOptions) error {
	k, err := ceremony.Finalize(o.dir, o.beacon, ceremony.VerifyOptions{Phase1Dir: o.phase1})
	if err != nil {
		return zkError(err)
	}
	c, err := ceremony.Open(o.dir)
	if err != nil {
		return zkError(err)
	}
	msg := "phase 1 sealed: wrote " + ceremony.SRSFile
	if c.T.Phase2 != nil {
		msg = "phase 2 finalized: wrote " + ceremony.ProvingKeyFile + " and " + ceremony.VerifyingKeyFile
	}
	return a.zkReport(o.output, c.T, k.TranscriptHash, msg)
}

// zkReport prints a transcript's state: the hash on stdout, a summary with
// the contributors of each phase on stderr (or everything as JSON).
func (a *app) zkReport(output string, t *transcript.Transcript, hash, msg string) error {
	if hash == "" {
		var err error
		if hash, err = t.Hash(); err != nil {
			return zkError(err)
		}
	}
	p1, p2 := t.Contributors(1), t.Contributors(2)
	if output == outputJSON {
		res := map[string]any{"transcript_hash": hash, "summary": msg, "phase1_contributors": append([]string{}, p1...), "phase2_contributors": append([]string{}, p2...)}
		if t.Phase2 != nil {
			res["circuit"] = t.Phase2.Circuit
			if t.Phase2.VerifyingKeyHash != "" {
				res["verifying_key_hash"] = t.Phase2.VerifyingKeyHash
			}
		}
		return a.writeJSON(res)
	}
	fmt.Fprintf(a.streams.Out, "%s\n", hash)
	fmt.Fprintf(a.streams.Err, "%s: %s\n", a.name, msg)
	fmt.Fprintf(a.streams.Err, "  phase 1 (2^%d): %s\n", t.Phase1.Power, zkNames(p1))
	if t.Phase2 != nil {
		fmt.Fprintf(a.streams.Err, "  phase 2 (%s, %d constraints): %s\n", safe(t.Phase2.Circuit), t.Phase2.Constraints, zkNames(p2))
	}
	if all := append(append([]string{}, p1...), p2...); len(all) > 0 && zkDistinct(all) == 1 {
		fmt.Fprintf(a.streams.Err, "  warning: every contribution is by %s: the keys are no better than that party's word\n", safe(all[0]))
	}
	return nil
}

func zkNames(s []string) string {
	if len(s) == 0 {
		return "no contributions yet"
	}
	out := make([]string, len(s))
	for i, n := range s {
		out[i] = safe(n)
	}
	return fmt.Sprintf("%d contributions: %s", len(s), strings.Join(out, ", "))
}

func zkDistinct(s []string) int {
	m := map[string]bool{}
	for _, n := range s {
		m[n] = true
	}
	return len(m)
}

// zkError maps a ceremony error to an exit code: input that cannot be
// read or used now is a usage error (2), a check that failed is INVALID (1).
func zkError(err error) error {
	for _, usage := range []error{fs.ErrNotExist, fs.ErrExist, ceremony.ErrPhase, ceremony.ErrCircuit, ceremony.ErrSize,
		ceremony.ErrArgument, transcript.ErrBeacon} {
		if errors.Is(err, usage) {
			return &Error{Code: ExitUsage, Err: err}
		}
	}
	for _, invalid := range []error{transcript.ErrSchema, transcript.ErrOrder, transcript.ErrChain, transcript.ErrNoContributions,
		transcript.ErrIncomplete, transcript.ErrTranscriptHash, transcript.ErrKeyMismatch,
		ceremony.ErrStateHash, ceremony.ErrContribution, ceremony.ErrStateFile} {
		if errors.Is(err, invalid) {
			return &Error{Code: ExitInvalid, Err: err}
		}
	}
	return &Error{Code: ExitFailure, Err: err}
}
