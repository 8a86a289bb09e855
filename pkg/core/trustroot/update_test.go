package trustroot

import (
	"errors"
	"testing"
	"time"
)

// TestRotateTwice: two rotations, each checked by VerifyUpdate from the
// previous root; old signatures keep their key, new ones need the new key.
func TestRotateTwice(t *testing.T) {
	f := newFixture(t)
	v1 := roundTrip(t, f.v1(t))
	v2, err := Rotate(v1, idOf(f.vpec), NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec2), From: t1}, t1)
	if err != nil {
		t.Fatal(err)
	}
	if err := v2.Sign(f.root1); err != nil {
		t.Fatal(err)
	}
	v2 = roundTrip(t, v2)
	if _, err := VerifyUpdate(v1, v2); err != nil {
		t.Fatalf("VerifyUpdate(v1, v2): %v", err)
	}
	v3, err := Rotate(v2, idOf(f.vpec2), NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec3), From: t2}, t2)
	if err != nil {
		t.Fatal(err)
	}
	if err := v3.Sign(f.root2); err != nil {
		t.Fatal(err)
	}
	v3 = roundTrip(t, v3)
	if got, err := VerifyChain(v1, v2, v3); err != nil || got.Version != 3 {
		t.Fatalf("VerifyChain: %v", err)
	}
	ns := time.Nanosecond
	cases := []struct {
		key  string
		at   time.Time
		want error
	}{
		{idOf(f.vpec), t1.Add(-ns), nil},
		{idOf(f.vpec), t1, ErrExpired},
		{idOf(f.vpec2), t1, nil},
		{idOf(f.vpec2), t2.Add(-ns), nil},
		{idOf(f.vpec2), t2, ErrExpired},
		{idOf(f.vpec3), t2, nil},
		{idOf(f.vpec3), t2.Add(-ns), ErrNotYetValid},
	}
	for _, c := range cases {
		_, err := v3.KeyFor(PurposeVPEC, c.key, c.at)
		if !errors.Is(err, c.want) && !(c.want == nil && err == nil) {
			t.Errorf("KeyFor(%s, %s) = %v, want %v", c.key, FormatTime(c.at), err, c.want)
		}
	}
	// Other purposes are untouched by a VPEC key rotation.
	if _, err := v3.KeyFor(PurposeProfile, idOf(f.profile), t2); err != nil {
		t.Fatal(err)
	}
}

func TestRotateErrors(t *testing.T) {
	f := newFixture(t)
	v1 := f.v1(t)
	cases := []struct {
		name string
		old  string
		nk   NewKey
	}{
		{"unknown old key", "0123456789abcdef", NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec2), From: t1}},
		{"old key of another purpose", idOf(f.profile), NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec2), From: t1}},
		{"at the old key's start", idOf(f.vpec), NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec2), From: t0}},
		{"new key already there", idOf(f.vpec), NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec), From: t1}},
		{"root key reused for VPECs", idOf(f.vpec), NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.root1), From: t1}},
	}
	for _, c := range cases {
		if _, err := Rotate(v1, c.old, c.nk, t1); err == nil {
			t.Errorf("%s: Rotate succeeded", c.name)
		}
	}
	ended, err := Rotate(v1, idOf(f.vpec), NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec2), From: t1}, t1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Rotate(ended, idOf(f.vpec), NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec3), From: t2}, t2); !errors.Is(err, ErrRotate) {
		t.Errorf("rotating a key that already ended: %v", err)
	}
}

func TestCompromise(t *testing.T) {
	f := newFixture(t)
	// One key trusted for two purposes (as a converted PEM bundle's are).
	v1, err := Build(t0, 1,
		NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec), From: t0},
		NewKey{Purpose: PurposeProfile, PublicKey: pubOf(f.vpec), From: t0},
	)
	if err != nil {
		t.Fatal(err)
	}
	c := t1.Add(12345 * time.Nanosecond)
	v2, err := Compromise(v1, idOf(f.vpec), c, t1)
	if err != nil {
		t.Fatal(err)
	}
	v2 = roundTrip(t, v2)
	for _, p := range []Purpose{PurposeVPEC, PurposeProfile} {
		if _, err := v2.KeyFor(p, idOf(f.vpec), c.Add(-time.Nanosecond)); err != nil {
			t.Errorf("%s before the compromise: %v", p, err)
		}
		if _, err := v2.KeyFor(p, idOf(f.vpec), c); !errors.Is(err, ErrCompromised) {
			t.Errorf("%s at the compromise: %v", p, err)
		}
	}
	// A later report keeps the earlier time; an earlier one moves it.
	v3, _ := Compromise(v2, idOf(f.vpec), t2, t2)
	if got := v3.Key(PurposeVPEC, idOf(f.vpec)).Window.CompromisedAt; !got.Equal(c) {
		t.Errorf("later compromise moved the time to %s", FormatTime(got))
	}
	v4, _ := Compromise(v3, idOf(f.vpec), t0.Add(time.Hour), t2)
	if got := v4.Key(PurposeVPEC, idOf(f.vpec)).Window.CompromisedAt; !got.Equal(t0.Add(time.Hour)) {
		t.Errorf("earlier compromise not recorded: %s", FormatTime(got))
	}
	if _, err := Compromise(v1, "0123456789abcdef", c, t1); !errors.Is(err, ErrRotate) {
		t.Errorf("compromising an unknown key: %v", err)
	}
}

// TestVerifyUpdate: every way an update is refused, by class.
func TestVerifyUpdate(t *testing.T) {
	f := newFixture(t)
	v1 := roundTrip(t, f.v1(t))
	next := func(t *testing.T, change func(*Root)) *Root {
		t.Helper()
		n, err := v1.Next(t1)
		if err != nil {
			t.Fatal(err)
		}
		if change != nil {
			change(n)
		}
		return n
	}
	type tc struct {
		name string
		make func(t *testing.T) *Root
		want error
	}
	cases := []tc{
		{"valid", func(t *testing.T) *Root {
			n := next(t, nil)
			must(t, n.Sign(f.root1))
			return n
		}, nil},
		{"not signed at all", func(t *testing.T) *Root { return next(t, nil) }, ErrNotSignedByPrevious},
		{"signed only by a key the trusted root does not have", func(t *testing.T) *Root {
			n, err := AddKeys(v1, t1, NewKey{Purpose: PurposeRoot, PublicKey: pubOf(f.root3), From: t1})
			must(t, err)
			must(t, n.Sign(f.root3))
			return n
		}, ErrNotSignedByPrevious},
		{"signed by the old keys but threshold of the new root not met", func(t *testing.T) *Root {
			n, err := AddKeys(v1, t1, NewKey{Purpose: PurposeRoot, PublicKey: pubOf(f.root3), From: t1})
			must(t, err)
			n.Threshold = 2
			must(t, n.Sign(f.root1))
			return n
		}, ErrNotSelfSigned},
		{"same version", func(t *testing.T) *Root {
			n := next(t, func(n *Root) { n.Version = 1 })
			must(t, n.Sign(f.root1))
			return n
		}, ErrRollback},
		{"skips a version", func(t *testing.T) *Root {
			n := next(t, func(n *Root) { n.Version = 3 })
			must(t, n.Sign(f.root1))
			return n
		}, ErrVersionGap},
		{"issued before the trusted root", func(t *testing.T) *Root {
			n := next(t, func(n *Root) { n.IssuedAt = t0.Add(-time.Hour) })
			return n
		}, ErrRollback},
		{"removes a key", func(t *testing.T) *Root {
			n := next(t, func(n *Root) { n.Keys = n.Keys[1:] })
			must(t, n.Sign(f.root1))
			return n
		}, ErrHistoryRewritten},
		{"moves a key's start", func(t *testing.T) *Root {
			n := next(t, func(n *Root) { n.Key(PurposeVPEC, idOf(f.vpec)).Window.From = t0.Add(-time.Hour) })
			must(t, n.Sign(f.root1))
			return n
		}, ErrHistoryRewritten},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := roundTrip(t, c.make(t))
			got, err := VerifyUpdate(v1, n)
			if c.want == nil {
				if err != nil || got != n {
					t.Fatalf("VerifyUpdate: %v", err)
				}
				return
			}
			var ue *UpdateError
			if !errors.Is(err, c.want) || !errors.Is(err, ErrUpdate) || !errors.As(err, &ue) || ue.OldVersion != 1 {
				t.Fatalf("VerifyUpdate = %v, want %v", err, c.want)
			}
		})
	}

	// History: a compromise cannot be lifted or postponed, an end cannot
	// move; checked from a v2 that recorded them.
	v2, err := Compromise(v1, idOf(f.profile), t1, t1)
	must(t, err)
	v2, err = Rotate(v2, idOf(f.vpec), NewKey{Purpose: PurposeVPEC, PublicKey: pubOf(f.vpec2), From: t1}, t1)
	must(t, err)
	v2.Version = 2
	must(t, v2.Sign(f.root1))
	v2 = roundTrip(t, v2)
	if _, err := VerifyUpdate(v1, v2); err != nil {
		t.Fatalf("v1 -> v2: %v", err)
	}
	rewrites := []struct {
		name   string
		change func(*Root)
	}{
		{"lifts a compromise", func(n *Root) { n.Key(PurposeProfile, idOf(f.profile)).Window.CompromisedAt = time.Time{} }},
		{"postpones a compromise", func(n *Root) { n.Key(PurposeProfile, idOf(f.profile)).Window.CompromisedAt = t2 }},
		{"extends an ended key", func(n *Root) { n.Key(PurposeVPEC, idOf(f.vpec)).Window.Until = t2 }},
		{"shortens an ended key", func(n *Root) { n.Key(PurposeVPEC, idOf(f.vpec)).Window.Until = t1.Add(-time.Hour) }},
	}
	for _, c := range rewrites {
		t.Run(c.name, func(t *testing.T) {
			n, err := v2.Next(t2)
			must(t, err)
			c.change(n)
			must(t, n.Sign(f.root1))
			n = roundTrip(t, n)
			if _, err := VerifyUpdate(v2, n); !errors.Is(err, ErrHistoryRewritten) {
				t.Fatalf("VerifyUpdate = %v, want ErrHistoryRewritten", err)
			}
		})
	}
	// Moving a compromise earlier is allowed.
	earlier, err := Compromise(v2, idOf(f.profile), t0.Add(time.Hour), t2)
	must(t, err)
	must(t, earlier.Sign(f.root2))
	if _, err := VerifyUpdate(v2, roundTrip(t, earlier)); err != nil {
		t.Fatalf("earlier compromise: %v", err)
	}

	// A compromised root key's signature does not count, whatever
	// issued_at the update claims.
	cv2, err := Compromise(v1, idOf(f.root1), t1, t1)
	must(t, err)
	must(t, cv2.Sign(f.root2))
	cv2 = roundTrip(t, cv2)
	if _, err := VerifyUpdate(v1, cv2); err != nil {
		t.Fatalf("compromise of root1 signed by root2: %v", err)
	}
	backdated, err := cv2.Next(t1)
	must(t, err)
	must(t, backdated.Sign(f.root1))
	if _, err := VerifyUpdate(cv2, roundTrip(t, backdated)); !errors.Is(err, ErrNotSignedByPrevious) {
		t.Fatalf("update signed only by the compromised root key: %v", err)
	}
}

// TestRootKeyRotation: a root key is replaced; the update is signed by the
// old key (for the trusted root) and the new one (for itself).
func TestRootKeyRotation(t *testing.T) {
	f := newFixture(t)
	v1 := roundTrip(t, f.v1(t))
	v2, err := Rotate(v1, idOf(f.root1), NewKey{Purpose: PurposeRoot, PublicKey: pubOf(f.root3), From: t1}, t1)
	must(t, err)
	must(t, v2.Sign(f.root1))
	v2 = roundTrip(t, v2)
	// root1 ends at t1 = v2's issued_at: its signature counts for v1, but
	// v2's own keys valid at t1 are root2 and root3.
	if _, err := VerifyUpdate(v1, v2); !errors.Is(err, ErrNotSelfSigned) {
		t.Fatalf("v2 signed only by the retiring root key: %v", err)
	}
	v2b, err := Rotate(v1, idOf(f.root1), NewKey{Purpose: PurposeRoot, PublicKey: pubOf(f.root3), From: t1}, t1)
	must(t, err)
	must(t, v2b.Sign(f.root1))
	must(t, v2b.Sign(f.root3))
	if _, err := VerifyUpdate(v1, roundTrip(t, v2b)); err != nil {
		t.Fatalf("rotation signed by the old and the new root key: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
