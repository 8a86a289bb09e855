// Package shapecases is the table of documents that cannot be a VPEC,
// with the words the shape scan refuses each with: pkg/core/vpec tests the
// scan with it, pkg/core/verify the schema check's report.
package shapecases

import "strings"

// Case is a document and a phrase its refusal must contain.
type Case struct{ Doc, Want string }

// Cases returns the table by case name.
func Cases() map[string]Case {
	return map[string]Case{
		"array":                {`[0,0,0]`, "(document) is a JSON array, not an object"},
		"string":               {`"x"`, "(document) is a JSON string"},
		"number":               {`12`, "(document) is a JSON number"},
		"unknown member":       {`{"schema":"svc.vpec/v1","extra":1}`, `"extra" is not a member of a v1 VPEC`},
		"records not array":    {`{"records":{}}`, "records is a JSON object, want an array of objects"},
		"records null":         {`{"records":null}`, "records is null, want an array (use [] when empty)"},
		"record not object":    {`{"records":[0]}`, "records[0] is a JSON number, want an object"},
		"empty record":         {`{"records":[{}]}`, "records[0] has 0 members; a v1 record has at least 11"},
		"empty gap":            {`{"gaps":[{}]}`, "gaps[0] has 0 members; a v1 gap has at least 6"},
		"empty review":         {`{"records":[{"review":{}}]}`, "records[0].review has 0 members; a review block has at least 7"},
		"gaps of strings":      {`{"gaps":["x"]}`, "gaps[0] is a JSON string, want an object"},
		"unknown record field": {`{"records":[{"sequence":1,"x":2}]}`, `records[0]."x" is not a member of a v1 record`},
		"unknown gap field":    {`{"gaps":[{"y":2}]}`, `gaps[0]."y" is not a member of a v1 gap`},
		"review not object":    {`{"records":[{"review":[]}]}`, "records[0].review is a JSON array, want an object"},
		"details not object":   {`{"records":[{"details":"x"}]}`, "records[0].details is a JSON string, want an object"},
		"details too many":     {`{"records":[{"details":{"z":[` + strings.Repeat("0,", 8200) + `0]}}]}`, "records[0].details holds 8203 JSON values"},
		"escaped name":         {`{"v\u0070ec_id":"x"}`, "is a member name written with escapes"},
		"huge breakdown":       {`{"proof_level_breakdown":{` + strings.Repeat(`"":0,`, 6) + `"":0}}`, "proof_level_breakdown has 7 members; there are 6 proof levels"},
	}
}
