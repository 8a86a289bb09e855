// Package issue builds VPECs: what an issuer computes from a run's
// records before anyone verifies them. The client builds an unsigned
// offline VPEC with it when the service cannot be reached
// (pkg/client), the service builds and seals every VPEC it issues at a
// run's close (pkg/service/server), and the test vectors are made with it.
//
// It sits in core, below both the client and the service, because both
// issue. What it computes is defined by the format (pkg/core/vpec): the
// chain hash of each record (Chain), the gaps the records require (Gaps),
// the summary fields (Summarize), the Merkle root and chain verdict
// (Finish); Seal signs and timestamps the result. The verifier
// (pkg/core/verify) recomputes the summary with Summarize and compares.
package issue

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/gap"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Chain links records in order: it fills each record's ChainHash from the
// previous one, starting at prev (vpec.Genesis for the first record of a
// run). It returns the last chain value.
func Chain(prev [32]byte, records []vpec.Record) ([32]byte, error) {
	for i := range records {
		b, err := vpec.RecordBytes(&records[i])
		if err != nil {
			return prev, fmt.Errorf("record %d: %w", records[i].Sequence, err)
		}
		prev = vpec.NextChainHash(prev, b)
		records[i].ChainHash = commitment.OfSHA256(prev).String()
	}
	return prev, nil
}

// RecordsJCS returns the canonical bytes of each record (without
// chain_hash): what vpec.VerifyChain and Finish take.
func RecordsJCS(records []vpec.Record) ([][]byte, error) {
	out := make([][]byte, len(records))
	for i := range records {
		b, err := vpec.RecordBytes(&records[i])
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", records[i].Sequence, err)
		}
		out[i] = b
	}
	return out, nil
}

// Gaps returns the gaps an issuer declares for a run from its records in
// sequence order and their canonical bytes (jcs[i], the bytes the chain
// hash covers), each dated stamp, with fresh ids:
//   - one sequence_missing gap per range of missing sequence numbers
//     (sequence = first missing, sequence_end = last missing), however long;
//   - one chain_break gap per record whose chain hash does not follow from
//     its predecessor (it never also declares a hole);
//   - one empty_run gap when there are no records.
//
// The verifier requires exactly these chain, sequence and empty-run gaps.
func Gaps(runID string, records []vpec.Record, jcs [][]byte, stamp string) []vpec.Gap {
	gaps, _ := GapsChain(runID, records, jcs, stamp)
	return gaps
}

// GapsChain is Gaps and the chain verdict Finish would compute (intact:
// no record's chain hash fails to follow), hashing each record once; pass
// intact to FinishIntact.
func GapsChain(runID string, records []vpec.Record, jcs [][]byte, stamp string) (gaps []vpec.Gap, intact bool) {
	gaps = []vpec.Gap{}
	if len(records) == 0 {
		return append(gaps, vpec.Gap{GapID: names.NewID("gap_"), GapType: gap.EmptyRun, Severity: gap.SeverityOf(gap.EmptyRun), Timestamp: stamp}), true
	}
	breaks := vpec.VerifyChain(runID, records, jcs)
	for _, b := range breaks {
		if b.MissingFrom > 0 {
			from, to := b.MissingFrom, b.MissingTo
			gaps = append(gaps, vpec.Gap{GapID: names.NewID("gap_"), GapType: gap.SequenceMissing, Severity: gap.SeverityOf(gap.SequenceMissing), Sequence: &from, SequenceEnd: &to, Timestamp: stamp})
			continue
		}
		sq := b.Sequence
		gaps = append(gaps, vpec.Gap{GapID: names.NewID("gap_"), GapType: gap.ChainBreak, Severity: gap.SeverityOf(gap.ChainBreak), Sequence: &sq, Timestamp: stamp})
	}
	return gaps, len(breaks) == 0
}

// Finish derives everything a VPEC states about its records: records are
// sorted by the caller; Finish recomputes the chain verdict, the Merkle root
// and the summary from records and gaps. Gaps for chain breaks must already
// be in v.Gaps.
func Finish(v *vpec.VPEC, recordJCS [][]byte) {
	FinishIntact(v, len(vpec.VerifyChain(v.RunID, v.Records, recordJCS)) == 0)
}

// FinishIntact is Finish with the chain verdict already computed (by
// GapsChain over the same records), so that a close hashes each record's
// chain input once.
func FinishIntact(v *vpec.VPEC, chainIntact bool) {
	if v.Gaps == nil {
		v.Gaps = []vpec.Gap{}
	}
	if v.Records == nil {
		v.Records = []vpec.Record{}
	}
	v.ChainIntact = chainIntact
	v.MerkleRoot = vpec.MerkleRoot(v.Records)
	Summarize(v.Records, v.Gaps, v.ChainIntact).Apply(v)
}

// TimestampImprint returns the SHA-256 digest a VPEC's RFC 3161 token is
// over: the hash of the raw 64 signature bytes (docs/FORMATS.md,
// "Signature and timestamp"). Attestations are timestamped the same way.
func TimestampImprint(sig []byte) []byte {
	d := sha256.Sum256(sig)
	return d[:]
}

// CheckOpenImprint is the SHA-256 digest of vpec.CheckOpenData, the
// imprint the service requests for a session's check-open timestamp.
func CheckOpenImprint(sessionID string) []byte {
	d := sha256.Sum256(vpec.CheckOpenData(sessionID))
	return d[:]
}

// CheckCloseImprint is the SHA-256 digest of vpec.CheckCloseData, the
// imprint the service requests for a session's check-close timestamp.
func CheckCloseImprint(sessionID, commitmentHash string) []byte {
	d := sha256.Sum256(vpec.CheckCloseData(sessionID, commitmentHash))
	return d[:]
}

// Seal signs v with signer and timestamps the signature with tsa. It sets
// schema, signing_key_id, signature and timestamp_rfc3161; everything else
// must already be final (see Finish). ctx bounds the timestamp request; on
// any error v is left without signature and token.
func Seal(ctx context.Context, v *vpec.VPEC, signer *signing.Signer, tsa timestamp.Timestamper) error {
	v.Schema = vpec.Schema
	v.SigningKeyID = signer.KeyID()
	v.Signature, v.TimestampRFC3161 = "", ""
	raw, err := document.Marshal(v)
	if err != nil {
		return fmt.Errorf("seal VPEC: %w", err)
	}
	msg, err := vpec.SignedBytes(raw)
	if err != nil {
		return fmt.Errorf("seal VPEC: %w", err)
	}
	sig, err := signer.Sign(msg)
	if err != nil {
		return fmt.Errorf("seal VPEC: %w", err)
	}
	token, err := tsa.Timestamp(ctx, TimestampImprint(sig))
	if err != nil {
		return fmt.Errorf("seal VPEC: timestamp signature: %w", err)
	}
	v.Signature = signing.FormatSignature(sig)
	v.TimestampRFC3161 = base64.StdEncoding.EncodeToString(token)
	return nil
}
