package zk

import (
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/document"
	"github.com/svc-gov/svc/pkg/vpec"
)

// ErrAmbiguous reports two explicitly given entry files that hold the same
// circuit_id with different bytes.
var ErrAmbiguous = errors.New("ambiguous circuit entry")

// EntryFile is a circuit entry given explicitly (verify --circuit); Err is
// set when the file is not an entry document at all.
type EntryFile = document.SetFile

// Set holds circuit entry documents indexed by circuit id, loaded from
// files or a cache directory (document.Set: Add, AddFile, AddExplicit,
// AddExplicitDoc, AddDir, Explicit, Len). It keeps the raw signed bytes;
// signatures are checked where an entry is used.
type Set struct{ *document.Set }

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{document.NewSet("circuit entry", func(doc []byte) (string, error) {
		e, err := ParseEntry(doc)
		if err != nil {
			return "", err
		}
		return e.CircuitID, nil
	}, 4*MaxVerifyingKeyBytes, ErrAmbiguous)}
}

// Entry returns the document of the entry with the given circuit id, or an
// error matching vpec.ErrCircuitNotFound.
func (s *Set) Entry(circuitID string) ([]byte, error) {
	doc, ok := s.Get(circuitID)
	if !ok {
		return nil, fmt.Errorf("%w: %s", vpec.ErrCircuitNotFound, circuitID)
	}
	return doc, nil
}
