package tlog

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// OrgKeyPrefix starts the text form of a monitoring key.
const OrgKeyPrefix = "svc-org-key-v1+"

// MinOrgKeySecret is the shortest log secret DeriveOrgKey accepts.
const MinOrgKeySecret = 32

// OrgKey is an organisation's monitoring key: the 32-byte HMAC-SHA256 key
// under which the log commits to the organisation's ids and the VPEC's
// state in every leaf of that organisation. Whoever holds it (the
// organisation, and the auditor it hands it to) finds the organisation's
// leaves and opens them; without it the commitments of different leaves
// cannot be linked to each other or to an organisation, since each one
// covers the leaf's (random) vpec_id.
//
// Its text form ([OrgKey.String]) is svc-org-key-v1+<org_id>+<64 hex>.
type OrgKey struct {
	org string
	key [32]byte
}

// DeriveOrgKey returns the monitoring key of organisation org under the
// log's secret (at least 32 random bytes, kept by the service):
// HMAC-SHA256(secret, "svc.tlog.org-key/v1\n" || org || "\n").
func DeriveOrgKey(secret []byte, org string) (OrgKey, error) {
	if len(secret) < MinOrgKeySecret {
		return OrgKey{}, fmt.Errorf("%w monitoring secret: %d bytes, want at least %d random bytes", ErrMalformed, len(secret), MinOrgKeySecret)
	}
	if !idRE().MatchString(org) {
		return OrgKey{}, fmt.Errorf("%w: org_id %q is not an id (%s)", ErrMalformed, clip(org), idRule)
	}
	k := OrgKey{org: org}
	copy(k.key[:], mac(secret, "svc.tlog.org-key/v1", org))
	return k, nil
}

// NewOrgKey returns the monitoring key of org with the given key bytes.
func NewOrgKey(org string, key [32]byte) (OrgKey, error) {
	if !idRE().MatchString(org) {
		return OrgKey{}, fmt.Errorf("%w: org_id %q is not an id (%s)", ErrMalformed, clip(org), idRule)
	}
	return OrgKey{org: org, key: key}, nil
}

// ParseOrgKey reads the text form svc-org-key-v1+<org_id>+<64 lowercase
// hex>.
func ParseOrgKey(s string) (OrgKey, error) {
	rest, ok := strings.CutPrefix(s, OrgKeyPrefix)
	if !ok {
		return OrgKey{}, malformed("monitoring key", "does not start with %s", OrgKeyPrefix)
	}
	org, h, ok := strings.Cut(rest, "+")
	if !ok {
		return OrgKey{}, malformed("monitoring key", "want %s<org_id>+<64 hex digits>", OrgKeyPrefix)
	}
	var key [32]byte
	if !decodeHex32(h, &key) {
		return OrgKey{}, malformed("monitoring key", "the key is not 64 lowercase hex digits")
	}
	return NewOrgKey(org, key)
}

// Org returns the organisation the key belongs to.
func (k OrgKey) Org() string { return k.org }

// String returns the key's text form. It is a secret: whoever holds it can
// list the organisation's entries in the log.
func (k OrgKey) String() string { return OrgKeyPrefix + k.org + "+" + hex.EncodeToString(k.key[:]) }

// mac returns HMAC-SHA256(key, lines joined and terminated by "\n").
func mac(key []byte, lines ...string) []byte {
	h := hmac.New(sha256.New, key)
	for _, l := range lines {
		h.Write([]byte(l))
		h.Write([]byte{'\n'})
	}
	return h.Sum(nil)
}

func (k OrgKey) tag(lines ...string) [32]byte {
	var t [32]byte
	copy(t[:], mac(k.key[:], lines...))
	return t
}

// orgTag = HMAC(K, "svc.tlog.org/v1\n" org "\n" vpec_id "\n").
func (k OrgKey) orgTag(vpecID string) [32]byte { return k.tag("svc.tlog.org/v1", k.org, vpecID) }

// workflowTag = HMAC(K, "svc.tlog.workflow/v1\n" vpec_id "\n" workflow "\n").
func (k OrgKey) workflowTag(vpecID, workflow string) [32]byte {
	return k.tag("svc.tlog.workflow/v1", vpecID, workflow)
}

// stateTag = HMAC(K, "svc.tlog.state/v1\n" vpec_id "\n" env "\n" clean|dirty "\n").
func (k OrgKey) stateTag(vpecID, env string, clean bool) [32]byte {
	state := "dirty"
	if clean {
		state = "clean"
	}
	return k.tag("svc.tlog.state/v1", vpecID, env, state)
}

// Opened is what an organisation's monitoring key reads from one of its
// leaves.
type Opened struct {
	// Org is the organisation's id.
	Org string
	// Workflow is the leaf's workflow_id if it is one of the candidates
	// given to Open, else "" (the leaf is the organisation's, of a
	// workflow not among them).
	Workflow string
	// Environment is "sandbox" or "production".
	Environment string
	// Clean is the VPEC's is_clean.
	Clean bool
}

// Open reports whether l is one of k's organisation's leaves and, if so,
// opens its commitments: the workflow among the candidate workflows, and
// the environment and clean state. A leaf whose org_tag matches but whose
// state_tag opens with no environment and state is an error (matching
// ErrMalformed): it is the organisation's and cannot be read, which a
// monitor must report, not skip.
func (k OrgKey) Open(l Leaf, workflows ...string) (Opened, bool, error) {
	want := k.orgTag(l.VPECID)
	if subtle.ConstantTimeCompare(want[:], l.OrgTag[:]) != 1 {
		return Opened{}, false, nil
	}
	o := Opened{Org: k.org}
	for _, w := range slices.Compact(slices.Sorted(slices.Values(workflows))) {
		t := k.workflowTag(l.VPECID, w)
		if subtle.ConstantTimeCompare(t[:], l.WorkflowTag[:]) == 1 {
			o.Workflow = w
			break
		}
	}
	for _, env := range environments {
		for _, clean := range []bool{true, false} {
			t := k.stateTag(l.VPECID, env, clean)
			if subtle.ConstantTimeCompare(t[:], l.StateTag[:]) == 1 {
				o.Environment, o.Clean = env, clean
				return o, true, nil
			}
		}
	}
	return o, true, fmt.Errorf("%w leaf %s: org_tag is organisation %q's but state_tag opens with no environment (%s) and state (clean, dirty)",
		ErrMalformed, l.VPECID, k.org, strings.Join(environments, ", "))
}
