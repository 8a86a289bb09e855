// Package tlog holds the formats of svc's transparency log and verifies
// them offline: the leaf that records one VPEC, the receipt that proves a
// VPEC is in the log (leaf index, RFC 6962 inclusion proof, and a C2SP
// signed-note checkpoint carrying witness cosignatures), the witness
// policy, the per-organisation monitoring key that opens a leaf's
// commitments, and the checks a verifier runs on them.
//
// The package is what an offline verifier imports: it uses no network, no
// HTTP stack, no cgo and not the Tessera log engine (TestDependencies
// guards that, for CGO_ENABLED=0 and for GOOS=js). The log itself is
// written by package logwriter (Tessera: POSIX backend for one process,
// MySQL for several; witnesses over tlog-witness) and read by package
// monitor. docs/TRANSPARENCY.md specifies every format here precisely
// enough for an independent implementation.
//
// A verifier is built once from its trust material, a log key and a
// witness policy ([NewVerifier]); its checks return errors that match one
// sentinel per failure class with errors.Is: [ErrWrongVPEC],
// [ErrCheckpointTooOld], [ErrInclusion], [ErrWrongLog], [ErrLogSignature],
// [ErrCosignature], [ErrWitnessPolicy], [ErrInconsistent], [ErrLogShrank],
// and [ErrMalformed] for input that is not in its one accepted encoding.
package tlog
