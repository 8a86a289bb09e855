package dashboard_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/service/dashboard"
	"github.com/svc-gov/svc/pkg/service/store"
)

// TestStorageRoles: the dashboard takes the store one role a field; New
// refuses a missing required role (ErrConfig, naming it) and accepts a
// Storage without the optional Circuits.
func TestStorageRoles(t *testing.T) {
	e := newEnv(t, envOptions{})
	config := func(st dashboard.Storage) dashboard.Config {
		return dashboard.Config{Storage: st, Trust: e.mat.Trust, Signer: e.mat.Signer, Timestamper: e.mat.TSA,
			AuthKey: func(context.Context, string) (store.APIKey, error) {
				return store.APIKey{}, errors.New("not in this test")
			},
			RequestCalibration: func(context.Context, store.APIKey, api.CalibrationRequestInput) (api.CalibrationRequestView, error) {
				return api.CalibrationRequestView{}, errors.New("not in this test")
			}}
	}
	for _, c := range []struct {
		field string
		drop  func(*dashboard.Storage)
	}{
		{"Sessions", func(s *dashboard.Storage) { s.Sessions = nil }},
		{"Orgs", func(s *dashboard.Storage) { s.Orgs = nil }},
		{"Runs", func(s *dashboard.Storage) { s.Runs = nil }},
		{"VPECs", func(s *dashboard.Storage) { s.VPECs = nil }},
		{"Manifests", func(s *dashboard.Storage) { s.Manifests = nil }},
		{"Profiles", func(s *dashboard.Storage) { s.Profiles = nil }},
		{"Calibrations", func(s *dashboard.Storage) { s.Calibrations = nil }},
	} {
		st := e.storage()
		c.drop(&st)
		if _, err := dashboard.New(config(st)); !errors.Is(err, dashboard.ErrConfig) || !strings.Contains(err.Error(), "Storage."+c.field) {
			t.Errorf("New without Storage.%s: err = %v, want ErrConfig naming it", c.field, err)
		}
	}
	st := e.storage()
	st.Circuits = nil
	if _, err := dashboard.New(config(st)); err != nil {
		t.Errorf("New without the optional Storage.Circuits: %v", err)
	}
}
