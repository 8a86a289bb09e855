package trustroot

import "errors"

// codes maps each error class of the package to its stable code, the name
// docs/KEYS.md and the test vectors (testdata/trustroot) use.
var codes = []struct {
	err  error
	code string
}{
	{ErrUnknownKey, "unknown-key"},
	{ErrWrongPurpose, "wrong-purpose"},
	{ErrNotYetValid, "not-yet-valid"},
	{ErrExpired, "expired"},
	{ErrCompromised, "compromised"},
	{ErrNoRootKeys, "no-root-keys"},
	{ErrRollback, "rollback"},
	{ErrVersionGap, "version-gap"},
	{ErrNotSignedByPrevious, "not-signed-by-previous"},
	{ErrNotSelfSigned, "not-self-signed"},
	{ErrHistoryRewritten, "history-rewritten"},
	{ErrNotJSON, "not-json"},
	{ErrSchema, "schema"},
	{ErrUnknownMember, "unknown-member"},
	{ErrDuplicateMember, "duplicate-member"},
	{ErrMissingMember, "missing-member"},
	{ErrBadTime, "bad-time"},
	{ErrKeyIDMismatch, "key-id-mismatch"},
	{ErrDuplicateKey, "duplicate-key"},
	{ErrPurposeConflict, "purpose-conflict"},
	{ErrBadSignature, "bad-signature"},
	{ErrBadValue, "bad-value"},
}

// Code returns the stable code of an error of this package ("expired",
// "not-signed-by-previous", "unknown-member", ...; docs/KEYS.md lists
// them), "" for nil and "error" for anything else.
func Code(err error) string {
	if err == nil {
		return ""
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.code
		}
	}
	return "error"
}
