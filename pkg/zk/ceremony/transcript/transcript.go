// Package transcript defines the ceremony transcript of a Groth16 (BN254)
// multi-party setup and checks it offline.
//
// A transcript is a JSON document (schema [Schema]) that lists, in order,
// every contribution to phase 1 (powers of tau, once for a domain) and to
// phase 2 (one circuit), each naming its contributor, the hash of the
// state it builds on and the hash of the state it produced, and ends in
// the hash of the verifying key the ceremony gave. Its hash (SHA-256 over
// its RFC 8785 canonical bytes) is what a circuit entry names.
//
// [Check] is what an offline verifier can do without the ceremony's state
// files: the hash chain inside the document, the transcript hash against
// the one a circuit entry names, and the verifying key against the hash
// the transcript ends in. It cannot tell whether each contribution is a
// valid update of its predecessor, nor whether any contributor discarded
// their randomness: that needs the state files (package ceremony's Verify)
// and trust in at least one contributor per phase.
//
// The package is pure Go with no cgo and no cryptography beyond SHA-256, so
// the offline verifier (svc-verify) can link it.
package transcript

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
)

// Schema is the value of a transcript's schema member.
const Schema = "svc.zk-ceremony/v1"

// ProofSystem is the only proof system a v1 transcript describes.
const ProofSystem = "groth16-bn254"

// Limits of a v1 transcript.
const (
	// MinPower and MaxPower bound a domain's log2 size (phase 1 and 2).
	MinPower = 1
	MaxPower = 24
	// MaxContributions bounds the contributions of one transcript.
	MaxContributions = 10000
	// MaxNameBytes bounds a contributor or circuit name, in UTF-8 bytes.
	MaxNameBytes = 128
	// MinBeaconBytes and MaxBeaconBytes bound a beacon's length in bytes.
	MinBeaconBytes = 16
	MaxBeaconBytes = 1024
)

// Sentinel errors. Every error Check returns matches one of them with
// errors.Is and is a *Error.
var (
	// ErrSchema: the document is not a well-formed v1 transcript.
	ErrSchema = errors.New("transcript: schema")
	// ErrOrder: contributions out of order: an index that is not the
	// contribution's position, or a phase-1 contribution after a phase-2 one.
	ErrOrder = errors.New("transcript: contributions out of order")
	// ErrChain: a contribution does not build on its predecessor (its
	// previous_state_hash is not the state the one before it produced).
	ErrChain = errors.New("transcript: contribution does not build on its predecessor")
	// ErrNoContributions: a phase has no contribution, so no one's
	// randomness protects it.
	ErrNoContributions = errors.New("transcript: phase without contributions")
	// ErrIncomplete: the transcript does not end in a verifying key (phase 2
	// not finalized), or phase 2 started before phase 1 was sealed.
	ErrIncomplete = errors.New("transcript: ceremony not finalized")
	// ErrTranscriptHash: the transcript's hash is not the one expected (the
	// one a circuit entry names).
	ErrTranscriptHash = errors.New("transcript: hash differs from the expected one")
	// ErrBeacon: a beacon is not lowercase hex of MinBeaconBytes to
	// MaxBeaconBytes bytes.
	ErrBeacon = errors.New("transcript: bad beacon")
	// ErrKeyMismatch: the verifying key is not the one the transcript ends in.
	ErrKeyMismatch = errors.New("transcript: verifying key not derived from the final state")
)

// Error is a problem found in a transcript: the member it concerns and the
// class of problem (one of the sentinel errors).
type Error struct {
	// Field is the member path, e.g. contributions[2].previous_state_hash;
	// empty for the document as a whole.
	Field string
	// Msg describes the problem.
	Msg string
	// Err is the sentinel error for the class of problem.
	Err error
}

func (e *Error) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%v: %s", e.Err, e.Msg)
	}
	return fmt.Sprintf("%v: %s: %s", e.Err, e.Field, e.Msg)
}

// Unwrap returns the class of the problem.
func (e *Error) Unwrap() error { return e.Err }

func fail(sentinel error, field, format string, a ...any) *Error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, a...), Err: sentinel}
}

// Transcript is a v1 ceremony transcript.
type Transcript struct {
	// Schema is always [Schema].
	Schema string `json:"schema"`
	// ProofSystem is always [ProofSystem].
	ProofSystem string `json:"proof_system"`
	// Phase1 describes the powers-of-tau phase.
	Phase1 Phase1 `json:"phase1"`
	// Phase2 describes the circuit phase; absent until phase 2 starts.
	Phase2 *Phase2 `json:"phase2,omitempty"`
	// Contributions lists every contribution in order: phase 1's, then
	// phase 2's.
	Contributions []Contribution `json:"contributions"`
}

// Phase1 is the circuit-independent phase: powers of tau over a domain of
// 2^Power points.
type Phase1 struct {
	// Power is log2 of the domain size.
	Power int `json:"power"`
	// InitialStateHash is the hash of the phase's deterministic initial
	// state (all secrets one).
	InitialStateHash string `json:"initial_state_hash"`
	// Beacon is the public random beacon (lowercase hex) the phase was
	// sealed with; absent until sealed.
	Beacon string `json:"beacon,omitempty"`
	// SRSHash is the hash of the sealed parameters (the SRS phase 2 starts
	// from); present exactly when Beacon is.
	SRSHash string `json:"srs_hash,omitempty"`
}

// Phase2 is the circuit-specific phase.
type Phase2 struct {
	// Circuit names the circuit for people (e.g. "demo" or "mlp-head").
	Circuit string `json:"circuit"`
	// ONNXModelHash is the sha256 hash of the ONNX model the circuit was
	// compiled from, where there is one.
	ONNXModelHash string `json:"onnx_model_hash,omitempty"`
	// R1CSHash is the hash of the circuit's constraint system (gnark's
	// serialisation).
	R1CSHash string `json:"r1cs_hash"`
	// Constraints is the circuit's number of constraints.
	Constraints int `json:"constraints"`
	// Power is log2 of the circuit's domain: the smallest power of two at
	// least Constraints, at most phase 1's power.
	Power int `json:"power"`
	// InitialStateHash is the hash of the phase's deterministic initial
	// state, computed from the circuit and phase 1's SRS.
	InitialStateHash string `json:"initial_state_hash"`
	// Beacon is the public random beacon (lowercase hex) the keys were
	// sealed with; absent until finalized.
	Beacon string `json:"beacon,omitempty"`
	// VerifyingKeyHash is the hash of the verifying key's bytes; present
	// exactly when Beacon is.
	VerifyingKeyHash string `json:"verifying_key_hash,omitempty"`
	// ProvingKeyHash is the hash of the proving key's bytes; present
	// exactly when Beacon is.
	ProvingKeyHash string `json:"proving_key_hash,omitempty"`
}

// Contribution is one contributor's update of a phase's state.
type Contribution struct {
	// Index is the contribution's 1-based position in the transcript.
	Index int `json:"index"`
	// Phase is 1 or 2.
	Phase int `json:"phase"`
	// Contributor is the name the contributor gave.
	Contributor string `json:"contributor"`
	// ContributionHash is the hash of the contribution's update proofs:
	// the public commitments to the contributor's secrets and the proofs
	// of knowledge of them.
	ContributionHash string `json:"contribution_hash"`
	// PreviousStateHash is the hash of the state the contribution builds on.
	PreviousStateHash string `json:"previous_state_hash"`
	// StateHash is the hash of the state the contribution produced.
	StateHash string `json:"state_hash"`
}

// HashBytes returns "sha256:" and the lowercase hex SHA-256 of b, the form
// of every hash in a transcript.
func HashBytes(b []byte) string { return commitment.String(b) }

// ValidHash reports whether s is "sha256:" and 64 lowercase hex digits,
// the form of every hash in a transcript.
func ValidHash(s string) bool { return validHash(s) }

func validHash(s string) bool {
	h, ok := strings.CutPrefix(s, "sha256:")
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Parse strictly decodes a transcript document (unknown, missing or empty
// members are errors) and checks its rules (see Validate). It returns the
// transcript and its hash.
func Parse(data []byte) (*Transcript, string, error) {
	var t Transcript
	tree, err := document.Parse(data, &t)
	if err != nil {
		return nil, "", &Error{Msg: err.Error(), Err: ErrSchema}
	}
	if err := t.Validate(); err != nil {
		return nil, "", err
	}
	return &t, HashBytes(tree.Canonical()), nil
}

// Marshal returns the transcript's RFC 8785 canonical bytes, the form
// written to transcript.json (so the file's SHA-256 is the transcript
// hash), and its hash.
func (t *Transcript) Marshal() ([]byte, string, error) {
	if err := t.Validate(); err != nil {
		return nil, "", err
	}
	canon, err := document.MarshalSignedBytes(t)
	if err != nil {
		return nil, "", err
	}
	return canon, HashBytes(canon), nil
}

// Hash returns the transcript's hash: "sha256:" and the hex SHA-256 of its
// RFC 8785 canonical bytes.
func (t *Transcript) Hash() (string, error) {
	_, h, err := t.Marshal()
	return h, err
}

// Validate checks the transcript's rules: schema and proof system, hash
// forms, names, limits, and the chain: contribution i has index i+1; phase
// 1 contributions come first; the first contribution of a phase builds on
// the phase's initial state and every other on the state its predecessor
// produced; no state appears twice; phase 2 starts only after phase 1 is
// sealed. A transcript in progress (phases without contributions, not
// sealed, not finalized) is valid; [Check] asks for a finished one.
func (t *Transcript) Validate() error {
	if t.Schema != Schema {
		return fail(ErrSchema, "schema", "is %q, want %q", t.Schema, Schema)
	}
	if t.ProofSystem != ProofSystem {
		return fail(ErrSchema, "proof_system", "is %q, want %q", t.ProofSystem, ProofSystem)
	}
	if err := checkPower("phase1.power", t.Phase1.Power, MaxPower); err != nil {
		return err
	}
	if !validHash(t.Phase1.InitialStateHash) {
		return fail(ErrSchema, "phase1.initial_state_hash", "want sha256: and 64 lowercase hex digits")
	}
	if err := checkSeal("phase1", t.Phase1.Beacon, []member{{"srs_hash", t.Phase1.SRSHash}}); err != nil {
		return err
	}
	if p := t.Phase2; p != nil {
		if t.Phase1.Beacon == "" {
			return fail(ErrIncomplete, "phase2", "present, but phase 1 is not sealed (no phase1.beacon)")
		}
		if err := checkName("phase2.circuit", p.Circuit); err != nil {
			return err
		}
		if p.ONNXModelHash != "" && !validHash(p.ONNXModelHash) {
			return fail(ErrSchema, "phase2.onnx_model_hash", "want sha256: and 64 lowercase hex digits")
		}
		for _, m := range []member{{"r1cs_hash", p.R1CSHash}, {"initial_state_hash", p.InitialStateHash}} {
			if !validHash(m.value) {
				return fail(ErrSchema, "phase2."+m.name, "want sha256: and 64 lowercase hex digits")
			}
		}
		if err := checkPower("phase2.power", p.Power, t.Phase1.Power); err != nil {
			return err
		}
		if p.Constraints < 1 || p.Constraints > 1<<p.Power || p.Power > MinPower && p.Constraints <= 1<<(p.Power-1) {
			return fail(ErrSchema, "phase2.constraints", "%d does not fit power %d (the domain is the smallest power of two at least the constraint count)", p.Constraints, p.Power)
		}
		if err := checkSeal("phase2", p.Beacon, []member{{"verifying_key_hash", p.VerifyingKeyHash}, {"proving_key_hash", p.ProvingKeyHash}}); err != nil {
			return err
		}
	}
	if len(t.Contributions) > MaxContributions {
		return fail(ErrSchema, "contributions", "%d contributions, more than %d", len(t.Contributions), MaxContributions)
	}
	seen := map[string]int{t.Phase1.InitialStateHash: -1}
	prev, phase := t.Phase1.InitialStateHash, 1
	for i, c := range t.Contributions {
		f := fmt.Sprintf("contributions[%d]", i)
		if c.Index != i+1 {
			return fail(ErrOrder, f+".index", "is %d, want %d (its position)", c.Index, i+1)
		}
		if c.Phase != 1 && c.Phase != 2 {
			return fail(ErrSchema, f+".phase", "is %d, want 1 or 2", c.Phase)
		}
		if c.Phase < phase {
			return fail(ErrOrder, f+".phase", "a phase-1 contribution after a phase-2 one")
		}
		if err := checkName(f+".contributor", c.Contributor); err != nil {
			return err
		}
		for _, m := range []member{{"contribution_hash", c.ContributionHash}, {"previous_state_hash", c.PreviousStateHash}, {"state_hash", c.StateHash}} {
			if !validHash(m.value) {
				return fail(ErrSchema, f+"."+m.name, "want sha256: and 64 lowercase hex digits")
			}
		}
		if c.Phase == 2 && phase == 1 {
			if t.Phase2 == nil || t.Phase1.Beacon == "" {
				return fail(ErrIncomplete, f+".phase", "a phase-2 contribution, but phase 2 has not started (no phase2 member)")
			}
			phase, prev = 2, t.Phase2.InitialStateHash
			if _, dup := seen[prev]; dup {
				return fail(ErrChain, "phase2.initial_state_hash", "repeats an earlier state")
			}
			seen[prev] = -1
		}
		if c.PreviousStateHash != prev {
			return fail(ErrChain, f+".previous_state_hash", "is %s, but the state before it is %s", c.PreviousStateHash, prev)
		}
		if j, dup := seen[c.StateHash]; dup {
			return fail(ErrChain, f+".state_hash", "repeats an earlier state (contribution %d)", j+1)
		}
		seen[c.StateHash] = i
		prev = c.StateHash
	}
	if t.Phase1.Beacon != "" && t.phaseCount(1) == 0 {
		return fail(ErrNoContributions, "phase1", "sealed without any contribution")
	}
	if t.Phase2 != nil && t.Phase2.Beacon != "" && t.phaseCount(2) == 0 {
		return fail(ErrNoContributions, "phase2", "finalized without any contribution")
	}
	return nil
}

// member is a member's name and value, for checks in a fixed order.
type member struct{ name, value string }

func (t *Transcript) phaseCount(phase int) int {
	n := 0
	for _, c := range t.Contributions {
		if c.Phase == phase {
			n++
		}
	}
	return n
}

// LastState returns the hash of the latest state of phase: its last
// contribution's state, or the phase's initial state.
func (t *Transcript) LastState(phase int) string {
	last := ""
	if phase == 1 {
		last = t.Phase1.InitialStateHash
	} else if t.Phase2 != nil {
		last = t.Phase2.InitialStateHash
	}
	for _, c := range t.Contributions {
		if c.Phase == phase {
			last = c.StateHash
		}
	}
	return last
}

// Contributors returns the names of a phase's contributors, in order.
func (t *Transcript) Contributors(phase int) []string {
	var names []string
	for _, c := range t.Contributions {
		if c.Phase == phase {
			names = append(names, c.Contributor)
		}
	}
	return names
}

func checkPower(field string, p, max int) error {
	if p < MinPower || p > max {
		return fail(ErrSchema, field, "is %d, want %d to %d", p, MinPower, max)
	}
	return nil
}

// checkSeal checks a phase's beacon and the hashes that come with it: all
// present or all absent.
func checkSeal(phase, beacon string, hashes []member) error {
	for _, m := range hashes {
		if (beacon == "") != (m.value == "") {
			return fail(ErrSchema, phase+"."+m.name, "must be present exactly when %s.beacon is", phase)
		}
		if m.value != "" && !validHash(m.value) {
			return fail(ErrSchema, phase+"."+m.name, "want sha256: and 64 lowercase hex digits")
		}
	}
	if beacon == "" {
		return nil
	}
	if _, err := ParseBeacon(beacon); err != nil {
		return fail(ErrSchema, phase+".beacon", "%v", err)
	}
	return nil
}

// ParseBeacon decodes a beacon: lowercase hex of MinBeaconBytes to
// MaxBeaconBytes bytes.
func ParseBeacon(s string) ([]byte, error) {
	if len(s) < 2*MinBeaconBytes || len(s) > 2*MaxBeaconBytes || len(s)%2 != 0 || strings.ToLower(s) != s {
		return nil, fmt.Errorf("%w: want %d to %d bytes in lowercase hex (an even number of digits 0-9a-f), got %d characters", ErrBeacon, MinBeaconBytes, MaxBeaconBytes, len(s))
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: want lowercase hex: %v", ErrBeacon, err)
	}
	return b, nil
}

// ValidName checks a contributor or circuit name: 1 to MaxNameBytes bytes
// of UTF-8 without control characters (C0, DEL, C1) or bidirectional
// controls: names.IsControl, the rule every name a person reads follows.
func ValidName(s string) error {
	switch {
	case s == "":
		return errors.New("empty")
	case len(s) > MaxNameBytes:
		return fmt.Errorf("%d bytes, more than %d", len(s), MaxNameBytes)
	case !utf8.ValidString(s):
		return errors.New("not valid UTF-8")
	}
	for i, r := range s {
		if names.IsControl(r) {
			return fmt.Errorf("control character U+%04X at byte %d", r, i)
		}
	}
	return nil
}

func checkName(field, s string) error {
	if err := ValidName(s); err != nil {
		return fail(ErrSchema, field, "%v", err)
	}
	return nil
}

// Report is what Check found: the transcript's hash and who contributed.
type Report struct {
	// Hash is the transcript's hash.
	Hash string
	// Circuit, ONNXModelHash, Constraints: from phase2.
	Circuit       string
	ONNXModelHash string
	Constraints   int
	// VerifyingKeyHash is the hash of the verifying key the transcript ends in.
	VerifyingKeyHash string
	// Phase1Contributors and Phase2Contributors list the contributors'
	// names in order.
	Phase1Contributors []string
	Phase2Contributors []string
}

// Distinct returns the distinct contributor names over both phases, in
// first-seen order.
func (r *Report) Distinct() []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range append(append([]string(nil), r.Phase1Contributors...), r.Phase2Contributors...) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// SingleParty reports whether one name made every contribution: the key
// is then no better than that party's signature.
func (r *Report) SingleParty() bool { return len(r.Distinct()) == 1 }

// Check verifies a finished transcript offline: doc parses strictly and
// passes Validate; both phases have at least one contribution; phase 2 is
// finalized; if wantHash is not empty, the transcript's hash equals it
// (the hash a circuit entry names); and the SHA-256 of vk (the verifying
// key's bytes as published, gnark's compressed serialisation) equals the
// verifying_key_hash the transcript ends in.
//
// Check does not (cannot, without the state files) verify that each
// contribution is a valid update of its predecessor, nor that the keys
// were sealed from the last state: it checks that the document is one
// consistent chain ending in this key. Run package ceremony's Verify on the
// ceremony's files for the full check.
func Check(doc, vk []byte, wantHash string) (*Report, error) {
	t, h, err := Parse(doc)
	if err != nil {
		return nil, err
	}
	if wantHash != "" && h != wantHash {
		return nil, fail(ErrTranscriptHash, "", "the transcript's hash is %s, the circuit entry names %s", h, wantHash)
	}
	if t.phaseCount(1) == 0 {
		return nil, fail(ErrNoContributions, "phase1", "no contribution: no one's randomness protects the setup")
	}
	if t.Phase2 == nil || t.Phase2.Beacon == "" {
		return nil, fail(ErrIncomplete, "phase2", "the ceremony was not finalized: no verifying key hash")
	}
	if got := HashBytes(vk); got != t.Phase2.VerifyingKeyHash {
		return nil, fail(ErrKeyMismatch, "phase2.verifying_key_hash", "is %s, but the verifying key's hash is %s", t.Phase2.VerifyingKeyHash, got)
	}
	return &Report{
		Hash:               h,
		Circuit:            t.Phase2.Circuit,
		ONNXModelHash:      t.Phase2.ONNXModelHash,
		Constraints:        t.Phase2.Constraints,
		VerifyingKeyHash:   t.Phase2.VerifyingKeyHash,
		Phase1Contributors: t.Contributors(1),
		Phase2Contributors: t.Contributors(2),
	}, nil
}
