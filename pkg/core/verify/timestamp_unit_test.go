package verify

import (
	"path/filepath"
	"testing"

	"github.com/svc-gov/svc/pkg/core/signing"
	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

func TestCheckTimestamp(t *testing.T) {
	trust := vectorTrust(t)
	other, err := timestamp.LoadAuthority(filepath.Join(vectors, "keys", "TEST-ONLY-other-tsa"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		edit     func(d *vpec.Document)
		trust    *signing.Bundle
		want     want
		verified bool // the token verified: its time is kept
	}{
		{"valid", nil, trust, want{Pass, "", false, "timestamp authentic (RFC 3161, "}, true},
		{"no TSA root", nil, keysOnly(t), want{Fail, "TSA ROOT MISSING", true, "holds no timestamp authority root"}, false},
		{"another authority's root", nil, rootsOnly(t, other.Root()), want{Fail, "UNTRUSTED TIMESTAMP AUTHORITY", false, "timestamp not authentic"}, false},
		{"token over other bytes", func(d *vpec.Document) { d.Signature = append([]byte{}, d.Signature...); d.Signature[0] ^= 1 }, trust,
			want{Fail, "TIMESTAMP NOT OVER SIGNATURE", false, "timestamp not authentic"}, false},
		{"not a token", func(d *vpec.Document) { d.Token = []byte{0x30, 0} }, trust, want{Fail, "TIMESTAMP INVALID", false, "timestamp not authentic"}, false},
		{"issued a day before its timestamp", func(d *vpec.Document) { d.VPEC.IssuedAt = "2000-01-01T00:00:00.000Z" }, trust,
			want{Fail, "TIMESTAMP TIME MISMATCH", false, "away from issued_at 2000-01-01T00:00:00.000Z (at most 15m0s allowed)"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := vector(t, "vpec/valid/clean.json")
			if c.edit != nil {
				c.edit(d)
			}
			got, genTime := checkTimestamp(d, c.trust)
			c.want.check(t, CheckTimestamp, got)
			if genTime.IsZero() == c.verified {
				t.Errorf("genTime %v, want verified=%v", genTime, c.verified)
			}
		})
	}
}
