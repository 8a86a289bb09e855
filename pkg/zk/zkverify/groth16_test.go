package zkverify_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/svc-gov/svc/pkg/zk"
	"github.com/svc-gov/svc/pkg/zk/conditions"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
)

// TestParseProofOneEncoding: a proof without commitments is accepted only
// with the point at infinity as its proof of knowledge; any other point
// (which gnark's verifier never reads, so it would verify) is refused.
func TestParseProofOneEncoding(t *testing.T) {
	k, err := zk.DevSetupCondition(conditions.Truncation)
	if err != nil {
		t.Fatal(err)
	}
	p, err := zk.ProveCondition(k, 3, 5, conditions.Salt{31: 9})
	if err != nil {
		t.Fatal(err)
	}
	good, _ := base64.StdEncoding.DecodeString(p.ZKProof.Proof)
	if len(good) != 164 || !bytes.Equal(good[132:], append([]byte{0x40}, make([]byte, 31)...)) {
		t.Fatalf("a condition proof: %d bytes, proof of knowledge %x", len(good), good[132:])
	}
	other := bytes.Clone(good)
	copy(other[132:], good[:32]) // Ar: a valid compressed G1 point
	for _, c := range []struct {
		name string
		b    []byte
		ok   bool
	}{
		{"point at infinity", good, true},
		{"another point", other, false},
	} {
		_, err := zkverify.ParseProof(c.b)
		if c.ok != (err == nil) || (!c.ok && !errors.Is(err, zkverify.ErrEncoding)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
