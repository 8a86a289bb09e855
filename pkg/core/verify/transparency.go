package verify

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/svc-gov/svc/pkg/core/tlog"
	"github.com/svc-gov/svc/pkg/core/trustroot"
)

// CheckTransparency: the VPEC's transparency log receipt (Options.Receipt)
// proves it is in the log: the leaf records this VPEC, the inclusion proof
// leads to the checkpoint's root, the checkpoint is signed by a
// log-checkpoint key of the trust root (valid at the time checked) and
// carries the cosignatures the witness policy requires; given a newer
// checkpoint, the receipt's is a prefix of it. Without a receipt the
// check does not apply (it says so), unless Options.RequireLog.
const CheckTransparency CheckName = "transparency"

// Codes of the transparency check, one per failure class of
// docs/TRANSPARENCY.md, "Verifying a receipt".
const (
	CodeNoReceipt          = "NO LOG RECEIPT"
	CodeLogKeyMissing      = "LOG KEY MISSING"
	CodeReceiptMalformed   = "RECEIPT MALFORMED"
	CodeReceiptOtherVPEC   = "RECEIPT FOR ANOTHER VPEC"
	CodeCheckpointOtherLog = "CHECKPOINT FROM ANOTHER LOG"
	CodeLogSignature       = "CHECKPOINT NOT SIGNED BY LOG KEY"
	CodeCheckpointTooOld   = "CHECKPOINT TOO OLD"
	CodeInclusion          = "INCLUSION PROOF INVALID"
	CodeCosignature        = "COSIGNATURE FORGED"
	CodeWitnessPolicy      = "WITNESS POLICY NOT SATISFIED"
	CodeInconsistent       = "CHECKPOINT INCONSISTENT"
	CodeLogShrank          = "CHECKPOINT NEWER THAN GIVEN"
	CodeNewerCheckpoint    = "NEWER CHECKPOINT INVALID"
	// CodeLogKeyWindowUnchecked: the log key has a validity window and
	// there is no time to check it at (no verified genTime, no witness
	// cosignature): trust material missing, never a pass.
	CodeLogKeyWindowUnchecked = "LOG KEY WINDOW NOT CHECKED"
)

// tlogCodes maps the tlog sentinels to codes, in the order the receipt's
// checks run (the rank a failure reached).
var tlogCodes = []struct {
	err  error
	code string
}{
	{tlog.ErrMalformed, CodeReceiptMalformed},
	{tlog.ErrWrongVPEC, CodeReceiptOtherVPEC},
	{tlog.ErrWrongLog, CodeCheckpointOtherLog},
	{tlog.ErrLogSignature, CodeLogSignature},
	{tlog.ErrCheckpointTooOld, CodeCheckpointTooOld},
	{tlog.ErrInclusion, CodeInclusion},
	{tlog.ErrCosignature, CodeCosignature},
	{tlog.ErrWitnessPolicy, CodeWitnessPolicy},
	{tlog.ErrInconsistent, CodeInconsistent},
	{tlog.ErrLogShrank, CodeLogShrank},
}

// tlogRank returns the index of err's class in tlogCodes, -1 if none.
func tlogRank(err error) int {
	for i, t := range tlogCodes {
		if errors.Is(err, t.err) {
			return i
		}
	}
	return -1
}

func tlogCode(err error) string {
	if i := tlogRank(err); i >= 0 {
		return tlogCodes[i].code
	}
	return CodeReceiptMalformed
}

// transparency runs after the timestamp check: a log key's window is
// checked at the VPEC's verified genTime when no witness attests a time.
func (s *state) transparency() Check {
	// The subject's digest hashes the whole signed document: only when
	// there is a receipt to check it against.
	subject := func() tlog.Subject {
		return tlog.Subject{VPECID: s.doc.VPEC.VPECID, Digest: tlog.DigestParts(s.doc.SignedParts)}
	}
	return checkTransparency(s.opts, subject, s.genTime)
}

// checkTransparency checks opts.Receipt for the subject subject returns.
func checkTransparency(opts *Options, subject func() tlog.Subject, genTime time.Time) Check {
	c := Check{Name: CheckTransparency}
	if opts.Receipt == nil {
		if opts.RequireLog {
			return fail(c, CodeNoReceipt, "no transparency log receipt given, and one is required (--require-log): fetch it with 'svc vpec get' (vpec.receipt.json) and pass it with --receipt", false)
		}
		c.Status, c.Message = NotApplicable, "no transparency log receipt given: inclusion in the log not checked (pass --receipt vpec.receipt.json; --require-log makes a missing receipt INVALID)"
		return c
	}
	root := opts.Root
	if root == nil && opts.Trust != nil {
		// Options.Trust alone: its TRANSPARENCY LOG KEY blocks are the
		// log keys, valid forever, as when the CLI reads the bundle.
		root = trustroot.FromBundle(opts.Trust)
	}
	logKeys := rootLogKeys(root)
	if len(logKeys) == 0 {
		return fail(c, CodeLogKeyMissing, "receipt not checked: the trust material lists no log-checkpoint key (a svc.trust-root/v1 root lists the log's note verifier key; a PEM trust bundle a TRANSPARENCY LOG KEY block)", true)
	}
	policy, policyName, err := witnessPolicy(opts)
	if err != nil {
		return fail(c, CodeWitnessPolicy, fmt.Sprintf("receipt not checked: the witness policy of the trust root cannot be built: %v", err), true)
	}
	var (
		got   *tlog.Verified
		ver   *tlog.Verifier
		entry *trustroot.Key
		best  error
		sub   = subject()
	)
	for _, lk := range logKeys {
		v, err := tlog.NewVerifier(lk.key, policy)
		if err != nil {
			return fail(c, CodeLogKeyMissing, fmt.Sprintf("receipt not checked: log key %s: %v", lk.entry.KeyID, err), true)
		}
		if opts.Root != nil && !opts.Root.Legacy() {
			v = v.WithCosignatureWindow(witnessWindow(opts.Root))
		}
		r, err := v.VerifyReceipt(opts.Receipt, sub)
		if err == nil {
			got, ver, entry = r, v, lk.entry
			break
		}
		if best == nil || tlogRank(err) > tlogRank(best) {
			best = err
		}
	}
	if got == nil {
		var ke *trustroot.KeyError
		if errors.Is(best, tlog.ErrWitnessPolicy) && errors.As(best, &ke) {
			// The policy failed because a witness key's window refused
			// its cosignature: the verdict names the key's refusal.
			f := keyFail(c, "WITNESS", ke)
			f.Message = "receipt invalid: " + best.Error()
			return f
		}
		return fail(c, tlogCode(best), "receipt invalid: "+best.Error(), false)
	}
	// The log key's window, at the latest time a witness attests, or
	// else the VPEC's verified genTime (docs/KEYS.md, "Which time").
	at, atWhat := genTime, "the VPEC's timestamp"
	for _, cs := range got.Checkpoint.Cosignatures {
		if cs.Time.After(at) {
			at, atWhat = cs.Time, "witness "+cs.Witness+"'s cosignature"
		}
	}
	window := entry.Window.String()
	if !entry.Window.Forever && at.IsZero() {
		return fail(c, CodeLogKeyWindowUnchecked, fmt.Sprintf("receipt verified, but log key %s's window (%s) is checked at no time: the VPEC's timestamp did not verify and no witness of the policy cosigned (docs/KEYS.md, \"Which time\")", entry.KeyID, window), true)
	}
	if !entry.Window.Forever {
		k, err := opts.Root.KeyFor(trustroot.PurposeLog, entry.KeyID, at)
		if err != nil {
			return keyFail(c, "LOG", err)
		}
		window = fmt.Sprintf("checked at %s, the time of %s: %s", trustroot.FormatTime(at), atWhat, k.Window)
	}
	var witnesses []string
	for _, cs := range got.Checkpoint.Cosignatures {
		witnesses = append(witnesses, cs.Witness)
	}
	cosigned := "no cosignature"
	if len(witnesses) > 0 {
		cosigned = "cosigned by " + strings.Join(witnesses, ", ")
	}
	c.Message = fmt.Sprintf("in the transparency log %s at index %d of %d (log key %s, %s; %s; witness policy: %s)",
		got.Checkpoint.Origin, got.Index, got.Checkpoint.Size, entry.KeyID, window, cosigned, policyName)
	if opts.NewerCheckpoint != nil {
		newer, err := ver.VerifyCheckpoint(opts.NewerCheckpoint)
		if err != nil {
			return fail(c, CodeNewerCheckpoint, "the newer checkpoint given is not usable: "+err.Error(), false)
		}
		if err := ver.VerifyConsistency(got.Checkpoint, newer, opts.ConsistencyProof); err != nil {
			return fail(c, tlogCode(err), fmt.Sprintf("the receipt's checkpoint (%d entries) is not a prefix of the newer checkpoint given (%d entries): %v", got.Checkpoint.Size, newer.Size, err), false)
		}
		c.Message += fmt.Sprintf("; a prefix of the newer checkpoint given (%d entries)", newer.Size)
	}
	c.Status = Pass
	return c
}

// witnessWindow is the CosignatureWindow of a trust root: a cosignature
// by a key the root lists for the witness purpose counts only if the
// cosignature's timestamp is inside the key's window (docs/KEYS.md, "Which
// time a window is checked against"). A witness the root does not list (one
// named only by a --witness-policy file) is trusted as the policy file
// says, with no window.
func witnessWindow(root *trustroot.Root) tlog.CosignatureWindow {
	return func(w note.Verifier, t time.Time) error {
		_, err := root.KeyForNote(trustroot.PurposeWitness, w.Name(), w.KeyHash(), t)
		if errors.Is(err, trustroot.ErrUnknownKey) {
			return nil
		}
		return err
	}
}

type logKey struct {
	key   tlog.LogKey
	entry *trustroot.Key
}

// rootLogKeys returns the log-checkpoint keys of root, in root order.
func rootLogKeys(root *trustroot.Root) []logKey {
	if root == nil {
		return nil
	}
	var out []logKey
	for _, k := range root.Keys {
		if k.Purpose != trustroot.PurposeLog || k.NoteVerifier == "" {
			continue
		}
		lk, err := tlog.ParseLogKey(k.NoteVerifier)
		if err != nil {
			continue // Parse checked it; a key tlog refuses verifies nothing
		}
		out = append(out, logKey{key: lk, entry: k})
	}
	return out
}

// witnessPolicy returns the policy a receipt's checkpoint must satisfy and
// how the report names it: opts.WitnessPolicy when given, else every
// witness key of the root (all must cosign), else "quorum none".
func witnessPolicy(opts *Options) (*tlog.WitnessPolicy, string, error) {
	if opts.WitnessPolicy != nil {
		return opts.WitnessPolicy, "the policy given", nil
	}
	var b strings.Builder
	var names []string
	if opts.Root != nil {
		for _, k := range opts.Root.Keys {
			if k.Purpose != trustroot.PurposeWitness || k.NoteVerifier == "" {
				continue
			}
			c := fmt.Sprintf("w%d", len(names))
			// The URL is required by the policy format and never used
			// by a verifier.
			fmt.Fprintf(&b, "witness %s %s https://witness.invalid/\n", c, k.NoteVerifier)
			names = append(names, c)
		}
	}
	if len(names) == 0 {
		p, err := tlog.ParseWitnessPolicy([]byte("quorum none\n"))
		return p, "none (no witness key in the trust root: the log's signature alone)", err
	}
	fmt.Fprintf(&b, "group root-witnesses all %s\nquorum root-witnesses\n", strings.Join(names, " "))
	p, err := tlog.ParseWitnessPolicy([]byte(b.String()))
	return p, fmt.Sprintf("every witness of the trust root (%d)", len(names)), err
}
