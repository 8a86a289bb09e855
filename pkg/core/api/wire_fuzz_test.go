package api_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/svc-gov/svc/internal/fuzzedge"
	"github.com/svc-gov/svc/pkg/core/api"
)

// FuzzCheckLimits decodes untrusted bytes into every request type with
// limits and checks them: no panic; a refusal is a *api.FieldError naming
// a field and matching api.ErrLimit; an acceptance keeps every member
// within its documented maximum.
func FuzzCheckLimits(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `{"public_key":null,"name":null}`, `{"kind":"check","check":"c","manifest_id":"m"}`,
		`{"check":"","manifest_id":null,"reviewer_key_id":"\u202e"}`, `{"onnx_model_hash":"x","desired_gpu_classes":[null,"cpu","cpu"]}`,
		`{"model_description":"a\tb\nc","hub_model_id":"\u0000"}`, `{"lineage_token":null}`, `{"delegation":{"to":[null,{"a":null}]}}`,
		`{"delegation":null}`, `{"notify_email":"a@b"}`, `[]`, `"x"`,
	} {
		f.Add([]byte(seed))
	}
	for _, d := range fuzzedge.Documents([]byte(`{"kind":"review","check":"c","manifest_id":"m","min_duration_seconds":30,"sequence":1,"operator_count":9,"passes":1}`), 400) {
		f.Add(d) // integers at the documented maxima and int64 edges
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		type limited interface{ CheckLimits() error }
		var (
			rk  api.ReviewerKeyRequest
			se  api.SessionRequest
			cal api.CalibrationRequestInput
			res api.ResumeRequest
			del api.DelegationRequest
		)
		for _, v := range []limited{&rk, &se, &cal, &res, &del} {
			if json.Unmarshal(data, v) != nil {
				continue
			}
			err := v.CheckLimits()
			if err != nil {
				var fe *api.FieldError
				if !errors.As(err, &fe) || fe.Field == "" || !errors.Is(err, api.ErrLimit) {
					t.Fatalf("%T: error %v is not a *FieldError naming a field and matching ErrLimit", v, err)
				}
				continue
			}
			switch {
			case len(rk.PublicKey) > api.MaxPublicKeyBytes, len(rk.Name) > api.MaxReviewerNameBytes,
				len(se.Check) > api.MaxCheckBytes, len(se.ManifestID) > api.MaxManifestIDBytes, len(se.ReviewerKeyID) > api.MaxReviewerKeyIDBytes,
				len(cal.ModelDescription) > api.MaxDescriptionBytes, len(cal.HubModelID) > api.MaxHubModelIDBytes, len(cal.NotifyEmail) > api.MaxEmailBytes,
				len(res.LineageToken) > api.MaxLineageTokenBytes:
				t.Fatalf("%T accepted over its limits: %s", v, data)
			}
		}
	})
}
