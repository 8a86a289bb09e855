package verify

import (
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckSignature: the Ed25519 signature over the signed bytes is by a key
// the trust bundle holds.
const CheckSignature CheckName = "signature"

func (s *state) signature() Check { return checkSignature(s.doc, s.opts.Trust) }

// checkSignature checks d's signature over its signed bytes against trust.
func checkSignature(d *vpec.Document, trust *signing.Bundle) Check {
	c := Check{Name: CheckSignature}
	if trust == nil {
		return fail(c, "TRUST ROOT MISSING", "signature not checked: no trust bundle given", true)
	}
	if err := trust.Verify(d.VPEC.SigningKeyID, d.Signed, d.VPEC.Signature); err != nil {
		if errors.Is(err, signing.ErrUnknownKey) {
			return fail(c, "UNKNOWN SIGNING KEY", fmt.Sprintf("signature by key %s, which the trust bundle does not hold", d.VPEC.SigningKeyID), false)
		}
		return fail(c, "SIGNATURE INVALID", fmt.Sprintf("signature invalid: the signed fields were changed after signing or the signature is not by key %s", d.VPEC.SigningKeyID), false)
	}
	c.Status, c.Message = Pass, fmt.Sprintf("signature valid (Ed25519, key %s)", d.VPEC.SigningKeyID)
	return c
}
