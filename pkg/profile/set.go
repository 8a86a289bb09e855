package profile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/svc-gov/svc/pkg/document"
)

// ErrNotFound reports a profile id that a Set does not hold.
var ErrNotFound = errors.New("profile not found")

// ErrAmbiguous reports two explicitly given profile files that hold the
// same profile_id with different bytes: the set refuses to pick one.
var ErrAmbiguous = errors.New("ambiguous profile")

// File is a profile document given explicitly (svc verify --profile):
// every one is checked, whether or not a record needs it. Err is set when
// the file is not a profile document at all (corrupt JSON, a duplicate
// key, a schema error); Doc is then nil.
type File struct {
	Path string
	ID   string
	Doc  []byte
	Err  error
}

// Set is a collection of profile documents indexed by profile id, loaded
// from files or a directory. It stores the raw signed bytes; verification
// happens where a profile is used.
type Set struct {
	docs     map[string][]byte
	explicit []File
}

// NewSet returns an empty set.
func NewSet() *Set { return &Set{docs: map[string][]byte{}} }

// Add parses doc (without checking its signature) and adds it under its id.
func (s *Set) Add(doc []byte) (string, error) {
	p, err := Parse(doc)
	if err != nil {
		return "", err
	}
	s.docs[p.ProfileID] = doc
	return p.ProfileID, nil
}

// AddFile reads and adds the profile at path.
func (s *Set) AddFile(path string) (string, error) {
	doc, err := readLimited(path)
	if err != nil {
		return "", fmt.Errorf("read profile: %w", err)
	}
	id, err := s.Add(doc)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	return id, nil
}

// AddExplicit reads the profile file at path, given explicitly, and adds
// it, winning over a cached profile of the same id. A file that cannot be
// read is an error; a file that is not a valid profile document is kept,
// with its error, in Explicit (the verifier reports it as PROFILE INVALID
// rather than treating the profile as missing). Two explicit files with
// one profile_id are accepted only if byte-identical; otherwise the error
// wraps ErrAmbiguous.
func (s *Set) AddExplicit(path string) error {
	doc, err := readLimited(path)
	if err != nil {
		return fmt.Errorf("read profile: %w", err)
	}
	return s.AddExplicitDoc(path, doc)
}

// AddExplicitDoc is AddExplicit for a document already in memory (the
// in-browser verifier's chosen files); name stands for its path in
// Explicit and in errors. A document larger than document.MaxSize is
// refused with an error matching document.ErrTooLarge.
func (s *Set) AddExplicitDoc(name string, doc []byte) error {
	path := name
	if len(doc) > document.MaxSize {
		return fmt.Errorf("%w: %s is larger than %d bytes", document.ErrTooLarge, path, document.MaxSize)
	}
	p, err := Parse(doc)
	if err != nil {
		s.explicit = append(s.explicit, File{Path: path, Err: err})
		return nil
	}
	for _, f := range s.explicit {
		if f.ID == p.ProfileID && !bytes.Equal(f.Doc, doc) {
			return fmt.Errorf("%w: %s and %s both hold profile %s, with different bytes; pass one", ErrAmbiguous, f.Path, path, p.ProfileID)
		}
	}
	s.explicit = append(s.explicit, File{Path: path, ID: p.ProfileID, Doc: doc})
	s.docs[p.ProfileID] = doc
	return nil
}

// readLimited reads a file of at most document.MaxSize bytes; a larger
// one is refused with an error matching document.ErrTooLarge, before it
// is read whole.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > document.MaxSize {
		return nil, fmt.Errorf("%w: %s is %d bytes, larger than %d", document.ErrTooLarge, path, st.Size(), document.MaxSize)
	}
	doc, err := io.ReadAll(io.LimitReader(f, document.MaxSize+1))
	if err != nil {
		return nil, err
	}
	if len(doc) > document.MaxSize {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", document.ErrTooLarge, path, document.MaxSize)
	}
	return doc, nil
}

// Explicit returns the files given with AddExplicit, in order.
func (s *Set) Explicit() []File { return s.explicit }

// AddDir adds every *.json profile in dir. A missing directory adds
// nothing; files that are not valid profiles are skipped and returned as
// errors for the caller to report.
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

// Profile returns the document with the given profile id.
func (s *Set) Profile(id string) ([]byte, error) {
	doc, ok := s.docs[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return doc, nil
}

// Len returns the number of profiles in the set.
func (s *Set) Len() int { return len(s.docs) }

// ForModel returns the documents of the profiles that cover a model (by
// onnx_model_hash), in profile id order; their signatures are not checked.
func (s *Set) ForModel(onnxModelHash string) [][]byte {
	ids := make([]string, 0, len(s.docs))
	for id := range s.docs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var out [][]byte
	for _, id := range ids {
		if p, err := Parse(s.docs[id]); err == nil {
			if _, ok := p.Model(onnxModelHash); ok {
				out = append(out, s.docs[id])
			}
		}
	}
	return out
}
