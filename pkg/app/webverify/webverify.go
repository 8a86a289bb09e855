// Package webverify is the verification the offline verifier page
// (verify.html, cmd/svc-verify-wasm) runs inside the browser: the same
// pkg/core/verify verification as svc verify, with the same proof verifier over
// the same circuit entry loading (pkg/zk/zkverify), over documents the
// user chose instead of files named on a command line. It reads no files,
// uses no network and imports nothing that does (cmd/svc-verify-wasm's
// deps_test.go guards that), so it compiles to WebAssembly.
package webverify

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/svc-gov/svc/pkg/core/profile"
	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
	"github.com/svc-gov/svc/pkg/core/verify"
	"github.com/svc-gov/svc/pkg/zk/zkverify"
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

// Input is what the page verifies: the VPEC, the trust bundle (PEM), any
// signed model profiles, each checked as svc verify --profile checks its
// files, and any signed circuit entries, loaded as svc verify loads its
// --circuit files and --circuit-dir (zkverify.Load) and checked by the
// same proof verifier.
type Input struct {
	VPEC     File
	Trust    File
	Profiles []File
	// Circuits are circuit entries chosen as files: each one is checked
	// against the trust bundle, whether or not a record needs it (a
	// corrupt or forged one fails zk_proofs), as svc verify --circuit.
	Circuits []File
	// CircuitFolder are the files of a chosen folder (such as the
	// quickstart's circuits): its .json files that are not circuit
	// entries are skipped with a warning, as svc verify --circuit-dir.
	CircuitFolder []File
	RequireClean  bool
	// Receipt is the VPEC's transparency log receipt (vpec.receipt.json,
	// optional), checked by the transparency check as svc verify
	// --receipt; RequireLog makes a VPEC without a valid one INVALID
	// (--require-log).
	Receipt    File
	RequireLog bool
	// WitnessPolicy is a witness policy file (optional): the witnesses
	// whose cosignatures the receipt's checkpoint needs, instead of every
	// witness of the trust root, as svc verify --witness-policy.
	WitnessPolicy File
	// TrustRootUpdates are newer versions of the trust root (optional),
	// each checked against the one before it (trustroot.VerifyUpdate), in
	// version order, before anything is verified, as svc verify
	// --trust-root-update: a refused one stops with ExitTrust and an error
	// naming the file and the refusal's code.
	TrustRootUpdates []File
}

// CircuitAdvice is what the page tells a user whose VPEC has a proof
// without its circuit entry (verify.Options.CircuitAdvice).
const CircuitAdvice = "add its signed circuit entry under Circuit entries (a .json file: svc registry get-circuit writes one, the quickstart keeps them in its circuits folder)"

// CircuitGiven names a chosen circuit entry file in a problem with it
// (zkverify.Verifier.Given).
const CircuitGiven = "circuit entry file"

// Result is the outcome of Verify: a report with the exit code svc verify
// would give, or, when the inputs cannot be verified at all, Error with
// ExitUsage or ExitTrust and no report.
type Result struct {
	Report *verify.Report `json:"report,omitempty"`
	Error  string         `json:"error,omitempty"`
	// Warnings name the files of a chosen circuit folder that were
	// skipped (svc verify prints them on standard error).
	Warnings []string `json:"warnings,omitempty"`
	ExitCode int      `json:"exit_code"`
}

// JSON is the result as the page receives it.
func (r Result) JSON() []byte {
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(Result{Error: "encode result: " + err.Error(), ExitCode: ExitUsage})
	}
	return b
}

// Verify verifies in.VPEC against in.Trust, in.Profiles and the circuit
// entries exactly as svc verify does (no cached profile or circuit
// directory: the page has none but the folder the user chose).
func Verify(in Input) Result {
	if len(in.VPEC.Data) == 0 {
		return Result{Error: "choose a VPEC JSON file (it is empty or was not chosen)", ExitCode: ExitUsage}
	}
	if len(in.Trust.Data) == 0 {
		return Result{Error: "choose the trust root (trust-root.json, or trust-bundle.pem, of the service that issued the VPEC): nothing is verified without it", ExitCode: ExitTrust}
	}
	// A svc.trust-root/v1 document (keys with purposes and windows) or a
	// PEM trust bundle (valid forever), as svc verify --trust-root.
	root, err := trustroot.Load(in.Trust.Data)
	if err != nil {
		return Result{Error: fmt.Sprintf("trust root %s: %v: it must be a svc.trust-root/v1 JSON document or a PEM file of PUBLIC KEY (Ed25519) and CERTIFICATE blocks", in.Trust.Name, err), ExitCode: ExitTrust}
	}
	if root, err = updateRoot(root, in.TrustRootUpdates); err != nil {
		return Result{Error: err.Error(), ExitCode: ExitTrust}
	}
	trust := verify.TrustFor(root)
	if len(trust.KeyIDs()) == 0 {
		return Result{Error: fmt.Sprintf("trust root %s holds no Ed25519 signing key: add the service's PUBLIC KEY block, or its vpec-signing key", in.Trust.Name), ExitCode: ExitTrust}
	}
	// A file chosen in the wrong place is named as such, as svc verify
	// names a circuit entry given to --profile (exit 2); a profile or
	// entry that cannot be had is missing trust material (exit 3).
	for _, p := range in.Profiles {
		if _, err := zkverify.ParseEntry(p.Data); err == nil {
			return Result{Error: fmt.Sprintf("%s is a signed circuit entry, not a model profile: choose it as a circuit entry", p.Name), ExitCode: ExitUsage}
		}
	}
	for _, c := range in.Circuits {
		if _, err := profile.Parse(c.Data); err == nil {
			return Result{Error: fmt.Sprintf("%s is a model profile, not a signed circuit entry: choose it as a profile", c.Name), ExitCode: ExitUsage}
		}
	}
	set := profile.NewSet()
	for _, p := range in.Profiles {
		if err := set.AddExplicitDoc(p.Name, p.Data); err != nil {
			code := ExitTrust
			if errors.Is(err, profile.ErrAmbiguous) {
				code = ExitUsage
			}
			return Result{Error: fmt.Sprintf("profile %s: %v", p.Name, err), ExitCode: code}
		}
	}
	circuits, warnings, err := zkverify.Load(zkverify.Sources{Folder: docs(in.CircuitFolder), Docs: docs(in.Circuits)})
	var skipped []string
	for _, w := range warnings {
		skipped = append(skipped, "skipping a file of the circuit folder: "+w.Error())
	}
	if err != nil {
		msg := fmt.Sprintf("circuit entries: %v: choose signed circuit entry JSON files (svc registry get-circuit writes one)", err)
		if errors.Is(err, zkverify.ErrAmbiguous) {
			msg = fmt.Sprintf("circuit entries: %v: choose each circuit entry once: which of the two is meant cannot be decided for you", err)
		}
		code := ExitTrust // named and not to be had, as svc verify --circuit
		if errors.Is(err, zkverify.ErrAmbiguous) {
			code = ExitUsage
		}
		return Result{Error: msg, Warnings: skipped, ExitCode: code}
	}
	opts := verify.Options{Trust: trust, Root: root, Profiles: set, RequireClean: in.RequireClean, RequireLog: in.RequireLog,
		Proofs: &zkverify.Verifier{Trust: trust, Root: root, Circuits: circuits, Given: CircuitGiven}, CircuitAdvice: CircuitAdvice}
	if in.Receipt.Name != "" || in.Receipt.Data != nil {
		opts.Receipt = in.Receipt.Data
		if opts.Receipt == nil {
			opts.Receipt = []byte{}
		}
	}
	if in.WitnessPolicy.Name != "" || in.WitnessPolicy.Data != nil {
		if opts.WitnessPolicy, err = tlog.ParseWitnessPolicy(in.WitnessPolicy.Data); err != nil {
			return Result{Error: fmt.Sprintf("witness policy %s: %v: choose a Sigsum policy file (witness, group and quorum lines)", in.WitnessPolicy.Name, err), Warnings: skipped, ExitCode: ExitTrust}
		}
	}
	report, err := verify.Verify(in.VPEC.Data, opts)
	code := ExitValid
	switch {
	case err == nil:
	case errors.Is(err, verify.ErrUnreadable):
		code = ExitUsage
	case errors.Is(err, verify.ErrUnverified):
		code = ExitTrust
	case errors.Is(err, verify.ErrInvalid):
		code = ExitInvalid
	default:
		return Result{Error: err.Error(), Warnings: skipped, ExitCode: ExitUsage}
	}
	report.TrustRoot = &verify.TrustRoot{File: in.Trust.Name, Source: TrustSource}
	return Result{Report: report, Warnings: skipped, ExitCode: code}
}

// updateRoot applies the trust root updates in order, each checked
// against the root before it, as svc verify --trust-root-update.
func updateRoot(root *trustroot.Root, updates []File) (*trustroot.Root, error) {
	if len(updates) == 0 {
		return root, nil
	}
	if root.Legacy() {
		return nil, errors.New("a trust root update needs a svc.trust-root/v1 trust root: a PEM trust bundle has no root keys to check an update with; start from the first svc.trust-root/v1 root the operator gave you out of band")
	}
	type update struct {
		name string
		root *trustroot.Root
	}
	var parsed []update
	for _, u := range updates {
		next, err := trustroot.Parse(u.Data)
		if err != nil {
			return nil, fmt.Errorf("trust root update %s (%s): %w: choose a svc.trust-root/v1 JSON file", u.Name, trustroot.Code(err), err)
		}
		parsed = append(parsed, update{u.Name, next})
	}
	// A file chooser gives no order the user controls: the versions are
	// applied in version order (svc verify applies its flags in the order
	// given); a missing version is still a version-gap.
	slices.SortStableFunc(parsed, func(a, b update) int { return cmp.Compare(a.root.Version, b.root.Version) })
	cur := root
	for _, u := range parsed {
		var err error
		if cur, err = trustroot.VerifyUpdate(cur, u.root); err != nil {
			return nil, fmt.Errorf("trust root update %s refused (%s): %w: do not use it; fetch the versions again from the service (/.well-known/svc/trust-root/N.json)", u.name, trustroot.Code(err), err)
		}
	}
	return cur, nil
}

func docs(files []File) []zkverify.Doc {
	out := make([]zkverify.Doc, len(files))
	for i, f := range files {
		out[i] = zkverify.Doc{Name: f.Name, Data: f.Data}
	}
	return out
}
