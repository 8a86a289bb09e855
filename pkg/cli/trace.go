package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/internal/fsutil"
	"github.com/svc-gov/svc/pkg/document"
	"github.com/svc-gov/svc/pkg/inference"
	"github.com/svc-gov/svc/pkg/modelgen"
	"github.com/svc-gov/svc/pkg/trace"
)

type traceOptions struct {
	model, input, inputFile, mode, out, ortLib string
	seq                                        int
	output                                     string
}

func (a *app) traceCmd() *cobra.Command {
	o := &traceOptions{}
	cmd := &cobra.Command{
		Use:   "trace --model DIR|FILE (--input TEXT | --input-file F)",
		Short: "Run a classifier on ONNX Runtime and record its per-operator trace",
		Long: `Tokenize the input (deterministic WordPiece, re-runnable by a verifier from
the committed input), run the model on ONNX Runtime, and record for every
traced operator, in the graph's topological order, its index, node, op type,
operator class (Linear, LayerNorm, Softmax, GELU, Dropout, Other) and the
mean and RMS of its output; commit them as an RFC 6962 Merkle root. The
trace file stays local: only merkle_root and operator_count are ever sent.

--mode full traces every operator with a float output; --mode production
traces the LayerNormalization outputs and the model output only.
Needs a build with cgo and the ONNX Runtime library (make ort).`,
		Example: `  svc model generate --out pii-model
  svc trace --model pii-model --input "my ssn is 078-05-1120" --mode production --out trace.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return a.runTrace(o) },
	}
	cmd.Flags().StringVar(&o.model, "model", "", "model directory (model.onnx and vocab.txt) or model.onnx file")
	cmd.Flags().StringVar(&o.input, "input", "", "input text")
	cmd.Flags().StringVar(&o.inputFile, "input-file", "", "file holding the input text")
	cmd.Flags().StringVar(&o.mode, "mode", trace.Production, "full or production")
	cmd.Flags().StringVar(&o.out, "out", "", "write the trace JSON here (default: standard output)")
	cmd.Flags().IntVar(&o.seq, "seq", 32, "the model's sequence length")
	cmd.Flags().StringVar(&o.ortLib, "ort-lib", "", "ONNX Runtime library (env SVC_ORT_LIB; default: the cache of make ort)")
	addOutputFlag(cmd, &o.output)
	return cmd
}

func (a *app) runTrace(o *traceOptions) error {
	if o.model == "" {
		return errorf(ExitUsage, "pass --model DIR (see 'svc model generate')", "no model given")
	}
	if o.mode != trace.Full && o.mode != trace.Production {
		return errorf(ExitUsage, "use --mode full or --mode production", "unknown trace mode %q", o.mode)
	}
	var text []byte
	var err error
	switch {
	case o.input != "" && o.inputFile != "":
		return errorf(ExitUsage, "give the input once", "both --input and --input-file given")
	case o.input != "":
		text = []byte(o.input)
	case o.inputFile != "":
		if text, err = os.ReadFile(o.inputFile); err != nil {
			return &Error{Code: ExitUsage, Err: err}
		}
	default:
		return errorf(ExitUsage, "pass --input TEXT or --input-file F", "no input given")
	}
	modelPath, vocabPath := o.model, filepath.Join(filepath.Dir(o.model), "vocab.txt")
	if st, err := os.Stat(o.model); err == nil && st.IsDir() {
		modelPath, vocabPath = filepath.Join(o.model, "model.onnx"), filepath.Join(o.model, "vocab.txt")
	}
	model, err := os.ReadFile(modelPath)
	if err != nil {
		return &Error{Code: ExitUsage, Err: fmt.Errorf("read model: %w", err)}
	}
	vocabData, err := os.ReadFile(vocabPath)
	if err != nil {
		return &Error{Code: ExitUsage, Err: fmt.Errorf("read vocabulary: %w", err), Hint: "a model directory holds model.onnx and vocab.txt"}
	}
	var vocab []string
	sc := bufio.NewScanner(bytes.NewReader(vocabData))
	for sc.Scan() {
		vocab = append(vocab, sc.Text())
	}
	lib, err := inference.LibraryPath(o.ortLib)
	if err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	if err := inference.Init(lib); err != nil {
		return &Error{Code: ExitUsage, Err: err}
	}
	t, err := trace.Run(model, modelgen.InputName, modelgen.Tokenize(vocab, string(text), o.seq), text, o.mode)
	if err != nil {
		return &Error{Code: ExitFailure, Err: err, Hint: "check --seq against the model's sequence length"}
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
		return a.writeJSON(map[string]any{"out": o.out, "onnx_model_hash": t.ONNXModelHash, "mode": t.Mode, "operator_count": t.OperatorCount, "merkle_root": t.MerkleRoot, "output": t.Output})
	}
	fmt.Fprintf(a.streams.Out, "%s %d operators (%s) -> %s\n", t.MerkleRoot, t.OperatorCount, t.Mode, o.out)
	return nil
}
