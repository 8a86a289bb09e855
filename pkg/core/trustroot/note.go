package trustroot

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/svc-gov/svc/pkg/core/signing"
)

// Signature types of C2SP signed-note verifier keys.
const (
	// NoteAlgEd25519 is a signed note's Ed25519 key (C2SP signed-note):
	// what a log signs its checkpoints with.
	NoteAlgEd25519 = 0x01
	// NoteAlgCosignatureV1 is a witness's cosignature/v1 key (C2SP
	// tlog-cosignature).
	NoteAlgCosignatureV1 = 0x04
)

// NoteVerifier is a parsed C2SP signed-note verifier key,
// "<name>+<hash>+<base64(alg || key)>".
type NoteVerifier struct {
	Name      string
	Hash      uint32
	Algorithm byte
	PublicKey ed25519.PublicKey
}

// ParseNoteVerifier parses and checks a verifier key string: a name of
// printable characters without "+" or spaces, the 8 hex digits of the key
// hash (the first 4 bytes of SHA-256(name || "\n" || alg || key), big
// endian), and the standard base64 of the algorithm byte (0x01 or 0x04)
// and the 32-byte Ed25519 key.
func ParseNoteVerifier(s string) (*NoteVerifier, error) {
	parts := strings.SplitN(s, "+", 3)
	if len(parts) != 3 {
		return nil, fmt.Errorf("note verifier %q is not NAME+HASH+KEY", s)
	}
	name, hexHash, b64 := parts[0], parts[1], parts[2]
	if name == "" || !utf8.ValidString(name) || strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return nil, fmt.Errorf("note verifier name %q must be non-empty printable text without spaces", name)
	}
	if len(hexHash) != 8 || strings.ToLower(hexHash) != hexHash {
		return nil, fmt.Errorf("note verifier hash %q is not 8 lowercase hex digits", hexHash)
	}
	h, err := strconv.ParseUint(hexHash, 16, 32)
	if err != nil {
		return nil, fmt.Errorf("note verifier hash %q is not 8 lowercase hex digits", hexHash)
	}
	raw, err := signing.DecodeBase64(b64)
	if err != nil {
		return nil, fmt.Errorf("note verifier key: %w", err)
	}
	if len(raw) != 1+ed25519.PublicKeySize || (raw[0] != NoteAlgEd25519 && raw[0] != NoteAlgCosignatureV1) {
		return nil, fmt.Errorf("note verifier key is not an Ed25519 (0x01) or cosignature/v1 (0x04) key of 32 bytes")
	}
	if want := noteKeyHash(name, raw); uint32(h) != want {
		return nil, fmt.Errorf("note verifier hash %s does not match its name and key (want %08x)", hexHash, want)
	}
	return &NoteVerifier{Name: name, Hash: uint32(h), Algorithm: raw[0], PublicKey: ed25519.PublicKey(raw[1:])}, nil
}

func noteKeyHash(name string, algAndKey []byte) uint32 {
	h := sha256.New()
	h.Write([]byte(name + "\n"))
	h.Write(algAndKey)
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// FormatNoteVerifier returns the verifier key string of an Ed25519 key
// named name, with algorithm alg (NoteAlgEd25519 or NoteAlgCosignatureV1).
func FormatNoteVerifier(name string, alg byte, pub ed25519.PublicKey) string {
	raw := append([]byte{alg}, pub...)
	return fmt.Sprintf("%s+%08x+%s", name, noteKeyHash(name, raw), base64.StdEncoding.EncodeToString(raw))
}

// verifyEd25519 checks a "Ed25519:" signature string over msg.
func verifyEd25519(pub ed25519.PublicKey, msg []byte, sig string) error {
	raw, err := signing.ParseSignature(sig)
	if err != nil {
		return err
	}
	return signing.Verify(pub, msg, raw)
}
