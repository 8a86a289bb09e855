package vpec

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/signing"
)

// Fields outside the signature: the signature itself and the timestamp
// token, which is computed over the signature.
var unsignedFields = []string{"signature", "timestamp_rfc3161"}

// Timestamper obtains an RFC 3161 TimeStampResp (DER) for a SHA-256 digest.
// The built-in timestamp authority and remote TSA clients implement it.
// ctx bounds the call: a remote authority is abandoned when ctx is done,
// and the error then wraps ctx.Err().
type Timestamper interface {
	Timestamp(ctx context.Context, digest []byte) ([]byte, error)
}

// SignedBytes returns the bytes a VPEC's signature covers: the RFC 8785
// canonical form of the document without signature and timestamp_rfc3161.
func SignedBytes(doc []byte) ([]byte, error) { return document.SignedBytes(doc, unsignedFields...) }

// TimestampImprint returns the SHA-256 digest the RFC 3161 token is over:
// the hash of the raw 64 signature bytes.
func TimestampImprint(sig []byte) []byte {
	d := sha256.Sum256(sig)
	return d[:]
}

// Seal signs v with signer and timestamps the signature with tsa. It sets
// schema, signing_key_id, signature and timestamp_rfc3161; everything else
// must already be final (see Finish). ctx bounds the timestamp request; on
// any error v is left without signature and token.
func Seal(ctx context.Context, v *VPEC, signer *signing.Signer, tsa Timestamper) error {
	v.Schema = Schema
	v.SigningKeyID = signer.KeyID()
	v.Signature, v.TimestampRFC3161 = "", ""
	msg, err := document.MarshalSignedBytes(v, unsignedFields...)
	if err != nil {
		return fmt.Errorf("seal VPEC: %w", err)
	}
	sig := signer.Sign(msg)
	token, err := tsa.Timestamp(ctx, TimestampImprint(sig))
	if err != nil {
		return fmt.Errorf("seal VPEC: timestamp signature: %w", err)
	}
	v.Signature = signing.FormatSignature(sig)
	v.TimestampRFC3161 = base64.StdEncoding.EncodeToString(token)
	return nil
}

// Finish derives everything a VPEC states about its records: records are
// sorted by the caller; Finish recomputes the chain verdict, the Merkle root
// and the summary from records and gaps. Gaps for chain breaks must already
// be in v.Gaps.
func Finish(v *VPEC, recordJCS [][]byte) {
	if v.Gaps == nil {
		v.Gaps = []Gap{}
	}
	if v.Records == nil {
		v.Records = []Record{}
	}
	v.ChainIntact = len(VerifyChain(v.RunID, v.Records, recordJCS)) == 0
	v.MerkleRoot = MerkleRoot(v.Records)
	Summarize(v.Records, v.Gaps, v.ChainIntact).Apply(v)
}

// RecordsJCS returns the canonical bytes of each record (without chain_hash).
func RecordsJCS(records []Record) ([][]byte, error) {
	out := make([][]byte, len(records))
	for i := range records {
		b, err := RecordBytes(&records[i])
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", records[i].Sequence, err)
		}
		out[i] = b
	}
	return out, nil
}

// NewID returns prefix followed by a random UUID (version 4), e.g. "vpec_…".
func NewID(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return prefix + h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// FormatTime writes t as an RFC 3339 UTC timestamp with millisecond precision.
func FormatTime(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
