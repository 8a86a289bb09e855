package tlog

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/document"
)

// ReceiptSchema is the schema member of a v1 receipt.
const ReceiptSchema = "svc.tlog.receipt/v1"

// MaxReceiptBytes bounds the input ParseReceipt reads.
const MaxReceiptBytes = 64 << 10

// MaxProofHashes is the longest inclusion proof accepted: a tree of 2^63
// entries needs 63 hashes.
const MaxProofHashes = 63

// maxLogIndex is 2^53-1, the largest integer an I-JSON number holds.
const maxLogIndex = 1<<53 - 1

// Receipt proves that a VPEC is in the log: the entry's index, its leaf,
// the RFC 6962 inclusion proof from the leaf to the root of a checkpoint,
// and the checkpoint with its witness cosignatures. It is not part of the
// VPEC's signed bytes. Its one accepted encoding ([Receipt.Marshal]) is
// the RFC 8785 canonical JSON of
//
//	{"checkpoint": "<signed note>", "inclusion_proof": ["<base64 hash>", ...],
//	 "leaf": "<leaf text>", "log_index": <n>, "schema": "svc.tlog.receipt/v1"}
//
// with the checkpoint's signature lines in ascending byte order.
type Receipt struct {
	// LogIndex is the entry's index in the log.
	LogIndex uint64
	// Leaf is the entry.
	Leaf Leaf
	// InclusionProof is the RFC 6962 audit path, leaf to root.
	InclusionProof [][32]byte
	// Checkpoint is the signed note of a checkpoint whose size exceeds
	// LogIndex, with its signature lines sorted.
	Checkpoint []byte
}

type receiptWire struct {
	Schema         string   `json:"schema"`
	LogIndex       int64    `json:"log_index"`
	Leaf           string   `json:"leaf"`
	InclusionProof []string `json:"inclusion_proof"`
	Checkpoint     string   `json:"checkpoint"`
}

// Marshal returns the receipt's canonical JSON. It fails if the
// checkpoint is not a signed note with sorted signature lines (see
// SortSignatures).
func (r *Receipt) Marshal() ([]byte, error) {
	if r.LogIndex > maxLogIndex {
		return nil, fmt.Errorf("%w receipt: log index %d exceeds 2^53-1", ErrMalformed, r.LogIndex)
	}
	if len(r.InclusionProof) > MaxProofHashes {
		return nil, fmt.Errorf("%w receipt: %d proof hashes, more than %d", ErrMalformed, len(r.InclusionProof), MaxProofHashes)
	}
	if _, err := parseNote(r.Checkpoint, true); err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	w := receiptWire{
		Schema:         ReceiptSchema,
		LogIndex:       int64(r.LogIndex),
		Leaf:           string(r.Leaf.Marshal()),
		InclusionProof: make([]string, len(r.InclusionProof)),
		Checkpoint:     string(r.Checkpoint),
	}
	for i, h := range r.InclusionProof {
		w.InclusionProof[i] = base64.StdEncoding.EncodeToString(h[:])
	}
	b, err := canonical.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	return b, nil
}

// ParseReceipt reads a v1 receipt. It accepts exactly the bytes Marshal
// writes: RFC 8785 canonical JSON (members sorted, no whitespace, no
// final line feed), every member present, canonical base64 hashes, a
// canonical leaf, and a checkpoint that is a signed note with its
// signature lines sorted. It verifies nothing (see Verifier.VerifyReceipt).
func ParseReceipt(data []byte) (*Receipt, error) {
	if len(data) > MaxReceiptBytes {
		return nil, malformed("receipt", "%d bytes, more than %d", len(data), MaxReceiptBytes)
	}
	var w receiptWire
	tree, err := document.ParseWith(data, &w, document.Options{CanonicalNumbers: true})
	if err != nil {
		// A receipt of another version says so before its members do.
		if tree != nil && tree.Kind() == canonical.KindObject {
			if s := tree.Get("schema"); s != nil && s.Kind() == canonical.KindString && s.Str() != ReceiptSchema {
				return nil, malformed("receipt", "schema %q is not %s: this verifier reads v1 receipts; upgrade it", clip(s.Str()), ReceiptSchema)
			}
		}
		return nil, malformed("receipt", "%v", err)
	}
	if w.Schema != ReceiptSchema {
		return nil, malformed("receipt", "schema %q is not %s: this verifier reads v1 receipts; upgrade it", clip(w.Schema), ReceiptSchema)
	}
	if c := tree.Canonical(); !bytes.Equal(c, data) {
		return nil, malformed("receipt", "not in its one accepted form, RFC 8785 canonical JSON (members sorted, no whitespace, no final newline); svc writes receipts so: fetch it again rather than editing it")
	}
	if w.LogIndex < 0 || w.LogIndex > maxLogIndex {
		return nil, malformed("receipt", "log_index %d is not in [0, 2^53-1]", w.LogIndex)
	}
	r := &Receipt{LogIndex: uint64(w.LogIndex), Checkpoint: []byte(w.Checkpoint)}
	if r.Leaf, err = ParseLeaf([]byte(w.Leaf)); err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	if len(w.InclusionProof) > MaxProofHashes {
		return nil, malformed("receipt", "inclusion_proof has %d hashes, more than %d", len(w.InclusionProof), MaxProofHashes)
	}
	r.InclusionProof = make([][32]byte, len(w.InclusionProof))
	for i, s := range w.InclusionProof {
		b, err := decodeBase64(s)
		if err != nil || len(b) != 32 {
			return nil, malformed("receipt", "inclusion_proof[%d] is not canonical base64 of a 32-byte hash", i)
		}
		copy(r.InclusionProof[i][:], b)
	}
	n, err := parseNote(r.Checkpoint, true)
	if err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	if _, _, _, err := parseCheckpointBody(n.text); err != nil {
		return nil, fmt.Errorf("receipt: %w", err)
	}
	return r, nil
}

// SortSignatures returns a signed note with its signature lines in
// ascending byte order (the form a receipt carries a checkpoint in). The
// text and each line are unchanged.
func SortSignatures(signedNote []byte) ([]byte, error) {
	n, err := parseNote(signedNote, false)
	if err != nil {
		return nil, err
	}
	lines := make([]string, len(n.sigs))
	for i, s := range n.sigs {
		lines[i] = s.line
	}
	slices.Sort(lines)
	var b bytes.Buffer
	b.WriteString(n.text)
	b.WriteByte('\n')
	for _, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}
