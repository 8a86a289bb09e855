package trustroot

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/signing"
)

// The trust root test vectors (testdata/trustroot) are generated here,
// deterministically, for the second implementation and for any verifier:
// roots, KeyFor questions, root updates and malformed documents, each with
// the result docs/KEYS.md requires. TestVectors regenerates them in memory
// and fails if they differ from the committed files; write them with
//
//	SVC_WRITE_TRUSTROOT_VECTORS=1 go test ./pkg/core/trustroot -run TestVectors
const vectorDir = "../../../testdata/trustroot"

// vectorKey derives a test-only key: its Ed25519 seed is
// SHA-256("svc trust-root test vector: " + name).
func vectorKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("svc trust-root test vector: " + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

type vectorQuery struct {
	Root    string `json:"root"`
	Purpose string `json:"purpose"`
	KeyID   string `json:"key_id"`
	At      string `json:"at"`
	Result  string `json:"result"`
	Comment string `json:"comment"`
}

type vectorUpdate struct {
	Trusted string `json:"trusted"`
	Next    string `json:"next"`
	Result  string `json:"result"`
	Comment string `json:"comment"`
}

type vectorMalformed struct {
	File   string `json:"file"`
	Result string `json:"result"`
	Field  string `json:"field"`
}

type vectorFile struct {
	Comment   string            `json:"comment"`
	Roots     map[string]string `json:"roots"`
	KeyFor    []vectorQuery     `json:"key_for"`
	Updates   []vectorUpdate    `json:"updates"`
	Malformed []vectorMalformed `json:"malformed"`
}

// generateVectors returns every file of testdata/trustroot by name.
func generateVectors(t *testing.T) map[string][]byte {
	t.Helper()
	k := func(n string) ed25519.PrivateKey { return vectorKey(n) }
	id := func(n string) string { return idOf(k(n)) }
	tsaKey := k("tsa-root")
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "svc test vector TSA root"},
		NotBefore: t0.Add(-24 * time.Hour), NotAfter: time.Date(2036, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(nil, tmpl, tmpl, tsaKey.Public(), tsaKey)
	must(t, err)
	tsa, err := x509.ParseCertificate(der)
	must(t, err)
	files := map[string][]byte{}
	put := func(name string, r *Root) {
		b, err := r.Marshal()
		must(t, err)
		files[name] = b
	}
	compromise := time.Date(2026, 8, 1, 12, 0, 0, 123456789, time.UTC)

	v1, err := Build(t0, 1,
		NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(k("vpec-a")), From: t0, Comment: "VPEC key A"},
		NewKey{Purpose: PurposeProfile, PublicKey: pubOf(k("profile")), From: t0},
		NewKey{Purpose: PurposeCircuit, PublicKey: pubOf(k("circuit")), From: t0},
		NewKey{Purpose: PurposeTSARoot, Certificate: tsa, From: t0},
		NewKey{Purpose: PurposeLog, PublicKey: pubOf(k("log")), NoteName: "log.svc.example", From: t0},
		NewKey{Purpose: PurposeWitness, PublicKey: pubOf(k("witness")), NoteName: "witness.example", From: t0},
		NewKey{Purpose: PurposeRoot, PublicKey: pubOf(k("root-1")), From: t0},
		NewKey{Purpose: PurposeRoot, PublicKey: pubOf(k("root-2")), From: t0},
	)
	must(t, err)
	must(t, v1.Sign(k("root-1")))
	put("root-v1.json", v1)

	v2, err := Rotate(v1, id("vpec-a"), NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(k("vpec-b")), From: t1, Comment: "VPEC key B"}, t1)
	must(t, err)
	must(t, v2.Sign(k("root-1")))
	put("root-v2.json", v2)

	v3, err := Compromise(v2, id("vpec-b"), compromise, compromise.Add(48*time.Hour).Truncate(time.Second))
	must(t, err)
	must(t, v3.Sign(k("root-2")))
	put("root-v3.json", v3)

	// Version 3 signed only by a root key that version 2 does not list.
	other, err := AddKeys(v2, compromise.Add(48*time.Hour).Truncate(time.Second), NewKey{Purpose: PurposeRoot, PublicKey: pubOf(k("root-3")), From: t1})
	must(t, err)
	must(t, other.Sign(k("root-3")))
	put("root-v3-other-signer.json", other)

	// A legacy PEM bundle: VPEC key A and the TSA root.
	bundle := signing.NewBundle()
	bundle.AddKey(pubOf(k("vpec-a")))
	bundle.AddRoot(tsa)
	files["legacy-bundle.pem"] = bundle.Marshal()

	// Malformed documents, each one change to version 1.
	base := string(files["root-v1.json"])
	vf := &vectorFile{
		Comment: "svc trust root test vectors (docs/KEYS.md). TEST-ONLY keys: each Ed25519 seed is SHA-256(\"svc trust-root test vector: \" + NAME) for NAME in vpec-a, vpec-b, profile, circuit, tsa-root, log, witness, root-1, root-2, root-3. " +
			"key_for: KeyFor(purpose, key_id, at) on the named root, \"ok\" or the refusal's code; updates: VerifyUpdate(trusted, next); malformed: Parse refuses the file with that code, naming that field. " +
			"Regenerate with: SVC_WRITE_TRUSTROOT_VECTORS=1 go test ./pkg/core/trustroot -run TestVectors",
		Roots: map[string]string{"v1": "root-v1.json", "v2": "root-v2.json", "v3": "root-v3.json", "v3-other-signer": "root-v3-other-signer.json", "legacy": "legacy-bundle.pem"},
	}
	malformed := []struct {
		name, old, new, result, field string
	}{
		{"unknown-member", `"issued_at"`, `"expires":"2027-01-01T00:00:00Z","issued_at"`, "unknown-member", "expires"},
		{"duplicate-member", `"version":1`, `"version":1,"version":2`, "duplicate-member", "version"},
		{"missing-member", `"root_threshold":1,`, ``, "missing-member", "root_threshold"},
		{"time-offset", `"issued_at":"2026-01-01T00:00:00Z"`, `"issued_at":"2026-01-01T01:00:00+01:00"`, "bad-time", "issued_at"},
		{"time-trailing-zeros", `"issued_at":"2026-01-01T00:00:00Z"`, `"issued_at":"2026-01-01T00:00:00.000Z"`, "bad-time", "issued_at"},
		{"version-float", `"version":1`, `"version":1.0`, "bad-value", "version"},
		{"key-id-mismatch", `"key_id":"` + id("profile") + `"`, `"key_id":"` + id("circuit") + `"`, "key-id-mismatch", "keys[1].key_id"},
		{"unknown-purpose", `"purpose":"circuit-signing"`, `"purpose":"model-signing"`, "bad-value", "keys[2].purpose"},
		{"signature", `"comment":"VPEC key A"`, `"comment":"VPEC key Z"`, "bad-signature", "signatures[0].signature"},
		{"schema", `"schema":"svc.trust-root/v1"`, `"schema":"svc.trust-root/v2"`, "schema", "schema"},
	}
	for _, m := range malformed {
		if !strings.Contains(base, m.old) {
			t.Fatalf("vector %s: %q not in root-v1.json", m.name, m.old)
		}
		name := "malformed/" + m.name + ".json"
		files[name] = []byte(strings.Replace(base, m.old, m.new, 1))
		vf.Malformed = append(vf.Malformed, vectorMalformed{File: name, Result: m.result, Field: m.field})
	}

	ns := time.Nanosecond
	q := func(root string, p Purpose, keyID string, at time.Time, result, comment string) {
		vf.KeyFor = append(vf.KeyFor, vectorQuery{Root: root, Purpose: string(p), KeyID: keyID, At: FormatTime(at), Result: result, Comment: comment})
	}
	q("v3", PurposeVPEC, id("vpec-a"), t0, "ok", "at valid_from")
	q("v3", PurposeVPEC, id("vpec-a"), t0.Add(-ns), "not-yet-valid", "1 ns before valid_from")
	q("v3", PurposeVPEC, id("vpec-a"), t1.Add(-ns), "ok", "1 ns before valid_until")
	q("v3", PurposeVPEC, id("vpec-a"), t1, "expired", "at valid_until (the rotation)")
	q("v1", PurposeVPEC, id("vpec-a"), t1, "ok", "version 1 had no end for key A")
	q("v3", PurposeVPEC, id("vpec-b"), t1, "ok", "the new key at the rotation")
	q("v3", PurposeVPEC, id("vpec-b"), t1.Add(-ns), "not-yet-valid", "the new key 1 ns before the rotation")
	q("v3", PurposeVPEC, id("vpec-b"), compromise.Add(-ns), "ok", "1 ns before compromised_at")
	q("v3", PurposeVPEC, id("vpec-b"), compromise, "compromised", "at compromised_at")
	q("v2", PurposeVPEC, id("vpec-b"), compromise, "ok", "version 2 did not know of the compromise")
	q("v3", PurposeProfile, id("vpec-a"), t0, "wrong-purpose", "a VPEC key used for a profile")
	q("v3", PurposeVPEC, id("profile"), t0, "wrong-purpose", "the profile key used for a VPEC")
	q("v3", PurposeVPEC, id("root-1"), t0, "wrong-purpose", "a root key used for a VPEC")
	q("v3", PurposeVPEC, id("root-3"), t0, "unknown-key", "a key the root does not list")
	q("v3", PurposeTSARoot, CertificateKeyID(tsa), t1, "ok", "the TSA root certificate's key id")
	q("v3", PurposeLog, id("log"), t1, "ok", "the log's checkpoint key")
	q("v3", PurposeWitness, id("log"), t1, "wrong-purpose", "the log key is not a witness")
	q("legacy", PurposeVPEC, id("vpec-a"), time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), "ok", "a PEM bundle key is valid forever")
	q("legacy", PurposeCircuit, id("vpec-a"), time.Date(2999, 1, 1, 0, 0, 0, 0, time.UTC), "ok", "for VPECs, profiles and circuit entries")
	q("legacy", PurposeLog, id("vpec-a"), t1, "wrong-purpose", "but not for log checkpoints")

	u := func(trusted, next, result, comment string) {
		vf.Updates = append(vf.Updates, vectorUpdate{Trusted: trusted, Next: next, Result: result, Comment: comment})
	}
	u("v1", "v2", "ok", "a rotation signed by root-1")
	u("v2", "v3", "ok", "a compromise signed by root-2")
	u("v2", "v3-other-signer", "not-signed-by-previous", "signed only by root-3, which version 2 does not list")
	u("v2", "v1", "rollback", "an older version")
	u("v1", "v3", "version-gap", "version 2 skipped")
	u("legacy", "v1", "no-root-keys", "a PEM bundle cannot authorise a root")

	b, err := json.MarshalIndent(vf, "", "  ")
	must(t, err)
	files["vectors.json"] = append(b, '\n')
	return files
}

func TestVectors(t *testing.T) {
	files := generateVectors(t)
	if os.Getenv("SVC_WRITE_TRUSTROOT_VECTORS") == "1" {
		for name, b := range files {
			p := filepath.Join(vectorDir, name)
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, b, 0o644))
		}
	}
	for name, b := range files {
		got, err := os.ReadFile(filepath.Join(vectorDir, name))
		if err != nil || !bytes.Equal(got, b) {
			t.Errorf("testdata/trustroot/%s differs from what the generator writes (%v): regenerate (see vectors_test.go) and commit", name, err)
		}
	}
	// Run the committed vectors.
	var vf vectorFile
	data, err := os.ReadFile(filepath.Join(vectorDir, "vectors.json"))
	must(t, err)
	must(t, json.Unmarshal(data, &vf))
	roots := map[string]*Root{}
	for name, file := range vf.Roots {
		b, err := os.ReadFile(filepath.Join(vectorDir, file))
		must(t, err)
		r, err := Load(b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		roots[name] = r
	}
	for _, c := range vf.KeyFor {
		at, err := ParseTime(c.At)
		must(t, err)
		_, err = roots[c.Root].KeyFor(Purpose(c.Purpose), c.KeyID, at)
		got := Code(err)
		if got == "" {
			got = "ok"
		}
		if got != c.Result {
			t.Errorf("KeyFor on %s (%s): %s, want %s (%v)", c.Root, c.Comment, got, c.Result, err)
		}
	}
	for _, c := range vf.Updates {
		_, err := VerifyUpdate(roots[c.Trusted], roots[c.Next])
		got := Code(err)
		if got == "" {
			got = "ok"
		}
		if got != c.Result {
			t.Errorf("VerifyUpdate(%s, %s) (%s): %s, want %s (%v)", c.Trusted, c.Next, c.Comment, got, c.Result, err)
		}
	}
	for _, c := range vf.Malformed {
		b, err := os.ReadFile(filepath.Join(vectorDir, c.File))
		must(t, err)
		_, err = Parse(b)
		var fe *FormatError
		if Code(err) != c.Result || !errors.As(err, &fe) || fe.Field != c.Field {
			t.Errorf("%s: %v, want %s at %s", c.File, err, c.Result, c.Field)
		}
	}
	if len(vf.KeyFor) < 10 || len(vf.Updates) < 5 || len(vf.Malformed) < 8 {
		t.Fatal("vectors.json lost its cases")
	}
}
