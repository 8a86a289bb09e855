package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
)

func (a *app) modelCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "model", Short: "ONNX classifier models for Bounded Inference"}
	cmd.AddCommand(newCmdModelGenerate(a, nil))
	return cmd
}

// modelGenerateOptions are the flags of svc model generate.
type modelGenerateOptions struct {
	out    string
	cfg    modelgen.Config
	output string
	dims   string
}

// validate checks the flags alone: --out, the style, --dims only with
// mlp-head.
func (o *modelGenerateOptions) validate() error {
	if err := checkOutput(o.output); err != nil {
		return err
	}
	switch {
	case o.out == "":
		return errorf(ExitUsage, "pass --out DIR", "no output directory")
	case o.cfg.Style == modelgen.StyleMLPHead:
		if o.dims != "" {
			if _, err := modelgen.ParseDims(o.dims); err != nil {
				return &Error{Code: ExitUsage, Err: err, Hint: "--dims takes comma-separated widths, e.g. 768,256,2"}
			}
		}
	case o.dims != "":
		return errorf(ExitUsage, "--dims is for --style mlp-head", "--dims given for style %q", o.cfg.Style)
	case !slices.Contains(modelgen.Styles(), o.cfg.Style):
		return errorf(ExitUsage, "use --style "+strings.Join(modelgen.Styles(), " or --style "),
			"unknown model style %q (allowed: %s)", o.cfg.Style, strings.Join(modelgen.Styles(), ", "))
	}
	return nil
}

// newCmdModelGenerate builds svc model generate; runF, when not nil, gets
// the parsed options instead of the run (a test's seam).
func newCmdModelGenerate(a *app, runF func(*modelGenerateOptions) error) *cobra.Command {
	o := &modelGenerateOptions{}
	gen := &cobra.Command{
		Use:   "generate --out DIR",
		Short: "Write a small BERT-like text classifier (model.onnx) and its WordPiece tokenizer files",
		Long: `Write a deterministic BERT-like text classifier as an ONNX model and a
matching WordPiece vocabulary, for trying the toolkit and for tests. The
weights are random from --seed: the same flags always give the same bytes,
and so the same onnx_model_hash. Needs no ONNX Runtime.

--style bert (the default) writes model.onnx (opset 17: embeddings,
attention layers with LayerNormalization and the Erf GELU, pooler,
classifier, softmax; input input_ids int64 [1, seq], output probabilities
[1, classes]) and vocab.txt.

--style torch writes a model shaped like a torch.onnx.export (opset 14) of
a Hugging Face DistilBertForSequenceClassification, to try the toolkit on
the graph patterns of real exported models: inputs input_ids and
attention_mask int64 [batch_size, sequence_length] (any length up to
--seq), shapes computed in the graph, LayerNorm decomposed into
ReduceMean/Sub/Pow/Sqrt/Div/Mul/Add, the attention mask added to the
scores, a Gemm classifier, output logits [batch_size, classes], and
torch-style node names. It writes model.onnx, tokenizer.json and
config.json (Hugging Face formats) and no vocab.txt.

--style mlp-head writes only model.onnx: a classifier head over a pooled
embedding, shaped like a torch.onnx.export of nn.Sequential(Linear, ReLU,
..., Linear) (Gemm layers, input "input" float [batch_size, width], output
"logits"), with the widths of --dims (default 768,256,2; at most 263K
parameters). This is the model a verifiable_inference proof covers
(docs/PROOFS.md).`,
		Example: `  svc model generate --out pii-model
  svc model generate --out big --layers 4 --hidden 256 --heads 4 --seq 128
  svc model generate --out hf-like --style torch
  svc model generate --out head --style mlp-head --dims 768,256,2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(o)
			}
			return a.runModelGenerate(o)
		},
	}
	gen.Flags().StringVar(&o.out, "out", "", "directory to write the model files to (bert: model.onnx, vocab.txt; torch: model.onnx, tokenizer.json, config.json)")
	gen.Flags().StringVar(&o.cfg.Style, "style", modelgen.StyleBERT, "graph style: bert (opset 17, fixed shapes), torch (like a torch.onnx.export of a Hugging Face DistilBERT) or mlp-head (a dense classifier head, see --dims)")
	gen.Flags().StringVar(&o.dims, "dims", "", "mlp-head: layer widths input,hidden...,classes (default 768,256,2)")
	gen.Flags().IntVar(&o.cfg.Layers, "layers", 0, "transformer layers (default 2)")
	gen.Flags().IntVar(&o.cfg.Hidden, "hidden", 0, "hidden size (default 64)")
	gen.Flags().IntVar(&o.cfg.Heads, "heads", 0, "attention heads (default 4)")
	gen.Flags().IntVar(&o.cfg.SeqLen, "seq", 0, "sequence length; torch: the maximum (default 32)")
	gen.Flags().IntVar(&o.cfg.Classes, "classes", 0, "output classes (default 2)")
	gen.Flags().Int64Var(&o.cfg.Seed, "seed", 0, "weight seed (default 1)")
	addOutputFlag(gen, &o.output)
	return gen
}

// runModelGenerate writes the model (modelgen.WriteDir, or WriteMLPHead
// for --style mlp-head) and reports its hash.
func (a *app) runModelGenerate(o *modelGenerateOptions) error {
	out, cfg, output := o.out, o.cfg, o.output
	if cfg.Style == modelgen.StyleMLPHead {
		return a.generateMLPHead(out, o.dims, cfg.Seed, output)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	if err := modelgen.WriteDir(out, cfg); err != nil {
		return &Error{Code: ExitUsage, Err: err, Hint: "hidden must be a multiple of heads; sizes must be positive"}
	}
	h, n, err := commitment.SumFile(filepath.Join(out, "model.onnx"))
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	c := cfg.WithDefaults()
	files := []string{"model.onnx", "vocab.txt"}
	if c.Style == modelgen.StyleTorch {
		files = []string{"model.onnx", "tokenizer.json", "config.json"}
	}
	res := map[string]any{"dir": out, "onnx_model_hash": h.String(), "bytes": n, "style": c.Style, "files": files,
		"layers": c.Layers, "hidden": c.Hidden, "heads": c.Heads, "seq": c.SeqLen, "vocab": c.Vocab, "classes": c.Classes, "seed": c.Seed}
	if output == outputJSON {
		return a.writeJSON(res)
	}
	fmt.Fprintf(a.streams.Out, "%s\n", h)
	if c.Style == modelgen.StyleTorch {
		fmt.Fprintf(a.streams.Err, "%s: wrote %s/model.onnx (%d bytes, torch style: %d layers, hidden %d, %d heads, up to %d positions, %d classes), %s/tokenizer.json (%d tokens) and %s/config.json\n",
			a.name, out, n, c.Layers, c.Hidden, c.Heads, c.SeqLen, c.Classes, out, c.Vocab, out)
		return nil
	}
	fmt.Fprintf(a.streams.Err, "%s: wrote %s/model.onnx (%d bytes: %d layers, hidden %d, %d heads, seq %d, %d classes) and %s/vocab.txt (%d tokens)\n",
		a.name, out, n, c.Layers, c.Hidden, c.Heads, c.SeqLen, c.Classes, out, c.Vocab)
	return nil
}

// generateMLPHead writes --style mlp-head's model.onnx and reports it.
func (a *app) generateMLPHead(out, dims string, seed int64, output string) error {
	cfg := modelgen.MLPHeadConfig{Seed: seed}
	if dims != "" {
		d, err := modelgen.ParseDims(dims)
		if err != nil {
			return &Error{Code: ExitUsage, Err: err, Hint: "--dims takes comma-separated widths, e.g. 768,256,2"}
		}
		cfg.Dims = d
	}
	if err := modelgen.WriteMLPHead(out, cfg); err != nil {
		return &Error{Code: ExitUsage, Err: err, Hint: "--dims needs an input width, hidden widths and at least 2 classes, at most 263K parameters"}
	}
	path := filepath.Join(out, "model.onnx")
	h, n, err := commitment.SumFile(path)
	if err != nil {
		return &Error{Code: ExitFailure, Err: err}
	}
	d := cfg.Dims
	if d == nil {
		d = modelgen.DefaultMLPHeadDims()
	}
	if output == outputJSON {
		return a.writeJSON(map[string]any{"dir": out, "onnx_model_hash": h.String(), "bytes": n, "style": modelgen.StyleMLPHead,
			"files": []string{"model.onnx"}, "dims": d, "seed": max(seed, 1)})
	}
	fmt.Fprintf(a.streams.Out, "%s\n", h)
	fmt.Fprintf(a.streams.Err, "%s: wrote %s (%d bytes: mlp head %v)\n", a.name, path, n, d)
	return nil
}
