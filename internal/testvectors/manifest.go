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

	// The members below are the trust vectors' (testdata/vectors/trust).

	// TrustRoot is the trust root (or PEM bundle) to pass with
	// --trust-root, instead of the manifest's TrustBundle.
	TrustRoot string `json:"trust_root,omitempty"`
	// TrustRootUpdates are the --trust-root-update files, in order.
	TrustRootUpdates []string `json:"trust_root_updates,omitempty"`
	// TrustRootRefusal is the trustroot code (docs/KEYS.md) of an update
	// that must be refused before anything is verified (exit 3, no
	// verdict).
	TrustRootRefusal string `json:"trust_root_refusal,omitempty"`
	// Receipt is the transparency log receipt to pass with --receipt.
	Receipt string `json:"receipt,omitempty"`
	// RequireLog passes --require-log.
	RequireLog bool `json:"require_log,omitempty"`
	// WitnessPolicy is the --witness-policy file.
	WitnessPolicy string `json:"witness_policy,omitempty"`
	// LogCheckpoint and ConsistencyProof are the --log-checkpoint and
	// --consistency-proof files.
	LogCheckpoint    string `json:"log_checkpoint,omitempty"`
	ConsistencyProof string `json:"consistency_proof,omitempty"`
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

// TrustArgs returns the svc verify flags of a trust vector (dir is the
// directory its paths are relative to): --trust-root, each --circuit, each
// --trust-root-update, --receipt, --require-log, --witness-policy,
// --log-checkpoint and --consistency-proof, as the vector gives them.
func (v Vector) TrustArgs(dir string) []string {
	var args []string
	add := func(flag, file string) {
		if file != "" {
			args = append(args, flag, filepath.Join(dir, file))
		}
	}
	add("--trust-root", v.TrustRoot)
	for _, c := range v.Circuits {
		add("--circuit", c)
	}
	for _, u := range v.TrustRootUpdates {
		add("--trust-root-update", u)
	}
	add("--receipt", v.Receipt)
	if v.RequireLog {
		args = append(args, "--require-log")
	}
	add("--witness-policy", v.WitnessPolicy)
	add("--log-checkpoint", v.LogCheckpoint)
	add("--consistency-proof", v.ConsistencyProof)
	return args
}
