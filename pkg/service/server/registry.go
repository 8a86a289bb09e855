package server

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/commitment"
	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/service/store"
)

func (s *Server) registerManifest(w http.ResponseWriter, r *http.Request) {
	var m api.Manifest
	tree, err := s.decode(r, &m)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if m.Name == "" || m.Version == "" {
		s.fail(w, r, badRequest("name", "a manifest needs a name and a version"))
		return
	}
	for i, st := range m.Stages {
		if st.ONNXModelHash == "" {
			continue
		}
		if _, err := commitment.ParseSHA256(st.ONNXModelHash); err != nil {
			s.fail(w, r, badRequest(fmt.Sprintf("stages[%d].onnx_model_hash", i), "stages[%d].onnx_model_hash must be sha256:<64 hex> of the ONNX model file: %v", i, err))
			return
		}
	}
	body := tree.Canonical()
	id := commitment.String(body)
	created, err := s.cfg.Storage.Manifests.PutManifest(r.Context(), store.Manifest{OrgID: caller(r).OrgID, ID: id, Name: m.Name, Body: body, CreatedAt: s.cfg.Now().UTC()})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, api.ManifestRegistration{ManifestID: id, Name: m.Name, Created: created})
}

func (s *Server) getManifest(w http.ResponseWriter, r *http.Request) {
	m, err := s.cfg.Storage.Manifests.Manifest(r.Context(), caller(r).OrgID, r.PathValue("manifest_id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(m.Body)
}

// profiles serves the list (docs/API.md), or with ?model_hash= the full
// profile of that model (docs/API.md).
func (s *Server) profiles(w http.ResponseWriter, r *http.Request) {
	h, given, err := oneParam(r, "model_hash")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if given {
		if _, err := commitment.ParseSHA256(h); err != nil {
			s.fail(w, r, badRequest("model_hash", "model_hash: %v", err))
			return
		}
		p, err := s.cfg.Storage.Profiles.ProfileByModelHash(r.Context(), h)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(p.Body)
		return
	}
	all, err := s.cfg.Storage.Profiles.Profiles(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := api.ProfileList{Profiles: []api.ProfileSummary{}}
	for _, sp := range all {
		p, err := profile.Parse(sp.Body)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		out.Profiles = append(out.Profiles, api.SummaryOf(p))
	}
	writeJSON(w, http.StatusOK, out)
}

// lookup answers the registry lookup (docs/API.md): 200 with the profile's identity, or 404 with
// exactly {"found": false}.
func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	h, _, err := oneParam(r, "hash")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if _, err := commitment.ParseSHA256(h); err != nil {
		s.fail(w, r, badRequest("hash", "hash must be the model's onnx_model_hash, sha256:<64 hex>: %v", err))
		return
	}
	sp, err := s.cfg.Storage.Profiles.ProfileByModelHash(r.Context(), h)
	if errors.Is(err, store.ErrNotFound) {
		writeJSON(w, http.StatusNotFound, api.Lookup{Found: false})
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := profile.Parse(sp.Body)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.Lookup{Found: true, ProfileID: p.ProfileID, ModelClass: p.ModelClass,
		Architecture: p.Architecture, ProfileSignature: p.ProfileSignature, SignedBy: p.SignedBy})
}
