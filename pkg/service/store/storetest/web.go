package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunWeb runs the conformance suite of store.WebStore (the dashboard's
// sessions and listings) on stores open returns; each must implement it.
func RunWeb(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store, w store.WebStore)
	}{
		{"WebSessions", testWebSessions},
		{"WebSessionRevokedKey", testWebSessionRevokedKey},
		{"RunsOfOrg", testRunsOfOrg},
		{"WebListingsOrgIsolation", testWebListingsIsolation},
		{"WebEnvironment", testWebEnvironment},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			w, ok := s.(store.WebStore)
			if !ok {
				t.Fatalf("%T does not implement store.WebStore", s)
			}
			tt.fn(t, s, w)
		})
	}
}

func tokenHash(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

func testWebSessions(t *testing.T, s store.Store, w store.WebStore) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	ws := store.WebSession{IDHash: tokenHash("tok-1"), OrgID: a.org.ID, APIKeyID: a.key.ID, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}
	if err := w.CreateWebSession(ctx, ws); err != nil {
		t.Fatal(err)
	}
	if err := w.CreateWebSession(ctx, ws); !errors.Is(err, store.ErrExists) {
		t.Errorf("CreateWebSession twice: %v, want ErrExists", err)
	}
	if err := w.CreateWebSession(ctx, store.WebSession{IDHash: tokenHash("tok-x"), OrgID: "org_nope", APIKeyID: a.key.ID, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("CreateWebSession of an unknown org: %v, want ErrNotFound", err)
	}
	got, err := w.WebSession(ctx, tokenHash("tok-1"), T0.Add(time.Minute))
	if err != nil || got.OrgID != a.org.ID || got.APIKeyID != a.key.ID || !got.CreatedAt.Equal(T0) || !got.ExpiresAt.Equal(T0.Add(time.Hour)) ||
		got.CreatedAt.Location() != time.UTC || got.ExpiresAt.Location() != time.UTC {
		t.Errorf("WebSession = %+v, %v", got, err)
	}
	if _, err := w.WebSession(ctx, tokenHash("tok-2"), T0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("WebSession of an unknown token: %v, want ErrNotFound", err)
	}
	// Expiry is server-side: at and after ExpiresAt the session is gone.
	for _, at := range []time.Time{T0.Add(time.Hour), T0.Add(2 * time.Hour)} {
		if _, err := w.WebSession(ctx, tokenHash("tok-1"), at); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("WebSession at %v (expires %v): %v, want ErrNotFound", at, ws.ExpiresAt, err)
		}
	}
	ws2 := store.WebSession{IDHash: tokenHash("tok-2"), OrgID: a.org.ID, APIKeyID: a.key.ID, CreatedAt: T0, ExpiresAt: T0.Add(3 * time.Hour)}
	if err := w.CreateWebSession(ctx, ws2); err != nil {
		t.Fatal(err)
	}
	n, err := w.DeleteExpiredWebSessions(ctx, T0.Add(2*time.Hour))
	if err != nil || n != 1 {
		t.Errorf("DeleteExpiredWebSessions = %d, %v; want 1", n, err)
	}
	if err := w.DeleteWebSession(ctx, tokenHash("tok-2")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WebSession(ctx, tokenHash("tok-2"), T0); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("WebSession after DeleteWebSession: %v, want ErrNotFound", err)
	}
	if err := w.DeleteWebSession(ctx, tokenHash("tok-2")); err != nil {
		t.Errorf("DeleteWebSession of an absent session: %v", err)
	}
}

func testWebSessionRevokedKey(t *testing.T, s store.Store, w store.WebStore) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	if err := w.CreateWebSession(ctx, store.WebSession{IDHash: tokenHash("tok"), OrgID: a.org.ID, APIKeyID: a.key.ID, CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RevokeAPIKey(ctx, a.key.ID, T0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.WebSession(ctx, tokenHash("tok"), T0.Add(time.Minute)); !errors.Is(err, store.ErrRevoked) {
		t.Errorf("WebSession after its key was revoked: %v, want ErrRevoked", err)
	}
}

func testRunsOfOrg(t *testing.T, s store.Store, w store.WebStore) {
	ctx := context.Background()
	a := seed(t, s, "acme") // run_acme, opened T0+2s, workflow wf-claims
	for i := 1; i <= 3; i++ {
		r := newRun(a.org.ID, a.key.ID, fmt.Sprintf("run_%d", i))
		r.OpenedAt = T0.Add(time.Duration(10+i) * time.Second)
		if i == 3 {
			r.WorkflowID = "wf-other"
		}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SealRun(ctx, a.org.ID, "run_2", store.VPEC{ID: "vpec_2", IssuedAt: T0.Add(20 * time.Second), Body: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	ids := func(rs []store.Run) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return fmt.Sprint(out)
	}
	for _, c := range []struct {
		f    store.RunFilter
		want string
	}{
		{store.RunFilter{}, "[run_3 run_2 run_1 run_acme]"},
		{store.RunFilter{Limit: 2}, "[run_3 run_2]"},
		{store.RunFilter{WorkflowID: "wf-claims"}, "[run_2 run_1 run_acme]"},
		{store.RunFilter{State: "sealed"}, "[run_2]"},
		{store.RunFilter{State: "open", WorkflowID: "wf-claims"}, "[run_1 run_acme]"},
		{store.RunFilter{WorkflowID: "nope"}, "[]"},
	} {
		got, err := w.RunsOfOrg(ctx, a.org.ID, c.f)
		if err != nil || ids(got) != c.want {
			t.Errorf("RunsOfOrg(%+v) = %s, %v; want %s", c.f, ids(got), err, c.want)
		}
	}
	got, _ := w.RunsOfOrg(ctx, a.org.ID, store.RunFilter{State: "sealed"})
	if len(got) == 1 && (got[0].VPECID != "vpec_2" || !got[0].Sealed) {
		t.Errorf("sealed run = %+v", got[0])
	}
	vs, err := w.VPECsOfOrg(ctx, a.org.ID, 0)
	if err != nil || len(vs) != 1 || vs[0].ID != "vpec_2" || vs[0].RunID != "run_2" || string(vs[0].Body) != "{}" || !vs[0].IssuedAt.Equal(T0.Add(20*time.Second)) {
		t.Errorf("VPECsOfOrg = %+v, %v", vs, err)
	}
}

func testWebListingsIsolation(t *testing.T, s store.Store, w store.WebStore) {
	ctx := context.Background()
	a, b := seed(t, s, "acme"), seed(t, s, "beta")
	for _, f := range []fixture{a, b} {
		if _, err := s.PutManifest(ctx, store.Manifest{OrgID: f.org.ID, ID: "sha256:m-" + f.org.Name, Name: f.org.Name, Body: []byte("{}"), CreatedAt: T0}); err != nil {
			t.Fatal(err)
		}
		if err := s.SealRun(ctx, f.org.ID, f.run.ID, store.VPEC{ID: "vpec-" + f.org.Name, IssuedAt: T0, Body: []byte(f.org.Name)}); err != nil {
			t.Fatal(err)
		}
		if err := s.CreateCalibrationRequest(ctx, store.CalibrationRequest{ID: "cal_req_" + f.org.Name, OrgID: f.org.ID, ModelHash: "sha256:" + f.org.Name,
			GPUClasses: []string{"cpu"}, Status: "queued", EstimatedCompletion: "7d", CreatedAt: T0, UpdatedAt: T0}); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []fixture{a, b} {
		runs, err := w.RunsOfOrg(ctx, f.org.ID, store.RunFilter{})
		if err != nil || len(runs) != 1 || runs[0].OrgID != f.org.ID {
			t.Errorf("RunsOfOrg(%s) = %+v, %v", f.org.Name, runs, err)
		}
		vs, err := w.VPECsOfOrg(ctx, f.org.ID, 0)
		if err != nil || len(vs) != 1 || vs[0].ID != "vpec-"+f.org.Name {
			t.Errorf("VPECsOfOrg(%s) = %+v, %v", f.org.Name, vs, err)
		}
		ms, err := w.ManifestsOfOrg(ctx, f.org.ID)
		if err != nil || len(ms) != 1 || ms[0].ID != "sha256:m-"+f.org.Name || !ms[0].CreatedAt.Equal(T0) {
			t.Errorf("ManifestsOfOrg(%s) = %+v, %v", f.org.Name, ms, err)
		}
		cs, err := w.CalibrationRequestsOfOrg(ctx, f.org.ID)
		if err != nil || len(cs) != 1 || cs[0].ID != "cal_req_"+f.org.Name || len(cs[0].GPUClasses) != 1 {
			t.Errorf("CalibrationRequestsOfOrg(%s) = %+v, %v", f.org.Name, cs, err)
		}
	}
	if runs, err := w.RunsOfOrg(ctx, "org_nope", store.RunFilter{}); err != nil || len(runs) != 0 || runs == nil {
		t.Errorf("RunsOfOrg(unknown org) = %#v, %v; want an empty list", runs, err)
	}
}
