package disclosure

import (
	"encoding/json"
	"testing"
)

// FuzzSplitInput: any input either is refused as malformed or splits into
// disclosures that check against their own commitment.
func FuzzSplitInput(f *testing.F) {
	f.Add([]byte(vectorInput))
	f.Add([]byte(`{"a":1.0,"b":[null,true,{"c":"\u00e9"}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"a":12345678901234567890}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		s, err := SplitInput(in, []string{"a", "b", "document_type"})
		if err != nil {
			return
		}
		if err := CheckSelective(s.Commitment, s.Digests, s.Disclosed, []string{"a", "b", "document_type"}); err != nil {
			t.Fatalf("own split does not check: %v", err)
		}
		// The disclosures survive a JSON round trip (the VPEC's decoder
		// gives encoding/json values).
		b, err := json.Marshal(s.Disclosed)
		if err != nil {
			t.Fatal(err)
		}
		var back []Disclosure
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if err := CheckSelective(s.Commitment, s.Digests, back, []string{"a", "b", "document_type"}); err != nil {
			t.Fatalf("after a round trip: %v", err)
		}
	})
}

// FuzzCheckSelective: untrusted disclosures never panic, and are accepted
// only when they check.
func FuzzCheckSelective(f *testing.F) {
	f.Add(`[{"salt":"AAECAwQFBgcICQoLDA0ODw","field":"document_type","value":"passport"}]`, "sha256:045cfea9d0c60b7ce4de0bd4676938cf25d791460b7fa6f79259d748c94cf708")
	f.Add(`[{"salt":"x","field":"","value":1e400}]`, "sha256:00")
	f.Fuzz(func(t *testing.T, list, digest string) {
		var ds []Disclosure
		if json.Unmarshal([]byte(list), &ds) != nil {
			return
		}
		digests := []string{digest}
		err := CheckSelective(Commitment(digests), digests, ds, []string{"document_type", "a"})
		if err == nil {
			for _, d := range ds {
				if dg, _ := d.Digest(); dg != digest {
					t.Fatalf("accepted a disclosure whose digest %s is not %s", dg, digest)
				}
			}
		}
		_, _ = DecodeBytes(list)
		_, _ = ParseSalt(digest)
	})
}
