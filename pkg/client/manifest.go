package client

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
)

// ParseManifest reads a check manifest written as JSON or as YAML. A
// document whose first non-space byte is '{' is JSON; anything else is
// YAML, converted to JSON first. Either way the JSON is then parsed
// strictly (document.Parse: no unknown or duplicate fields), so a YAML
// manifest is held to exactly the rules of its JSON form.
func ParseManifest(data []byte) (api.Manifest, error) {
	var m api.Manifest
	if !strings.HasPrefix(strings.TrimSpace(string(data)), "{") {
		var y any
		if err := yaml.Unmarshal(data, &y); err != nil {
			return m, fmt.Errorf("manifest: neither JSON nor YAML: %w", err)
		}
		j, err := json.Marshal(y)
		if err != nil {
			return m, fmt.Errorf("manifest: YAML with non-string keys: %w", err)
		}
		data = j
	}
	if _, err := document.Parse(data, &m); err != nil {
		return m, fmt.Errorf("manifest: %w", err)
	}
	return m, nil
}

// ModelFileHash returns the onnx_model_hash (sha256:…) of an ONNX model
// file, or of model.onnx in the directory path names: the hash the
// profile registry looks models up by.
func ModelFileHash(path string) (string, error) {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		path = filepath.Join(path, "model.onnx")
	}
	h, _, err := commitment.SumFile(path)
	if err != nil {
		return "", fmt.Errorf("hash model: %w", err)
	}
	return h.String(), nil
}
