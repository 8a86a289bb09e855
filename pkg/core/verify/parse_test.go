package verify_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/internal/shapecases"
	"github.com/svc-gov/svc/internal/testvectors"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func readVector(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(vectorsDir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOneEncodingPerDocument: byte-different copies of a valid VPEC whose
// canonical form (or decoded base64) is unchanged must not verify. Before,
// each of these verified VALID: encoding/base64 skips CR and LF even in
// Strict mode, and 1, 1.0 and 1e0 are one number in canonical JSON.
func TestOneEncodingPerDocument(t *testing.T) {
	_, trust := loadVectors(t)
	orig := readVector(t, "vpec/valid/witnessed.json")
	if r := verifyDoc(t, orig, verify.Options{Trust: trust}); !r.Valid {
		t.Fatalf("original: %s", r.Verdict)
	}
	// insert puts s into the string value of member name (first
	// occurrence), after its first n characters.
	insert := func(name string, n int, s string) []byte {
		key := []byte(`"` + name + `": "`)
		i := bytes.Index(orig, key)
		if i < 0 {
			t.Fatalf("no member %s", name)
		}
		at := i + len(key) + n
		return append(append(append([]byte{}, orig[:at]...), s...), orig[at:]...)
	}
	replace := func(old, new string) []byte {
		if !bytes.Contains(orig, []byte(old)) {
			t.Fatalf("no %q", old)
		}
		return bytes.Replace(orig, []byte(old), []byte(new), 1)
	}
	copies := map[string][]byte{
		"signature CRLF":              insert("signature", 20, `\r\n`),
		"signature LF at end":         insert("signature", len("Ed25519:")+86, `\n`),
		"signature CR":                insert("signature", 30, `\r`),
		"signature space":             insert("signature", 30, ` `),
		"timestamp LF":                insert("timestamp_rfc3161", 64, `\n`),
		"timestamp CRLF every 76":     insert("timestamp_rfc3161", 76, `\r\n`),
		"review signature CRLF":       insert("reviewer_signature", 20, `\r\n`),
		"reviewer public key LF":      insert("reviewer_public_key", 10, `\n`),
		"review open token LF":        insert("check_open_tst", 64, `\n`),
		"review close token CRLF":     insert("check_close_tst", 64, `\r\n`),
		"sequence 1.0":                replace(`"sequence": 1,`, `"sequence": 1.0,`),
		"sequence 1e0":                replace(`"sequence": 1,`, `"sequence": 1e0,`),
		"sequence 10e-1":              replace(`"sequence": 1,`, `"sequence": 10e-1,`),
		"sequence long fraction":      replace(`"sequence": 1,`, `"sequence": 1.0000000000000000000001,`),
		"total_checks_run 3e0":        replace(`"total_checks_run": 3,`, `"total_checks_run": 3e0,`),
		"min_duration 10.0":           replace(`"min_duration_seconds": 10,`, `"min_duration_seconds": 10.0,`),
		"provable_surface -0":         replace(`"provable_surface": 0,`, `"provable_surface": -0,`),
		"provable_surface 0.0":        replace(`"provable_surface": 0,`, `"provable_surface": 0.0,`),
		"provable_surface 0e5":        replace(`"provable_surface": 0,`, `"provable_surface": 0e5,`),
		"breakdown share trailing 0":  replace(`"execution": 0.6667`, `"execution": 0.66670`),
		"breakdown share exponent":    replace(`"execution": 0.6667`, `"execution": 6.667e-1`),
		"escaped top-level name":      replace(`"run_id":`, `"run\u005fid":`),
		"escaped record member name":  replace(`"sequence": 1,`, `"s\u0065quence": 1,`),
		"UTF-8 BOM":                   append([]byte("\xef\xbb\xbf"), orig...),
		"escaped records member name": replace(`"records":`, `"\u0072ecords":`),
	}
	for name, doc := range copies {
		t.Run(name, func(t *testing.T) {
			if bytes.Equal(doc, orig) {
				t.Fatal("no change")
			}
			r := verifyDoc(t, doc, verify.Options{Trust: trust})
			if r.Valid {
				t.Fatalf("a byte-different copy verifies VALID")
			}
		})
	}
	// Outside the signed bytes, the copy is refused as a schema error
	// naming the field (not as a signature failure).
	for name, field := range map[string]string{"signature CRLF": "signature", "timestamp LF": "timestamp_rfc3161", "sequence 1.0": "records[0].sequence", "provable_surface -0": "provable_surface"} {
		r := verifyDoc(t, copies[name], verify.Options{Trust: trust})
		if c := r.Check(verify.CheckSchema); c.Status != verify.Fail || !strings.Contains(c.Message, field) {
			t.Errorf("%s: schema check %s %q, want a failure naming %s", name, c.Status, c.Message, field)
		}
	}
}

// TestProfileOneEncoding: the same for a signed model profile.
func TestProfileOneEncoding(t *testing.T) {
	_, trust := loadVectors(t)
	orig := readVector(t, "profile/pii-detection-v1.0.0.json")
	if _, err := profile.Verify(orig, trust); err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(orig, []byte(`"profile_signature": "Ed25519:`)) + len(`"profile_signature": "Ed25519:`) + 10
	for name, doc := range map[string][]byte{
		"signature CRLF": append(append(append([]byte{}, orig[:i]...), `\r\n`...), orig[i:]...),
		"BOM":            append([]byte("\xef\xbb\xbf"), orig...),
	} {
		if _, err := profile.Verify(doc, trust); err == nil {
			t.Errorf("%s: a byte-different profile verifies", name)
		}
	}
	m := bytes.Index(orig, []byte(`"calibration_passes": `))
	if m < 0 {
		t.Fatal("no calibration_passes")
	}
	end := m + len(`"calibration_passes": `) + bytes.IndexAny(orig[m+len(`"calibration_passes": `):], ",\n")
	n := string(orig[m+len(`"calibration_passes": `) : end])
	doc := append(append(append([]byte{}, orig[:end]...), ".0"...), orig[end:]...)
	if _, err := profile.Verify(doc, trust); !errors.Is(err, document.ErrSchema) || !strings.Contains(err.Error(), "calibration_passes") {
		t.Errorf("calibration_passes %s.0: %v, want a schema error naming the field", n, err)
	}
	big := make([]byte, document.MaxSize+1)
	if _, err := profile.Verify(big, trust); !errors.Is(err, document.ErrTooLarge) {
		t.Errorf("oversized profile: %v, want ErrTooLarge", err)
	}
}

// TestShape: documents that cannot be a VPEC fail the schema check with
// the shape scan's words (pkg/core/vpec's shape_internal_test.go tests the
// scan itself).
func TestShape(t *testing.T) {
	cases := shapecases.Cases()
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := verifyDoc(t, []byte(c.Doc), verify.Options{Trust: someTrust(t)})
			if c2 := r.Check(verify.CheckSchema); c2.Status != verify.Fail || !strings.Contains(c2.Message, "not a VPEC") || !strings.Contains(c2.Message, c.Want) {
				t.Fatalf("Verify schema check: %q, want %q", c2.Message, c.Want)
			}
		})
	}
}

// TestUnreadableInput: empty, binary and malformed input are reported in
// words, without the parser's package prefix, at the right byte even when
// the error is deep in the records (which are parsed one by one).
func TestUnreadableInput(t *testing.T) {
	orig := readVector(t, "vpec/valid/clean.json")
	last := bytes.LastIndex(orig, []byte(`"chain_hash"`))
	broken := append(append(append([]byte{}, orig[:last]...), `"chain_hash" "x",`...), orig[last+len(`"chain_hash":`):]...)
	_, wantErr := document.ParseTree(broken)
	cases := map[string]struct {
		doc  []byte
		want string
	}{
		"empty":             {nil, "the document is empty"},
		"binary":            {[]byte("\x89PNG\r\n\x1a\n"), "not JSON: binary data (byte 0x1a) at byte 6"},
		"latin1":            {[]byte(`{"org_id":"caf` + "\xe9" + `"}`), "not UTF-8: invalid byte 0xe9 at byte 14"},
		"BOM":               {append([]byte("\xef\xbb\xbf"), orig...), "byte order mark"},
		"error in a record": {broken, wantErr.Error()},
		"cut off":           {orig[:len(orig)/2], "not valid JSON"},
		"trailing":          {append(append([]byte{}, orig...), '}'), "after top-level value"},
		"duplicate records": {bytes.Replace(orig, []byte(`"records": [`), []byte(`"records": [], "records": [`), 1), `duplicate key "records"`},
		// The input check runs beside the shape scan: its refusal is the
		// one reported, as if it ran first.
		"binary after a shape problem": {append(bytes.Replace(orig, []byte(`"records": [`), []byte(`"records": 5, "x": [`), 1), '\x01'), "not JSON: binary data (byte 0x01)"},
		"latin1 after a shape problem": {append([]byte(`{"nope": 1, "org_id": "caf`), "\xe9\"}"...), "not UTF-8: invalid byte 0xe9"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := verifyDoc(t, c.doc, verify.Options{Trust: someTrust(t)})
			msg := r.Check(verify.CheckSchema).Message
			if r.Valid || !strings.Contains(msg, c.want) || strings.Contains(msg, "canonical") {
				t.Fatalf("schema check %q, want %q", msg, c.want)
			}
		})
	}
	if !strings.Contains(wantErr.Error(), "line ") {
		t.Fatalf("record error %v has no position", wantErr)
	}
}

// sealed issues a VPEC of the given records under fresh keys.
func sealed(t *testing.T, records []vpec.Record) ([]byte, *signing.Bundle) {
	t.Helper()
	_, priv, err := signing.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	signer, err := signing.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	tsa, err := timestamp.InitAuthority(filepath.Join(t.TempDir(), "tsa"), timestamp.AuthorityOptions{})
	if err != nil {
		t.Fatal(err)
	}
	trust := signing.NewBundle()
	trust.AddKey(signer.PublicKey())
	trust.AddRoot(tsa.Root())
	doc, err := testvectors.SealRecords(names.NewID("run_"), records, signer, tsa)
	if err != nil {
		t.Fatal(err)
	}
	return doc, trust
}

func record(seq int, details map[string]any) vpec.Record {
	return vpec.Record{
		RecordID: fmt.Sprintf("rec_%d", seq), Sequence: int64(seq), Check: "pii", ManifestID: "m1",
		CheckResult: vpec.ResultPass, ProofLevel: vpec.Execution, CommitmentAlgorithm: "sha256",
		CommitmentHash: commitment.String([]byte(fmt.Sprint(seq))), Visibility: vpec.Opaque,
		RecordedAt: vpec.FormatTime(time.Now().Add(-time.Minute)), Details: details,
	}
}

// TestNullInDetails (D3): null at any depth of details is a value, signed
// and verified byte for byte; before, {"x": null} panicked in the decoder
// (reflect Set on a zero Value) and the verifier said "internal error".
func TestNullInDetails(t *testing.T) {
	doc, trust := sealed(t, []vpec.Record{
		record(1, map[string]any{"x": nil}),
		record(2, map[string]any{"a": map[string]any{"b": []any{nil, map[string]any{"c": nil}}, "d": nil}, "e": []any{nil, []any{nil}}}),
		record(3, map[string]any{"empty": map[string]any{}, "s": "", "n": 0.5}),
	})
	if !bytes.Contains(doc, []byte(`"x": null`)) {
		t.Fatalf("sealed document lost the null:\n%s", doc)
	}
	r := verifyDoc(t, doc, verify.Options{Trust: trust})
	if !r.Valid {
		for _, c := range r.Checks {
			t.Logf("%s %s: %s", c.Status, c.Name, c.Message)
		}
		t.Fatalf("verdict %s", r.Verdict)
	}
	// Dropping or changing a null changes the signed bytes.
	for _, edit := range [][2]string{{`"x": null`, `"x": 0`}, {`"d": null`, `"d": false`}} {
		if r := verifyDoc(t, bytes.Replace(doc, []byte(edit[0]), []byte(edit[1]), 1), verify.Options{Trust: trust}); r.Valid {
			t.Errorf("%s -> %s still VALID", edit[0], edit[1])
		}
	}
	// Null where v1 has no nullable field, empty optional members and null
	// arrays are schema errors naming the field (D2, D3).
	for edit, field := range map[[2]string]string{
		{`"details": {`, `"details": null, "x": {`}:               "records[0].details: is null; omit the member instead (at byte",
		{`"gaps": [],`, `"gaps": null,`}:                          "gaps is null, want an array",
		{`"check": "pii",`, `"check": null,`}:                     "records[0].check: is null, want a string",
		{`"n": 0.5`, `"n": 0.50`}:                                 "records[2].details: the number 0.50 is not in its canonical form 0.5",
		{`"n": 0.5`, `"n": 5e-1`}:                                 "records[2].details: the number 5e-1 is not in its canonical form 0.5",
		{`"check": "pii",`, `"check": "pii", "stage_type": "",`}:  "records[0].stage_type: empty; omit the member instead",
		{`"details": {`, `"output_commitment": "", "details": {`}: "records[0].output_commitment: empty; omit the member instead",
	} {
		if !bytes.Contains(doc, []byte(edit[0])) {
			t.Fatalf("no %q in\n%s", edit[0], doc)
		}
		r := verifyDoc(t, bytes.Replace(doc, []byte(edit[0]), []byte(edit[1]), 1), verify.Options{Trust: trust})
		if c := r.Check(verify.CheckSchema); c.Status != verify.Fail || !strings.Contains(strings.Join(c.Details, "\n")+c.Message, field) {
			t.Errorf("%s: schema %s %q %v, want %q", edit[1], c.Status, c.Message, c.Details, field)
		}
	}
	// A big VPEC read in parts verifies like a small one.
	l, err := testvectors.LargeVPEC(t.TempDir(), 3000)
	if err != nil {
		t.Fatal(err)
	}
	if r := verifyDoc(t, l.Doc, verify.Options{Trust: l.Trust}); !r.Valid {
		t.Fatalf("large VPEC: %s", r.Verdict)
	}
}

// TestLargeVPECSignedInParts: a large VPEC as the service writes it (one
// canonical record a line) is read with its records array left
// in the input, the signature checked over the signed bytes in parts
// (signing.VerifyParts); a byte changed in any one record, or in the
// top-level members around the array, fails the signature.
func TestLargeVPECSignedInParts(t *testing.T) {
	l, err := testvectors.LargeVPEC(t.TempDir(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	d, err := vpec.Parse(l.Doc)
	if err != nil {
		t.Fatal(err)
	}
	// Before the records, each record and a comma after it but the last,
	// after the records.
	if want := 2 + 2*1000 - 1; len(d.SignedParts) != want {
		t.Fatalf("the service's VPEC is read with its signed bytes in %d parts; want %d (records left in the input)", len(d.SignedParts), want)
	}
	if r := verifyDoc(t, l.Doc, verify.Options{Trust: l.Trust}); !r.Valid {
		t.Fatalf("large VPEC: %s", r.Verdict)
	}
	// The last hex digit of a record's input commitment: the record stays
	// well formed and canonical, so only the checks can tell.
	at := func(from int) int {
		i := bytes.Index(l.Doc[from:], []byte(`"commitment_hash":"sha256:`))
		if i < 0 {
			t.Fatal("no commitment_hash")
		}
		return from + i + len(`"commitment_hash":"sha256:`) + 63
	}
	first := at(0)
	last := at(bytes.LastIndex(l.Doc, []byte(`"commitment_hash":"sha256:`)))
	for name, i := range map[string]int{"first record": first, "a middle record": at(len(l.Doc) / 2), "last record": last} {
		doc := bytes.Clone(l.Doc)
		doc[i] = "01"[b2i(doc[i] == '0')]
		r := verifyDoc(t, doc, verify.Options{Trust: l.Trust})
		if c := r.Check(verify.CheckSignature); r.Valid || c.Status != verify.Fail || c.Code != "SIGNATURE INVALID" {
			t.Errorf("%s changed: verdict %s, signature %s %s", name, r.Verdict, c.Status, c.Code)
		}
		if c := r.Check(verify.CheckChain); c.Status != verify.Fail {
			t.Errorf("%s changed: chain %s", name, c.Status)
		}
	}
	// Outside the array: a member before the records and one after them in
	// canonical order, in the parts Parse wrote.
	for _, edit := range [][2]string{{`"api_key_id": "pk_live_bench"`, `"api_key_id": "pk_live_bencH"`}, {`"workflow_id": "bench"`, `"workflow_id": "bencH"`}} {
		doc := bytes.Replace(l.Doc, []byte(edit[0]), []byte(edit[1]), 1)
		if bytes.Equal(doc, l.Doc) {
			t.Fatalf("no %s", edit[0])
		}
		if r := verifyDoc(t, doc, verify.Options{Trust: l.Trust}); r.Valid || r.Check(verify.CheckSignature).Status != verify.Fail {
			t.Errorf("%s: verdict %s, signature %s", edit[1], r.Verdict, r.Check(verify.CheckSignature).Status)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestVerifyOwnedSame: with Options.Owned (svc verify's file, read for the
// one call) the report is the one without it, on a large VPEC as the
// service writes it, valid and changed.
func TestVerifyOwnedSame(t *testing.T) {
	l, err := testvectors.LargeVPEC(t.TempDir(), 600)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.LastIndex(l.Doc, []byte(`"commitment_hash":"sha256:`)) + len(`"commitment_hash":"sha256:`)
	changed := bytes.Clone(l.Doc)
	changed[i] = "01"[b2i(changed[i] == '0')]
	for name, doc := range map[string][]byte{"valid": l.Doc, "a record changed": changed, "indented": l.Indented} {
		want, _ := verify.Verify(doc, verify.Options{Trust: l.Trust})
		got, _ := verify.Verify(bytes.Clone(doc), verify.Options{Trust: l.Trust, Owned: true})
		if want == nil || got == nil || want.Valid != (name != "a record changed") {
			t.Fatalf("%s: reports %v and %v", name, want, got)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Owned gives %s, without %s", name, got.Verdict, want.Verdict)
		}
	}
}

// TestVerifySignedPresigned: the signature check begun while the records
// are read is used only when the reader gave it exactly the signed bytes
// (SignedWritten), for the key and signature the check itself uses; with
// another key or signature, or bytes not given, the signed bytes are
// hashed again. A changed record fails it either way.
func TestVerifySignedPresigned(t *testing.T) {
	l, err := testvectors.LargeVPEC(t.TempDir(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	opts := &verify.Options{Trust: l.Trust}
	d, p, err := verify.ParsePresigned(l.Doc, opts)
	if err != nil || !d.SignedWritten() {
		t.Fatalf("the service's VPEC: %v, SignedWritten %v", err, d.SignedWritten())
	}
	pub, err := l.Trust.Key(d.VPEC.SigningKeyID)
	if err != nil {
		t.Fatal(err)
	}
	if err := verify.VerifySigned(d, p, pub, d.Signature); err != nil {
		t.Fatalf("valid signature: %v", err)
	}
	other, _, _ := ed25519.GenerateKey(nil)
	if err := verify.VerifySigned(d, p, other, d.Signature); err == nil {
		t.Fatal("another key: accepted (the verifier begun with the document's key was used)")
	}
	sig := bytes.Clone(d.Signature)
	sig[40] ^= 1
	if err := verify.VerifySigned(d, p, pub, sig); err == nil {
		t.Fatal("another signature: accepted (the verifier begun with the document's signature was used)")
	}
	// Records not in canonical form: nothing given, the parts hashed.
	d2, p2, err := verify.ParsePresigned(l.Indented, opts)
	if err != nil || d2.SignedWritten() {
		t.Fatalf("indented VPEC: %v, SignedWritten %v", err, d2.SignedWritten())
	}
	if err := verify.VerifySigned(d2, p2, pub, d2.Signature); err != nil {
		t.Fatalf("indented VPEC, valid signature: %v", err)
	}
	// One byte of a record's commitment changed: given, and refused.
	i := bytes.LastIndex(l.Doc, []byte(`"commitment_hash":"sha256:`)) + len(`"commitment_hash":"sha256:`)
	bad := bytes.Clone(l.Doc)
	bad[i] = "01"[b2i(bad[i] == '0')]
	d3, p3, err := verify.ParsePresigned(bad, opts)
	if err != nil || !d3.SignedWritten() {
		t.Fatalf("changed VPEC: %v, SignedWritten %v", err, d3.SignedWritten())
	}
	if err := verify.VerifySigned(d3, p3, pub, d3.Signature); err == nil {
		t.Fatal("a changed record: signature accepted")
	}
}
