package signing

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"

	"github.com/svc-gov/svc/pkg/core/tlog"
)

// LogKeyBlock is the PEM block type of a transparency log key in a trust
// bundle: the log's Ed25519 public key (DER SubjectPublicKeyInfo, as in a
// PUBLIC KEY block) with a Note-Verifier header holding its C2SP signed-note
// verifier key, <origin>+<key hash>+<base64>, which names the log. The
// key is trusted to sign the log's checkpoints only, never a VPEC or a
// profile.
const LogKeyBlock = "TRANSPARENCY LOG KEY"

// LogKeyHeader is the PEM header of a LogKeyBlock holding the note
// verifier key.
const LogKeyHeader = "Note-Verifier"

// AddLogKey adds a transparency log's key (docs/TRANSPARENCY.md).
func (b *Bundle) AddLogKey(k tlog.LogKey) {
	if k.IsZero() || slices.ContainsFunc(b.logs, func(x tlog.LogKey) bool { return x.String() == k.String() }) {
		return
	}
	b.logs = append(b.logs, k)
	slices.SortFunc(b.logs, func(x, y tlog.LogKey) int { return bytes.Compare([]byte(x.String()), []byte(y.String())) })
}

// LogKeys returns the bundle's transparency log keys, sorted by their
// verifier key text.
func (b *Bundle) LogKeys() []tlog.LogKey { return slices.Clone(b.logs) }

// marshalLogKeys writes the bundle's log keys as LogKeyBlock blocks.
func (b *Bundle) marshalLogKeys(out *bytes.Buffer) {
	for _, k := range b.logs {
		der, err := x509.MarshalPKIXPublicKey(k.PublicKey())
		if err != nil {
			continue // an Ed25519 key always marshals
		}
		fmt.Fprintf(out, "# transparency log %s\n", k.Origin())
		out.Write(pem.EncodeToMemory(&pem.Block{Type: LogKeyBlock, Headers: map[string]string{LogKeyHeader: k.String()}, Bytes: der}))
	}
}

// parseLogKeyBlock reads a LogKeyBlock: its Note-Verifier header must be a
// valid verifier key for the block's public key, and it must have no other
// header.
func parseLogKeyBlock(block *pem.Block) (tlog.LogKey, error) {
	vkey, ok := block.Headers[LogKeyHeader]
	if !ok || len(block.Headers) != 1 {
		return tlog.LogKey{}, fmt.Errorf("a %s block has exactly one header, %s: <origin>+<key hash>+<base64 key>", LogKeyBlock, LogKeyHeader)
	}
	k, err := tlog.ParseLogKey(vkey)
	if err != nil {
		return tlog.LogKey{}, err
	}
	pub, err := ParsePublicKeyDER(block.Bytes)
	if err != nil {
		return tlog.LogKey{}, err
	}
	if !pub.Equal(k.PublicKey()) {
		return tlog.LogKey{}, fmt.Errorf("the %s header's key is not the block's public key", LogKeyHeader)
	}
	return k, nil
}
