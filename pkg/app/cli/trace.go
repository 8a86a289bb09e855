package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// traceOptions are the flags of svc trace.
type traceOptions struct {
	mo                                 modelOptions
	model, input, inputFile, mode, out string
	output                             string
}

// newCmdTrace builds svc trace; runF, when not nil, gets the parsed
// options instead of the run (a test's seam).
func newCmdTrace(a *app, runF func(*traceOptions) error) *cobra.Command {
	o := &traceOptions{}
	cmd := &cobra.Command{
		Use:   "trace --model DIR|FILE (--input TEXT | --input-file F)",
		Short: "Run a classifier on ONNX Runtime and record its per-operator trace",
		Long: `Tokenize the input (deterministic WordPiece from the model's tokenizer.json
or vocab.txt, re-runnable by a verifier from the committed input), run the
model on ONNX Runtime, and record for every traced operator, in the graph's
topological order, its index, node, op type, operator class (Linear,
LayerNorm, Softmax, GELU, Dropout, Other) and the mean and RMS of its
output; commit them as an RFC 6962 Merkle root. The trace file stays
local: only merkle_root and operator_count are ever sent.

--mode full traces every operator with a float output; --mode production
traces the output of each LayerNorm and the model output only, which
leaves the rest of the graph fusable (low overhead); --mode residual adds
what each sublayer adds to the residual stream and the logits, which keeps
the fusions and, unlike production, shows a substituted model
(docs/BOUNDED.md).
Needs a build with cgo and the ONNX Runtime library (make ort).`,
		Example: `  svc model generate --out pii-model
  svc trace --model pii-model --input "my ssn is 078-05-1120" --mode production --out trace.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runTrace(o)
		},
	}
	cmd.Flags().StringVar(&o.model, "model", "", "model directory (model.onnx and tokenizer.json or vocab.txt) or model.onnx file")
	cmd.Flags().StringVar(&o.input, "input", "", "input text")
	cmd.Flags().StringVar(&o.inputFile, "input-file", "", "file holding the input text (- for stdin)")
	cmd.Flags().StringVar(&o.mode, "mode", trace.Production, "full, production or residual")
	cmd.Flags().StringVar(&o.out, "out", "", "write the trace JSON here (default: standard output)")
	o.mo.addRuntime(cmd)
	addOutputFlag(cmd, &o.output)
	return cmd
}

// validate checks the flags alone.
func (o *traceOptions) validate() error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	if o.model == "" {
		return errorf(ExitUsage, "pass --model DIR (see 'svc model generate')", "no model given")
	}
	if !trace.ValidMode(o.mode) {
		return errorf(ExitUsage, "use --mode full, --mode production or --mode residual", "unknown trace mode %q", o.mode)
	}
	return checkInputFlags(o.input, o.inputFile, true)
}

// runTrace runs the model on the input and writes its trace (trace.Run).
func (a *app) runTrace(o *traceOptions) error {
	text, err := a.readInputText(o.input, o.inputFile, true)
	if err != nil {
		return err
	}
	m, err := o.mo.load(o.model)
	if err != nil {
		return err
	}
	t, err := trace.Run(m, text, o.mode)
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	doc, err := document.MarshalIndent(t)
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if o.out == "" {
		_, err = a.streams.Out.Write(doc)
		return err
	}
	os.Remove(o.out)
	if err := fsutil.WriteNew(o.out, doc, 0o600); err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if o.output == outputJSON {
		return a.writeJSON(map[string]any{"out": o.out, "onnx_model_hash": t.ONNXModelHash, "mode": t.Mode, "operator_count": t.OperatorCount, "merkle_root": t.MerkleRoot, "output": t.Output, "probabilities": t.Probabilities})
	}
	fmt.Fprintf(a.streams.Out, "%s %d operators (%s) -> %s\n", t.MerkleRoot, t.OperatorCount, t.Mode, o.out)
	return nil
}
