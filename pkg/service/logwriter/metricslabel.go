package logwriter

import "errors"

// WitnessResult is the result label of a witness outcome for metrics
// (svc_witness_cosignatures_total{result}): "cosigned", "stale" (the
// witness had already cosigned a larger checkpoint), "unreachable",
// "conflict", "rejected", or "failed" for any other error. A server
// counts outcomes with Config.OnWitness:
//
//	OnWitness: func(ev logwriter.WitnessEvent) { m.Witness(logwriter.WitnessResult(ev)) }
func WitnessResult(ev WitnessEvent) string {
	switch {
	case ev.Err == nil && ev.Stale:
		return "stale"
	case ev.Err == nil:
		return "cosigned"
	case errors.Is(ev.Err, ErrWitnessUnreachable):
		return "unreachable"
	case errors.Is(ev.Err, ErrWitnessConflict):
		return "conflict"
	case errors.Is(ev.Err, ErrWitnessRejected):
		return "rejected"
	}
	return "failed"
}
