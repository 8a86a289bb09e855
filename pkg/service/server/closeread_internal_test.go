package server

import (
	"bytes"
	"testing"

	"github.com/svc-gov/svc/pkg/core/document"
)

// chainInput cuts what a canonical record's chain hash covers out of its
// stored bytes, and refuses (nil) any form the cut cannot vouch for.
func TestChainInput(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		cut        bool // a cut is expected; else nil
	}{
		{"middle", `{"a":1,"chain_hash":"sha256:ab","z":[1,{"chain_hash":"x"}]}`, true},
		{"first", `{"chain_hash":"sha256:ab","check":"pii"}`, true},
		{"last", `{"check":"pii","chain_hash":"sha256:ab"}`, true},
		{"only", `{"chain_hash":"sha256:ab"}`, true},
		{"absent", `{"check":"pii","details":{"chain_hash":"x"}}`, true},
		{"nested only", `{"a":{"chain_hash":"x"}}`, true},
		{"not a string", `{"a":1,"chain_hash":{"b":2}}`, false},
		{"space before the value", `{"a":1,"chain_hash": "sha256:ab"}`, false},
		{"escaped name", `{"a":1,"chain\u005fhash":"sha256:ab"}`, false},
		{"not an object", `["chain_hash"]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, err := document.ParseTree([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			got := chainInput([]byte(tc.body), tree)
			if !tc.cut {
				if got != nil {
					t.Fatalf("cut %s, want none", got)
				}
				return
			}
			if want := tree.Canonical("chain_hash"); !bytes.Equal(got, want) {
				t.Fatalf("cut %s, canonical form without chain_hash is %s", got, want)
			}
		})
	}
}

// A body in another key order verifies over the cut only by chance: the
// cut is then not the canonical form, and issue's fallback must find
// that out (TestCloseNonCanonicalStoredRecord covers the close).
func TestChainInputNotCanonical(t *testing.T) {
	body := []byte(`{"z":1,"chain_hash":"sha256:ab","a":2}`)
	tree, err := document.ParseTree(body)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := chainInput(body, tree), tree.Canonical("chain_hash"); bytes.Equal(got, want) {
		t.Fatalf("cut %s equals the canonical form %s", got, want)
	}
}

func FuzzChainInput(f *testing.F) {
	f.Add([]byte(`{"a":1,"chain_hash":"sha256:ab","z":2}`))
	f.Add([]byte(`{"chain_hash":"x"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		tree, err := document.ParseTree(body)
		if err != nil {
			return
		}
		got := chainInput(body, tree)
		if got == nil {
			return
		}
		// Over a canonical body the cut is exactly the canonical form.
		if canon := tree.Canonical(); bytes.Equal(canon, body) {
			if want := tree.Canonical("chain_hash"); !bytes.Equal(got, want) {
				t.Fatalf("cut %q of canonical %q, want %q", got, body, want)
			}
		}
	})
}
