package storetest

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunVPECs tests the VPEC reads (store.VPECReader) of VPECs stored by
// SealRun.
func RunVPECs(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"VPECInfo", testVPECInfo},
		{"VPECsOfOrg", testVPECsOfOrg},
	})
}

func vpecEqual(a, b store.VPEC) bool {
	return a.ID == b.ID && a.RunID == b.RunID && a.OrgID == b.OrgID && utcEqual(a.IssuedAt, b.IssuedAt) &&
		bytes.Equal(a.Body, b.Body)
}

// testVPECInfo: VPECInfo gives a VPEC's size and its run's environment,
// scoped to the organisation like VPEC.
func testVPECInfo(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	sb := sandboxKey(t, s, a)
	run := newRun(a.org.ID, sb.ID, "run_sb")
	run.Environment = "sandbox"
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("v"), 70000) // past a page: the size must not need the body
	for _, c := range []struct {
		run, vpec, env string
		body           []byte
	}{{a.run.ID, "vpec_prod", "production", []byte(`{"v":1}`)}, {run.ID, "vpec_sb", "sandbox", body}} {
		if err := s.SealRun(ctx, a.org.ID, c.run, store.VPEC{ID: c.vpec, RunID: c.run, OrgID: a.org.ID, IssuedAt: T0.Add(time.Hour), Body: c.body}); err != nil {
			t.Fatal(err)
		}
		got, err := s.VPECInfo(ctx, a.org.ID, c.vpec)
		if err != nil || got.ID != c.vpec || got.RunID != c.run || got.OrgID != a.org.ID || got.Environment != c.env ||
			got.Size != int64(len(c.body)) || !got.IssuedAt.Equal(T0.Add(time.Hour)) || got.IssuedAt.Location() != time.UTC {
			t.Errorf("VPECInfo(%s) = %+v, %v; want environment %s, size %d", c.vpec, got, err, c.env, len(c.body))
		}
	}
	for _, c := range []struct{ org, vpec string }{{b.org.ID, "vpec_prod"}, {a.org.ID, "vpec_nope"}} {
		if _, err := s.VPECInfo(ctx, c.org, c.vpec); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("VPECInfo(%s, %s): %v, want ErrNotFound", c.org, c.vpec, err)
		}
	}
}

// testVPECsOfOrg: VPECsOfOrg lists the organisation's VPECs only, most
// recent first, bodies and times as stored.
func testVPECsOfOrg(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := seed(t, s, "acme"), seed(t, s, "beta")
	second := newRun(a.org.ID, a.key.ID, "run_acme_2")
	if err := s.CreateRun(ctx, second); err != nil {
		t.Fatal(err)
	}
	seals := []struct {
		f   fixture
		run string
		v   store.VPEC
	}{
		{a, a.run.ID, store.VPEC{ID: "vpec-acme-1", IssuedAt: T0, Body: []byte("acme-1")}},
		{a, second.ID, store.VPEC{ID: "vpec-acme-2", IssuedAt: T0.Add(20 * time.Second), Body: []byte("{}")}},
		{b, b.run.ID, store.VPEC{ID: "vpec-beta", IssuedAt: T0, Body: []byte("beta")}},
	}
	for _, c := range seals {
		if err := s.SealRun(ctx, c.f.org.ID, c.run, c.v); err != nil {
			t.Fatal(err)
		}
	}
	vs, err := s.VPECsOfOrg(ctx, a.org.ID, 0)
	if err != nil || len(vs) != 2 || vs[0].ID != "vpec-acme-2" || vs[0].RunID != second.ID || string(vs[0].Body) != "{}" ||
		!vs[0].IssuedAt.Equal(T0.Add(20*time.Second)) || vs[0].IssuedAt.Location() != time.UTC || vs[1].ID != "vpec-acme-1" {
		t.Errorf("VPECsOfOrg(acme) = %+v, %v", vs, err)
	}
	if vs, err := s.VPECsOfOrg(ctx, a.org.ID, 1); err != nil || len(vs) != 1 || vs[0].ID != "vpec-acme-2" {
		t.Errorf("VPECsOfOrg(acme, 1) = %+v, %v", vs, err)
	}
	if vs, err := s.VPECsOfOrg(ctx, b.org.ID, 0); err != nil || len(vs) != 1 || vs[0].ID != "vpec-beta" {
		t.Errorf("VPECsOfOrg(beta) = %+v, %v", vs, err)
	}
	if vs, err := s.VPECsOfOrg(ctx, "org_nope", 0); err != nil || len(vs) != 0 || vs == nil {
		t.Errorf("VPECsOfOrg(unknown org) = %#v, %v; want an empty list", vs, err)
	}
}
