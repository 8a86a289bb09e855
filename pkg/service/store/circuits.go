package store

import (
	"context"
	"time"
)

// Circuit is a published, signed circuit entry (pkg/zk): the verifying key
// of a zero-knowledge circuit, bound to the model it proves.
type Circuit struct {
	ID          string // circuit_id: sha256:<hex> of the verifying key
	Circuit     string // mlp_head or a condition circuit (threshold_check, ...)
	ModelHash   string // onnx_model_hash of an mlp_head circuit; "" otherwise
	Body        []byte // the signed entry JSON
	PublishedAt time.Time
}

// CircuitReader reads the circuit registry.
type CircuitReader interface {
	// CircuitByID returns the entry with the circuit id; ErrNotFound if
	// absent.
	CircuitByID(ctx context.Context, id string) (Circuit, error)
	// CircuitByModelHash returns the most recently published entry of an
	// mlp_head circuit for the model; ErrNotFound if none.
	CircuitByModelHash(ctx context.Context, modelHash string) (Circuit, error)
}

// CircuitStore is the circuit registry beside the profile registry.
type CircuitStore interface {
	CircuitReader
	// PutCircuit publishes an entry; ErrExists if its circuit id is taken
	// (entries are immutable).
	PutCircuit(ctx context.Context, c Circuit) error
}
