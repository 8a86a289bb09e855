package server

import "github.com/svc-gov/svc/pkg/service/store"

// Storage is the service's store by role: each field is the narrowest
// role the API uses of it. One backend plays every role (StorageOf); a
// test or an embedding program may give a role its own implementation.
type Storage struct {
	// Health answers /readyz. Required.
	Health store.Pinger
	// Orgs authenticates API keys, reads an organisation's tier and keeps
	// its reviewer keys. Required.
	Orgs store.OrgStore
	// Runs opens runs, appends records and seals them. Required.
	Runs store.RunStore
	// VPECs reads issued VPECs. Required.
	VPECs store.VPECReader
	// Manifests registers and reads check manifests. Required.
	Manifests store.ManifestStore
	// Profiles reads published model profiles (svc registry publish
	// writes them, through Publish). Required.
	Profiles store.ProfileReader
	// Calibrations files and reads calibration requests. Required.
	Calibrations store.CalibrationStore
	// Sessions keeps check and review sessions. Required.
	Sessions store.SessionStore
	// Circuits reads published circuit entries (svc registry
	// publish-circuit writes them, through PublishCircuit). Without it,
	// GET /api/v1/registry/circuits answers 501 and records carrying
	// proofs are refused (ErrNoCircuitStore).
	Circuits store.CircuitReader
	// WebSessions keeps the dashboard's sign-ins; without it the
	// dashboard is not served (the API is).
	WebSessions store.WebSessionStore
}

// StorageOf is the Storage of one backend: st in every role.
func StorageOf(st store.Store) Storage {
	return Storage{Health: st, Orgs: st, Runs: st, VPECs: st, Manifests: st, Profiles: st,
		Calibrations: st, Sessions: st, Circuits: st, WebSessions: st}
}

// missing names the first required role that is nil, "" if none is.
func (s Storage) missing() string {
	for _, r := range []struct {
		name string
		nil  bool
	}{
		{"Health", s.Health == nil}, {"Orgs", s.Orgs == nil}, {"Runs", s.Runs == nil}, {"VPECs", s.VPECs == nil},
		{"Manifests", s.Manifests == nil}, {"Profiles", s.Profiles == nil}, {"Calibrations", s.Calibrations == nil},
		{"Sessions", s.Sessions == nil},
	} {
		if r.nil {
			return r.name
		}
	}
	return ""
}
