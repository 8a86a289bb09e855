// Package ceremonycheck checks a signed circuit entry against the
// ceremony transcript it names (svc verify --transcript, svc-verify). It
// is apart from pkg/zk/zkverify so that the offline verifier page, which
// checks no transcripts, links no ceremony code.
package ceremonycheck

import (
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/zk/ceremony/transcript"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// ErrTranscript reports a ceremony transcript that does not vouch for the
// keys being published or checked.
var ErrTranscript = errors.New("zk: the ceremony transcript does not match the keys")

// CheckTranscript checks a signed entry against the ceremony transcript it
// names, for an auditor holding the transcript: the transcript's hash is
// the entry's transcript_hash, its phase 2 sealed the entry's verifying
// key and proving key (by hash) and, for a head, the entry's model, and
// its contributors are the entry's. (The contributions themselves are
// checked by 'svc zk ceremony verify'.)
func CheckTranscript(e *zkverify.Entry, transcriptJSON []byte) error {
	vk, err := e.VerifyingKeyBytes()
	if err != nil {
		return err
	}
	t, hash, err := transcript.Parse(transcriptJSON)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrTranscript, err)
	}
	if hash != e.Ceremony.TranscriptHash {
		return fmt.Errorf("%w: the transcript hashes to %s, the entry names %s", ErrTranscript, short(hash), short(e.Ceremony.TranscriptHash))
	}
	p2 := t.Phase2
	switch {
	case p2 == nil || p2.Beacon == "":
		return fmt.Errorf("%w: phase 2 is not finalized", ErrTranscript)
	case p2.VerifyingKeyHash != zkverify.CircuitID(vk):
		return fmt.Errorf("%w: it sealed verifying key %s, the entry's is %s", ErrTranscript, short(p2.VerifyingKeyHash), short(zkverify.CircuitID(vk)))
	case p2.ProvingKeyHash != e.ProvingKeyHash:
		return fmt.Errorf("%w: it sealed proving key %s, the entry binds %s", ErrTranscript, short(p2.ProvingKeyHash), short(e.ProvingKeyHash))
	case e.ONNXModelHash != "" && p2.ONNXModelHash != "" && p2.ONNXModelHash != e.ONNXModelHash:
		return fmt.Errorf("%w: it set up model %s, the entry names %s", ErrTranscript, short(p2.ONNXModelHash), short(e.ONNXModelHash))
	}
	var names []string
	for _, ph := range []int{1, 2} {
		for _, n := range t.Contributors(ph) {
			names = append(names, fmt.Sprintf("%s (phase %d)", n, ph))
		}
	}
	if fmt.Sprint(names) != fmt.Sprint(e.Ceremony.Contributors) {
		return fmt.Errorf("%w: its contributors are %v, the entry names %v", ErrTranscript, names, e.Ceremony.Contributors)
	}
	return nil
}

func short(s string) string {
	if len(s) > 19 {
		return s[:19] + "…"
	}
	return s
}
