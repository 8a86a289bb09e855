package tlogtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	fnote "github.com/transparency-dev/formats/note"
	"github.com/transparency-dev/tessera/client"
	"golang.org/x/mod/sumdb/note"
)

// Witness is a test witness identity that cosigns checkpoints with the
// C2SP tlog-cosignature/v1 signer of transparency-dev/formats (what
// omniwitness signs with).
type Witness struct {
	Name   string
	VKey   string // cosignature/v1 verifier key
	signer note.Signer
}

// NewWitness returns the witness named name with a key derived from it
// (TEST ONLY).
func NewWitness(t testing.TB, name string) *Witness {
	t.Helper()
	seed := sha256.Sum256([]byte("svc tlogtest witness " + name))
	skey, vkey, err := note.GenerateKey(bytes.NewReader(append(seed[:], seed[:]...)), name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := fnote.NewSignerForCosignatureV1(skey)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := fnote.VKeyToCosignatureV1(vkey)
	if err != nil {
		t.Fatal(err)
	}
	return &Witness{Name: name, VKey: cv, signer: s}
}

// PolicyLine declares the witness in a policy under component name c.
func (w *Witness) PolicyLine(c string) string {
	return fmt.Sprintf("witness %s %s http://127.0.0.1:9/%s\n", c, w.VKey, c)
}

// Cosign returns the checkpoint with the witness's cosignature line added
// (signature lines sorted, as receipts carry them).
func (w *Witness) Cosign(t testing.TB, checkpoint []byte) []byte {
	t.Helper()
	text, _, ok := bytes.Cut(checkpoint, []byte("\n\n"))
	if !ok {
		t.Fatalf("not a signed note: %q", checkpoint)
	}
	sig, err := w.signer.Sign(append(text, '\n'))
	if err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("\u2014 %s %s\n", w.Name, base64.StdEncoding.EncodeToString(append(beUint32(w.signer.KeyHash()), sig...)))
	out, err := tlog.SortSignatures(append(bytes.Clone(checkpoint), line...))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func beUint32(v uint32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

// Case is one receipt and what verifying it for Subject must give.
type Case struct {
	Name    string
	Receipt []byte
	Subject tlog.Subject
	// Want is nil for a valid receipt, else the sentinel the error
	// matches.
	Want error
}

// CorpusPolicy is the witness policy the corpus is verified with: both
// witnesses of Witnesses must cosign.
func CorpusPolicy(t testing.TB) string {
	w1, w2 := NewWitness(t, "witness.test/w1"), NewWitness(t, "witness.test/w2")
	return w1.PolicyLine("w1") + w2.PolicyLine("w2") + "group both all w1 w2\nquorum both\n"
}

// Corpus builds, from a real log (Tessera, POSIX, in a temporary
// directory) signed by Key("log"), a valid receipt and one receipt per
// failure class a verifier must name. Verify them with Verifier(t, "log",
// CorpusPolicy(t)).
func Corpus(t testing.TB) []Case {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	w1, w2 := NewWitness(t, "witness.test/w1"), NewWitness(t, "witness.test/w2")
	rogue := NewWitness(t, "witness.test/rogue")
	l := OpenLog(t, dir, "log", nil)
	const n = 9
	var oldCP []byte
	entries := make([]tlog.Entry, n)
	for i := range n {
		entries[i] = Entry("c", i, "org-a", "wf", i != 4)
		if _, err := l.Append(ctx, Leaf(t, entries[i])); err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			r, err := l.AwaitReceipt(ctx, 2)
			if err != nil {
				t.Fatal(err)
			}
			oldCP = r.Checkpoint.Note // 3 entries: nothing else was appended yet
		}
	}
	if err := l.Close(ctx); err != nil { // a checkpoint covers all n
		t.Fatal(err)
	}
	src := client.FileFetcher{Root: dir}
	finalCP, err := src.ReadCheckpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(finalCP), Origin+"\n"+fmt.Sprint(n)+"\n") {
		t.Fatalf("final checkpoint %q does not cover %d entries", finalCP, n)
	}
	cosigned := w2.Cosign(t, w1.Cosign(t, mustSort(t, finalCP)))

	receipt := func(index uint64, cp []byte, size uint64) *tlog.Receipt {
		pb, err := client.NewProofBuilder(ctx, size, src.ReadTile)
		if err != nil {
			t.Fatal(err)
		}
		hashes, err := pb.InclusionProof(ctx, index)
		if err != nil {
			t.Fatal(err)
		}
		r := &tlog.Receipt{LogIndex: index, Leaf: Leaf(t, entries[index]), Checkpoint: cp}
		for _, h := range hashes {
			r.InclusionProof = append(r.InclusionProof, [32]byte(h))
		}
		return r
	}
	marshal := func(r *tlog.Receipt) []byte {
		b, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	subj := func(i int) tlog.Subject { return tlog.Subject{VPECID: entries[i].VPECID, Digest: entries[i].Digest} }
	const at = 1
	valid := receipt(at, cosigned, n)
	var cases []Case
	add := func(name string, r *tlog.Receipt, s tlog.Subject, want error) {
		cases = append(cases, Case{Name: name, Receipt: marshal(r), Subject: s, Want: want})
	}
	clone := func() *tlog.Receipt {
		c := *valid
		c.InclusionProof = append([][32]byte(nil), valid.InclusionProof...)
		c.Checkpoint = bytes.Clone(valid.Checkpoint)
		return &c
	}
	add("valid", valid, subj(at), nil)
	add("receipt for another VPEC", valid, subj(at+1), tlog.ErrWrongVPEC)
	other := subj(at)
	other.Digest[0] ^= 1
	add("receipt for another version of the VPEC (digest)", valid, other, tlog.ErrWrongVPEC)
	{
		r := clone()
		r.LogIndex = at + 1
		add("proof for another index", r, subj(at), tlog.ErrInclusion)
	}
	{
		r := clone()
		r.InclusionProof = receipt(at+1, cosigned, n).InclusionProof
		add("proof of another entry", r, subj(at), tlog.ErrInclusion)
	}
	{
		r := clone()
		r.Leaf = Leaf(t, entries[at+1])
		add("leaf of another entry with this entry's proof", r, subj(at+1), tlog.ErrInclusion)
	}
	{
		// A log of another origin and key, with the same entries.
		odir := t.TempDir()
		ol := OpenLog(t, odir, "other", func(c *logwriter.Config) { c.Origin = "other.test/log" })
		for i := range n {
			if _, err := ol.Append(ctx, Leaf(t, entries[i])); err != nil {
				t.Fatal(err)
			}
		}
		if err := ol.Close(ctx); err != nil {
			t.Fatal(err)
		}
		ocp, err := client.FileFetcher{Root: odir}.ReadCheckpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := clone()
		r.Checkpoint = w2.Cosign(t, w1.Cosign(t, mustSort(t, ocp)))
		add("checkpoint from another log", r, subj(at), tlog.ErrWrongLog)
	}
	{
		// The same origin, signed by another key.
		text, _, _ := bytes.Cut(finalCP, []byte("\n\n"))
		ns, err := tlog.NewNoteSigner(Origin, Key("impostor"))
		if err != nil {
			t.Fatal(err)
		}
		forged, err := note.Sign(&note.Note{Text: string(text) + "\n"}, ns)
		if err != nil {
			t.Fatal(err)
		}
		r := clone()
		r.Checkpoint = w2.Cosign(t, w1.Cosign(t, mustSort(t, forged)))
		add("checkpoint signed by another key", r, subj(at), tlog.ErrLogSignature)
	}
	{
		r := clone()
		r.Checkpoint = flipSig(t, valid.Checkpoint, Origin)
		add("forged log signature", r, subj(at), tlog.ErrLogSignature)
	}
	{
		oldSorted := w2.Cosign(t, w1.Cosign(t, mustSort(t, oldCP)))
		var size uint64
		fmt.Sscanf(strings.SplitN(string(oldCP), "\n", 3)[1], "%d", &size)
		r := receipt(2, oldSorted, size)
		r.LogIndex, r.Leaf = n-1, Leaf(t, entries[n-1])
		if size != 3 {
			t.Fatalf("the old checkpoint has %d entries, want 3", size)
		}
		add("checkpoint older than the entry", r, subj(n-1), tlog.ErrCheckpointTooOld)
		r2 := clone()
		r2.Checkpoint = oldSorted
		add("an older checkpoint with the newer one's proof", r2, subj(at), tlog.ErrInclusion)
	}
	{
		r := clone()
		r.Checkpoint = flipSig(t, valid.Checkpoint, w1.Name)
		add("forged cosignature", r, subj(at), tlog.ErrCosignature)
	}
	{
		r := clone()
		r.Checkpoint = w2.Cosign(t, mustSort(t, finalCP))
		add("missing cosignature", r, subj(at), tlog.ErrWitnessPolicy)
	}
	{
		r := clone()
		r.Checkpoint = rogue.Cosign(t, w2.Cosign(t, mustSort(t, finalCP)))
		add("cosignature by a witness outside the policy", r, subj(at), tlog.ErrWitnessPolicy)
	}
	{
		// w1's cosignature of the old checkpoint grafted onto the final.
		old := w1.Cosign(t, mustSort(t, oldCP))
		line := sigLine(t, old, w1.Name)
		r := clone()
		withGraft, err := tlog.SortSignatures(append(w2.Cosign(t, mustSort(t, finalCP)), line...))
		if err != nil {
			t.Fatal(err)
		}
		r.Checkpoint = withGraft
		add("cosignature of another checkpoint", r, subj(at), tlog.ErrCosignature)
	}
	return cases
}

func mustSort(t testing.TB, cp []byte) []byte {
	t.Helper()
	s, err := tlog.SortSignatures(cp)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sigLine returns the signature line (with its line feed) of key name.
func sigLine(t testing.TB, cp []byte, name string) string {
	t.Helper()
	for _, l := range strings.SplitAfter(string(cp), "\n") {
		if strings.HasPrefix(l, "\u2014 "+name+" ") {
			return l
		}
	}
	t.Fatalf("no signature line of %s in %q", name, cp)
	return ""
}

// flipSig flips a bit of the signature (not the key hash) of key name.
func flipSig(t testing.TB, cp []byte, name string) []byte {
	t.Helper()
	line := sigLine(t, cp, name)
	b64 := strings.TrimSuffix(strings.TrimPrefix(line, "\u2014 "+name+" "), "\n")
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	raw[len(raw)-1] ^= 1
	out := strings.Replace(string(cp), line, "\u2014 "+name+" "+base64.StdEncoding.EncodeToString(raw)+"\n", 1)
	sorted, err := tlog.SortSignatures([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	return sorted
}
