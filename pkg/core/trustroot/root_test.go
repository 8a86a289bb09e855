package trustroot

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/tlog"
)

// TestKeyForWindowEdges: every edge of a window, for a key with an end and
// a key marked compromised.
func TestKeyForWindowEdges(t *testing.T) {
	f := newFixture(t)
	const ns = time.Nanosecond
	compromisedAt := t1.Add(90 * 24 * time.Hour)
	r, err := Build(t0, 1,
		NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec), From: t0, Until: t1},
		NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec2), From: t1},
		NewKey{Purpose: PurposeProfile, PublicKey: pubOf(f.profile), From: t0},
	)
	if err != nil {
		t.Fatal(err)
	}
	r, err = Compromise(r, idOf(f.vpec2), compromisedAt, t2)
	if err != nil {
		t.Fatal(err)
	}
	r = roundTrip(t, r)
	a, b := idOf(f.vpec), idOf(f.vpec2)
	cases := []struct {
		name    string
		purpose Purpose
		key     string
		at      time.Time
		want    error
	}{
		{"at start", PurposeVPEC, a, t0, nil},
		{"1 ns before start", PurposeVPEC, a, t0.Add(-ns), ErrNotYetValid},
		{"1 ns before end", PurposeVPEC, a, t1.Add(-ns), nil},
		{"at end", PurposeVPEC, a, t1, ErrExpired},
		{"after end", PurposeVPEC, a, t2, ErrExpired},
		{"successor at its start (the old key's end)", PurposeVPEC, b, t1, nil},
		{"successor 1 ns before its start", PurposeVPEC, b, t1.Add(-ns), ErrNotYetValid},
		{"1 ns before compromise", PurposeVPEC, b, compromisedAt.Add(-ns), nil},
		{"compromised exactly at T", PurposeVPEC, b, compromisedAt, ErrCompromised},
		{"after compromise", PurposeVPEC, b, compromisedAt.Add(time.Hour), ErrCompromised},
		{"no end, far future", PurposeProfile, idOf(f.profile), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), nil},
		{"wrong purpose", PurposeProfile, a, t0, ErrWrongPurpose},
		{"unknown key", PurposeVPEC, "0123456789abcdef", t0, ErrUnknownKey},
	}
	sentinels := []error{ErrUnknownKey, ErrWrongPurpose, ErrNotYetValid, ErrExpired, ErrCompromised}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k, err := r.KeyFor(c.purpose, c.key, c.at)
			if c.want == nil {
				if err != nil || k.KeyID != c.key || k.Purpose != c.purpose {
					t.Fatalf("KeyFor = %v, %v", k, err)
				}
				return
			}
			for _, s := range sentinels {
				if errors.Is(err, s) != (s == c.want) {
					t.Fatalf("KeyFor error %v: errors.Is(%v) = %v", err, s, errors.Is(err, s))
				}
			}
			var ke *KeyError
			if !errors.As(err, &ke) || ke.KeyID != c.key || ke.Purpose != c.purpose || !ke.At.Equal(c.at) {
				t.Fatalf("error %#v does not name the key", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, c.key) {
				t.Errorf("message %q does not name the key", msg)
			}
			switch c.want {
			case ErrNotYetValid:
				if !strings.Contains(msg, FormatTime(ke.Window.From)) {
					t.Errorf("message %q does not name the start", msg)
				}
			case ErrExpired:
				if !strings.Contains(msg, FormatTime(t1)) {
					t.Errorf("message %q does not name the end", msg)
				}
			case ErrCompromised:
				if !strings.Contains(msg, FormatTime(compromisedAt)) {
					t.Errorf("message %q does not name the compromise", msg)
				}
			case ErrWrongPurpose:
				if len(ke.Purposes) != 1 || ke.Purposes[0] != PurposeVPEC || !strings.Contains(msg, "vpec-signing") {
					t.Errorf("wrong-purpose error %q does not say what the key may sign", msg)
				}
			}
		})
	}
}

// TestRoundTrip: what Marshal writes, Parse reads back identically; the
// signed bytes recomputed equal those parsed.
func TestRoundTrip(t *testing.T) {
	f := newFixture(t)
	r := f.v1(t)
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, err := p.Marshal()
	if err != nil || !bytes.Equal(b, b2) {
		t.Fatalf("re-marshal differs (%v):\n%s\n%s", err, b, b2)
	}
	parsed, _ := p.SignedBytes()
	p.signed = nil
	recomputed, _ := p.SignedBytes()
	if !bytes.Equal(parsed, recomputed) {
		t.Fatalf("signed bytes differ:\n%s\n%s", parsed, recomputed)
	}
	if err := CheckSelfSigned(p); err != nil {
		t.Fatal(err)
	}
	if len(p.Keys) != 8 || p.Version != 1 || p.Threshold != 1 || len(p.Signatures) != 1 {
		t.Fatalf("parsed %d keys, version %d", len(p.Keys), p.Version)
	}
	tsa := p.TSARoots()
	if len(tsa) != 1 || !bytes.Equal(tsa[0].Raw, f.tsa.Raw) {
		t.Fatal("TSA root lost")
	}
	if _, err := p.KeyFor(PurposeTSARoot, CertificateKeyID(f.tsa), t1); err != nil {
		t.Fatal(err)
	}
	// Whitespace and member order do not matter (the signature covers the
	// RFC 8785 form); an indented copy parses to the same root.
	indented := bytes.ReplaceAll(b, []byte(`,"`), []byte(",\n  \""))
	q, err := Parse(indented)
	if err != nil {
		t.Fatalf("indented copy: %v", err)
	}
	if b3, _ := q.Marshal(); !bytes.Equal(b3, b) {
		t.Fatal("indented copy marshals differently")
	}
}

func TestVerifySignature(t *testing.T) {
	f := newFixture(t)
	r := roundTrip(t, f.v1(t))
	msg := []byte("VPEC signed bytes")
	sig := signing.FormatSignature(ed25519.Sign(f.vpec, msg))
	k, err := r.VerifySignature(PurposeVPEC, idOf(f.vpec), t1, msg, sig)
	if err != nil || k.Comment != "VPEC key on hsm-1" {
		t.Fatalf("VerifySignature: %v", err)
	}
	if _, err := r.VerifySignature(PurposeVPEC, idOf(f.vpec), t1, []byte("other"), sig); !errors.Is(err, signing.ErrBadSignature) {
		t.Fatalf("tampered message: %v", err)
	}
	if _, err := r.VerifySignature(PurposeProfile, idOf(f.vpec), t1, msg, sig); !errors.Is(err, ErrWrongPurpose) {
		t.Fatalf("VPEC key used for a profile: %v", err)
	}
	if _, err := r.VerifySignature(PurposeVPEC, idOf(f.vpec), t0.Add(-time.Second), msg, sig); !errors.Is(err, ErrNotYetValid) {
		t.Fatalf("before the window: %v", err)
	}
}

func TestKeyForNote(t *testing.T) {
	f := newFixture(t)
	r := roundTrip(t, f.v1(t))
	nv, err := ParseNoteVerifier(r.Key(PurposeLog, idOf(f.log)).NoteVerifier)
	if err != nil {
		t.Fatal(err)
	}
	k, err := r.KeyForNote(PurposeLog, "svc.example/log", nv.Hash, t1)
	if err != nil || k.KeyID != idOf(f.log) {
		t.Fatalf("KeyForNote: %v", err)
	}
	if _, err := r.KeyForNote(PurposeWitness, "svc.example/log", nv.Hash, t1); !errors.Is(err, ErrUnknownKey) {
		t.Fatalf("log key as witness: %v", err)
	}
}

// TestNoteVerifierVector: the verifier key of golang.org/x/mod/sumdb/note's
// documentation parses, and formatting its key gives it back.
func TestNoteVerifierVector(t *testing.T) {
	const vkey = "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW"
	nv, err := ParseNoteVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	if nv.Name != "PeterNeumann" || nv.Hash != 0xc74f20a3 || nv.Algorithm != NoteAlgEd25519 {
		t.Fatalf("parsed %+v", nv)
	}
	if got := FormatNoteVerifier(nv.Name, nv.Algorithm, nv.PublicKey); got != vkey {
		t.Fatalf("FormatNoteVerifier = %s", got)
	}
	for _, bad := range []string{
		"PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", // hash
		"PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW", // uppercase
		"Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
		"PeterNeumann+c74f20a3",
		"PeterNeumann+c74f20a3+Apc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
	} {
		if _, err := ParseNoteVerifier(bad); err == nil {
			t.Errorf("ParseNoteVerifier(%q) succeeded", bad)
		}
	}
}

// TestLegacyBundle: a PEM bundle reads as valid forever for every purpose
// it had, and says so; ConvertBundle gives windows.
func TestLegacyBundle(t *testing.T) {
	f := newFixture(t)
	kd, err := signing.CreateKeyDir(filepath.Join(t.TempDir(), "keys"), f.tsa)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := signing.LoadBundle(kd.TrustBundle)
	if err != nil {
		t.Fatal(err)
	}
	data := pem.Marshal()
	r, err := Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Legacy() {
		t.Fatal("a PEM bundle is not reported as legacy")
	}
	for _, p := range []Purpose{PurposeVPEC, PurposeProfile, PurposeCircuit} {
		for _, at := range []time.Time{{}, t0, time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)} {
			k, err := r.KeyFor(p, kd.KeyID, at)
			if err != nil {
				t.Fatalf("KeyFor(%s, %s): %v", p, FormatTime(at), err)
			}
			if !k.Window.Forever || !strings.Contains(k.Window.String(), "valid forever") {
				t.Fatalf("window %q", k.Window)
			}
		}
	}
	if _, err := r.KeyFor(PurposeTSARoot, CertificateKeyID(f.tsa), t1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.KeyFor(PurposeLog, kd.KeyID, t1); !errors.Is(err, ErrWrongPurpose) {
		t.Fatalf("bundle key as log key: %v", err)
	}
	if _, err := r.Marshal(); !errors.Is(err, ErrLegacy) {
		t.Fatalf("Marshal of a legacy root: %v", err)
	}
	if _, err := VerifyUpdate(r, f.v1(t)); !errors.Is(err, ErrNoRootKeys) {
		t.Fatalf("update from a PEM bundle: %v", err)
	}

	logPub, _, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	lk, err := tlog.NewLogKey("svc.example/log", logPub)
	if err != nil {
		t.Fatal(err)
	}
	pem.AddLogKey(lk)
	conv, err := ConvertBundle(pem, t0, t1)
	if err != nil {
		t.Fatal(err)
	}
	conv = roundTrip(t, conv)
	if conv.Legacy() || conv.Version != 1 || len(conv.Keys) != 5 {
		t.Fatalf("converted: legacy %v version %d, %d keys", conv.Legacy(), conv.Version, len(conv.Keys))
	}
	// The bundle's TRANSPARENCY LOG KEY block is kept, as FromBundle reads
	// it: a log-checkpoint key with the same note verifier.
	var logKeys []*Key
	for _, k := range conv.Keys {
		if k.Purpose == PurposeLog {
			logKeys = append(logKeys, k)
		}
	}
	if len(logKeys) != 1 || logKeys[0].NoteVerifier != lk.String() || !logKeys[0].PublicKey.Equal(logPub) || !logKeys[0].Window.From.Equal(t0) {
		t.Fatalf("converted log keys %+v, want one for %s from %s", logKeys, lk, FormatTime(t0))
	}
	if _, err := conv.KeyFor(PurposeVPEC, kd.KeyID, t0.Add(-time.Nanosecond)); !errors.Is(err, ErrNotYetValid) {
		t.Fatalf("converted root before from: %v", err)
	}
	if _, err := conv.KeyFor(PurposeProfile, kd.KeyID, t2); err != nil {
		t.Fatal(err)
	}
	if err := CheckSelfSigned(conv); !errors.Is(err, ErrNoRootKeys) {
		t.Fatalf("converted root without root keys: %v", err)
	}
}
