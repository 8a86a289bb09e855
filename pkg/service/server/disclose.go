package server

import (
	"errors"
	"net/http"

	"github.com/svc-gov/svc/pkg/core/api"
	"github.com/svc-gov/svc/pkg/core/disclosure"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// checkRecordDisclosures refuses, with 422 disclosure_invalid naming the
// member, a carried manifest over the limits of POST /manifests, and a
// record whose disclosure members its visibility does not allow (any of
// them in an opaque record), that do not match the record's commitments,
// that disclose a field the carried manifest's stage does not declare,
// reuse a salt within the record, or break their limits: the service never
// signs a disclosure the verifier would fail (docs/FORMATS.md,
// "Disclosures"). Salts reused across records are the client's to avoid;
// the verifier fails them.
func checkRecordDisclosures(rec *vpec.Record) error {
	if rec.Manifest != nil {
		// The carried manifest keeps the limits of a registered one.
		m := api.Manifest(*rec.Manifest)
		if err := m.CheckLimits(); err != nil {
			var fe *api.FieldError
			if errors.As(err, &fe) {
				return &httpError{http.StatusUnprocessableEntity, api.CodeDisclosureInvalid, "manifest." + fe.Error(), "manifest." + fe.Field}
			}
			return &httpError{http.StatusUnprocessableEntity, api.CodeDisclosureInvalid, "manifest: " + err.Error(), "manifest"}
		}
	}
	err := rec.CheckDisclosures()
	if err == nil {
		return nil
	}
	field := ""
	var de *disclosure.Error
	if errors.As(err, &de) {
		field = de.Field
	}
	return &httpError{http.StatusUnprocessableEntity, api.CodeDisclosureInvalid, err.Error(), field}
}
