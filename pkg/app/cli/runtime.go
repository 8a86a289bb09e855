package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/svc-gov/svc/pkg/ml/inference"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// modelOptions locate a model and the ONNX Runtime library.
type modelOptions struct {
	ortLib string
}

func (o *modelOptions) addRuntime(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.ortLib, "ort-lib", "", "ONNX Runtime library (env SVC_ORT_LIB; default: the cache of make ort)")
}

// load initialises ONNX Runtime and loads the model at path.
func (o *modelOptions) load(path string) (*trace.Model, error) {
	lib, err := inference.LibraryPath(o.ortLib)
	if err != nil {
		return nil, &Error{Code: ExitUsage, Err: err, Hint: "install it with 'make ort' (scripts/install-ort.sh) or pass --ort-lib"}
	}
	if err := inference.Init(lib); err != nil {
		return nil, &Error{Code: ExitUsage, Err: err}
	}
	m, err := trace.LoadModel(path)
	if err != nil {
		hint := "a model directory holds model.onnx and tokenizer.json or vocab.txt (see 'svc model generate')"
		if errors.Is(err, trace.ErrModel) {
			hint = "pass an ONNX text classifier exported with int64 input_ids"
		}
		return nil, &Error{Code: ExitUsage, Err: err, Hint: hint}
	}
	return m, nil
}

// checkInputFlags checks --input and --input-file alone: not both, and
// one of them when required.
func checkInputFlags(text, file string, required bool) error {
	switch {
	case text != "" && file != "":
		return errorf(ExitUsage, "give the input once", "both --input and --input-file given")
	case required && text == "" && file == "":
		return errorf(ExitUsage, "pass --input TEXT or --input-file F", "no input given")
	}
	return nil
}

// readInputText reads --input TEXT or --input-file F (- for stdin).
func (a *app) readInputText(text, file string, required bool) ([]byte, error) {
	if err := checkInputFlags(text, file, required); err != nil {
		return nil, err
	}
	switch {
	case text != "":
		return []byte(text), nil
	case file == "-":
		b, err := io.ReadAll(a.streams.In)
		if err != nil {
			return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("read input: %w", err)}
		}
		return b, nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, &Error{Code: ExitUsage, Err: fmt.Errorf("read input: %w", err)}
		}
		return b, nil
	}
	return nil, nil
}
