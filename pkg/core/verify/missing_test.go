package verify_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/zk"
)

// TestVerdictNamesEveryMissingItem: an UNVERIFIED verdict names every item
// of trust material that was missing, in check order (it named only the
// first: CIRCUIT NOT AVAILABLE while the profile was missing too), and a
// single missing item reads as before.
func TestVerdictNamesEveryMissingItem(t *testing.T) {
	_, trust := loadVectors(t)
	keysOnly := signing.NewBundle()
	for _, id := range trust.KeyIDs() {
		k, err := trust.Key(id)
		if err != nil {
			t.Fatal(err)
		}
		keysOnly.AddKey(k)
	}
	read := func(f string) []byte {
		b, err := os.ReadFile(filepath.Join(vectorsDir, f))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		file    string
		opts    verify.Options
		verdict string
	}{
		{"profile only", "vpec/valid/bounded-inference.json", verify.Options{Trust: trust, Profiles: profile.NewSet()}, "UNVERIFIED — PROFILE NOT AVAILABLE"},
		{"TSA root and profile", "vpec/valid/bounded-inference.json", verify.Options{Trust: keysOnly, Profiles: profile.NewSet()}, "UNVERIFIED — TSA ROOT MISSING, PROFILE NOT AVAILABLE"},
		{"circuits and TSA root", "vpec/valid/proofs.json", verify.Options{Trust: keysOnly, Proofs: &zk.Verifier{Trust: keysOnly, Circuits: zk.NewSet()}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := verify.Verify(read(tc.file), tc.opts)
			if !errors.Is(err, verify.ErrUnverified) {
				t.Fatalf("err = %v, verdict %q; want ErrUnverified", err, r.Verdict)
			}
			want := tc.verdict
			if want == "" { // the zk check's code, then the timestamp's
				want = "UNVERIFIED — " + r.Check(verify.CheckZK).Code + ", TSA ROOT MISSING"
			}
			if r.Verdict != want {
				t.Fatalf("verdict %q, want %q", r.Verdict, want)
			}
		})
	}
}
