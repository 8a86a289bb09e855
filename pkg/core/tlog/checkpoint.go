package tlog

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// MaxCheckpointBytes bounds a checkpoint (a signed note): 100 signature
// lines, the most a signed note may carry, fit in well under it.
const MaxCheckpointBytes = 32 << 10

// maxSignatures is golang.org/x/mod/sumdb/note's limit.
const maxSignatures = 100

// sigPrefix starts a signature line: an em dash (U+2014) and a space.
const sigPrefix = "\u2014 "

// Checkpoint is a log checkpoint (C2SP tlog-checkpoint) whose log
// signature has been verified by a [Verifier].
type Checkpoint struct {
	// Origin is the log's origin, the checkpoint's first line.
	Origin string
	// Size is the number of entries the checkpoint commits to.
	Size uint64
	// Root is the RFC 6962 Merkle tree hash of those entries.
	Root [32]byte
	// Note is the checkpoint as signed note bytes, with all its signature
	// lines.
	Note []byte
	// Cosignatures are the witness cosignatures that verified against the
	// witness policy's keys, in the order of the note.
	Cosignatures []Cosignature
}

// Cosignature is a verified C2SP tlog-cosignature/v1 of a checkpoint.
type Cosignature struct {
	// Witness is the witness's key name.
	Witness string
	// Time is the time the witness says it signed, to the second.
	Time time.Time
}

// signedNote is a signed note split into its parts, checked for the one
// accepted encoding but with no signature verified.
type signedNote struct {
	text string
	sigs []noteSig
}

type noteSig struct {
	line string // the whole line without its final line feed
	name string
	hash uint32
	b64  string
	sig  []byte // the signature bytes after the key hash
}

// parseNote splits a signed note (C2SP signed-note) and checks its
// encoding: valid UTF-8 without control characters other than line feed,
// a text ending in a line feed, a blank line, then one or more signature
// lines "— <name> <base64>", each with canonical base64 of a 4-byte key
// hash and a signature, no two by the same key. With sorted, the
// signature lines must also be in strictly ascending byte order (the
// form receipts carry checkpoints in).
func parseNote(raw []byte, sorted bool) (*signedNote, error) {
	if len(raw) > MaxCheckpointBytes {
		return nil, malformed("checkpoint", "%d bytes, more than %d", len(raw), MaxCheckpointBytes)
	}
	s := string(raw)
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				return nil, malformed("checkpoint", "not UTF-8 at byte %d", i)
			}
		}
		if r < 0x20 && r != '\n' || r == 0x7f {
			return nil, malformed("checkpoint", "control character %U at byte %d", r, i)
		}
	}
	split := strings.LastIndex(s, "\n\n")
	if split < 0 {
		return nil, malformed("checkpoint", "no blank line before the signatures: not a signed note")
	}
	n := &signedNote{text: s[:split+1]}
	sigs := s[split+2:]
	if sigs == "" || !strings.HasSuffix(sigs, "\n") {
		return nil, malformed("checkpoint", "the signature block is empty or does not end in a line feed")
	}
	seen := map[string]bool{}
	lines := strings.Split(strings.TrimSuffix(sigs, "\n"), "\n")
	if len(lines) > maxSignatures {
		return nil, malformed("checkpoint", "%d signature lines, more than %d", len(lines), maxSignatures)
	}
	for i, line := range lines {
		rest, ok := strings.CutPrefix(line, sigPrefix)
		if !ok {
			return nil, malformed("checkpoint", "signature line %d does not start with an em dash and a space", i+1)
		}
		name, b64, ok := strings.Cut(rest, " ")
		if !ok || !validNoteName(name) {
			return nil, malformed("checkpoint", "signature line %d: want \u2014 <key name> <base64>, with a name without spaces or +", i+1)
		}
		b, err := decodeBase64(b64)
		if err != nil || len(b) < 5 {
			return nil, malformed("checkpoint", "signature line %d: the signature is not canonical base64 of a key hash and a signature", i+1)
		}
		sg := noteSig{line: line, name: name, hash: binary.BigEndian.Uint32(b), b64: b64, sig: b[4:]}
		id := name + "+" + strconv.FormatUint(uint64(sg.hash), 16)
		if seen[id] {
			return nil, malformed("checkpoint", "two signature lines by key %s (%08x): keep one", name, sg.hash)
		}
		seen[id] = true
		if sorted && i > 0 && lines[i-1] >= line {
			return nil, malformed("checkpoint", "signature lines are not in ascending byte order (line %d): receipts carry them sorted", i+1)
		}
		n.sigs = append(n.sigs, sg)
	}
	return n, nil
}

// parseCheckpointBody reads a checkpoint's text: origin, size and root
// hash lines and nothing else (svc logs write no extension lines).
func parseCheckpointBody(text string) (origin string, size uint64, root [32]byte, err error) {
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) < 3 {
		return "", 0, root, malformed("checkpoint", "the text has %d lines, want origin, size and root hash", len(lines))
	}
	if len(lines) > 3 {
		return "", 0, root, malformed("checkpoint", "the text has extension lines after the root hash, which svc logs never write")
	}
	origin = lines[0]
	if origin == "" {
		return "", 0, root, malformed("checkpoint", "the origin line is empty")
	}
	size, perr := strconv.ParseUint(lines[1], 10, 64)
	if perr != nil || strconv.FormatUint(size, 10) != lines[1] {
		return "", 0, root, malformed("checkpoint", "the size line %q is not a decimal number without leading zeros", clip(lines[1]))
	}
	r, derr := decodeBase64(lines[2])
	if derr != nil || len(r) != 32 {
		return "", 0, root, malformed("checkpoint", "the root hash line is not canonical base64 of 32 bytes")
	}
	copy(root[:], r)
	return origin, size, root, nil
}

// validNoteName is golang.org/x/mod/sumdb/note's rule for key names:
// non-empty, valid UTF-8, no Unicode spaces, no +.
func validNoteName(name string) bool {
	return name != "" && utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsSpace) < 0 && !strings.Contains(name, "+")
}

// decodeBase64 decodes standard padded base64 in its one canonical form.
func decodeBase64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, err
	}
	if base64.StdEncoding.EncodeToString(b) != s {
		return nil, fmt.Errorf("not canonical base64")
	}
	return b, nil
}
