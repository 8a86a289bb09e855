// Package verify checks a VPEC offline and reports every check by name:
// the verifier svc verify, svc-verify, the offline page (pkg/app/webverify)
// and the dashboard run.
//
// Verify(doc, opts) validates the options (the trust material and the
// policy) before it reads a byte, then runs the checks in the order the
// report lists them. It fails closed: the error is nil exactly when the
// verdict is VALID, and it never reports VALID for anything it did not
// check; a check that could not run is listed as not_applicable or, for
// want of trust material, fails as such (verdict UNVERIFIED). No option
// weakens a check, so none carries an "Unsafe" name; RequireClean and
// RequirePassed only strengthen the verdict.
//
// The verifier reads one folder, one file per named check:
//
//	schema.go       schema       the document is a v1 VPEC (vpec.Parse)
//	signature.go    signature    Ed25519 over the signed bytes, by a trusted key
//	chain.go        chain        the hash chain recomputes from genesis
//	merkle_root.go  merkle_root  the Merkle root of the commitments
//	zk_proofs.go    zk_proofs    each zero-knowledge proof, and the links of a decomposition
//	evidence.go     evidence     each claimed proof level has its evidence
//	timestamp.go    timestamp    the RFC 3161 token over the signature
//	time.go         time         no time in the VPEC after its timestamp
//	gaps.go         gaps         the declared gaps match the records
//	summary.go      summary      the summary fields match the records
//	reviews.go      reviews      witnessed reviews and check sessions
//	profile.go      profile      Bounded Inference records against their profiles
//	disclosures.go  disclosures  what transparent and selective records disclose
//
// composed in verify.go; the options are options.go, the report and its
// verdict report.go, the errors errors.go.
//
// Each check is a function over the parsed document and what it needs
// (trust material from the options, facts an earlier check established:
// the chain breaks, the verified timestamp time, the verified session
// times), which its file's table tests call directly, plus a method on
// *state that hands it those. A new check (a transparency-log receipt
// check over pkg/core/tlog, key validity windows over pkg/core/trustroot)
// is one new file holding its CheckName, its function and its state
// method, and one line in the checks table of verify.go that fixes its
// place in the report; trust material it needs is a field of Options,
// validated by Options.Validate.
package verify
