package dashboard

import "github.com/svc-gov/svc/pkg/service/store"

// Storage is the roles of the service's store the dashboard uses: its
// sign-ins, and read-only views of the rest (it never writes a run, a
// record or a VPEC). Every field but Circuits is required.
type Storage struct {
	// Sessions keeps the sign-ins.
	Sessions store.WebSessionStore
	// Orgs lists the organisation's API keys.
	Orgs store.OrgReader
	// Runs lists runs and reads the records of open ones.
	Runs store.RunReader
	// VPECs reads issued VPECs.
	VPECs store.VPECReader
	// Manifests lists the organisation's manifests (the models they name).
	Manifests store.ManifestReader
	// Profiles reads published model profiles.
	Profiles store.ProfileReader
	// Calibrations reads the organisation's calibration requests.
	Calibrations store.CalibrationReader
	// Circuits reads published circuit entries, for the zk_proofs check of
	// VPEC pages; without it no entry is published, and the page says so
	// of every proof.
	Circuits store.CircuitReader
}

// missing names the first required role that is nil, "" if none is.
func (s Storage) missing() string {
	for _, r := range []struct {
		name string
		nil  bool
	}{
		{"Sessions", s.Sessions == nil}, {"Orgs", s.Orgs == nil}, {"Runs", s.Runs == nil}, {"VPECs", s.VPECs == nil},
		{"Manifests", s.Manifests == nil}, {"Profiles", s.Profiles == nil}, {"Calibrations", s.Calibrations == nil},
	} {
		if r.nil {
			return r.name
		}
	}
	return ""
}
