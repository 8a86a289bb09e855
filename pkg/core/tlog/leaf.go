package tlog

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// LeafSchema is the first line of a v1 leaf.
const LeafSchema = "svc.tlog.leaf/v1"

// IssuedAtLayout is the one accepted form of a leaf's issued_at: RFC 3339
// in UTC with exactly three fraction digits, the form svc writes a VPEC's
// issued_at in.
const IssuedAtLayout = "2006-01-02T15:04:05.000Z"

// Environments returns the values of a VPEC's environment a v1 leaf
// commits to (a new slice each call). A monitor opens a leaf's state tag
// by trying each of them.
func Environments() []string { return slices.Clone(environments) }

var environments = []string{"sandbox", "production"}

// idRule is FORMATS.md's id: what org, workflow and (after "vpec_") VPEC
// ids are.
const idRule = `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`

// idRE is idRule compiled on first use: compiling it (127 repetitions)
// cost half a millisecond of every svc-verify start-up.
var idRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(idRule) })

// Entry is what the log records about one sealed VPEC, before the
// organisation-private parts are turned into commitments.
type Entry struct {
	// VPECID is the VPEC's vpec_id ("vpec_" + id).
	VPECID string
	// Digest is the SHA-256 of the VPEC's signed bytes (see [Digest]).
	Digest [32]byte
	// OrgID and WorkflowID are the VPEC's org_id and workflow_id. They
	// appear in the leaf only as commitments under the organisation's
	// monitoring key.
	OrgID, WorkflowID string
	// Environment is the VPEC's environment: "sandbox" or "production".
	Environment string
	// IssuedAt is the VPEC's issued_at (recorded to the millisecond).
	IssuedAt time.Time
	// Clean is the VPEC's is_clean.
	Clean bool
}

// Leaf is a v1 log entry: the VPEC's id and digest and its issue time in
// clear, and three commitments an organisation's monitoring key opens
// (see [OrgKey]). Its encoding ([Leaf.Marshal]) is seven lines of ASCII:
//
//	svc.tlog.leaf/v1
//	vpec_id <vpec_id>
//	vpec_digest sha256:<64 lowercase hex>
//	issued_at <YYYY-MM-DDTHH:MM:SS.mmmZ>
//	org_tag <64 lowercase hex>
//	workflow_tag <64 lowercase hex>
//	state_tag <64 lowercase hex>
//
// each ending in a line feed.
type Leaf struct {
	VPECID      string
	Digest      [32]byte
	IssuedAt    time.Time
	OrgTag      [32]byte
	WorkflowTag [32]byte
	StateTag    [32]byte
}

// Digest returns the SHA-256 of a VPEC's signed bytes (the JCS of the
// VPEC without signature and timestamp_rfc3161): the digest a leaf and a
// receipt's subject carry.
func Digest(signedBytes []byte) [32]byte { return sha256.Sum256(signedBytes) }

// DigestParts is Digest of the signed bytes given in parts, taken in order
// (vpec.Document.SignedParts).
func DigestParts(parts [][]byte) [32]byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// NewLeaf makes the leaf of e, with its organisation's commitments
// computed under key, which must be e's organisation's monitoring key.
func NewLeaf(key OrgKey, e Entry) (Leaf, error) {
	if err := checkVPECID(e.VPECID); err != nil {
		return Leaf{}, err
	}
	if !idRE().MatchString(e.OrgID) {
		return Leaf{}, fmt.Errorf("%w entry: org_id %q is not an id (%s)", ErrMalformed, e.OrgID, idRule)
	}
	if !idRE().MatchString(e.WorkflowID) {
		return Leaf{}, fmt.Errorf("%w entry: workflow_id %q is not an id (%s)", ErrMalformed, e.WorkflowID, idRule)
	}
	if !validEnvironment(e.Environment) {
		return Leaf{}, fmt.Errorf("%w entry: environment %q is not one of %s", ErrMalformed, e.Environment, strings.Join(environments, ", "))
	}
	if key.org != e.OrgID {
		return Leaf{}, fmt.Errorf("%w entry: the monitoring key is organisation %q's, the entry is %q's", ErrMalformed, key.org, e.OrgID)
	}
	at := e.IssuedAt.UTC().Truncate(time.Millisecond)
	if y := at.Year(); y < 1 || y > 9999 {
		return Leaf{}, fmt.Errorf("%w entry: issued_at %v is outside years 0001-9999", ErrMalformed, e.IssuedAt)
	}
	return Leaf{
		VPECID:      e.VPECID,
		Digest:      e.Digest,
		IssuedAt:    at,
		OrgTag:      key.orgTag(e.VPECID),
		WorkflowTag: key.workflowTag(e.VPECID, e.WorkflowID),
		StateTag:    key.stateTag(e.VPECID, e.Environment, e.Clean),
	}, nil
}

// Marshal returns the leaf's v1 encoding: the bytes stored in the log.
func (l Leaf) Marshal() []byte {
	var b bytes.Buffer
	b.Grow(400)
	b.WriteString(LeafSchema + "\n")
	b.WriteString("vpec_id " + l.VPECID + "\n")
	b.WriteString("vpec_digest sha256:" + hex.EncodeToString(l.Digest[:]) + "\n")
	b.WriteString("issued_at " + l.IssuedAt.UTC().Format(IssuedAtLayout) + "\n")
	b.WriteString("org_tag " + hex.EncodeToString(l.OrgTag[:]) + "\n")
	b.WriteString("workflow_tag " + hex.EncodeToString(l.WorkflowTag[:]) + "\n")
	b.WriteString("state_tag " + hex.EncodeToString(l.StateTag[:]) + "\n")
	return b.Bytes()
}

// Hash returns the leaf's RFC 6962 leaf hash, SHA-256(0x00 || Marshal()):
// the hash the log's Merkle tree holds.
func (l Leaf) Hash() [32]byte { return LeafHash(l.Marshal()) }

// LeafHash returns the RFC 6962 leaf hash of an entry's bytes.
func LeafHash(data []byte) [32]byte {
	h := sha256.New()
	h.Write([]byte{0})
	h.Write(data)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// MaxLeafBytes bounds the input ParseLeaf reads: a v1 leaf with the
// longest vpec_id is 504 bytes.
const MaxLeafBytes = 1024

var leafKeys = []string{"vpec_id", "vpec_digest", "issued_at", "org_tag", "workflow_tag", "state_tag"}

// ParseLeaf reads a v1 leaf. It accepts exactly the encoding
// [Leaf.Marshal] writes: the schema line, the six fields in order, each
// line ending in a line feed, nothing else.
func ParseLeaf(data []byte) (Leaf, error) {
	if len(data) > MaxLeafBytes {
		return Leaf{}, malformed("leaf", "%d bytes, more than any v1 leaf (%d)", len(data), MaxLeafBytes)
	}
	s := string(data)
	if !strings.HasSuffix(s, "\n") {
		return Leaf{}, malformed("leaf", "does not end in a line feed")
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if lines[0] != LeafSchema {
		if strings.HasPrefix(lines[0], "svc.tlog.leaf/") {
			return Leaf{}, malformed("leaf", "schema %q is not %s: this verifier reads v1 leaves; upgrade it", clip(lines[0]), LeafSchema)
		}
		return Leaf{}, malformed("leaf", "does not start with the line %s", LeafSchema)
	}
	if len(lines) != 1+len(leafKeys) {
		return Leaf{}, malformed("leaf", "has %d lines, want %d", len(lines), 1+len(leafKeys))
	}
	vals := make([]string, len(leafKeys))
	for i, k := range leafKeys {
		v, ok := strings.CutPrefix(lines[1+i], k+" ")
		if !ok {
			return Leaf{}, malformed("leaf", "line %d is %q, want %q followed by a space and its value", i+2, clip(lines[1+i]), k)
		}
		vals[i] = v
	}
	var l Leaf
	if err := checkVPECID(vals[0]); err != nil {
		return Leaf{}, err
	}
	l.VPECID = vals[0]
	d, ok := strings.CutPrefix(vals[1], "sha256:")
	if !ok || !decodeHex32(d, &l.Digest) {
		return Leaf{}, malformed("leaf", "vpec_digest %q is not sha256: and 64 lowercase hex digits", clip(vals[1]))
	}
	at, err := time.Parse(IssuedAtLayout, vals[2])
	if err != nil || at.Format(IssuedAtLayout) != vals[2] {
		return Leaf{}, malformed("leaf", "issued_at %q is not a UTC time of the form YYYY-MM-DDTHH:MM:SS.mmmZ", clip(vals[2]))
	}
	l.IssuedAt = at
	for i, dst := range []*[32]byte{&l.OrgTag, &l.WorkflowTag, &l.StateTag} {
		if !decodeHex32(vals[3+i], dst) {
			return Leaf{}, malformed("leaf", "%s %q is not 64 lowercase hex digits", leafKeys[3+i], clip(vals[3+i]))
		}
	}
	return l, nil
}

func checkVPECID(id string) error {
	rest, ok := strings.CutPrefix(id, "vpec_")
	if !ok || !idRE().MatchString(rest) {
		return fmt.Errorf("%w: vpec_id %q is not vpec_ followed by an id (%s)", ErrMalformed, clip(id), idRule)
	}
	return nil
}

func validEnvironment(env string) bool {
	for _, e := range environments {
		if env == e {
			return true
		}
	}
	return false
}

// decodeHex32 decodes exactly 64 lowercase hex digits.
func decodeHex32(s string, dst *[32]byte) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	_, err := hex.Decode(dst[:], []byte(s))
	return err == nil
}

// clip shortens s for an error message and makes it printable.
func clip(s string) string {
	const max = 80
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
