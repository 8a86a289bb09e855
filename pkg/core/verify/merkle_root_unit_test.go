package verify

import (
	"testing"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func TestCheckMerkleRoot(t *testing.T) {
	cases := []struct {
		name string
		edit func(v *vpec.VPEC)
		want want
	}{
		{"matches", nil, want{Pass, "", false, "merkle root matches 3 commitments"}},
		{"a commitment changed", func(v *vpec.VPEC) { v.Records[1].CommitmentHash = commitment.String([]byte("other")) },
			want{Fail, "MERKLE ROOT MISMATCH", false, "does not match the records' commitments (recomputed sha256:"}},
		{"records reordered", func(v *vpec.VPEC) { v.Records[0], v.Records[2] = v.Records[2], v.Records[0] },
			want{Fail, "MERKLE ROOT MISMATCH", false, "merkle_root sha256:"}},
		{"root of no records", func(v *vpec.VPEC) { v.Records = nil }, want{Fail, "MERKLE ROOT MISMATCH", false, ""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, _ := built(t, 3)
			if c.edit != nil {
				c.edit(v)
			}
			c.want.check(t, CheckMerkle, checkMerkleRoot(v, vpec.MerkleRoot(v.Records)))
		})
	}
}
