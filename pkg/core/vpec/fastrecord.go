package vpec

import (
	"bytes"
	"encoding/binary"
	"unicode/utf8"
	"unsafe"

	"github.com/svc-gov/svc/pkg/core/canonical"
	"github.com/svc-gov/svc/pkg/core/stage"
)

// The fast path of readRecord. A record as the service writes it is in
// its RFC 8785 form, holds only flat fields and details, and has no
// problem; for such a record the tree path's parse, canonical-form check,
// reflective decode and chain cut all give what one pass over its bytes
// gives. fastRecord makes that pass. It accepts only a strict subset, for
// which that equivalence is plain (TestFastRecordSame and FuzzFastRecord
// compare the two on every record they are given), and declines
// everything else, which the tree path then reads and names the problems
// of:
//
//   - no whitespace; member names of printable ASCII without escapes, in
//     strictly increasing byte order (RFC 8785's order for such names, and
//     no duplicates);
//   - string values without escapes, in valid UTF-8 (their own canonical
//     form); numbers in their canonical form;
//   - only the members below (any of review, bounded_inference, manifest,
//     zk_proof, field_digests or disclosures declines), each of its type,
//     no optional one empty, none null, every required one present; a
//     check_session block exactly its three string members;
//   - sequence plain digits of at most 15 (an exact integer);
//   - details, if present, a non-empty object within MaxDetailsBytes and
//     fastMaxDepth levels, not on an inference stage record (whose details
//     linkDetails reads).

// fastMaxDepth bounds the nesting the fast path follows inside details;
// deeper details take the tree path (whose bound is far above).
const fastMaxDepth = 16

// Record fields the fast path reads, as indexes into fastRecord's spans.
const (
	fRecordID = iota
	fCheck
	fManifestID
	fCheckResult
	fProofLevel
	fCommitmentAlgorithm
	fCommitmentHash
	fOutputCommitment
	fONNXModelHash
	fVisibility
	fRecordedAt
	fStageType
	fStagePart
	fDisclosedInput
	fDisclosedOutput
	fChainHash
	fSequence     // not a string: parsed apart
	fDetails      // not a string: checked apart
	fCheckSession // not a string: its three members apart
	fCount
)

// fastRequired are the fields a v1 record must have (no omitempty).
const fastRequired = 1<<fRecordID | 1<<fCheck | 1<<fManifestID | 1<<fCheckResult | 1<<fProofLevel |
	1<<fCommitmentAlgorithm | 1<<fCommitmentHash | 1<<fVisibility | 1<<fRecordedAt | 1<<fChainHash | 1<<fSequence

// fastField is the field a member name is, or -1 for one the fast path
// does not read.
func fastField(name []byte) int {
	switch string(name) {
	case "record_id":
		return fRecordID
	case "sequence":
		return fSequence
	case "check":
		return fCheck
	case "manifest_id":
		return fManifestID
	case "check_result":
		return fCheckResult
	case "proof_level":
		return fProofLevel
	case "commitment_algorithm":
		return fCommitmentAlgorithm
	case "commitment_hash":
		return fCommitmentHash
	case "output_commitment":
		return fOutputCommitment
	case "onnx_model_hash":
		return fONNXModelHash
	case "visibility":
		return fVisibility
	case "recorded_at":
		return fRecordedAt
	case "stage_type":
		return fStageType
	case "stage_part":
		return fStagePart
	case "details":
		return fDetails
	case "disclosed_input":
		return fDisclosedInput
	case "disclosed_output":
		return fDisclosedOutput
	case "chain_hash":
		return fChainHash
	case "check_session":
		return fCheckSession
	}
	return -1
}

// checkSessionMembers are the members of a check_session block, in their
// canonical order; each is a required string.
var checkSessionMembers = [3]string{"check_close_tst", "check_open_tst", "session_id"}

// fastRecord reads record raw as readRecord's tree path would when it is
// in the subset above: it sets rec, o.enc and o.chain (windows of raw)
// and reports true. owned: raw never changes again (ParseOwned), and rec's
// fields may share its bytes. Otherwise it reports false having set
// nothing, and the tree path reads the record.
func fastRecord(raw []byte, owned bool, o *recordOutcome, rec *Record) bool {
	var spans [fCount][2]int32
	var session [len(checkSessionMembers)][2]int32
	var seen uint32
	var seq int64
	var chainFrom, chainTo int // the chain_hash member, name to value
	if len(raw) < 2 || len(raw) > canonical.MaxInput || raw[0] != '{' || raw[1] == '}' {
		return false
	}
	pos := 1
	var prev []byte
	for {
		nameAt := pos
		name, ok := fastName(raw, &pos)
		if !ok || (prev != nil && bytes.Compare(prev, name) >= 0) || pos >= len(raw) || raw[pos] != ':' {
			return false
		}
		prev = name
		pos++
		f := fastField(name)
		if f < 0 || seen&(1<<f) != 0 {
			return false
		}
		seen |= 1 << f
		switch f {
		case fSequence:
			n, ok := fastInt(raw, &pos)
			if !ok {
				return false
			}
			seq = n
		case fCheckSession:
			if !fastSession(raw, &pos, &session) {
				return false
			}
		case fDetails:
			at := pos
			if pos+1 >= len(raw) || raw[pos] != '{' || raw[pos+1] == '}' ||
				!fastValue(raw, &pos, 1) || pos-at > MaxDetailsBytes {
				return false
			}
		default:
			at := pos
			if !fastString(raw, &pos) {
				return false
			}
			if pos-at == 2 && fastRequired&(1<<f) == 0 {
				return false // an optional member present empty
			}
			spans[f] = [2]int32{int32(at + 1), int32(pos - 1)}
			if f == fChainHash {
				chainFrom, chainTo = nameAt, pos
			}
		}
		if pos >= len(raw) {
			return false
		}
		if raw[pos] == '}' {
			pos++
			break
		}
		if raw[pos] != ',' {
			return false
		}
		pos++
	}
	if pos != len(raw) || seen&fastRequired != fastRequired {
		return false
	}
	if seen&(1<<fDetails) != 0 && seen&(1<<fStagePart) != 0 &&
		string(raw[spans[fStagePart][0]:spans[fStagePart][1]]) == stage.PartInference {
		return false // linkDetails reads its condition commitments
	}
	// One string for the record; each field is a window of it. A record of
	// a doc handed over (ParseOwned) is that string without a copy: its
	// bytes never change again.
	var s string
	if owned {
		s = unsafe.String(unsafe.SliceData(raw), len(raw))
	} else {
		s = string(raw)
	}
	str := func(f int) string { return s[spans[f][0]:spans[f][1]] }
	*rec = Record{
		RecordID: str(fRecordID), Sequence: seq, Check: str(fCheck), ManifestID: str(fManifestID),
		CheckResult: CheckResult(str(fCheckResult)), ProofLevel: ProofLevel(str(fProofLevel)),
		CommitmentAlgorithm: str(fCommitmentAlgorithm), CommitmentHash: str(fCommitmentHash),
		OutputCommitment: str(fOutputCommitment), ONNXModelHash: str(fONNXModelHash),
		Visibility: Visibility(str(fVisibility)), RecordedAt: str(fRecordedAt),
		StageType: str(fStageType), StagePart: str(fStagePart),
		DisclosedInput: str(fDisclosedInput), DisclosedOutput: str(fDisclosedOutput),
		ChainHash: str(fChainHash),
	}
	if seen&(1<<fCheckSession) != 0 {
		w := func(i int) string { return s[session[i][0]:session[i][1]] }
		rec.CheckSession = &CheckSession{CheckCloseTST: w(0), CheckOpenTST: w(1), SessionID: w(2)}
	}
	o.enc, o.written = raw, true
	// The chain input: raw without the chain_hash member and one comma
	// beside it.
	o.chain = cut(raw, chainFrom, chainTo)
	return true
}

// fastSession moves past the check_session block at *pos if it is its
// three members, in canonical order, each a string in the subset above,
// and sets each one's content span.
func fastSession(d []byte, pos *int, spans *[len(checkSessionMembers)][2]int32) bool {
	if *pos >= len(d) || d[*pos] != '{' {
		return false
	}
	*pos++
	for i, want := range checkSessionMembers {
		name, ok := fastName(d, pos)
		if !ok || string(name) != want || *pos >= len(d) || d[*pos] != ':' {
			return false
		}
		*pos++
		at := *pos
		if !fastString(d, pos) || *pos >= len(d) {
			return false
		}
		spans[i] = [2]int32{int32(at + 1), int32(*pos - 1)}
		end := byte(',')
		if i == len(checkSessionMembers)-1 {
			end = '}'
		}
		if d[*pos] != end {
			return false
		}
		*pos++
	}
	return true
}

// fastName moves past the member name at *pos: a string of printable
// ASCII other than '"' and '\\'.
func fastName(d []byte, pos *int) ([]byte, bool) {
	i := *pos
	if i >= len(d) || d[i] != '"' {
		return nil, false
	}
	i++
	start := i
	for ; i < len(d); i++ {
		c := d[i]
		if c == '"' {
			*pos = i + 1
			return d[start:i], true
		}
		if c < 0x20 || c > 0x7e || c == '\\' {
			return nil, false
		}
	}
	return nil, false
}

// fastString moves past the string at *pos if it has no escape, no
// control character and is valid UTF-8: its own canonical form.
func fastString(d []byte, pos *int) bool {
	i := *pos
	if i >= len(d) || d[i] != '"' {
		return false
	}
	i++
	start := i
	ascii := true
	for i < len(d) {
		// Skip eight bytes at a time while all are printable ASCII other
		// than '"' and '\\'.
		for i+8 <= len(d) && plainWord(binary.LittleEndian.Uint64(d[i:])) {
			i += 8
		}
		if i >= len(d) {
			break
		}
		switch c := d[i]; {
		case c == '"':
			if !ascii && !utf8.Valid(d[start:i]) {
				return false
			}
			*pos = i + 1
			return true
		case c < 0x20 || c == '\\':
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		i++
	}
	return false
}

// plainWord reports whether each of the eight bytes of x is printable
// ASCII other than '"' and '\\' (or DEL). With no high bit set,
// (y - n…n) & ^y & 0x80…80 is not zero exactly when a byte of y is below n
// (y ^ c…c holds a zero, below 1, where y holds c).
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, b := x^('"'*ones), x^('\\'*ones)
	return (x|(x-0x20*ones)&^x|(q-ones)&^q|(b-ones)&^b)&highs == 0
}

// fastInt moves past the integer at *pos if it is plain digits, at most
// 15 of them (an exact double), with no leading zero and not -0, and
// returns it.
func fastInt(d []byte, pos *int) (int64, bool) {
	i := *pos
	neg := i < len(d) && d[i] == '-'
	if neg {
		i++
	}
	start := i
	var n int64
	for i < len(d) && '0' <= d[i] && d[i] <= '9' {
		n = n*10 + int64(d[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 15 || (d[start] == '0' && (digits > 1 || neg)) {
		return 0, false
	}
	if i < len(d) && (d[i] == '.' || d[i] == 'e' || d[i] == 'E') {
		return 0, false
	}
	*pos = i
	if neg {
		n = -n
	}
	return n, true
}

// fastValue moves past the JSON value at *pos if it is written in its
// canonical form within the subset above, depth levels deep.
func fastValue(d []byte, pos *int, depth int) bool {
	i := *pos
	if i >= len(d) {
		return false
	}
	switch c := d[i]; {
	case c == '"':
		return fastString(d, pos)
	case c == '{':
		if depth > fastMaxDepth {
			return false
		}
		*pos = i + 1
		if *pos < len(d) && d[*pos] == '}' {
			*pos++
			return true
		}
		var prev []byte
		for {
			name, ok := fastName(d, pos)
			if !ok || (prev != nil && bytes.Compare(prev, name) >= 0) || *pos >= len(d) || d[*pos] != ':' {
				return false
			}
			prev = name
			*pos++
			if !fastValue(d, pos, depth+1) || *pos >= len(d) {
				return false
			}
			switch d[*pos] {
			case '}':
				*pos++
				return true
			case ',':
				*pos++
			default:
				return false
			}
		}
	case c == '[':
		if depth > fastMaxDepth {
			return false
		}
		*pos = i + 1
		if *pos < len(d) && d[*pos] == ']' {
			*pos++
			return true
		}
		for {
			if !fastValue(d, pos, depth+1) || *pos >= len(d) {
				return false
			}
			switch d[*pos] {
			case ']':
				*pos++
				return true
			case ',':
				*pos++
			default:
				return false
			}
		}
	case c == 't':
		return fastLiteral(d, pos, "true")
	case c == 'f':
		return fastLiteral(d, pos, "false")
	case c == 'n':
		return fastLiteral(d, pos, "null")
	case c == '-' || '0' <= c && c <= '9':
		end, ok := canonical.CanonicalNumberAt(d, *pos)
		*pos = end
		return ok
	}
	return false
}

func fastLiteral(d []byte, pos *int, lit string) bool {
	if !bytes.HasPrefix(d[*pos:], []byte(lit)) {
		return false
	}
	*pos += len(lit)
	return true
}
