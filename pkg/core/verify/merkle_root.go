package verify

import (
	"fmt"

	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckMerkle: merkle_root is the RFC 6962 root over the records'
// commitment hashes.
const CheckMerkle CheckName = "merkle_root"

func (s *state) merkleRoot() Check { return checkMerkleRoot(&s.doc.VPEC, s.doc.MerkleRoot()) }

// checkMerkleRoot compares v's merkle_root with got, the root recomputed
// from its records.
func checkMerkleRoot(v *vpec.VPEC, got string) Check {
	c := Check{Name: CheckMerkle}
	if got != v.MerkleRoot {
		return fail(c, "MERKLE ROOT MISMATCH", fmt.Sprintf("merkle_root %s does not match the records' commitments (recomputed %s)", commitment.Short(v.MerkleRoot), commitment.Short(got)), false)
	}
	c.Status, c.Message = Pass, fmt.Sprintf("merkle root matches %d commitments", len(v.Records))
	return c
}
