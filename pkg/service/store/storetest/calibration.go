package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-gov/svc/pkg/service/store"
)

// RunCalibrations tests the calibration requests role
// (store.CalibrationStore).
func RunCalibrations(t *testing.T, open func(t *testing.T) store.Store) {
	run(t, open, []test[store.Store]{
		{"CalibrationRequests", testCalibrationRequests},
		{"CalibrationRequestsByModel", testCalibrationRequestsByModel},
		{"UpdateCalibrationRequest", testUpdateCalibrationRequest},
		{"CalibrationRequestsOfOrg", testCalibrationRequestsOfOrg},
	})
}

// calEqual compares two requests; GPUClasses must be equal element by
// element and never nil (a request stored with nil classes reads back with
// an empty list).
func calEqual(a, b store.CalibrationRequest) bool {
	return a.ID == b.ID && a.OrgID == b.OrgID && a.ModelHash == b.ModelHash && a.ModelDescription == b.ModelDescription &&
		a.HubModelID == b.HubModelID && a.GPUClasses != nil && slices.Equal(a.GPUClasses, b.GPUClasses) &&
		a.NotifyEmail == b.NotifyEmail && a.Status == b.Status && a.EstimatedCompletion == b.EstimatedCompletion &&
		a.ProfileID == b.ProfileID && a.Note == b.Note && utcEqual(a.CreatedAt, b.CreatedAt) && utcEqual(a.UpdatedAt, b.UpdatedAt)
}

// newCal returns a queued calibration request of org for model.
func newCal(orgID, id, model string, created time.Time) store.CalibrationRequest {
	return store.CalibrationRequest{
		ID: id, OrgID: orgID, ModelHash: model, ModelDescription: "a BERT PII tagger", HubModelID: "acme/pii-bert",
		GPUClasses: []string{"cpu", "a100"}, NotifyEmail: "ml@acme.test", Status: "queued", EstimatedCompletion: "7d",
		CreatedAt: created, UpdatedAt: created,
	}
}

func ptr[T any](v T) *T { return &v }

func testCalibrationRequests(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	const model = "sha256:" + "ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12"
	base := newCal(a.org.ID, "cal_req_1", model, T0)
	with := func(id string, classes []string) store.CalibrationRequest {
		c := newCal(a.org.ID, id, model, T0)
		c.GPUClasses = classes
		return c
	}
	creates := []struct {
		name string
		c    store.CalibrationRequest
		want error
	}{
		{"new", base, nil},
		{"id taken", base, store.ErrExists},
		{"id taken by another org", newCal(b.org.ID, base.ID, model, T0), store.ErrExists},
		{"unknown org", newCal("org_nobody", "cal_req_nobody", model, T0), store.ErrNotFound},
		{"nil classes", with("cal_req_nil", nil), nil},
		{"empty classes", with("cal_req_empty", []string{}), nil},
		{"awkward classes", with("cal_req_odd", []string{"a,b", "", `"q"`, "{x}", "NULL", "é ü", `back\slash`, "[1]"}), nil},
		{"empty strings", store.CalibrationRequest{ID: "cal_req_min", OrgID: b.org.ID, ModelHash: "sha256:other", CreatedAt: T0, UpdatedAt: T0}, nil},
	}
	for _, c := range creates {
		wantErr(t, "CreateCalibrationRequest "+c.name, s.CreateCalibrationRequest(ctx, c.c), c.want)
	}
	lookups := []struct {
		name, org, id string
		want          *store.CalibrationRequest
	}{
		{"new", a.org.ID, base.ID, &base},
		{"nil classes read back empty", a.org.ID, "cal_req_nil", ptr(with("cal_req_nil", []string{}))},
		{"empty classes", a.org.ID, "cal_req_empty", ptr(with("cal_req_empty", []string{}))},
		{"awkward classes", a.org.ID, "cal_req_odd", ptr(with("cal_req_odd", []string{"a,b", "", `"q"`, "{x}", "NULL", "é ü", `back\slash`, "[1]"}))},
		{"empty strings", b.org.ID, "cal_req_min", &store.CalibrationRequest{ID: "cal_req_min", OrgID: b.org.ID, ModelHash: "sha256:other", GPUClasses: []string{}, CreatedAt: T0, UpdatedAt: T0}},
		{"another org's", b.org.ID, base.ID, nil},
		{"unknown", a.org.ID, "cal_req_nobody", nil},
		{"unknown org", "org_nobody", "cal_req_nobody", nil},
	}
	for _, c := range lookups {
		got, err := s.CalibrationRequest(ctx, c.org, c.id)
		if c.want == nil {
			wantErr(t, "CalibrationRequest "+c.name, err, store.ErrNotFound)
		} else if err != nil || !calEqual(got, *c.want) {
			t.Errorf("CalibrationRequest %s = %+v, %v; want %+v", c.name, got, err, *c.want)
		}
	}
}

// testCalibrationRequestsByModel: every organisation's requests for a
// model, oldest first (ties by id), and none of other models'.
func testCalibrationRequestsByModel(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	const m1, m2 = "sha256:m1", "sha256:m2"
	stored := []store.CalibrationRequest{ // in creation order, not in time order
		newCal(a.org.ID, "cal_req_a3", m1, T0.Add(3*time.Hour)),
		newCal(b.org.ID, "cal_req_b1", m1, T0.Add(time.Hour)),
		newCal(a.org.ID, "cal_req_a0", m1, T0),
		newCal(b.org.ID, "cal_req_b2", m2, T0.Add(2*time.Hour)),
		newCal(b.org.ID, "cal_req_z-tie", m1, T0.Add(2*time.Hour)),
		newCal(a.org.ID, "cal_req_A-tie", m1, T0.Add(2*time.Hour)),
		newCal(a.org.ID, "cal_req_a-tie", m1, T0.Add(2*time.Hour)),
		newCal(a.org.ID, "cal_req_a-micro", m1, T0.Add(2*time.Hour+time.Microsecond)),
	}
	for _, c := range stored {
		if err := s.CreateCalibrationRequest(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	byID := map[string]store.CalibrationRequest{}
	for _, c := range stored {
		byID[c.ID] = c
	}
	cases := []struct {
		model string
		want  []string
	}{
		{m1, []string{"cal_req_a0", "cal_req_b1", "cal_req_A-tie", "cal_req_a-tie", "cal_req_z-tie", "cal_req_a-micro", "cal_req_a3"}},
		{m2, []string{"cal_req_b2"}},
		{"sha256:nobody", []string{}},
		{"", []string{}},
	}
	for _, c := range cases {
		got, err := s.CalibrationRequestsByModel(ctx, c.model)
		if err != nil || got == nil {
			t.Errorf("CalibrationRequestsByModel(%s) = %v, %v; want a list", c.model, got, err)
			continue
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.ID)
			if !calEqual(r, byID[r.ID]) {
				t.Errorf("CalibrationRequestsByModel(%s): %+v, want %+v", c.model, r, byID[r.ID])
			}
		}
		if strings.Join(ids, ",") != strings.Join(c.want, ",") {
			t.Errorf("CalibrationRequestsByModel(%s) = %v, want %v", c.model, ids, c.want)
		}
	}
}

func testUpdateCalibrationRequest(t *testing.T, s store.Store) {
	ctx := context.Background()
	a := seed(t, s, "acme")
	b := seed(t, s, "beta")
	ca := newCal(a.org.ID, "cal_req_a", "sha256:m", T0)
	cb := newCal(b.org.ID, "cal_req_b", "sha256:m", T0.Add(time.Second))
	for _, c := range []store.CalibrationRequest{ca, cb} {
		if err := s.CreateCalibrationRequest(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	set := func(c store.CalibrationRequest, status, profile, note string, at time.Time) store.CalibrationRequest {
		c.Status, c.ProfileID, c.Note, c.UpdatedAt = status, profile, note, at
		return c
	}
	steps := []struct {
		name                    string
		id, status, profile, nt string
		at                      time.Time
		want                    error
		wantA, wantB            store.CalibrationRequest
	}{
		{"in progress", ca.ID, "in_progress", "", "", T0.Add(time.Hour), nil,
			set(ca, "in_progress", "", "", T0.Add(time.Hour)), cb},
		{"published", ca.ID, "published", "prof-1", "", T0.Add(2 * time.Hour), nil,
			set(ca, "published", "prof-1", "", T0.Add(2*time.Hour)), cb},
		{"another org's, rejected", cb.ID, "rejected", "", "not an ONNX model", T0.Add(3 * time.Hour), nil,
			set(ca, "published", "prof-1", "", T0.Add(2*time.Hour)), set(cb, "rejected", "", "not an ONNX model", T0.Add(3*time.Hour))},
		{"fields cleared", ca.ID, "queued", "", "", T0.Add(4 * time.Hour), nil,
			set(ca, "queued", "", "", T0.Add(4*time.Hour)), set(cb, "rejected", "", "not an ONNX model", T0.Add(3*time.Hour))},
		{"unknown", "cal_req_nobody", "published", "prof-1", "", T0, store.ErrNotFound,
			set(ca, "queued", "", "", T0.Add(4*time.Hour)), set(cb, "rejected", "", "not an ONNX model", T0.Add(3*time.Hour))},
	}
	for _, st := range steps {
		wantErr(t, "UpdateCalibrationRequest "+st.name, s.UpdateCalibrationRequest(ctx, st.id, nil, st.status, st.profile, st.nt, st.at), st.want)
		if got, err := s.CalibrationRequest(ctx, a.org.ID, ca.ID); err != nil || !calEqual(got, st.wantA) {
			t.Errorf("after %s: CalibrationRequest(a) = %+v, %v; want %+v", st.name, got, err, st.wantA)
		}
		if got, err := s.CalibrationRequest(ctx, b.org.ID, cb.ID); err != nil || !calEqual(got, st.wantB) {
			t.Errorf("after %s: CalibrationRequest(b) = %+v, %v; want %+v", st.name, got, err, st.wantB)
		}
	}
	got, err := s.CalibrationRequestsByModel(ctx, "sha256:m")
	if err != nil || len(got) != 2 || got[0].Status != "queued" || got[1].Status != "rejected" {
		t.Errorf("CalibrationRequestsByModel after updates = %+v, %v", got, err)
	}
	// Conditional updates happen only from the listed statuses, atomically.
	wantErr(t, "conditional update from a status it is not in", s.UpdateCalibrationRequest(ctx, cb.ID, []string{"queued", "in_progress"}, "published", "prof-2", "", T0.Add(5*time.Hour)), store.ErrConflict)
	wantErr(t, "conditional update of an unknown request", s.UpdateCalibrationRequest(ctx, "cal_req_nobody", []string{"queued"}, "in_progress", "", "", T0), store.ErrNotFound)
	wantErr(t, "conditional update from its status", s.UpdateCalibrationRequest(ctx, ca.ID, []string{"queued"}, "in_progress", "", "", T0.Add(5*time.Hour)), nil)
	if got, err := s.CalibrationRequest(ctx, b.org.ID, cb.ID); err != nil || got.Status != "rejected" {
		t.Errorf("a refused conditional update changed the request: %+v, %v", got, err)
	}
	if got, err := s.CalibrationRequest(ctx, a.org.ID, ca.ID); err != nil || got.Status != "in_progress" {
		t.Errorf("conditional update not applied: %+v, %v", got, err)
	}
}

// testCalibrationRequestsOfOrg: CalibrationRequestsOfOrg lists the
// organisation's requests only.
func testCalibrationRequestsOfOrg(t *testing.T, s store.Store) {
	ctx := context.Background()
	a, b := seed(t, s, "acme"), seed(t, s, "beta")
	for _, f := range []fixture{a, b} {
		if err := s.CreateCalibrationRequest(ctx, store.CalibrationRequest{ID: "cal_req_" + f.org.Name, OrgID: f.org.ID, ModelHash: "sha256:" + f.org.Name,
			GPUClasses: []string{"cpu"}, Status: "queued", EstimatedCompletion: "7d", CreatedAt: T0, UpdatedAt: T0}); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []fixture{a, b} {
		cs, err := s.CalibrationRequestsOfOrg(ctx, f.org.ID)
		if err != nil || len(cs) != 1 || cs[0].ID != "cal_req_"+f.org.Name || len(cs[0].GPUClasses) != 1 {
			t.Errorf("CalibrationRequestsOfOrg(%s) = %+v, %v", f.org.Name, cs, err)
		}
	}
	if cs, err := s.CalibrationRequestsOfOrg(ctx, "org_nope"); err != nil || len(cs) != 0 || cs == nil {
		t.Errorf("CalibrationRequestsOfOrg(unknown org) = %#v, %v; want an empty list", cs, err)
	}
}
