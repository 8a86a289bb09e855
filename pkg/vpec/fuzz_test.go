package vpec_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/profile"
	"github.com/svc-gov/svc/pkg/signing"
	"github.com/svc-gov/svc/pkg/vpec"
)

// FuzzVerify feeds arbitrary documents to the verifier: it must never
// panic, must always report every named check, and must never call a document
// VALID unless its signature and timestamp checks passed.
func FuzzVerify(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(vectorsDir, "vpec", "*", "*.json"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"records":[{"review":{}}]}`))
	trust, err := signing.LoadBundle(filepath.Join(vectorsDir, "keys", "trust-bundle.pem"))
	if err != nil {
		f.Fatal(err)
	}
	set := profile.NewSet()
	if _, err := set.AddFile(filepath.Join(vectorsDir, "profile", "pii-detection-v1.0.0.json")); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		r := vpec.Verify(doc, vpec.Options{Trust: trust, Profiles: set})
		if len(r.Checks) != len(vpec.Checks) {
			t.Fatalf("%d checks reported", len(r.Checks))
		}
		if r.Valid && (r.Check(vpec.CheckSignature).Status != vpec.Pass || r.Check(vpec.CheckTimestamp).Status != vpec.Pass || r.Check(vpec.CheckChain).Status == vpec.Fail) {
			t.Fatalf("VALID without signature, timestamp and chain checks passing: %+v", r.Checks)
		}
	})
}
