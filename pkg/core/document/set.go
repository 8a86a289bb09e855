package document

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// SetFile is a document given explicitly (svc verify --profile, --circuit):
// the verifier checks every one, whether or not a record needs it. Err is
// set when the file is not a document of the set's kind; Doc is then nil.
type SetFile struct {
	Path string
	ID   string
	Doc  []byte
	Err  error
}

// Set holds signed documents of one kind (drift profiles, circuit entries)
// indexed by their id, loaded from files or a cache directory. It keeps
// the raw signed bytes; signatures are checked where a document is used.
type Set struct {
	kind      string
	parseID   func([]byte) (string, error)
	maxSize   int
	ambiguous error
	docs      map[string][]byte
	explicit  []SetFile
}

// NewSet returns an empty set of documents of kind (as named in errors):
// parseID parses a document and returns its id, maxSize bounds a file
// before it is read whole, and ambiguous is the error two explicit files
// holding one id with different bytes wrap.
func NewSet(kind string, parseID func([]byte) (string, error), maxSize int, ambiguous error) *Set {
	return &Set{kind: kind, parseID: parseID, maxSize: maxSize, ambiguous: ambiguous, docs: map[string][]byte{}}
}

// Add parses doc (without checking its signature) and adds it under its
// id.
func (s *Set) Add(doc []byte) (string, error) {
	id, err := s.parseID(doc)
	if err != nil {
		return "", err
	}
	s.docs[id] = doc
	return id, nil
}

// AddFile reads and adds the document at path.
func (s *Set) AddFile(path string) (string, error) {
	doc, err := s.read(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", s.kind, err)
	}
	id, err := s.Add(doc)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return id, nil
}

// AddNamed adds a document read elsewhere (a file of a folder chosen in
// the offline verifier page) as AddFile adds one read from disk: bounded
// by the set's size limit (an error matching ErrTooLarge), errors naming
// it.
func (s *Set) AddNamed(name string, doc []byte) (string, error) {
	if len(doc) > s.maxSize {
		return "", fmt.Errorf("%w: %s is %d bytes, larger than %d", ErrTooLarge, name, len(doc), s.maxSize)
	}
	id, err := s.Add(doc)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return id, nil
}

// AddExplicit reads the file at path, given explicitly, and adds it,
// winning over a cached document of the same id. A file that cannot be
// read is an error; one that is not a valid document is kept with its
// error in Explicit (the verifier reports it as invalid rather than as
// missing). Two explicit files with one id must be byte-identical.
func (s *Set) AddExplicit(path string) error {
	doc, err := s.read(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.kind, err)
	}
	return s.AddExplicitDoc(path, doc)
}

// AddExplicitDoc is AddExplicit for a document already in memory (the
// in-browser verifier's chosen files); name stands for its path.
func (s *Set) AddExplicitDoc(name string, doc []byte) error {
	if len(doc) > s.maxSize {
		return fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, name, s.maxSize)
	}
	id, err := s.parseID(doc)
	if err != nil {
		s.explicit = append(s.explicit, SetFile{Path: name, Err: err})
		return nil
	}
	for _, f := range s.explicit {
		if f.ID == id && !bytes.Equal(f.Doc, doc) {
			return fmt.Errorf("%w: %s and %s both hold %s %s, with different bytes; pass one", s.ambiguous, f.Path, name, s.kind, id)
		}
	}
	s.explicit = append(s.explicit, SetFile{Path: name, ID: id, Doc: doc})
	s.docs[id] = doc
	return nil
}

// AddDir adds every *.json document in dir. A missing directory adds
// nothing; files that are not valid documents are skipped and returned.
func (s *Set) AddDir(dir string) []error {
	paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	sort.Strings(paths)
	var errs []error
	for _, p := range paths {
		if _, err := s.AddFile(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// Explicit returns the files given with AddExplicit, in order.
func (s *Set) Explicit() []SetFile { return s.explicit }

// Get returns the document with the given id.
func (s *Set) Get(id string) ([]byte, bool) {
	doc, ok := s.docs[id]
	return doc, ok
}

// IDs returns the ids held, sorted.
func (s *Set) IDs() []string {
	ids := make([]string, 0, len(s.docs))
	for id := range s.docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Len returns the number of documents in the set.
func (s *Set) Len() int { return len(s.docs) }

// read reads a file of at most maxSize bytes; a larger one is refused
// with an error matching ErrTooLarge, before it is read whole.
func (s *Set) read(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > int64(s.maxSize) {
		return nil, fmt.Errorf("%w: %s is %d bytes, larger than %d", ErrTooLarge, path, st.Size(), s.maxSize)
	}
	doc, err := io.ReadAll(io.LimitReader(f, int64(s.maxSize)+1))
	if err != nil {
		return nil, err
	}
	if len(doc) > s.maxSize {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrTooLarge, path, s.maxSize)
	}
	return doc, nil
}
