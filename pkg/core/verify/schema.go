package verify

import (
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/names"
	"github.com/svc-gov/svc/pkg/core/vpec"
)

// CheckSchema: the document is a v1 VPEC (vpec.Parse: the shape scan, the
// strict decode, the v1 rules). Every other check runs only when it
// passes.
const CheckSchema CheckName = "schema"

// NotCheckedSchema is the message of every check that did not run because
// the schema check failed.
const NotCheckedSchema = "not checked: the document does not match the v1 schema"

// NotCheckedUnreadable is the message of every check that did not run
// because the input is not a JSON document.
const NotCheckedUnreadable = "not checked: the input is not a JSON document"

// CodeUnsignedOffline is the code of the schema check, and the verdict,
// of an unsigned offline VPEC (vpec.OfflineSchema).
const CodeUnsignedOffline = "UNSIGNED OFFLINE VPEC"

// schema runs the schema check, reading doc with parse (vpec.Parse or
// vpec.ParseOwned). When it passes, the report holds it and d is the parsed
// document; otherwise d is nil and the report is finished, every other
// check not_applicable.
func schema(doc []byte, parse func([]byte) (*vpec.Document, error)) (r *Report, d *vpec.Document) {
	d, err := parse(doc)
	if d == nil {
		return unreadableReport(err), nil
	}
	r = &Report{}
	r.fill(&d.VPEC)
	var problems []string
	if se := (*document.SchemaError)(nil); errors.As(err, &se) {
		problems = se.Problems
	} else if err != nil {
		problems = []string{err.Error()}
	}
	if d.VPEC.Schema == vpec.OfflineSchema {
		r.unsignedOffline(&d.VPEC, problems)
		return r, nil
	}
	if len(problems) > 0 {
		r.Checks = append(r.Checks, Check{Name: CheckSchema, Status: Fail, Code: "SCHEMA ERROR",
			Message: "schema invalid: " + problems[0], Details: problems})
		r.notChecked(NotCheckedSchema)
		r.finish()
		return r, nil
	}
	r.Checks = append(r.Checks, Check{Name: CheckSchema, Status: Pass, Message: fmt.Sprintf("schema valid (%s, %d records)", vpec.Schema, len(d.VPEC.Records))})
	return r, d
}

// notChecked adds every check after schema as not_applicable with msg.
func (r *Report) notChecked(msg string) {
	for _, c := range checks {
		r.Checks = append(r.Checks, Check{Name: c.name, Status: NotApplicable, Message: msg})
	}
}

// unreadableReport is the report on input that is not a JSON document at
// all (empty, binary, not UTF-8, a BOM, too large): it says so in words,
// and nothing else runs.
func unreadableReport(err error) *Report {
	r := &Report{Unreadable: true}
	code := "NOT JSON"
	if errors.Is(err, document.ErrTooLarge) {
		code = "TOO LARGE"
	}
	r.Checks = append(r.Checks, Check{Name: CheckSchema, Status: Fail, Code: code, Message: "unreadable input: " + err.Error()})
	r.notChecked(NotCheckedUnreadable)
	r.finish()
	return r
}

// FetchHint is the command that fetches the signed VPEC of run runID (or
// of RUN_ID when runID is not a run id).
func FetchHint(runID string) string {
	if !names.ValidPrefixedID(runID, "run_") {
		runID = "RUN_ID"
	}
	return "svc vpec get " + runID
}

// unsignedOffline fills r for an unsigned offline VPEC: the schema check
// fails with CodeUnsignedOffline, nothing else runs (NotCheckedSchema: it
// is not a v1 VPEC), and the verdict says what the document is and how to
// get the signed one. Other schema problems are listed.
func (r *Report) unsignedOffline(v *vpec.VPEC, problems []string) {
	r.fetchHint = FetchHint(v.RunID)
	r.Checks = append(r.Checks, Check{Name: CheckSchema, Status: Fail, Code: CodeUnsignedOffline,
		Message: fmt.Sprintf("unsigned offline VPEC (schema %s): fetch the signed one with %s", vpec.OfflineSchema, r.fetchHint),
		Details: problems})
	r.notChecked(NotCheckedSchema)
	r.finish()
}
