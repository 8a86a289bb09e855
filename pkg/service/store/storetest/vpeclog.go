package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunVPECLog tests the transparency log indexes of issued VPECs
// (store.VPECLog).
func RunVPECLog(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"SetAndRead", testVPECLogSet},
		{"NotLogged", testVPECsNotLogged},
	})
}

// testVPECLogSet: a stored VPEC has no index; the first index set is read
// back by VPEC, VPECInfo and VPECsOfOrg, and stays (a second set is a
// no-op); another organisation's or an unknown VPEC is ErrNotFound.
func testVPECLogSet(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := seed(t, s, "acme"), seed(t, s, "beta")
	if err := s.SealRun(ctx, a.org.ID, a.run.ID, store.VPEC{ID: "vpec_a", IssuedAt: T0, Body: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	if v, err := s.VPEC(ctx, a.org.ID, "vpec_a"); err != nil || v.Logged || v.LogIndex != 0 {
		t.Fatalf("VPEC before SetVPECLogIndex = logged %v index %d, %v; want not logged", v.Logged, v.LogIndex, err)
	}
	const big = uint64(1) << 40 // past 32 bits: the column holds 64
	for _, idx := range []uint64{big, 7} {
		if err := s.SetVPECLogIndex(ctx, a.org.ID, "vpec_a", idx); err != nil {
			t.Fatalf("SetVPECLogIndex(%d): %v", idx, err)
		}
	}
	v, err := s.VPEC(ctx, a.org.ID, "vpec_a")
	if err != nil || !v.Logged || v.LogIndex != big {
		t.Errorf("VPEC = logged %v index %d, %v; want the first index %d", v.Logged, v.LogIndex, err, big)
	}
	info, err := s.VPECInfo(ctx, a.org.ID, "vpec_a")
	if err != nil || !info.Logged || info.LogIndex != big {
		t.Errorf("VPECInfo = logged %v index %d, %v; want %d", info.Logged, info.LogIndex, err, big)
	}
	if vs, err := s.VPECsOfOrg(ctx, a.org.ID, 0); err != nil || len(vs) != 1 || !vs[0].Logged || vs[0].LogIndex != big {
		t.Errorf("VPECsOfOrg = %+v, %v; want the index %d", vs, err, big)
	}
	for _, c := range []struct{ org, vpec string }{{b.org.ID, "vpec_a"}, {a.org.ID, "vpec_nope"}} {
		if err := s.SetVPECLogIndex(ctx, c.org, c.vpec, 1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("SetVPECLogIndex(%s, %s): %v, want ErrNotFound", c.org, c.vpec, err)
		}
	}
}

// testVPECsNotLogged: the VPECs of every organisation without an index,
// oldest first, bounded by limit; a VPEC leaves the list once its index
// is set.
func testVPECsNotLogged(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := seed(t, s, "acme"), seed(t, s, "beta")
	second := newRun(a.org.ID, a.key.ID, "run_acme_2")
	if err := s.CreateRun(ctx, second); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f   fixture
		run string
		v   store.VPEC
	}{
		{a, a.run.ID, store.VPEC{ID: "vpec_a1", IssuedAt: T0.Add(2 * time.Second), Body: []byte("1")}},
		{a, second.ID, store.VPEC{ID: "vpec_a2", IssuedAt: T0.Add(time.Second), Body: []byte("2")}},
		{b, b.run.ID, store.VPEC{ID: "vpec_b", IssuedAt: T0, Body: []byte("3")}},
	} {
		if err := s.SealRun(ctx, c.f.org.ID, c.run, c.v); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(limit int) []string {
		t.Helper()
		vs, err := s.VPECsNotLogged(ctx, limit)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, v := range vs {
			if v.Logged || len(v.Body) == 0 {
				t.Errorf("VPECsNotLogged: %s logged %v, body %q", v.ID, v.Logged, v.Body)
			}
			out = append(out, v.ID)
		}
		return out
	}
	if got := ids(0); !slices.Equal(got, []string{"vpec_b", "vpec_a2", "vpec_a1"}) {
		t.Errorf("VPECsNotLogged = %v; want oldest first across organisations", got)
	}
	if got := ids(1); !slices.Equal(got, []string{"vpec_b"}) {
		t.Errorf("VPECsNotLogged(1) = %v", got)
	}
	if err := s.SetVPECLogIndex(ctx, a.org.ID, "vpec_a2", 0); err != nil {
		t.Fatal(err)
	}
	if got := ids(0); !slices.Equal(got, []string{"vpec_b", "vpec_a1"}) {
		t.Errorf("VPECsNotLogged after setting vpec_a2's index 0 = %v", got)
	}
}
