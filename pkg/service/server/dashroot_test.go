package server_test

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/core/timestamp"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/vpec"
	"github.com/svc-gov/svc/pkg/service/keys"
	"github.com/svc-gov/svc/pkg/service/server"
)

// TestDashboardVerifiesWithTrustRoot: the dashboard's VPEC page verifies
// against the service's trust root in use, not the bundle: a VPEC is
// VALID under version 1, its key's window named; once a rotation
// that ends its key at the VPEC's genTime is reloaded (as on SIGHUP), the
// same page says INVALID — KEY EXPIRED and names the key.
func TestDashboardVerifiesWithTrustRoot(t *testing.T) {
	ctx := context.Background()
	h := newHotEnv(t)
	e, srv := h.start(t, h.mat.Keys(h.first), nil)
	code, doc := e.closeOne(h.apiKey)
	var v vpec.VPEC
	if err := json.Unmarshal(doc, &v); code != 200 || err != nil {
		t.Fatalf("close: %d %s", code, doc)
	}
	c := (&hostile{t: t, url: e.url}).signIn(h.apiKey)
	page := func() string {
		t.Helper()
		resp, err := c.Get(e.url + "/dashboard/vpecs/" + v.VPECID)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("VPEC page: %d %s", resp.StatusCode, b)
		}
		return string(b)
	}
	// The signature check names the key's purpose and window only when
	// it verified against a trust root (a bundle has neither).
	if p := page(); !strings.Contains(p, `<p id="verdict" class="verdict valid">VALID</p>`) || !strings.Contains(p, "vpec-signing, signed at") {
		t.Fatalf("VPEC page under version 1 is not VALID against the trust root:\n%s", p)
	}
	gt := genTimeOf(t, v.TimestampRFC3161)
	if _, err := server.RotateKey(ctx, h.data, server.Rotation{Purpose: trustroot.PurposeVPEC, NewKey: h.next[0], At: gt}, "", keys.Options{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, changed, err := srv.ReloadTrustRoot(h.data); err != nil || !changed {
		t.Fatalf("reload: %v %v", changed, err)
	}
	p := page()
	for _, want := range []string{"INVALID — KEY EXPIRED", "key " + v.SigningKeyID + " (vpec-signing)", "at or after its end"} {
		if !strings.Contains(p, want) {
			t.Errorf("VPEC page after the key's end lacks %q", want)
		}
	}
}

// TestEnsureTSARootsInRoot: the root certificate of an external authority
// (svc serve --tsa-root) that the trust root lacks is added in the next
// version, valid from its NotBefore, once; the built-in TSA's root is
// already there and adds nothing.
func TestEnsureTSARootsInRoot(t *testing.T) {
	ctx := context.Background()
	h := newHotEnv(t)
	ext, err := timestamp.LoadOrInitAuthority(filepath.Join(t.TempDir(), "ext"), timestamp.AuthorityOptions{Name: "external TEST TSA"})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		wrote   bool
		version int64
	}{{true, h.first.Version + 1}, {false, h.first.Version + 1}} {
		roots := append(h.mat.Trust.Roots(), ext.Root())
		r, _, wrote, err := server.EnsureTSARootsInRoot(ctx, h.data, roots, "", keys.Options{}, time.Now())
		if err != nil || wrote != c.wrote || r.Version != c.version {
			t.Fatalf("call %d: version %d wrote %v %v, want version %d wrote %v", i, r.Version, wrote, err, c.version, c.wrote)
		}
		k, err := r.KeyFor(trustroot.PurposeTSARoot, trustroot.CertificateKeyID(ext.Root()), ext.Root().NotBefore)
		if err != nil || !k.Window.From.Equal(ext.Root().NotBefore) {
			t.Fatalf("call %d: the external root in the trust root: %v %v", i, k, err)
		}
	}
}

// TestAttestationAfterHotRotation: after a hot rotation the attestation
// of each VPEC is signed by the key that signed it, the new key's VPEC
// and the old key's alike (an attestation must be signed by its VPEC's
// key: the server's first configured key alone signs only the old ones).
func TestAttestationAfterHotRotation(t *testing.T) {
	ctx := context.Background()
	h := newHotEnv(t)
	e, srv := h.start(t, h.mat.Keys(h.first), nil)
	idOf := func(doc []byte) string {
		var v vpec.VPEC
		if err := json.Unmarshal(doc, &v); err != nil {
			t.Fatal(err)
		}
		return v.VPECID
	}
	_, before := e.closeOne(h.apiKey)
	at := time.Now().Add(time.Second).Truncate(time.Second)
	if _, err := server.RotateKey(ctx, h.data, server.Rotation{Purpose: trustroot.PurposeVPEC, NewKey: h.next[0], At: at}, "", keys.Options{}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, _, err := srv.ReloadTrustRoot(h.data); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(at))
	code, after := e.closeOne(h.apiKey)
	if code != 200 {
		t.Fatalf("close after T: %d %s", code, after)
	}
	for _, doc := range [][]byte{before, after} {
		if code, body := e.do("GET", "/api/v1/vpecs/"+idOf(doc)+"/attestation", h.apiKey, nil, nil); code != 200 {
			t.Errorf("attestation of %s: %d %.300s", idOf(doc), code, body)
		}
	}
}
