package verify

import (
	"testing"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func TestCheckSignature(t *testing.T) {
	trust := vectorTrust(t)
	cases := []struct {
		name  string
		edit  func(d *vpec.Document)
		trust *signing.Bundle
		want  want
	}{
		{"valid", nil, trust, want{Pass, "", false, "signature valid (Ed25519, key "}},
		{"no trust bundle", nil, nil, want{Fail, "TRUST ROOT MISSING", true, "no trust bundle given"}},
		{"a bundle without the key", nil, rootsOnly(t), want{Fail, "UNKNOWN SIGNING KEY", false, "which the trust bundle does not hold"}},
		{"signed bytes changed", func(d *vpec.Document) { d.SignedParts = append([][]byte{{' '}}, d.SignedParts...) }, trust,
			want{Fail, "SIGNATURE INVALID", false, "changed after signing"}},
		{"another key id", func(d *vpec.Document) { d.VPEC.SigningKeyID = "0123456789abcdef" }, trust,
			want{Fail, "UNKNOWN SIGNING KEY", false, "key 0123456789abcdef"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := vector(t, "vpec/valid/clean.json")
			if c.edit != nil {
				c.edit(d)
			}
			c.want.check(t, CheckSignature, checkSignature(d, c.trust, nil))
		})
	}
}
