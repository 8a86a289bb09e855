package trustroot

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// unsignedDoc is a valid root (every purpose, two root keys) without
// signatures, as a generic JSON value to mutate.
func unsignedDoc(t *testing.T, f *fixture) map[string]any {
	t.Helper()
	r := f.v1(t)
	r.Signatures = nil
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func key(m map[string]any, i int) map[string]any { return m["keys"].([]any)[i].(map[string]any) }

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestParseStrict: every malformation is refused with its class and the
// field it is in.
func TestParseStrict(t *testing.T) {
	f := newFixture(t)
	valid := encode(t, unsignedDoc(t, f))
	if _, err := Parse([]byte(valid)); err != nil {
		t.Fatalf("the unmutated document: %v", err)
	}
	signed, err := f.v1(t).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	mut := func(change func(m map[string]any)) func(*testing.T) string {
		return func(t *testing.T) string {
			m := unsignedDoc(t, f)
			change(m)
			return encode(t, m)
		}
	}
	text := func(old, new string) func(*testing.T) string {
		return func(t *testing.T) string {
			if !strings.Contains(valid, old) {
				t.Fatalf("%q not in the document", old)
			}
			return strings.Replace(valid, old, new, 1)
		}
	}
	setTime := func(i int, field, v string) func(*testing.T) string {
		return mut(func(m map[string]any) { key(m, i)[field] = v })
	}
	ts := FormatTime(t0)
	cases := []struct {
		name  string
		doc   func(*testing.T) string
		class error
		field string
	}{
		{"unknown top-level member", mut(func(m map[string]any) { m["expires"] = ts }), ErrUnknownMember, "expires"},
		{"unknown key member", mut(func(m map[string]any) { key(m, 2)["algorithm"] = "ed25519" }), ErrUnknownMember, "keys[2].algorithm"},
		{"duplicate top-level member", text(`"version":1`, `"version":1,"version":2`), ErrDuplicateMember, "version"},
		{"duplicate key member", text(`"purpose":"profile-signing"`, `"purpose":"profile-signing","purpose":"vpec-signing"`), ErrDuplicateMember, "keys[1].purpose"},
		{"missing version", mut(func(m map[string]any) { delete(m, "version") }), ErrMissingMember, "version"},
		{"missing valid_from", mut(func(m map[string]any) { delete(key(m, 0), "valid_from") }), ErrMissingMember, "keys[0].valid_from"},
		{"missing public_key", mut(func(m map[string]any) { delete(key(m, 0), "public_key") }), ErrMissingMember, "keys[0].public_key"},
		{"null member", mut(func(m map[string]any) { key(m, 0)["valid_until"] = nil }), ErrBadValue, "keys[0].valid_until"},
		{"empty comment", mut(func(m map[string]any) { key(m, 0)["comment"] = "" }), ErrBadValue, "keys[0].comment"},
		{"time with an offset", setTime(0, "valid_from", "2026-01-01T01:00:00+01:00"), ErrBadTime, "keys[0].valid_from"},
		{"time with lowercase z", setTime(0, "valid_from", "2026-01-01T00:00:00z"), ErrBadTime, "keys[0].valid_from"},
		{"time with trailing zeros", setTime(1, "valid_from", "2026-01-01T00:00:00.500Z"), ErrBadTime, "keys[1].valid_from"},
		{"time with a zero fraction", setTime(1, "valid_from", "2026-01-01T00:00:00.0Z"), ErrBadTime, "keys[1].valid_from"},
		{"time without seconds", setTime(0, "valid_until", "2027-01-01T00:00Z"), ErrBadTime, "keys[0].valid_until"},
		{"impossible date", setTime(0, "valid_until", "2027-02-30T00:00:00Z"), ErrBadTime, "keys[0].valid_until"},
		{"leap second", setTime(0, "valid_until", "2026-12-31T23:59:60Z"), ErrBadTime, "keys[0].valid_until"},
		{"date only", setTime(0, "compromised_at", "2027-01-01"), ErrBadTime, "keys[0].compromised_at"},
		{"time as a number", mut(func(m map[string]any) { m["issued_at"] = json.Number("1767225600") }), ErrBadValue, "issued_at"},
		{"end at start", setTime(0, "valid_until", ts), ErrBadTime, "keys[0].valid_until"},
		{"end before start", setTime(0, "valid_until", "2025-12-31T23:59:59.999999999Z"), ErrBadTime, "keys[0].valid_until"},
		{"version 1.0", text(`"version":1`, `"version":1.0`), ErrBadValue, "version"},
		{"version 1e0", text(`"version":1`, `"version":1e0`), ErrBadValue, "version"},
		{"version 0", text(`"version":1`, `"version":0`), ErrBadValue, "version"},
		{"version -1", text(`"version":1`, `"version":-1`), ErrBadValue, "version"},
		{"version as a string", text(`"version":1`, `"version":"1"`), ErrBadValue, "version"},
		{"version too large", text(`"version":1`, `"version":9007199254740992`), ErrBadValue, "version"},
		{"threshold 0", text(`"root_threshold":1`, `"root_threshold":0`), ErrBadValue, "root_threshold"},
		{"threshold above the root keys", text(`"root_threshold":1`, `"root_threshold":3`), ErrBadValue, "root_threshold"},
		{"schema", mut(func(m map[string]any) { m["schema"] = "svc.trust-root/v2" }), ErrSchema, "schema"},
		{"unknown purpose", mut(func(m map[string]any) { key(m, 0)["purpose"] = "signing" }), ErrBadValue, "keys[0].purpose"},
		{"uppercase key id", mut(func(m map[string]any) {
			id := key(m, 0)["key_id"].(string)
			up := strings.ToUpper(id)
			if up == id { // a key id of digits only (1 in 1,800 keys)
				up = "A" + id[1:]
			}
			key(m, 0)["key_id"] = up
		}), ErrBadValue, "keys[0].key_id"},
		{"key id of another key", mut(func(m map[string]any) { key(m, 0)["key_id"] = key(m, 1)["key_id"] }), ErrKeyIDMismatch, "keys[0].key_id"},
		{"public key with a line break", mut(func(m map[string]any) {
			s := key(m, 0)["public_key"].(string)
			key(m, 0)["public_key"] = s[:20] + "\n" + s[20:]
		}), ErrBadValue, "keys[0].public_key"},
		{"P-256 public key", mut(func(m map[string]any) {
			key(m, 0)["public_key"] = "MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyAhIiMkJSYnKCkqKywtLi8wMTIzNDU2Nzg5Ojs8PT4/QA=="
		}), ErrBadValue, "keys[0].public_key"},
		{"TSA root with a public key", mut(func(m map[string]any) { key(m, 3)["public_key"] = key(m, 0)["public_key"] }), ErrUnknownMember, "keys[3].public_key"},
		{"VPEC key with a certificate", mut(func(m map[string]any) { key(m, 0)["certificate"] = key(m, 3)["certificate"] }), ErrUnknownMember, "keys[0].certificate"},
		{"certificate that does not parse", mut(func(m map[string]any) { key(m, 3)["certificate"] = "MAA=" }), ErrBadValue, "keys[3].certificate"},
		{"log key without a note verifier", mut(func(m map[string]any) { delete(key(m, 4), "note_verifier") }), ErrMissingMember, "keys[4].note_verifier"},
		{"VPEC key with a note verifier", mut(func(m map[string]any) { key(m, 0)["note_verifier"] = key(m, 4)["note_verifier"] }), ErrUnknownMember, "keys[0].note_verifier"},
		{"note verifier of another key", mut(func(m map[string]any) {
			key(m, 4)["note_verifier"] = FormatNoteVerifier("svc.example/log", NoteAlgEd25519, pubOf(f.vpec))
		}), ErrKeyIDMismatch, "keys[4].note_verifier"},
		{"witness verifier with the log algorithm", mut(func(m map[string]any) {
			key(m, 5)["note_verifier"] = FormatNoteVerifier("witness.example", NoteAlgEd25519, pubOf(f.witness))
		}), ErrBadValue, "keys[5].note_verifier"},
		{"entries out of order", mut(func(m map[string]any) {
			ks := m["keys"].([]any)
			ks[0], ks[1] = ks[1], ks[0]
		}), ErrBadValue, "keys[1]"},
		{"same key twice for one purpose", mut(func(m map[string]any) {
			ks := m["keys"].([]any)
			m["keys"] = append(ks[:1], ks...)
		}), ErrDuplicateKey, "keys[1]"},
		{"empty keys", mut(func(m map[string]any) { m["keys"] = []any{} }), ErrBadValue, "keys"},
		{"empty signatures", mut(func(m map[string]any) { m["signatures"] = []any{} }), ErrBadValue, "signatures"},
		{"signature by a VPEC key", func(t *testing.T) string {
			return strings.Replace(string(signed), `"key_id":"`+idOf(f.root1)+`","signature"`, `"key_id":"`+idOf(f.vpec)+`","signature"`, 1)
		}, ErrBadSignature, "signatures[0].key_id"},
		{"signature that does not verify", func(t *testing.T) string {
			return strings.Replace(string(signed), `"version":1`, `"version":2`, 1)
		}, ErrBadSignature, "signatures[0].signature"},
		{"not an object", func(*testing.T) string { return `[]` }, ErrNotJSON, ""},
		{"trailing data", func(*testing.T) string { return valid + `{}` }, ErrNotJSON, ""},
		{"invalid UTF-8", func(*testing.T) string { return strings.Replace(valid, `"comment":"VPEC`, "\"comment\":\"\xff", 1) }, ErrNotJSON, ""},
		{"too large", func(*testing.T) string { return valid + strings.Repeat(" ", MaxSize) }, ErrNotJSON, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := c.doc(t)
			_, err := Parse([]byte(doc))
			var fe *FormatError
			if !errors.Is(err, ErrMalformed) || !errors.Is(err, c.class) || !errors.As(err, &fe) {
				t.Fatalf("Parse = %v, want %v", err, c.class)
			}
			if fe.Field != c.field {
				t.Fatalf("error names field %q, want %q (%v)", fe.Field, c.field, err)
			}
			if c.field != "" && !strings.Contains(err.Error(), c.field) {
				t.Fatalf("message %q does not name the field", err)
			}
		})
	}
}

// TestParseRootKeyWithAnotherPurpose: a root-signing key listed for
// another purpose too is refused at the later of the two entries.
func TestParseRootKeyWithAnotherPurpose(t *testing.T) {
	f := newFixture(t)
	m := unsignedDoc(t, f)
	ks := m["keys"].([]any)
	w := map[string]any{"key_id": idOf(f.root1), "purpose": "witness", "public_key": key(m, 6)["public_key"],
		"note_verifier": FormatNoteVerifier("w", NoteAlgCosignatureV1, pubOf(f.root1)), "valid_from": FormatTime(t0)}
	if key(m, 6)["key_id"] != idOf(f.root1) {
		w["public_key"] = key(m, 7)["public_key"]
	}
	// The witness group is keys[5]; keep it sorted by key id.
	at := 6
	if idOf(f.root1) < key(m, 5)["key_id"].(string) {
		at = 5
	}
	m["keys"] = append(ks[:at:at], append([]any{w}, ks[at:]...)...)
	rootAt := 7
	if key(m, 7)["key_id"] != idOf(f.root1) {
		rootAt = 8
	}
	_, err := Parse([]byte(encode(t, m)))
	var fe *FormatError
	if !errors.Is(err, ErrPurposeConflict) || !errors.As(err, &fe) || fe.Field != "keys["+string(rune('0'+rootAt))+"]" {
		t.Fatalf("Parse = %v, want ErrPurposeConflict at keys[%d]", err, rootAt)
	}
}

func TestParseTime(t *testing.T) {
	good := []string{"2026-11-28T12:00:00Z", "2026-11-28T12:00:00.5Z", "2026-11-28T12:00:00.000000001Z", "0001-01-01T00:00:00Z"}
	for _, s := range good {
		tm, err := ParseTime(s)
		if err != nil || FormatTime(tm) != s {
			t.Errorf("ParseTime(%q) = %v, %v", s, tm, err)
		}
	}
	bad := []string{"", "2026-11-28 12:00:00Z", "2026-11-28T12:00:00.50Z", "2026-11-28T12:00:00.Z", "2026-11-28T12:00:00+00:00",
		"2026-11-28T24:00:00Z", "2026-11-28T12:00:00.1234567890Z", " 2026-11-28T12:00:00Z", "2026-11-28t12:00:00Z"}
	for _, s := range bad {
		if _, err := ParseTime(s); !errors.Is(err, ErrBadTime) {
			t.Errorf("ParseTime(%q) = %v, want ErrBadTime", s, err)
		}
	}
}

// TestDependencies: the package stays verification-side: no network, no
// cgo, and it builds for the browser verifier (GOOS=js GOARCH=wasm).
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list and go build")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command: %v", err)
	}
	for _, env := range [][]string{{"CGO_ENABLED=0"}, {"GOOS=js", "GOARCH=wasm"}} {
		cmd := exec.Command(gobin, "list", "-deps", ".")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v go list -deps: %v", env, err)
		}
		for _, d := range strings.Fields(string(out)) {
			if d == "net/http" || strings.HasPrefix(d, "net/http/") || d == "runtime/cgo" || d == "os/exec" ||
				strings.HasPrefix(d, "github.com/svc-gov/svc/pkg/service/keys") || strings.HasPrefix(d, "github.com/miekg/") {
				t.Errorf("%v: pkg/core/trustroot imports %s", env, d)
			}
		}
		build := exec.Command(gobin, "build", ".")
		build.Env = cmd.Env
		if out, err := build.CombinedOutput(); err != nil {
			t.Errorf("%v go build: %v\n%s", env, err, out)
		}
	}
}

func FuzzParse(f *testing.F) {
	fx := newFixture(f)
	signed, err := fx.v1(f).Marshal()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(signed)
	r, _ := Build(t0, 1, NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(fx.vpec), From: t0, Until: t1})
	unsigned, _ := r.Marshal()
	f.Add(unsigned)
	f.Add([]byte(`{"schema":"svc.trust-root/v1","version":1,"issued_at":"2026-01-01T00:00:00Z","root_threshold":1,"keys":[]}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data)
		if err != nil {
			var fe *FormatError
			if !errors.Is(err, ErrMalformed) || !errors.As(err, &fe) {
				t.Fatalf("error %v is not a FormatError matching ErrMalformed", err)
			}
			return
		}
		// What parses, marshals to a document that parses to the same
		// bytes again, with the same signed bytes.
		b, err := r.Marshal()
		if err != nil {
			t.Fatalf("Marshal of a parsed root: %v", err)
		}
		r2, err := Parse(b)
		if err != nil {
			t.Fatalf("Parse(Marshal(Parse(x))): %v", err)
		}
		b2, _ := r2.Marshal()
		if !bytes.Equal(b, b2) {
			t.Fatalf("unstable:\n%s\n%s", b, b2)
		}
		s1, _ := r.SignedBytes()
		r.signed = nil
		s2, _ := r.SignedBytes()
		if !bytes.Equal(s1, s2) {
			t.Fatalf("signed bytes of the input differ from the recomputed ones:\n%s\n%s", s1, s2)
		}
	})
}
