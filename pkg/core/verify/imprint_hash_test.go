package verify_test

import (
	"crypto"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// TestTimestampImprintHashes re-stamps a sealed VPEC's signature with
// SHA-384, SHA-512 and SHA-1 imprints over the same 64 bytes: SHA-384 and
// SHA-512 verify (FORMATS.md, "Signature and timestamp"), SHA-1 is
// TIMESTAMP NOT OVER SIGNATURE.
func TestTimestampImprintHashes(t *testing.T) {
	f := newFixture(t)
	doc := f.issue(t, records(2, vpec.Execution), nil)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	var sigStr string
	if err := json.Unmarshal(m["signature"], &sigStr); err != nil {
		t.Fatal(err)
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(sigStr, "Ed25519:"))
	if err != nil || len(sig) != 64 {
		t.Fatalf("signature: %v", err)
	}
	for _, h := range []crypto.Hash{crypto.SHA384, crypto.SHA512} {
		d := h.New()
		d.Write(sig)
		req, err := timestamp.NewRequestHash(h, d.Sum(nil), nil, true)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := f.tsa.Respond(req)
		if err != nil {
			t.Fatal(err)
		}
		m["timestamp_rfc3161"], _ = json.Marshal(base64.StdEncoding.EncodeToString(resp))
		restamped, _ := json.Marshal(m)
		if r := verifyDoc(t, restamped, verify.Options{Trust: f.trust}); !r.Valid {
			for _, c := range r.Checks {
				t.Logf("%s %s %s", c.Status, c.Name, c.Message)
			}
			t.Fatalf("%v imprint: verdict %s", h, r.Verdict)
		}
	}
}
