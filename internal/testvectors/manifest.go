// Package testvectors generates and describes svc's test vectors: valid
// VPECs and profiles signed by test-only keys, and a corpus of invalid
// documents, each labelled with the checks that must fail.
package testvectors

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ManifestFile is the name of the corpus description inside the vectors directory.
const ManifestFile = "vectors.json"

// Vector describes one test document and the result every verifier must give.
type Vector struct {
	// Name is a short id, also the file's base name.
	Name string `json:"name"`
	// Kind is "vpec" or "profile".
	Kind string `json:"kind"`
	// File is the document's path relative to the vectors directory.
	File string `json:"file"`
	// Description says what was done to the document.
	Description string `json:"description"`
	// Profiles are profile files (relative) to pass with --profile.
	Profiles []string `json:"profiles,omitempty"`
	// Circuits are signed circuit entry files (relative) to pass with
	// --circuit (vectors whose records carry zk_proof blocks).
	Circuits []string `json:"circuits,omitempty"`
	// Valid is the expected verdict.
	Valid bool `json:"valid"`
	// Fails lists the checks that must fail (VPECs only).
	Fails []string `json:"fails,omitempty"`
	// Verdict is the expected verdict line.
	Verdict string `json:"verdict"`
	// Exit is the expected exit code of svc verify / verify-profile.
	Exit int `json:"exit"`
}

// Manifest is the list of vectors.
type Manifest struct {
	Comment     string   `json:"comment"`
	TrustBundle string   `json:"trust_bundle"`
	Vectors     []Vector `json:"vectors"`
}

// Load reads the manifest from the vectors directory dir.
func Load(dir string) (*Manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, fmt.Errorf("read test vector manifest: %w", err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("parse test vector manifest: %w", err)
	}
	return &m, nil
}
