package calibration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MaxCorpusLine is the longest line ReadCorpus accepts.
const MaxCorpusLine = 1 << 20

// ReadCorpus reads calibration inputs (Options.Corpus) from r: one text
// per line, surrounding white space trimmed, blank lines skipped. No line
// at all, or a line longer than MaxCorpusLine, is an error matching
// ErrOptions.
func ReadCorpus(r io.Reader) ([][]byte, error) {
	var corpus [][]byte
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, MaxCorpusLine)
	for sc.Scan() {
		if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
			corpus = append(corpus, append([]byte(nil), line...))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: corpus: %w", ErrOptions, err)
	}
	if len(corpus) == 0 {
		return nil, fmt.Errorf("%w: the corpus has no lines", ErrOptions)
	}
	return corpus, nil
}

// DefaultArchitecture is the architecture of a model without a
// config.json naming its model_type.
const DefaultArchitecture = "bert-like"

// Architecture returns the model_type of the Hugging Face config.json
// beside a model (path is the model directory or its model.onnx), else
// DefaultArchitecture.
func Architecture(path string) string {
	dir := path
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		dir = filepath.Dir(path)
	}
	var cfg struct {
		ModelType string `json:"model_type"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, "config.json")); err == nil {
		if json.Unmarshal(b, &cfg) == nil && cfg.ModelType != "" {
			return cfg.ModelType
		}
	}
	return DefaultArchitecture
}

// DefaultProfileID is the id of a locally calibrated profile of a model
// class: local/<model class>-class/v1.0.0.
func DefaultProfileID(modelClass string) string { return "local/" + modelClass + "-class/v1.0.0" }
