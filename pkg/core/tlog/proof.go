package tlog

import (
	"bytes"
	"encoding/base64"
	"strings"
)

// MarshalProof writes a Merkle proof (inclusion or consistency) as text:
// one standard base64 hash per line, each line ending in a line feed, the
// form tlog-witness requests carry consistency proofs in. An empty proof
// is empty text.
func MarshalProof(hashes [][]byte) []byte {
	var b bytes.Buffer
	for _, h := range hashes {
		b.WriteString(base64.StdEncoding.EncodeToString(h))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// ParseProof reads what MarshalProof writes: lines of canonical base64 of
// 32-byte hashes, at most 2×63 of them.
func ParseProof(text []byte) ([][]byte, error) {
	if len(text) == 0 {
		return [][]byte{}, nil
	}
	s := string(text)
	if !strings.HasSuffix(s, "\n") {
		return nil, malformed("proof", "does not end in a line feed")
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) > 2*MaxProofHashes {
		return nil, malformed("proof", "%d hashes, more than %d", len(lines), 2*MaxProofHashes)
	}
	out := make([][]byte, len(lines))
	for i, l := range lines {
		h, err := decodeBase64(l)
		if err != nil || len(h) != 32 {
			return nil, malformed("proof", "line %d is not canonical base64 of a 32-byte hash", i+1)
		}
		out[i] = h
	}
	return out, nil
}
