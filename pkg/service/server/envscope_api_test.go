package server_test

import (
	"bytes"
	"testing"
)

// TestVPECRoutesScopedToEnvironment: GET /api/v1/vpecs/{id} and its
// attestation answer a key only for VPECs of its own environment's runs
// (403 environment_mismatch, as the run routes do), both ways (found: a
// pk_sb_ key read production VPECs and had them attested).
func TestVPECRoutesScopedToEnvironment(t *testing.T) {
	h := newHostile(t, nil, nil)
	_, prodDoc, prodID := h.closed(h.live, 2)
	_, sbDoc, sbID := h.closed(h.sb, 2)
	for _, c := range []struct {
		name, key, id string
		doc           []byte
		want          int
	}{
		{"sandbox key, production VPEC", h.sb, prodID, prodDoc, 403},
		{"production key, sandbox VPEC", h.live, sbID, sbDoc, 403},
		{"production key, production VPEC", h.live, prodID, prodDoc, 200},
		{"sandbox key, sandbox VPEC", h.sb, sbID, sbDoc, 200},
	} {
		for _, suffix := range []string{"", "/attestation"} {
			resp, body := h.do("GET", "/api/v1/vpecs/"+c.id+suffix, c.key, nil, nil)
			if resp.StatusCode != c.want {
				t.Errorf("%s: GET %s: %s %.200s, want %d", c.name, suffix, resp.Status, body, c.want)
				continue
			}
			switch {
			case c.want == 403 && errCode(body) != "environment_mismatch":
				t.Errorf("%s: GET %s: code %q, want environment_mismatch", c.name, suffix, errCode(body))
			case c.want == 403 && (bytes.Contains(body, c.doc[:64]) || bytes.Contains(body, []byte("records"))):
				t.Errorf("%s: GET %s: the refusal carries the VPEC", c.name, suffix)
			case c.want == 200 && suffix == "" && !bytes.Equal(body, c.doc):
				t.Errorf("%s: GET VPEC: not the VPEC as issued", c.name)
			}
		}
	}
}
