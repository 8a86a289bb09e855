package profile

import (
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/core/document"
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
type File = document.SetFile

// Set is a collection of profile documents indexed by profile id, loaded
// from files or a directory (document.Set: Add, AddFile, AddExplicit,
// AddExplicitDoc, AddDir, Explicit, Len). It stores the raw signed bytes;
// verification happens where a profile is used.
type Set struct{ *document.Set }

// NewSet returns an empty set.
func NewSet() *Set {
	return &Set{document.NewSet("profile", func(doc []byte) (string, error) {
		p, err := Parse(doc)
		if err != nil {
			return "", err
		}
		return p.ProfileID, nil
	}, document.MaxSize, ErrAmbiguous)}
}

// Profile returns the document with the given profile id.
func (s *Set) Profile(id string) ([]byte, error) {
	doc, ok := s.Get(id)
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, id)
	}
	return doc, nil
}

// ForModel returns the documents of the profiles that cover a model (by
// onnx_model_hash), in profile id order; their signatures are not checked.
func (s *Set) ForModel(onnxModelHash string) [][]byte {
	var out [][]byte
	for _, id := range s.IDs() {
		doc, _ := s.Get(id)
		if p, err := Parse(doc); err == nil {
			if _, ok := p.Model(onnxModelHash); ok {
				out = append(out, doc)
			}
		}
	}
	return out
}
