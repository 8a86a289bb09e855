package verify

import (
	"fmt"
	"sync"
	"time"

	"github.com/svc-gov/svc/pkg/core/vpec"
)

// Verify checks a VPEC document offline and reports every check by name.
// It never panics and never reports VALID for anything it did not check.
//
// The error is nil exactly when the verdict is VALID. Otherwise it is a
// *VerificationError matching ErrInvalid, ErrUnverified or ErrUnreadable
// (errors.Is), returned with the report, which says what was checked and
// is for printing: a caller that looks only at the error cannot accept a
// document that failed. Options that cannot verify anything give an error
// matching ErrOptions and no report; so does an extra check's error.
func Verify(doc []byte, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r := run(doc, &opts)
	r.requireClean = opts.RequireClean
	r.requirePassed = opts.RequirePassed
	if !r.Unreadable {
		for i, x := range opts.Extra {
			c, applied, err := x(doc)
			if err != nil {
				return nil, fmt.Errorf("vpec: extra check %d: %w", i, err)
			}
			if applied {
				r.Checks = append(r.Checks, c)
			}
		}
	}
	r.finish()
	return r, r.err()
}

// Unreadable returns what Verify returns for input that could not be
// read as a document, cause saying why: a document too large to read
// (cause matching document.ErrTooLarge, verdict UNREADABLE — TOO LARGE) or
// not a JSON text (UNREADABLE — NOT JSON). A caller that refuses a stream
// past document.MaxSize bytes without reading it whole (svc-verify does)
// reports it with this, so every input gets a report. The options are
// validated as by Verify; the error matches ErrUnreadable.
func Unreadable(cause error, opts Options) (*Report, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	r := unreadableReport(cause)
	r.requireClean = opts.RequireClean
	r.finish()
	return r, r.err()
}

// ValidateSchema runs the schema check alone, for callers that need no
// more than a well-formed v1 VPEC (they hold no trust bundle): the
// document as the check read it (its signed bytes, decoded signature and
// token), or a *VerificationError naming the schema check and matching
// ErrInvalid, ErrUnsignedOffline (with ErrInvalid) or ErrUnreadable. It
// proves nothing about who issued the document.
func ValidateSchema(doc []byte) (*vpec.Document, error) {
	r, d := schema(doc, vpec.Parse)
	if d != nil {
		return d, nil
	}
	return nil, r.err()
}

// check is one built-in check after the schema check: its name and the
// state method that runs it. apart: it reads only the document, the
// options and the chain's breaks, and runs on its own goroutine while the
// others run (the signature may hash the whole document; the Merkle root
// hashes a tree over every record; gaps and summary read every record).
type check struct {
	name  CheckName
	run   func(*state) Check
	apart bool
}

// checks are the built-in checks after schema, in the order the report
// lists them (every report names each once). A new check is a file with
// its name, function and state method, and a line here.
var checks = [...]check{
	{name: CheckSignature, run: (*state).signature, apart: true},
	{name: CheckChain, run: (*state).chain},
	{name: CheckMerkle, run: (*state).merkleRoot, apart: true},
	{name: CheckZK, run: (*state).zkProofs},
	{name: CheckEvidence, run: (*state).evidence},
	{name: CheckTimestamp, run: (*state).timestamp},
	{name: CheckTime, run: (*state).time},
	{name: CheckGaps, run: (*state).gaps, apart: true},
	{name: CheckSummary, run: (*state).summary, apart: true},
	{name: CheckReviews, run: (*state).reviews},
	{name: CheckProfile, run: (*state).profile},
	{name: CheckDisclosure, run: (*state).disclosures},
	{name: CheckTransparency, run: (*state).transparency},
}

// state is one verification past the schema check: what the checks read.
// A fact one check establishes for a later one is a field here, set by
// the check that establishes it (genTime), or work done once on first use
// (reviewed, which the time check needs before the reviews check is
// reported).
type state struct {
	doc    *vpec.Document
	opts   *Options
	report *Report
	// breaks are where the chain stops verifying, recomputed from genesis
	// (the chain, gaps and summary checks read them).
	breaks []vpec.ChainBreak
	// genTime is the verified time of the VPEC's timestamp, at full
	// precision; zero when the timestamp did not verify.
	genTime time.Time
	// sessions is the reviews check's verification of every review and
	// check session, done once (sessionsOnce).
	sessions *sessionResults
	// presigned is the signature check begun while the document was read.
	presigned *presigned
}

// run runs the schema check and, when it passes, the others.
func run(doc []byte, opts *Options) *Report {
	// The signature's hashing starts while the records are read.
	pre := &presigned{}
	po := vpec.ParseOptions{Owned: opts.Owned, SignedTo: pre.signedTo(opts)}
	r, d := schema(doc, func(doc []byte) (*vpec.Document, error) { return vpec.ParseWith(doc, po) })
	if d == nil {
		return r
	}
	s := &state{doc: d, opts: opts, report: r, breaks: d.ChainBreaks(), presigned: pre}
	results := make([]Check, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		if c.apart {
			wg.Add(1)
			go func() { defer wg.Done(); results[i] = c.run(s) }()
		}
	}
	for i, c := range checks {
		if !c.apart {
			results[i] = c.run(s)
		}
	}
	wg.Wait()
	r.Checks = append(r.Checks, results...)
	r.finish()
	return r
}
