// Package pbwire reads protobuf messages field by field, without generated
// code: what the ONNX readers (pkg/ml/trace's graph, pkg/zk/head's heads)
// need of a ModelProto. Every length is checked; a malformed message is an
// error wrapping protowire's, never a panic.
package pbwire

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// ErrMalformed is wrapped by every error for bytes that are not a
// protobuf message.
var ErrMalformed = errors.New("protobuf: malformed message")

func malformed(n int) error { return fmt.Errorf("%w: %w", ErrMalformed, protowire.ParseError(n)) }

// Walk calls fn for every field of a message: with its bytes (v) if it is
// length-delimited, its value (x) if it is a varint or fixed; groups are
// skipped.
func Walk(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return malformed(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var x32 uint32
			x32, n = protowire.ConsumeFixed32(b)
			x = uint64(x32)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return malformed(n)
		}
		b = b[n:]
		if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
			continue
		}
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

// Fields calls fn for every length-delimited field of a message and skips
// the others.
func Fields(b []byte, fn func(protowire.Number, []byte) error) error {
	return Walk(b, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		return fn(num, v)
	})
}

// Repeated decodes one occurrence of a repeated scalar field of wire type
// want (varint, fixed32 or fixed64), packed (one length-delimited field) or
// not, calling fn for each element; a field of another wire type is
// ignored.
func Repeated(typ protowire.Type, v []byte, x uint64, want protowire.Type, fn func(uint64)) error {
	if typ == want {
		fn(x)
		return nil
	}
	if typ != protowire.BytesType {
		return nil
	}
	for len(v) > 0 {
		var n int
		switch want {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(v)
		case protowire.Fixed32Type:
			var x32 uint32
			x32, n = protowire.ConsumeFixed32(v)
			x = uint64(x32)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(v)
		default:
			return fmt.Errorf("pbwire: packed fields of wire type %d are not scalars", want)
		}
		if n < 0 {
			return malformed(n)
		}
		fn(x)
		v = v[n:]
	}
	return nil
}
