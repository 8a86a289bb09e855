package vpec

// NotPassedCodes lists the check results that make a VPEC "not passed"
// (Options.RequirePassed, svc verify --require-passed): fail and error.
// skipped, degraded, override and not_applicable do not: each is a
// deliberate, recorded outcome (a skip with its rationale, partial
// coverage, an operator's override), counted in the report but accepted
// by the gate (docs/CI.md, "Clean is not passed").
func NotPassedCodes() []CheckResult { return []CheckResult{ResultFail, ResultError} }

// CountNotPassed counts the records whose check result is fail and error.
func CountNotPassed(records []Record) (failed, errored int) {
	for i := range records {
		switch records[i].CheckResult {
		case ResultFail:
			failed++
		case ResultError:
			errored++
		}
	}
	return failed, errored
}

// Passed reports whether no record's check failed or hit an error
// (RequirePassed's rule). An INVALID VPEC's counts are not to be trusted:
// look at Valid first.
func (r *Report) Passed() bool { return r.ChecksFailed == 0 && r.ChecksErrored == 0 }
