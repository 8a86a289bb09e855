package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/svc-gov/svc/pkg/service/server"
)

// TestStorageRoles: the server takes its store one role a field. A
// missing required role is refused by New, naming the field; without the
// optional Circuits the circuit registry answers 501 (the API still
// serves); without WebSessions the dashboard is not mounted.
func TestStorageRoles(t *testing.T) {
	e := newEnv(t)
	full := server.StorageOf(e.st)
	for _, c := range []struct {
		field string
		drop  func(*server.Storage)
	}{
		{"Health", func(s *server.Storage) { s.Health = nil }},
		{"Orgs", func(s *server.Storage) { s.Orgs = nil }},
		{"Runs", func(s *server.Storage) { s.Runs = nil }},
		{"VPECs", func(s *server.Storage) { s.VPECs = nil }},
		{"Manifests", func(s *server.Storage) { s.Manifests = nil }},
		{"Profiles", func(s *server.Storage) { s.Profiles = nil }},
		{"Calibrations", func(s *server.Storage) { s.Calibrations = nil }},
		{"Sessions", func(s *server.Storage) { s.Sessions = nil }},
	} {
		st := full
		c.drop(&st)
		_, err := server.New(server.Config{Storage: st, Signer: e.mat.Signer, Timestamper: e.mat.TSA, Trust: e.mat.Trust})
		if err == nil || !strings.Contains(err.Error(), "Storage."+c.field) {
			t.Errorf("New without Storage.%s: err = %v, want one naming it", c.field, err)
		}
	}

	optional := full
	optional.Circuits, optional.WebSessions = nil, nil
	srv, err := server.New(server.Config{Storage: optional, Signer: e.mat.Signer, Timestamper: e.mat.TSA, Trust: e.mat.Trust})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	get := func(path, key string) int {
		req, _ := http.NewRequest("GET", hs.URL+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, c := range []struct {
		path string
		key  string
		want int
	}{
		{"/api/v1/registry/circuits?circuit_id=sha256:" + strings.Repeat("a", 64), e.keyA, http.StatusNotImplemented},
		{"/dashboard/", "", http.StatusNotFound},
		{"/api/v1/registry/profiles", e.keyA, http.StatusOK},
		{"/healthz", "", http.StatusOK},
	} {
		if got := get(c.path, c.key); got != c.want {
			t.Errorf("GET %s without Circuits and WebSessions: %d, want %d", c.path, got, c.want)
		}
	}
}
