package zkverify

import (
	"errors"
	"fmt"
	"strings"

	"github.com/svc-gov/svc/pkg/core/document"
	"github.com/svc-gov/svc/pkg/core/verify"
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
	}, MaxEntryBytes, ErrAmbiguous)}
}

// Entry returns the document of the entry with the given circuit id, or an
// error matching verify.ErrCircuitNotFound.
func (s *Set) Entry(circuitID string) ([]byte, error) {
	doc, ok := s.Get(circuitID)
	if !ok {
		return nil, fmt.Errorf("%w: %s", verify.ErrCircuitNotFound, circuitID)
	}
	return doc, nil
}

// MaxEntryBytes bounds a circuit entry document: a larger file is refused
// before it is parsed (document.ErrTooLarge).
const MaxEntryBytes = 4 * MaxVerifyingKeyBytes

// Doc is a document already in memory and the name it is known by (the
// file name the user chose).
type Doc struct {
	Name string
	Data []byte
}

// Sources are where a verification's circuit entries come from; every
// surface that verifies (svc verify, svc-verify, the offline verifier
// page) loads them with Load, so they agree on what is skipped, what is
// checked and what stops the verification.
//
// Cached entries (a cache directory, or the .json files of a folder the
// user chose) that are not circuit entries are skipped with a warning.
// Explicit entries (files named on a command line or chosen one by one)
// are all kept: the Verifier checks each one's schema and signature,
// whether or not a record needs it (a bad one fails the zk_proofs check),
// and they win over cached entries with the same circuit id.
type Sources struct {
	// Dir is a cache directory read from disk (svc verify --circuit-dir):
	// its *.json files.
	Dir string
	// Folder are the files of a folder already in memory (the offline
	// page): those whose name ends in .json.
	Folder []Doc
	// Paths are explicit files read from disk (svc verify --circuit).
	Paths []string
	// Docs are explicit files already in memory (the offline page).
	Docs []Doc
}

// Load returns the circuit entries of src: the cached ones first, then
// the explicit ones, which win. warnings name the cached files skipped.
// err means the verification cannot start (svc verify exits 2): an
// explicit file that cannot be read, one larger than MaxEntryBytes
// (document.ErrTooLarge), or two explicit files that hold one circuit id
// with different bytes (ErrAmbiguous).
func Load(src Sources) (set *Set, warnings []error, err error) {
	set = NewSet()
	if src.Dir != "" {
		warnings = append(warnings, set.AddDir(src.Dir)...)
	}
	for _, d := range src.Folder {
		if !strings.HasSuffix(d.Name, ".json") {
			continue
		}
		if _, err := set.AddNamed(d.Name, d.Data); err != nil {
			warnings = append(warnings, err)
		}
	}
	for _, p := range src.Paths {
		if err := set.AddExplicit(p); err != nil {
			return nil, warnings, err
		}
	}
	for _, d := range src.Docs {
		if err := set.AddExplicitDoc(d.Name, d.Data); err != nil {
			return nil, warnings, err
		}
	}
	return set, warnings, nil
}
