package tlog

import (
	"errors"
	"fmt"
)

// Sentinel errors, one per failure class, matchable with errors.Is. The
// messages of the errors wrapping them say what was found and how to fix
// it.
var (
	// ErrMalformed reports a leaf, receipt, checkpoint, witness policy,
	// key or proof that is not in its one accepted encoding.
	ErrMalformed = errors.New("malformed")
	// ErrWrongVPEC reports a receipt whose leaf records another VPEC: its
	// vpec_id or the digest of the VPEC's signed bytes differs.
	ErrWrongVPEC = errors.New("receipt is for another VPEC")
	// ErrCheckpointTooOld reports a receipt whose checkpoint does not
	// cover its log index (the checkpoint predates the entry).
	ErrCheckpointTooOld = errors.New("checkpoint does not cover the entry")
	// ErrInclusion reports an inclusion proof that does not lead from the
	// leaf at the receipt's index to the checkpoint's root: a proof for
	// another index, another leaf or another tree.
	ErrInclusion = errors.New("inclusion proof does not verify")
	// ErrWrongLog reports a checkpoint whose origin is not the trusted
	// log's: a checkpoint from another log.
	ErrWrongLog = errors.New("checkpoint is from another log")
	// ErrLogSignature reports a checkpoint without a valid signature by
	// the trusted log key (unsigned, forged, or signed by another key).
	ErrLogSignature = errors.New("checkpoint is not signed by the log key")
	// ErrCosignature reports a cosignature, by a witness of the policy,
	// that does not verify: a forged cosignature.
	ErrCosignature = errors.New("witness cosignature does not verify")
	// ErrWitnessPolicy reports a checkpoint that lacks the cosignatures
	// the witness policy requires.
	ErrWitnessPolicy = errors.New("witness policy not satisfied")
	// ErrInconsistent reports two checkpoints that are not views of one
	// append-only log: the older is not a prefix of the newer (a split
	// view or a rewritten history).
	ErrInconsistent = errors.New("checkpoints are not consistent")
	// ErrLogShrank reports a checkpoint smaller than one already seen of
	// the same log: the log shrank, or the two were given in the wrong
	// order.
	ErrLogShrank = errors.New("log shrank")
)

// WitnessError reports a failure that concerns one witness of the policy.
// It matches its Err (ErrCosignature) with errors.Is.
type WitnessError struct {
	// Witness is the witness's key name.
	Witness string
	// Err is the failure class.
	Err error
	// Detail says what was found.
	Detail string
}

// Error names the witness and the problem.
func (e *WitnessError) Error() string {
	return fmt.Sprintf("witness %q: %v: %s", e.Witness, e.Err, e.Detail)
}

// Unwrap returns the failure class.
func (e *WitnessError) Unwrap() error { return e.Err }

func malformed(what, format string, args ...any) error {
	return fmt.Errorf("%w %s: %s", ErrMalformed, what, fmt.Sprintf(format, args...))
}
