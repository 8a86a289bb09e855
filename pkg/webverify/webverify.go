// Package webverify is the verification the offline verifier page
// (verify.html, cmd/svc-verify-wasm) runs inside the browser: the same
// pkg/vpec verification as svc verify, over documents the user chose
// instead of files named on a command line. It reads no files, uses no
// network and imports nothing that does (cmd/svc-verify-wasm's
// deps_test.go guards that), so it compiles to WebAssembly.
package webverify

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/profile"
	"github.com/svc-gov/svc/pkg/signing"
	"github.com/svc-gov/svc/pkg/vpec"
)

// Exit codes, the same numbers svc verify and svc-verify exit with
// (docs/VERIFYING.md), carried in Result.ExitCode so a page and a script
// agree on what a result means.
const (
	ExitValid   = 0 // VALID
	ExitInvalid = 1 // INVALID
	ExitUsage   = 2 // unreadable input, or an input the page cannot use
	ExitTrust   = 3 // trust material missing or unusable (UNVERIFIED)
)

// TrustSource is the TrustRoot.Source of every report made here: the
// trust bundle was a file the user chose in the page.
const TrustSource = "chosen in the offline verifier page"

// File is one document the user chose: its name (for the report and for
// messages only) and its bytes.
type File struct {
	Name string `json:"name"`
	Data []byte `json:"-"`
}

// Input is what the page verifies: the VPEC, the trust bundle (PEM) and
// any signed model profiles, each checked as svc verify --profile checks
// its files.
type Input struct {
	VPEC         File
	Trust        File
	Profiles     []File
	RequireClean bool
}

// Result is the outcome of Verify: a report with the exit code svc verify
// would give, or, when the inputs cannot be verified at all, Error with
// ExitUsage or ExitTrust and no report.
type Result struct {
	Report   *vpec.Report `json:"report,omitempty"`
	Error    string       `json:"error,omitempty"`
	ExitCode int          `json:"exit_code"`
}

// JSON is the result as the page receives it.
func (r Result) JSON() []byte {
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(Result{Error: "encode result: " + err.Error(), ExitCode: ExitUsage})
	}
	return b
}

// Verify verifies in.VPEC against in.Trust and in.Profiles exactly as
// svc verify does (no cached profile directory: the page has none).
func Verify(in Input) Result {
	if len(in.VPEC.Data) == 0 {
		return Result{Error: "choose a VPEC JSON file (it is empty or was not chosen)", ExitCode: ExitUsage}
	}
	if len(in.Trust.Data) == 0 {
		return Result{Error: "choose the trust bundle (trust-bundle.pem of the service that issued the VPEC): nothing is verified without it", ExitCode: ExitTrust}
	}
	trust, err := signing.ParseBundle(in.Trust.Data)
	if err != nil {
		return Result{Error: fmt.Sprintf("trust bundle %s: %v: it must be a PEM file of PUBLIC KEY (Ed25519) and CERTIFICATE blocks", in.Trust.Name, err), ExitCode: ExitTrust}
	}
	if len(trust.KeyIDs()) == 0 {
		return Result{Error: fmt.Sprintf("trust bundle %s holds no Ed25519 public key: add the service's PUBLIC KEY block", in.Trust.Name), ExitCode: ExitTrust}
	}
	set := profile.NewSet()
	for _, p := range in.Profiles {
		if err := set.AddExplicitDoc(p.Name, p.Data); err != nil {
			return Result{Error: fmt.Sprintf("profile %s: %v", p.Name, err), ExitCode: ExitUsage}
		}
	}
	report, err := vpec.Verify(in.VPEC.Data, vpec.Options{Trust: trust, Profiles: set, RequireClean: in.RequireClean})
	code := ExitValid
	switch {
	case err == nil:
	case errors.Is(err, vpec.ErrUnreadable):
		code = ExitUsage
	case errors.Is(err, vpec.ErrUnverified):
		code = ExitTrust
	case errors.Is(err, vpec.ErrInvalid):
		code = ExitInvalid
	default:
		return Result{Error: err.Error(), ExitCode: ExitUsage}
	}
	report.TrustRoot = &vpec.TrustRoot{File: in.Trust.Name, Source: TrustSource}
	return Result{Report: report, ExitCode: code}
}
