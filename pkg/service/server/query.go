package server

import (
	"net/http"
	"net/url"
)

// oneParam returns the query parameter name of r, and whether it was
// given. One request has one reading: a query string that does not parse
// (a bad percent-escape, a semicolon) is refused rather than read without
// the pairs it could not parse, and so are a parameter given more than
// once and one given empty (a client's unset variable is not taken for
// "absent").
func oneParam(r *http.Request, name string) (string, bool, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", false, badRequest(name, "the query string does not parse (%v): percent-encode its values and separate parameters with &", err)
	}
	vs, ok := q[name]
	switch {
	case !ok:
		return "", false, nil
	case len(vs) > 1:
		return "", true, badRequest(name, "%s is given more than once; give it once", name)
	case vs[0] == "":
		return "", true, badRequest(name, "%s is empty: give its value, or leave the parameter out", name)
	}
	return vs[0], true, nil
}
