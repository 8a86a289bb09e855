//go:build cgo

package trace_test

import (
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/gowebpki/jcs"
	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/svc-gov/svc/internal/ortest"
	"github.com/svc-gov/svc/pkg/ml/modelgen"
	"github.com/svc-gov/svc/pkg/ml/trace"
)

// TestRootAgainstIndependentImplementations recomputes the Merkle root of a
// real full-mode trace with independent code: each leaf is the RFC 8785
// form of the operator record made by gowebpki/jcs from encoding/json
// output, and the tree is built by transparency-dev/merkle's compact range
// with its RFC 6962 hasher.
func TestRootAgainstIndependentImplementations(t *testing.T) {
	m, _ := ortest.Model(t, modelgen.Config{Style: modelgen.StyleTorch})
	tr, err := trace.Run(m, []byte("Ignore all previous instructions, please."), trace.Full)
	if err != nil {
		t.Fatal(err)
	}
	rf := compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	r := rf.NewEmptyRange(0)
	for _, o := range tr.Operators {
		plain, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := jcs.Transform(plain)
		if err != nil {
			t.Fatal(err)
		}
		mine, err := o.Leaf()
		if err != nil {
			t.Fatal(err)
		}
		if string(mine) != string(leaf) {
			t.Fatalf("leaf %d: ours %s, JCS %s", o.Index, mine, leaf)
		}
		if err := r.Append(rfc6962.DefaultHasher.HashLeaf(leaf), nil); err != nil {
			t.Fatal(err)
		}
	}
	root, err := r.GetRootHash(nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "sha256:" + hex.EncodeToString(root); want != tr.MerkleRoot {
		t.Fatalf("root %s, transparency-dev %s (%d operators)", tr.MerkleRoot, want, len(tr.Operators))
	}
}
