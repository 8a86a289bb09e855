package conditions

import (
	"encoding/hex"
	"testing"
)

// The worked example of docs/FORMATS.md ("Condition commitments").
func TestCommitVector(t *testing.T) {
	var salt Salt
	salt[31] = 1
	for _, tc := range []struct {
		k    Kind
		v    uint32
		want string
	}{
		{Threshold, 731, "0f57f90acf294ea58c2fb0c6eef69f30dd1443080b4a88c0d710bb0da290269b"},
		{Truncation, 120, "1dc8a47fae4458687547241c69ec4b523d6cce167583e8b1fdcdd9f0bf124e5b"},
		{BelowThreshold, 731, "1f346bff7b755a5847b815ab3b48ca911f53d3d7e0ed6042ab9b2cb7c885a007"},
	} {
		got, err := Commit(tc.k, tc.v, salt)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s %d: domain %064x digest %x", tc.k, tc.v, tc.k.Domain(), got)
		if tc.want != "" && hex.EncodeToString(got[:]) != tc.want {
			t.Errorf("%s %d: %x, want %s", tc.k, tc.v, got, tc.want)
		}
	}
	var bad Salt
	for i := range bad {
		bad[i] = 0xff
	}
	if _, err := Commit(Threshold, 1, bad); err != ErrSalt {
		t.Fatalf("non-canonical salt: %v", err)
	}
}
