package verifycmd

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/app/cli/clicore"
	"github.com/svc-gov/svc/pkg/core/commitment"
)

// hashOptions are the flags and argument of hash.
type hashOptions struct {
	args      []string // the plaintext, when given as an argument
	file      string
	expect    string
	algorithm string
	output    string
}

// hashResult is the JSON result of the hash command.
type hashResult struct {
	CommitmentHash string `json:"commitment_hash"`
	Bytes          int64  `json:"bytes"`
	Expected       string `json:"expected,omitempty"`
	Match          *bool  `json:"match,omitempty"`
}

// Hash is the hash command: compute or confirm a commitment hash.
func Hash(a *clicore.App) *cobra.Command { return newCmdHash(a, nil) }

// newCmdHash builds the hash command; runF, when not nil, gets the parsed
// options instead of the run (a test's seam).
func newCmdHash(a *clicore.App, runF func(*hashOptions) error) *cobra.Command {
	o := &hashOptions{}
	cmd := &cobra.Command{
		Use:   "hash [TEXT]",
		Short: "Compute or confirm the commitment hash of a plaintext input",
		Long: `Compute the commitment hash (sha256:<64 hex>) of a plaintext input: the
argument's bytes, a file (--file, streamed in constant memory), or standard
input when neither is given. An argument is always the text itself, even
when a file has that name (a warning says so: use --file). With --expect, confirm that the input matches
a commitment hash from a VPEC.

--algorithm poseidon2 computes the Poseidon2 commitment instead
(poseidon2:<64 hex>, docs/FORMATS.md "Poseidon2 commitments"); --expect
picks the algorithm of the hash it is given.

Exit codes: 0 hash printed or match, 1 mismatch, 2 usage or unreadable input.`,
		Example: fmt.Sprintf(`  %[1]s hash 'patient note text'
  %[1]s hash --file input.txt --expect sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
  %[1]s hash --algorithm poseidon2 'patient note text'
  printf 'abc' | %[1]s hash`, a.Name),
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.args = args
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return runHash(a, o)
		},
	}
	cmd.Flags().StringVarP(&o.file, "file", "f", "", "hash the contents of this file (- for standard input)")
	cmd.Flags().StringVar(&o.expect, "expect", "", "expected commitment hash; exit 1 if the input does not match")
	cmd.Flags().StringVar(&o.algorithm, "algorithm", "", "commitment algorithm: sha256 or poseidon2 (default sha256, or the algorithm of --expect)")
	clicore.AddOutputFlag(cmd, &o.output)
	return cmd
}

// validate checks the flags alone: the algorithm, the --expect hash and
// that they agree, one input.
func (o *hashOptions) validate() error {
	if err := clicore.CheckOutput(o.output); err != nil {
		return err
	}
	_, _, err := o.algorithmAndWant()
	if err == nil && len(o.args) == 1 && o.file != "" {
		return clicore.Errorf(clicore.ExitUsage, "give the plaintext as an argument or --file, not both", "both a plaintext argument and --file given")
	}
	return err
}

// algorithmAndWant returns the algorithm to hash with and the --expect
// hash (zero without --expect).
func (o *hashOptions) algorithmAndWant() (commitment.Algorithm, commitment.Hash, error) {
	alg := commitment.Algorithm(o.algorithm)
	switch alg {
	case "", commitment.SHA256, commitment.Poseidon2:
	default:
		return "", commitment.Hash{}, clicore.Errorf(clicore.ExitUsage, "use --algorithm sha256 or --algorithm poseidon2", "--algorithm: unknown algorithm %q", o.algorithm)
	}
	var want commitment.Hash
	if o.expect != "" {
		var err error
		if want, err = commitment.Parse(o.expect); err != nil {
			return "", want, &clicore.Error{Code: clicore.ExitUsage, Err: fmt.Errorf("--expect: %w", err), Hint: "a commitment hash is sha256: or poseidon2: followed by 64 lowercase hex characters"}
		}
		if alg != "" && alg != want.Algorithm {
			return "", want, clicore.Errorf(clicore.ExitUsage, "drop --algorithm: --expect names the algorithm", "--algorithm %s disagrees with the --expect hash (%s)", alg, want.Algorithm)
		}
		alg = want.Algorithm
	}
	if alg == "" {
		alg = commitment.SHA256
	}
	return alg, want, nil
}

// runHash computes the commitment hash of the input, and compares it with
// --expect.
func runHash(a *clicore.App, o *hashOptions) error {
	alg, want, err := o.algorithmAndWant()
	if err != nil {
		return err
	}
	args := o.args
	var (
		h commitment.Hash
		n int64
	)
	switch {
	case len(args) == 1:
		h, err = commitment.SumAlgorithm(alg, []byte(args[0]))
		n = int64(len(args[0]))
		// "svc hash model.onnx" hashes the 10 bytes of the name: say so
		// when the argument names a file (the hash is still printed).
		if st, serr := os.Stat(args[0]); serr == nil && st.Mode().IsRegular() {
			fmt.Fprintf(a.Streams.Err, "%s: warning: hashed the text %q (%d bytes), not the file of that name; to hash the file: %s hash --file %s\n",
				a.Name, clicore.Safe(args[0]), n, a.Name, clicore.Safe(args[0]))
		}
	case o.file == "" && a.Streams.InIsTTY:
		// Nothing given and nothing piped: waiting silently on a terminal
		// looks like a hang.
		return clicore.Errorf(clicore.ExitUsage, "give the plaintext as an argument, --file F, or pipe it in (--file - reads a terminal until Ctrl-D)", "no input to hash")
	case o.file == "" || o.file == "-":
		if a.Streams.InIsTTY {
			fmt.Fprintf(a.Streams.Err, "%s: reading the input from the terminal; end it with Ctrl-D\n", a.Name)
		}
		h, n, err = commitment.SumAlgorithmReader(alg, a.Streams.In)
	default:
		h, n, err = commitment.SumAlgorithmFile(alg, o.file)
	}
	if err != nil {
		return &clicore.Error{Code: clicore.ExitUsage, Err: fmt.Errorf("hash input: %w", err), Hint: "check the file path and permissions"}
	}
	res := hashResult{CommitmentHash: h.String(), Bytes: n}
	var match bool
	if o.expect != "" {
		match = commitment.Equal(h, want)
		res.Expected, res.Match = want.String(), &match
	}
	if o.output == clicore.OutputJSON {
		if err := a.WriteJSON(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(a.Streams.Out, res.CommitmentHash)
		if o.expect != "" {
			p := a.Palette()
			if match {
				fmt.Fprintln(a.Streams.Err, p.Green("MATCH")+": the input's commitment hash equals the expected hash")
			} else {
				fmt.Fprintln(a.Streams.Err, p.Red("MISMATCH")+": expected "+want.String())
			}
		}
	}
	if o.expect != "" && !match {
		return clicore.ExitError{Code: clicore.ExitInvalid}
	}
	return nil
}
