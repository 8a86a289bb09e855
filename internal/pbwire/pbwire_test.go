package pbwire

import (
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestWalkAndRepeated(t *testing.T) {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 7)
	b = protowire.AppendTag(b, 1, protowire.BytesType) // packed: 8, 300
	b = protowire.AppendBytes(b, protowire.AppendVarint(protowire.AppendVarint(nil, 8), 300))
	b = protowire.AppendTag(b, 2, protowire.StartGroupType) // skipped whole
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 2, protowire.EndGroupType)
	b = protowire.AppendTag(b, 4, protowire.BytesType)
	b = protowire.AppendString(b, "name")
	b = protowire.AppendTag(b, 5, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, 9)

	var ints []uint64
	var nums []protowire.Number
	err := Walk(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
		nums = append(nums, num)
		if num == 1 {
			return Repeated(typ, v, x, protowire.VarintType, func(u uint64) { ints = append(ints, u) })
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ints, []uint64{7, 8, 300}) || !slices.Equal(nums, []protowire.Number{1, 1, 4, 5}) {
		t.Fatalf("ints %v, fields %v", ints, nums)
	}
	var got []string
	if err := Fields(b, func(_ protowire.Number, v []byte) error { got = append(got, string(v)); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1] != "name" {
		t.Fatalf("Fields: %q", got)
	}
	for _, bad := range [][]byte{{0x0a, 0x05, 'a'}, {0x08}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		if err := Walk(bad, func(protowire.Number, protowire.Type, []byte, uint64) error { return nil }); !errors.Is(err, ErrMalformed) {
			t.Errorf("Walk(%x) = %v, want ErrMalformed", bad, err)
		}
	}
	if err := Repeated(protowire.BytesType, []byte{0x80}, 0, protowire.VarintType, func(uint64) {}); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated packed varint: %v", err)
	}
}

func FuzzWalk(f *testing.F) {
	f.Add([]byte{0x08, 0x07, 0x0a, 0x02, 0x08, 0x09})
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = Walk(b, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
			_ = Repeated(typ, v, x, protowire.VarintType, func(uint64) {})
			_ = Repeated(typ, v, x, protowire.Fixed32Type, func(uint64) {})
			return Fields(v, func(protowire.Number, []byte) error { return nil })
		})
	})
}
