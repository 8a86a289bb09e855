package trustroot

import (
	"encoding/base64"
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/core/canonical"
)

type jsonRoot struct {
	Schema        string     `json:"schema"`
	Version       int64      `json:"version"`
	IssuedAt      string     `json:"issued_at"`
	RootThreshold int        `json:"root_threshold"`
	Keys          []jsonKey  `json:"keys"`
	Signatures    []jsonSign `json:"signatures,omitempty"`
}

type jsonKey struct {
	KeyID         string `json:"key_id"`
	Purpose       string `json:"purpose"`
	PublicKey     string `json:"public_key,omitempty"`
	Certificate   string `json:"certificate,omitempty"`
	NoteVerifier  string `json:"note_verifier,omitempty"`
	ValidFrom     string `json:"valid_from"`
	ValidUntil    string `json:"valid_until,omitempty"`
	CompromisedAt string `json:"compromised_at,omitempty"`
	Comment       string `json:"comment,omitempty"`
}

type jsonSign struct {
	KeyID     string `json:"key_id"`
	Signature string `json:"signature"`
}

// ErrLegacy reports an operation a legacy PEM bundle read by FromBundle
// cannot do (it has no windows to write, no version to chain from).
var ErrLegacy = errors.New("a legacy PEM trust bundle has no validity windows or versions; convert it with ConvertBundle")

func (r *Root) toJSON(withSignatures bool) (*jsonRoot, error) {
	if r.Legacy() {
		return nil, ErrLegacy
	}
	j := &jsonRoot{Schema: Schema, Version: r.Version, IssuedAt: FormatTime(r.IssuedAt), RootThreshold: r.Threshold, Keys: []jsonKey{}}
	for _, k := range r.Keys {
		jk := jsonKey{KeyID: k.KeyID, Purpose: string(k.Purpose), NoteVerifier: k.NoteVerifier, ValidFrom: FormatTime(k.Window.From), Comment: k.Comment}
		if k.Certificate != nil {
			jk.Certificate = base64.StdEncoding.EncodeToString(k.Certificate.Raw)
		} else {
			jk.PublicKey = base64.StdEncoding.EncodeToString(k.SPKI())
		}
		if !k.Window.Until.IsZero() {
			jk.ValidUntil = FormatTime(k.Window.Until)
		}
		if !k.Window.CompromisedAt.IsZero() {
			jk.CompromisedAt = FormatTime(k.Window.CompromisedAt)
		}
		j.Keys = append(j.Keys, jk)
	}
	if withSignatures {
		for _, s := range r.Signatures {
			j.Signatures = append(j.Signatures, jsonSign(s))
		}
	}
	return j, nil
}

// SignedBytes returns the bytes root signatures cover: the RFC 8785
// canonical form of the root without its "signatures" member.
func (r *Root) SignedBytes() ([]byte, error) {
	if r.signed != nil {
		return r.signed, nil
	}
	j, err := r.toJSON(false)
	if err != nil {
		return nil, err
	}
	b, err := canonical.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("trust root: encode: %w", err)
	}
	return b, nil
}

// Marshal returns the root as svc writes it: its RFC 8785 canonical form
// and a newline. It checks the root first (Check), so what it writes,
// Parse reads back to the same root.
func (r *Root) Marshal() ([]byte, error) {
	if err := r.Check(); err != nil {
		return nil, err
	}
	j, err := r.toJSON(true)
	if err != nil {
		return nil, err
	}
	b, err := canonical.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("trust root: encode: %w", err)
	}
	return append(b, '\n'), nil
}

// Check applies Parse's rules to a root built or changed in memory: it
// marshals the root without signatures and parses it back.
func (r *Root) Check() error {
	if r.Legacy() {
		return ErrLegacy
	}
	j, err := r.toJSON(false)
	if err != nil {
		return err
	}
	b, err := canonical.Marshal(j)
	if err != nil {
		return fmt.Errorf("trust root: encode: %w", err)
	}
	_, err = Parse(b)
	return err
}
