package sigstoretest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/sigstore"
	"github.com/svc-gov/svc/pkg/core/timestamp"
)

// attest issues the in-toto attestation of the clean vector with the test
// service key and the test TSA.
func attest(t *testing.T, f fixture) (bundleJSON, artifact []byte) {
	t.Helper()
	keyPEM, err := os.ReadFile(filepath.Join(vectorsDir, "keys", "TEST-ONLY-service-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	priv, err := signing.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := signing.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	tsa, err := timestamp.LoadAuthority(filepath.Join(vectorsDir, "keys", "TEST-ONLY-tsa"))
	if err != nil {
		t.Fatal(err)
	}
	doc := f.clean(t)
	b, err := sigstore.Attest(context.Background(), doc, signer, tsa)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := sigstore.ExportBundle(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b, ex.Artifact
}

// TestAttestationVerifiesWithSigstoreGo: the in-toto Statement in a DSSE
// envelope verifies with sigstore-go (key, trusted root, signed timestamp,
// no log) against the VPEC signed bytes as artifact, carries the VPEC as
// its predicate, and fails for another artifact or a changed envelope.
func TestAttestationVerifiesWithSigstoreGo(t *testing.T) {
	f := load(t)
	b, artifact := attest(t, f)
	tr := trustedRoot(t, f.trust)
	res, err := sigstoreVerify(t, b, artifact, tr, keysOf(t, f.trust))
	if err != nil {
		t.Fatalf("sigstore-go: %v\n%s", err, b)
	}
	st := res.Statement
	if st == nil || st.PredicateType != sigstore.PredicateTypeVPEC || len(st.Subject) != 1 {
		t.Fatalf("statement %+v", st)
	}
	pred, err := st.Predicate.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var got, want map[string]any
	if err := json.Unmarshal(pred, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(f.clean(t), &want); err != nil {
		t.Fatal(err)
	}
	if got["signature"] != want["signature"] || got["vpec_id"] != want["vpec_id"] {
		t.Errorf("predicate is not the VPEC: %v", got["vpec_id"])
	}

	other := editBundle(t, b, func(m map[string]any) {
		env := member(m, "dsseEnvelope")
		payload, _ := base64.StdEncoding.DecodeString(env["payload"].(string))
		env["payload"] = base64.StdEncoding.EncodeToString(bytes.Replace(payload, []byte(`"is_clean":true`), []byte(`"is_clean":false`), 1))
	})
	cases := map[string]struct{ bundle, artifact []byte }{
		"another artifact":  {b, append(append([]byte{}, artifact...), ' ')},
		"predicate changed": {other, artifact},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := sigstoreVerify(t, c.bundle, c.artifact, tr, keysOf(t, f.trust)); err == nil {
				t.Fatal("sigstore-go verified a tampered attestation")
			}
		})
	}
}

func TestAttestRefusesAnotherSigner(t *testing.T) {
	f := load(t)
	keyPEM, err := os.ReadFile(filepath.Join(vectorsDir, "keys", "TEST-ONLY-other-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	priv, err := signing.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := signing.NewSigner(priv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sigstore.Attest(context.Background(), f.clean(t), signer, nil); !errors.Is(err, sigstore.ErrUnknownKey) {
		t.Fatalf("err = %v, want ErrUnknownKey", err)
	}
}

// TestAttestationWithCosign: cosign verify-blob-attestation verifies the
// attestation offline against the VPEC signed bytes, with the predicate
// type, and refuses another artifact and another predicate type. It runs
// when cosign is on PATH (make interop puts it there).
func TestAttestationWithCosign(t *testing.T) {
	cosign, err := exec.LookPath("cosign")
	if err != nil {
		t.Skip("cosign is not on PATH: make interop installs it (scripts/install-cosign.sh)")
	}
	f := load(t)
	b, artifact := attest(t, f)
	dir := t.TempDir()
	pub, err := sigstore.PublicKeyPEM(f.trust, "992625da2c2d48bd")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"att.sigstore.json": b, "vpec.signed.json": artifact, "service.pub": pub,
		"trusted_root.json": trustedRoot(t, f.trust), "other.json": append(append([]byte{}, artifact...), ' '),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(artifact, predicateType string) error {
		cmd := exec.Command(cosign, "verify-blob-attestation", "--bundle", "att.sigstore.json", "--key", "service.pub",
			"--trusted-root", "trusted_root.json", "--use-signed-timestamps", "--insecure-ignore-tlog",
			"--type", predicateType, artifact)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir)
		out, err := cmd.CombinedOutput()
		t.Logf("cosign %s --type %s: %v\n%s", artifact, predicateType, err, out)
		return err
	}
	if err := run("vpec.signed.json", sigstore.PredicateTypeVPEC); err != nil {
		t.Fatal("cosign refused the attestation")
	}
	if run("other.json", sigstore.PredicateTypeVPEC) == nil {
		t.Error("cosign verified the attestation for another artifact")
	}
	if run("vpec.signed.json", "https://slsa.dev/provenance/v1") == nil {
		t.Error("cosign verified the attestation as another predicate type")
	}
}
