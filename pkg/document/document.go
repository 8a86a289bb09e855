// Package document reads and signs svc's JSON documents (VPECs, model
// profiles). It decodes untrusted JSON strictly and computes the exact bytes
// a signature covers: the RFC 8785 canonical form of the document without its
// signature fields.
package document

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/svc-gov/svc/pkg/canonical"
)

// MaxSize is the largest document the decoders accept (256 MiB).
const MaxSize = 256 << 20

// ErrSchema reports a document that is not valid JSON of the expected shape:
// invalid JSON, duplicate keys, unknown, missing or mistyped fields.
var ErrSchema = errors.New("schema")

// Parse checks that data is I-JSON (valid UTF-8, no duplicate keys, finite
// numbers, no trailing data) and strictly decodes it into target (see
// Decode). It returns the parsed tree, from which signed bytes are computed
// without parsing again.
func Parse(data []byte, target any) (*canonical.Value, error) {
	if len(data) > MaxSize {
		return nil, fmt.Errorf("%w: document is %d bytes, larger than the %d byte limit", ErrSchema, len(data), MaxSize)
	}
	tree, err := canonical.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	if err := Decode(tree, target); err != nil {
		return tree, err
	}
	return tree, nil
}

// SignedBytes returns the RFC 8785 canonical bytes of the JSON object data
// with the named top-level fields removed: the bytes a signature covers.
func SignedBytes(data []byte, without ...string) ([]byte, error) {
	tree, err := canonical.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSchema, err)
	}
	if tree.Kind() != canonical.KindObject {
		return nil, fmt.Errorf("%w: document is a JSON %s, want an object", ErrSchema, tree.Kind())
	}
	return tree.Canonical(without...), nil
}

// MarshalSignedBytes marshals v and returns SignedBytes of the result.
func MarshalSignedBytes(v any, without ...string) ([]byte, error) {
	raw, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	return SignedBytes(raw, without...)
}

// Marshal encodes v as JSON without HTML escaping.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// MarshalIndent encodes v as indented JSON with a trailing newline, the
// form svc writes documents to files in.
func MarshalIndent(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return buf.Bytes(), nil
}
