package tlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/transparency-dev/formats/witness"
	"golang.org/x/mod/sumdb/note"
)

// MaxPolicyBytes bounds a witness policy file.
const MaxPolicyBytes = 64 << 10

// WitnessPolicy says which witnesses must cosign a checkpoint: the
// policy format of Sigsum (witness, group and quorum lines), with each
// witness key a C2SP signed-note verifier key of a tlog-cosignature/v1
// key, as Tessera reads it:
//
//	witness w1 example.org/witness1+1c2a5d8f+BHJ... https://w1.example.org
//	witness w2 example.net/w2+4a0b7e11+BHx... https://w2.example.net
//	group g 1 w1 w2
//	quorum g
//
// "quorum none" asks for no cosignature: the log's signature alone is then
// trusted not to show a split view. The same file configures the log
// (where to send checkpoints) and verifiers (whose cosignatures count).
type WitnessPolicy struct {
	root      witness.Group
	witnesses []policyWitness
	text      []byte
}

type policyWitness struct {
	name string
	v    note.Verifier
	url  string
}

// PolicyWitness is one witness of a policy.
type PolicyWitness struct {
	// Name is the witness's key name (the name in its cosignature lines).
	Name string
	// URL is where the log sends it checkpoints (its add-checkpoint
	// endpoint).
	URL string
}

// ParseWitnessPolicy reads a witness policy.
func ParseWitnessPolicy(text []byte) (*WitnessPolicy, error) {
	if len(text) > MaxPolicyBytes {
		return nil, malformed("witness policy", "%d bytes, more than %d", len(text), MaxPolicyBytes)
	}
	if strings.ContainsRune(string(text), 0) {
		return nil, malformed("witness policy", "contains a NUL byte")
	}
	if err := checkPolicyLines(text); err != nil {
		return nil, malformed("witness policy", "%v", err)
	}
	g, err := parsePolicy(text)
	if err != nil {
		return nil, malformed("witness policy", "%v", err)
	}
	p := &WitnessPolicy{root: g, text: slices.Clone(text)}
	var walk func(g witness.Group) error
	walk = func(g witness.Group) error {
		for _, c := range g.Components {
			switch c := c.(type) {
			case witness.Witness:
				if !slices.ContainsFunc(p.witnesses, func(w policyWitness) bool { return w.v.Name() == c.Key.Name() && w.v.KeyHash() == c.Key.KeyHash() }) {
					p.witnesses = append(p.witnesses, policyWitness{name: c.Key.Name(), v: c.Key, url: c.URL})
				}
			case witness.Group:
				if err := walk(c); err != nil {
					return err
				}
			default:
				return fmt.Errorf("unexpected policy component %T", c)
			}
		}
		return nil
	}
	if err := walk(g); err != nil {
		return nil, malformed("witness policy", "%v", err)
	}
	return p, nil
}

// checkPolicyLines refuses what the formats parser accepts but would
// weaken a policy unseen: a second quorum line (the last would win, so a
// "quorum none" appended silently drops every witness) and a group
// threshold below 1 (a group asking for none of its witnesses; say
// "quorum none" for that).
func checkPolicyLines(text []byte) error {
	quorums := 0
	for i, line := range strings.Split(string(text), "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case f[0] == "quorum":
			if quorums++; quorums > 1 {
				return fmt.Errorf("line %d: a second quorum line: a policy has exactly one", i+1)
			}
		case f[0] == "group" && len(f) >= 3:
			if n, err := strconv.Atoi(f[2]); err == nil && n < 1 {
				return fmt.Errorf("line %d: group %s has threshold %d: a group needs at least 1 of its members (write \"quorum none\" to trust the log's signature alone)", i+1, f[1], n)
			}
		}
	}
	return nil
}

// parsePolicy runs the formats parser, which panics on some thresholds.
func parsePolicy(text []byte) (g witness.Group, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	return witness.ParsePolicy(text)
}

// Text returns the policy as it was read.
func (p *WitnessPolicy) Text() []byte { return slices.Clone(p.text) }

// Witnesses lists the policy's witnesses.
func (p *WitnessPolicy) Witnesses() []PolicyWitness {
	out := make([]PolicyWitness, len(p.witnesses))
	for i, w := range p.witnesses {
		out[i] = PolicyWitness{Name: w.name, URL: w.url}
	}
	return out
}

// Verifier returns the cosignature verifier of the policy's witness with
// key name name.
func (p *WitnessPolicy) Verifier(name string) (note.Verifier, bool) {
	for _, w := range p.witnesses {
		if w.name == name {
			return w.v, true
		}
	}
	return nil, false
}

// RequiresCosignatures reports whether the policy asks for at least one
// cosignature (it is not "quorum none").
func (p *WitnessPolicy) RequiresCosignatures() bool { return p.root.N > 0 }

// check verifies the cosignatures of n by the policy's witnesses and
// whether they satisfy it. Every signature line by a policy witness's key
// must verify (ErrCosignature otherwise, even when the rest would satisfy
// the policy); lines by other keys are ignored. A cosignature that window
// (when not nil) refuses does not count; the cosignatures returned are
// those that count.
func (p *WitnessPolicy) check(n *signedNote, window CosignatureWindow) ([]Cosignature, error) {
	signed := map[string]bool{}
	var cos []Cosignature
	var refused []error
	for _, s := range n.sigs {
		for _, w := range p.witnesses {
			if w.v.Name() != s.name || w.v.KeyHash() != s.hash {
				continue
			}
			if !w.v.Verify([]byte(n.text), s.sig) {
				return nil, &WitnessError{Witness: w.name, Err: ErrCosignature, Detail: "its cosignature line does not verify with its key: forged, or over another checkpoint"}
			}
			t := cosignatureTime(s)
			if window != nil {
				if err := window(w.v, t); err != nil {
					refused = append(refused, &CosignatureRefusedError{Witness: w.name, Time: t, Err: err})
					continue
				}
			}
			signed[s.name+"+"+fmt.Sprint(s.hash)] = true
			cos = append(cos, Cosignature{Witness: w.name, Time: t})
		}
	}
	if !satisfied(p.root, signed) {
		var missing []string
		for _, w := range p.witnesses {
			if !signed[w.v.Name()+"+"+fmt.Sprint(w.v.KeyHash())] {
				missing = append(missing, w.name)
			}
		}
		have := make([]string, len(cos))
		for i, c := range cos {
			have[i] = c.Witness
		}
		err := fmt.Errorf("%w: cosigned by %s; no cosignature from %s",
			ErrWitnessPolicy, listOrNone(have), strings.Join(missing, ", "))
		if len(refused) > 0 {
			// The refusals are what an auditor must act on: they say
			// which key, at which time, outside which window.
			err = fmt.Errorf("%w: %w", err, errors.Join(refused...))
		}
		return cos, err
	}
	return cos, nil
}

// CosignatureRefusedError reports a cosignature that verified but does not
// count toward the policy: the verifier's CosignatureWindow refused its
// time (a witness key outside its trust root window). It matches Err with
// errors.Is and errors.As.
type CosignatureRefusedError struct {
	// Witness is the witness's key name.
	Witness string
	// Time is the time the cosignature says it was made.
	Time time.Time
	// Err is the CosignatureWindow's reason.
	Err error
}

// Error names the witness, the cosignature's time and the reason.
func (e *CosignatureRefusedError) Error() string {
	return fmt.Sprintf("witness %s's cosignature (made at %s) does not count: %v", e.Witness, e.Time.UTC().Format(time.RFC3339), e.Err)
}

// Unwrap returns the reason.
func (e *CosignatureRefusedError) Unwrap() error { return e.Err }

func satisfied(g witness.Group, signed map[string]bool) bool {
	if g.N <= 0 {
		return true
	}
	n := 0
	for _, c := range g.Components {
		switch c := c.(type) {
		case witness.Witness:
			if signed[c.Key.Name()+"+"+fmt.Sprint(c.Key.KeyHash())] {
				n++
			}
		case witness.Group:
			if satisfied(c, signed) {
				n++
			}
		}
		if n >= g.N {
			return true
		}
	}
	return false
}

// cosignatureTime reads the timestamp of a tlog-cosignature/v1 signature
// (8 bytes big-endian seconds before the Ed25519 signature).
func cosignatureTime(s noteSig) time.Time {
	if len(s.sig) < 8 {
		return time.Time{}
	}
	return time.Unix(int64(binary.BigEndian.Uint64(s.sig[:8])), 0).UTC()
}

func listOrNone(s []string) string {
	if len(s) == 0 {
		return "no witness"
	}
	return strings.Join(s, ", ")
}

var errNoPolicy = errors.New("no witness policy: give one (a policy of \"quorum none\" trusts the log's signature alone)")
