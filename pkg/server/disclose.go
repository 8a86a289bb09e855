package server

import (
	"errors"
	"net/http"

	"github.com/svc-gov/svc/pkg/api"
	"github.com/svc-gov/svc/pkg/disclosure"
	"github.com/svc-gov/svc/pkg/vpec"
)

// checkRecordDisclosures refuses, with 422 disclosure_invalid naming the
// member, a record whose disclosure members its visibility does not allow
// (any of them in an opaque record), that do not match the record's
// commitments, that disclose a field the carried manifest's stage does not
// declare, reuse a salt within the record, or break their limits: the
// service never signs a disclosure the verifier would fail
// (docs/FORMATS.md, "Disclosures"). Salts reused across records are the
// client's to avoid; the verifier fails them.
func checkRecordDisclosures(rec *vpec.Record) error {
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
