package zk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/svc-gov/svc/pkg/document"
	"github.com/svc-gov/svc/pkg/vpec"
)

// ErrAmbiguous reports two explicitly given entry files that hold the same
// circuit_id with different bytes.
var ErrAmbiguous = errors.New("ambiguous circuit entry")

// EntryFile is a circuit entry given explicitly (verify --circuit); Err is
// set when the file is not an entry document at all.
type EntryFile struct {
	Path string
	ID   string
	Doc  []byte
	Err  error
}

// Set holds circuit entry documents indexed by circuit id, loaded from
// files or a cache directory. It keeps the raw signed bytes; signatures
// are checked where an entry is used.
type Set struct {
	docs     map[string][]byte
	explicit []EntryFile
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{docs: map[string][]byte{}} }

// Add parses doc (without checking its signature) and adds it under its
// circuit id.
func (s *Set) Add(doc []byte) (string, error) {
	e, err := ParseEntry(doc)
	if err != nil {
		return "", err
	}
	s.docs[e.CircuitID] = doc
	return e.CircuitID, nil
}

// AddExplicit reads the entry file at path, given explicitly; it wins over
// a cached entry of the same circuit id. A file that is not a valid entry
// is kept with its error (the verifier reports it as invalid rather than
// as missing). Two explicit files with one circuit_id must be
// byte-identical (else ErrAmbiguous).
func (s *Set) AddExplicit(path string) error {
	doc, err := readLimited(path)
	if err != nil {
		return fmt.Errorf("read circuit entry: %w", err)
	}
	e, err := ParseEntry(doc)
	if err != nil {
		s.explicit = append(s.explicit, EntryFile{Path: path, Err: err})
		return nil
	}
	for _, f := range s.explicit {
		if f.ID == e.CircuitID && !bytes.Equal(f.Doc, doc) {
			return fmt.Errorf("%w: %s and %s both hold circuit %s, with different bytes; pass one", ErrAmbiguous, f.Path, path, e.CircuitID)
		}
	}
	s.explicit = append(s.explicit, EntryFile{Path: path, ID: e.CircuitID, Doc: doc})
	s.docs[e.CircuitID] = doc
	return nil
}

// AddDir adds every *.json entry in dir (a missing directory adds
// nothing); files that are not valid entries are skipped and returned.
func (s *Set) AddDir(dir string) []error {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(paths)
	var errs []error
	for _, p := range paths {
		doc, err := readLimited(p)
		if err == nil {
			_, err = s.Add(doc)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p, err))
		}
	}
	return errs
}

// Explicit returns the files given with AddExplicit, in order.
func (s *Set) Explicit() []EntryFile { return s.explicit }

// Entry returns the document of the entry with the given circuit id, or an
// error matching vpec.ErrCircuitNotFound.
func (s *Set) Entry(circuitID string) ([]byte, error) {
	doc, ok := s.docs[circuitID]
	if !ok {
		return nil, fmt.Errorf("%w: %s", vpec.ErrCircuitNotFound, circuitID)
	}
	return doc, nil
}

// Len returns the number of entries in the set.
func (s *Set) Len() int { return len(s.docs) }

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	const limit = 4 * MaxVerifyingKeyBytes
	doc, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if len(doc) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", document.ErrTooLarge, path, limit)
	}
	return doc, nil
}
