package tlog_test

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/tlogtest"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/service/logwriter"
	"golang.org/x/mod/sumdb/note"
)

var classes = []error{tlog.ErrMalformed, tlog.ErrWrongVPEC, tlog.ErrCheckpointTooOld, tlog.ErrInclusion, tlog.ErrWrongLog,
	tlog.ErrLogSignature, tlog.ErrCosignature, tlog.ErrWitnessPolicy, tlog.ErrInconsistent, tlog.ErrLogShrank}

// TestReceiptCorpus: a valid receipt from a real log verifies, and each
// doctored one fails with its class and no other.
func TestReceiptCorpus(t *testing.T) {
	cases := tlogtest.Corpus(t)
	v := tlogtest.Verifier(t, "log", tlogtest.CorpusPolicy(t))
	seen := map[error]bool{}
	for _, c := range cases {
		got, err := v.VerifyReceipt(c.Receipt, c.Subject)
		if c.Want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.Name, err)
			} else if got.Leaf.VPECID != c.Subject.VPECID || len(got.Checkpoint.Cosignatures) != 2 {
				t.Errorf("%s: %+v", c.Name, got)
			}
			continue
		}
		seen[c.Want] = true
		if got != nil {
			t.Errorf("%s: a result on error", c.Name)
		}
		for _, class := range classes {
			if errors.Is(err, class) != (class == c.Want) {
				t.Errorf("%s: %v; want %v and no other class", c.Name, err, c.Want)
				break
			}
		}
	}
	for _, class := range []error{tlog.ErrWrongVPEC, tlog.ErrCheckpointTooOld, tlog.ErrInclusion, tlog.ErrWrongLog,
		tlog.ErrLogSignature, tlog.ErrCosignature, tlog.ErrWitnessPolicy} {
		if !seen[class] {
			t.Errorf("the corpus has no case of %v", class)
		}
	}
	var we *tlog.WitnessError
	for _, c := range cases {
		if c.Want == tlog.ErrCosignature {
			_, err := v.VerifyReceipt(c.Receipt, c.Subject)
			if !errors.As(err, &we) || we.Witness != "witness.test/w1" {
				t.Errorf("%s: %v does not name witness.test/w1", c.Name, err)
			}
		}
	}
}

// TestReceiptOneEncoding: a valid receipt re-spelt any other way is
// refused as malformed, and a receipt of a later version says to upgrade.
func TestReceiptOneEncoding(t *testing.T) {
	valid := tlogtest.Corpus(t)[0]
	if valid.Want != nil {
		t.Fatal("the corpus does not start with the valid receipt")
	}
	v := tlogtest.Verifier(t, "log", tlogtest.CorpusPolicy(t))
	var m map[string]any
	if err := json.Unmarshal(valid.Receipt, &m); err != nil {
		t.Fatal(err)
	}
	reencode := func(mod func(map[string]any)) []byte {
		c := map[string]any{}
		for k, x := range m {
			c[k] = x
		}
		mod(c)
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c); err != nil {
			t.Fatal(err)
		}
		return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	}
	if !bytes.Contains(valid.Receipt, []byte(`"log_index":1,`)) || !bytes.Equal(reencode(func(map[string]any) {}), valid.Receipt) {
		t.Fatal("encoding/json does not reproduce the canonical receipt; the cases below would test nothing")
	}
	cp := m["checkpoint"].(string)
	sigs := cp[strings.Index(cp, "\n\n")+2:]
	lines := strings.SplitAfter(sigs, "\n")
	for _, c := range []struct {
		name string
		doc  []byte
		want string
	}{
		{"pretty-printed", func() []byte { var b bytes.Buffer; json.Indent(&b, valid.Receipt, "", "  "); return b.Bytes() }(), "canonical"},
		{"a final newline", append(bytes.Clone(valid.Receipt), '\n'), "canonical"},
		{"an escaped slash", bytes.Replace(valid.Receipt, []byte(`svc.test/log`), []byte(`svc.test\/log`), 1), "canonical"},
		{"log_index 1.0", bytes.Replace(valid.Receipt, []byte(`"log_index":1,`), []byte(`"log_index":1.0,`), 1), "log_index"},
		{"log_index 1e0", bytes.Replace(valid.Receipt, []byte(`"log_index":1,`), []byte(`"log_index":1e0,`), 1), "log_index"},
		{"a negative log_index", bytes.Replace(valid.Receipt, []byte(`"log_index":1,`), []byte(`"log_index":-1,`), 1), "log_index"},
		{"an unknown member", reencode(func(c map[string]any) { c["witnessed"] = true }), "witnessed"},
		{"no inclusion_proof", reencode(func(c map[string]any) { delete(c, "inclusion_proof") }), "inclusion_proof"},
		{"a proof hash of 31 bytes", reencode(func(c map[string]any) { c["inclusion_proof"] = []any{"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="} }), "inclusion_proof"},
		{"a proof hash in URL-safe base64", reencode(func(c map[string]any) {
			p := append([]any(nil), m["inclusion_proof"].([]any)...)
			p[0] = strings.NewReplacer("+", "-", "/", "_").Replace(p[0].(string))
			c["inclusion_proof"] = p
		}), "inclusion_proof"},
		{"signature lines unsorted", reencode(func(c map[string]any) {
			c["checkpoint"] = cp[:strings.Index(cp, "\n\n")+2] + lines[2] + lines[1] + lines[0]
		}), "ascending"},
		{"a signature line twice", reencode(func(c map[string]any) {
			c["checkpoint"] = cp[:strings.Index(cp, "\n\n")+2] + lines[0] + lines[0] + lines[1] + lines[2]
		}), "two signature lines"},
		{"a checkpoint extension line", reencode(func(c map[string]any) {
			c["checkpoint"] = strings.Replace(cp, "\n\n", "\nextension\n\n", 1)
		}), "extension"},
		{"a CRLF leaf", reencode(func(c map[string]any) { c["leaf"] = strings.ReplaceAll(m["leaf"].(string), "\n", "\r\n") }), "leaf"},
		{"schema v2", reencode(func(c map[string]any) { c["schema"] = "svc.tlog.receipt/v2"; c["extra"] = 1 }), "upgrade"},
		{"not JSON", []byte("svc.tlog.receipt/v1"), "receipt"},
		{"empty", nil, "receipt"},
	} {
		_, err := v.VerifyReceipt(c.doc, valid.Subject)
		if !errors.Is(err, tlog.ErrMalformed) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrMalformed mentioning %q", c.name, err, c.want)
		}
	}
}

// TestConsistency: checkpoints of one growing log are consistent with the
// proof the log gives; given in the wrong order they say the log shrank;
// a wrong proof or a second history is inconsistent.
func TestConsistency(t *testing.T) {
	ctx := context.Background()
	v := tlogtest.Verifier(t, "log", "quorum none\n")
	l := tlogtest.OpenLog(t, t.TempDir(), "log", nil)
	checkpoint := func(prefix string, n int, l *logwriter.Log) *tlog.Checkpoint {
		var last uint64
		for i := range n {
			a, err := l.Append(ctx, tlogtest.Leaf(t, tlogtest.Entry(prefix, i, "org-a", "wf", true)))
			if err != nil {
				t.Fatal(err)
			}
			last = a.Index
		}
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		r, err := l.AwaitReceipt(wctx, last)
		if err != nil {
			t.Fatal(err)
		}
		return r.Checkpoint
	}
	older := checkpoint("a", 5, l)
	newer := checkpoint("b", 6, l)
	proof, err := l.ConsistencyProof(ctx, older.Size, newer.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.VerifyConsistency(older, newer, proof); err != nil {
		t.Fatalf("a growing log: %v", err)
	}
	if err := v.VerifyConsistency(newer, older, proof); !errors.Is(err, tlog.ErrLogShrank) {
		t.Errorf("swapped: %v, want ErrLogShrank", err)
	}
	bad := append([][]byte(nil), proof...)
	bad[0] = bytes.Repeat([]byte{7}, 32)
	if err := v.VerifyConsistency(older, newer, bad); !errors.Is(err, tlog.ErrInconsistent) {
		t.Errorf("a wrong proof: %v, want ErrInconsistent", err)
	}
	if err := v.VerifyConsistency(newer, newer, nil); err != nil {
		t.Errorf("a checkpoint with itself: %v", err)
	}
	fork := checkpoint("c", int(older.Size), tlogtest.OpenLog(t, t.TempDir(), "log", nil))
	if err := v.VerifyConsistency(older, fork, nil); !errors.Is(err, tlog.ErrInconsistent) {
		t.Errorf("two histories of one size: %v, want ErrInconsistent", err)
	}
	// Proof text round trip.
	back, err := tlog.ParseProof(tlog.MarshalProof(proof))
	if err != nil || len(back) != len(proof) || v.VerifyConsistency(older, newer, back) != nil {
		t.Errorf("ParseProof(MarshalProof(p)): %v", err)
	}
}

// TestWitnessPolicies: thresholds and groups decide which cosignatures
// suffice; malformed policies are refused.
func TestWitnessPolicies(t *testing.T) {
	w := []*tlogtest.Witness{tlogtest.NewWitness(t, "w.test/a"), tlogtest.NewWitness(t, "w.test/b"), tlogtest.NewWitness(t, "w.test/c")}
	decl := w[0].PolicyLine("a") + w[1].PolicyLine("b") + w[2].PolicyLine("c")
	ns, err := tlog.NewNoteSigner(tlogtest.Origin, tlogtest.Key("log"))
	if err != nil {
		t.Fatal(err)
	}
	cp, err := note.Sign(&note.Note{Text: tlogtest.Origin + "\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"}, ns)
	if err != nil {
		t.Fatal(err)
	}
	signedBy := func(ws ...int) []byte {
		c := cp
		for _, i := range ws {
			c = w[i].Cosign(t, c)
		}
		return c
	}
	for _, c := range []struct {
		policy string
		by     []int
		ok     bool
	}{
		{"quorum none\n", nil, true},
		{decl + "quorum a\n", []int{0}, true},
		{decl + "quorum a\n", []int{1, 2}, false},
		{decl + "group g 2 a b c\nquorum g\n", []int{0, 2}, true},
		{decl + "group g 2 a b c\nquorum g\n", []int{1}, false},
		{decl + "group g any a b c\nquorum g\n", []int{2}, true},
		{decl + "group g all a b c\nquorum g\n", []int{0, 1}, false},
		{decl + "group ab 1 a b\ngroup top all ab c\nquorum top\n", []int{1, 2}, true},
		{decl + "group ab 1 a b\ngroup top all ab c\nquorum top\n", []int{0, 1}, false},
	} {
		v, err := tlog.NewVerifier(tlogtest.LogKey(t, "log"), tlogtest.Policy(t, c.policy))
		if err != nil {
			t.Fatal(err)
		}
		_, err = v.VerifyCheckpoint(signedBy(c.by...))
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, tlog.ErrWitnessPolicy)) {
			t.Errorf("policy %q, cosigned by %v: %v", c.policy, c.by, err)
		}
	}
	for _, p := range []string{
		"", "witness a\nquorum a\n", decl, decl + "quorum nobody\n", decl + "group g 4 a b c\nquorum g\n",
		decl + "group g x a\nquorum g\n", "witness a w.test/a+00000000+AAAA http://x\nquorum a\n", "\x00",
	} {
		if _, err := tlog.ParseWitnessPolicy([]byte(p)); !errors.Is(err, tlog.ErrMalformed) {
			t.Errorf("policy %q: %v, want ErrMalformed", p, err)
		}
	}
	if _, err := tlog.NewVerifier(tlogtest.LogKey(t, "log"), nil); err == nil {
		t.Error("a verifier without a witness policy")
	}
}

// hsmSigner is a crypto.Signer that is not an ed25519.PrivateKey, the shape
// of a key held in an HSM or KMS.
type hsmSigner struct {
	key    ed25519.PrivateKey
	faulty bool
}

func (h hsmSigner) Public() crypto.PublicKey { return h.key.Public() }
func (h hsmSigner) Sign(_ io.Reader, msg []byte, opts crypto.SignerOpts) ([]byte, error) {
	if opts.HashFunc() != 0 {
		return nil, errors.New("pure Ed25519 only")
	}
	sig := ed25519.Sign(h.key, msg)
	if h.faulty {
		sig[0] ^= 1
	}
	return sig, nil
}

// TestCheckpointSigner: checkpoints signed through a crypto.Signer verify
// with the log key; a signer whose signatures do not verify, or a key that
// is not Ed25519, is refused.
func TestCheckpointSigner(t *testing.T) {
	key := tlogtest.Key("log")
	ns, err := tlog.NewNoteSigner(tlogtest.Origin, hsmSigner{key: key})
	if err != nil {
		t.Fatal(err)
	}
	cp, err := note.Sign(&note.Note{Text: tlogtest.Origin + "\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"}, ns)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tlogtest.Verifier(t, "log", "quorum none\n").VerifyCheckpoint(cp); err != nil {
		t.Errorf("a checkpoint signed through a crypto.Signer: %v", err)
	}
	bad, err := tlog.NewNoteSigner(tlogtest.Origin, hsmSigner{key: key, faulty: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Sign(&note.Note{Text: "x\n"}, bad); err == nil {
		t.Error("a faulty signer's signature was used")
	}
	if _, err := tlog.NewNoteSigner("bad origin", key); !errors.Is(err, tlog.ErrMalformed) {
		t.Errorf("an origin with a space: %v", err)
	}
	// The log key's text form is canonical.
	k := tlogtest.LogKey(t, "log")
	if back, err := tlog.ParseLogKey(k.String()); err != nil || back.String() != k.String() || back.Origin() != tlogtest.Origin {
		t.Errorf("ParseLogKey(String()): %v %v", back, err)
	}
	for _, s := range []string{"", k.String() + "=", strings.Replace(k.String(), "+", "+0", 1), "x+00000000+AQ=="} {
		if _, err := tlog.ParseLogKey(s); !errors.Is(err, tlog.ErrMalformed) {
			t.Errorf("ParseLogKey(%q): %v, want ErrMalformed", s, err)
		}
	}
}

// TestCosignatureWindow: a cosignature the verifier's window refuses does
// not count toward the policy; when the policy then fails, the error is
// ErrWitnessPolicy carrying the refusal (the witness, the time and the
// window's own error), and the cosignatures that count are those returned.
func TestCosignatureWindow(t *testing.T) {
	valid := tlogtest.Corpus(t)[0]
	errOutside := errors.New("outside the key's window")
	refuse := func(name string) tlog.CosignatureWindow {
		return func(w note.Verifier, _ time.Time) error {
			if w.Name() == name {
				return errOutside
			}
			return nil
		}
	}
	oneOf := tlogtest.NewWitness(t, "witness.test/w1").PolicyLine("w1") + tlogtest.NewWitness(t, "witness.test/w2").PolicyLine("w2") +
		"group one 1 w1 w2\nquorum one\n"
	cases := []struct {
		name    string
		policy  string
		window  tlog.CosignatureWindow
		refused string // the witness whose refusal the error carries
		counted int
	}{
		{name: "no window", policy: tlogtest.CorpusPolicy(t), counted: 2},
		{name: "every cosignature inside", policy: tlogtest.CorpusPolicy(t), window: refuse("nobody"), counted: 2},
		{name: "w1 refused, both required", policy: tlogtest.CorpusPolicy(t), window: refuse("witness.test/w1"), refused: "witness.test/w1"},
		{name: "w2 refused, both required", policy: tlogtest.CorpusPolicy(t), window: refuse("witness.test/w2"), refused: "witness.test/w2"},
		{name: "w2 refused, one of two required", policy: oneOf, window: refuse("witness.test/w2"), counted: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := tlogtest.Verifier(t, "log", tc.policy)
			if tc.window != nil {
				v = v.WithCosignatureWindow(tc.window)
			}
			got, err := v.VerifyReceipt(valid.Receipt, valid.Subject)
			if tc.refused == "" {
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Checkpoint.Cosignatures) != tc.counted {
					t.Fatalf("%d cosignatures count, want %d", len(got.Checkpoint.Cosignatures), tc.counted)
				}
				return
			}
			var re *tlog.CosignatureRefusedError
			if !errors.Is(err, tlog.ErrWitnessPolicy) || !errors.Is(err, errOutside) || !errors.As(err, &re) || re.Witness != tc.refused || re.Time.IsZero() {
				t.Fatalf("error %v, want ErrWitnessPolicy with %s's cosignature refused", err, tc.refused)
			}
			if errors.Is(err, tlog.ErrCosignature) {
				t.Errorf("%v: a refused cosignature is not a forged one", err)
			}
		})
	}
}
