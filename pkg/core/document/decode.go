package document

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/svc-gov/svc/pkg/core/canonical"
)

// maxErrors bounds how many schema problems one decode reports.
const maxErrors = 20

// maxSafeInteger is 2^53-1, the largest integer I-JSON allows.
const maxSafeInteger = 1<<53 - 1

// Decode decodes the parsed tree v into target (a pointer to a struct),
// following the json tags of its fields. It is strict: unknown fields,
// mistyped values, null where no pointer is (arrays and objects are never
// null), integers that are not exact or exceed 2^53-1, missing fields,
// and optional fields present with an
// empty value (what omitempty would leave out: "", 0, false, [], {}, null)
// are errors. A field is required unless its tag says omitempty. Values of
// type any (details) take any JSON value, null included. A field tagged
// maxitems:"N" takes at most N array elements or object members. The error
// joins one *FieldError per problem, each naming its field's path (e.g.
// records[3].sequence), at most 20 and a last note counting the rest.
func Decode(v *canonical.Value, target any) error { return DecodeWith(v, target, Options{}) }

// Options adjust DecodeWith.
type Options struct {
	// Path is the location of v in a larger document (e.g. "records"),
	// which error paths start with; with Indexed, followed by [Index].
	Path    string
	Indexed bool
	Index   int
	// SkipFreeMaps leaves fields of type map[string]any (free JSON
	// metadata: a record's details) nil, after checking that the value is
	// an object and, if the field is optional, not empty. For readers that
	// need only its canonical bytes, which the tree gives: decoded, the
	// smallest JSON values (0, "", [], null) cost up to 20 times their size.
	SkipFreeMaps bool
	// CanonicalNumbers accepts each number field only in its one form
	// (integers as plain digits, other numbers in RFC 8785 form): for
	// signed documents (VPECs, profiles), where another spelling of the
	// same value would make a byte-different copy that verifies. Without
	// it any spelling of an exact integer (3.0, 3e0) or number is read.
	CanonicalNumbers bool
}

// DecodeWith is Decode with options.
func DecodeWith(v *canonical.Value, target any, opts Options) error {
	rv := reflect.ValueOf(target)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("document: Decode needs a non-nil pointer, got %T", target)
	}
	d := &decoder{skipFree: opts.SkipFreeMaps, strictNumbers: opts.CanonicalNumbers, root: opts.Path, rootIndex: -1}
	if opts.Indexed {
		d.rootIndex = opts.Index
	}
	d.value(v, rv.Elem())
	if len(d.errs) == 0 {
		return nil
	}
	if d.dropped > 0 {
		d.errs = append(d.errs, &FieldError{Msg: fmt.Sprintf("… and %d more problems", d.dropped)})
	}
	return errors.Join(d.errs...)
}

type decoder struct {
	errs          []error
	dropped       int
	skipFree      bool
	strictNumbers bool
	// The path of the value being decoded, turned into a string only for
	// an error: root, [rootIndex] when not -1, then stack.
	root      string
	rootIndex int
	stack     []pathElem
}

// pathElem is a member name or, when name is nil, an array index.
type pathElem struct {
	name  []byte
	index int
}

func (d *decoder) push(name []byte, index int) { d.stack = append(d.stack, pathElem{name, index}) }
func (d *decoder) pop()                        { d.stack = d.stack[:len(d.stack)-1] }

// path returns the location being decoded, e.g. records[3].review.session_id.
func (d *decoder) path() string {
	var b strings.Builder
	b.WriteString(d.root)
	if d.rootIndex >= 0 {
		fmt.Fprintf(&b, "[%d]", d.rootIndex)
	}
	for _, e := range d.stack {
		if e.name == nil {
			fmt.Fprintf(&b, "[%d]", e.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.Write(e.name)
	}
	if b.Len() == 0 {
		return "(document)"
	}
	return b.String()
}

func (d *decoder) fail(format string, a ...any) {
	if len(d.errs) >= maxErrors {
		d.dropped++
		return
	}
	d.errs = append(d.errs, &FieldError{Path: d.path(), Msg: fmt.Sprintf(format, a...)})
}

func (d *decoder) typeError(v *canonical.Value, want string) {
	d.fail("is %s, want %s", describeValue(v), want)
}

func describeValue(v *canonical.Value) string {
	switch v.Kind() {
	case canonical.KindString:
		s := v.Str()
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return fmt.Sprintf("the string %q", s)
	case canonical.KindNumber:
		t, _ := v.Number()
		return "the number " + t
	case canonical.KindBool:
		return fmt.Sprintf("%v", v.Bool())
	}
	return "a JSON " + v.Kind().String()
}

var anyType = reflect.TypeFor[any]()

// canonicalInt reports whether raw is an integer in its one accepted form:
// plain digits, no leading zero, no sign but a minus on a non-zero value,
// no fraction and no exponent.
func canonicalInt(raw []byte) bool {
	if len(raw) > 0 && raw[0] == '-' {
		raw = raw[1:]
		if len(raw) == 1 && raw[0] == '0' {
			return false // -0
		}
	}
	if len(raw) == 0 || (raw[0] == '0' && len(raw) > 1) {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (d *decoder) value(v *canonical.Value, out reflect.Value) {
	if out.Type() == anyType {
		if a := toAny(v); a != nil {
			out.Set(reflect.ValueOf(a))
		} else {
			out.SetZero()
		}
		return
	}
	switch out.Kind() {
	case reflect.Pointer:
		if v.Kind() == canonical.KindNull {
			out.SetZero()
			return
		}
		p := reflect.New(out.Type().Elem())
		d.value(v, p.Elem())
		out.Set(p)
	case reflect.String:
		if v.Kind() != canonical.KindString {
			d.typeError(v, "a string")
			return
		}
		out.SetString(v.Str())
	case reflect.Bool:
		if v.Kind() != canonical.KindBool {
			d.typeError(v, "true or false")
			return
		}
		out.SetBool(v.Bool())
	case reflect.Int, reflect.Int64, reflect.Int32:
		if v.Kind() != canonical.KindNumber {
			d.typeError(v, "an integer")
			return
		}
		raw := v.Raw()
		if d.strictNumbers && !canonicalInt(raw) {
			d.fail("%s is not an integer written as plain digits (no fraction, exponent, leading zero or -0)", quoteShort(raw))
			return
		}
		_, f := v.Number()
		if f != math.Trunc(f) || math.Abs(f) > maxSafeInteger {
			// The number as sent: its float64 value may be another one
			// (9007199254740993 reads as 9007199254740992).
			d.fail("%s is not an integer between -(2^53-1) and 2^53-1", quoteShort(raw))
			return
		}
		if out.OverflowInt(int64(f)) {
			d.fail("%s is out of range", quoteShort(raw))
			return
		}
		out.SetInt(int64(f))
	case reflect.Float64:
		if v.Kind() != canonical.KindNumber {
			d.typeError(v, "a number")
			return
		}
		text, f := v.Number()
		if raw := v.Raw(); d.strictNumbers && string(raw) != text {
			d.fail("%s is not in its canonical form %s (RFC 8785: shortest round-trip digits, no trailing zeros, no + or leading zeros)", quoteShort(raw), text)
			return
		}
		out.SetFloat(f)
	case reflect.Slice:
		if v.Kind() != canonical.KindArray {
			d.typeError(v, "an array")
			return
		}
		n := v.Len()
		s := reflect.MakeSlice(out.Type(), n, n)
		for i, e := range v.Elements() {
			d.push(nil, i)
			d.value(e, s.Index(i))
			d.pop()
		}
		out.Set(s)
	case reflect.Map:
		if out.Type().Key().Kind() != reflect.String {
			panic("document: map keys must be strings")
		}
		if v.Kind() != canonical.KindObject {
			d.typeError(v, "an object")
			return
		}
		if d.skipFree && out.Type().Elem() == anyType {
			return
		}
		m := reflect.MakeMapWithSize(out.Type(), v.Len())
		et := out.Type().Elem()
		for name, mv := range v.MemberNames() {
			e := reflect.New(et).Elem()
			d.push(name, 0)
			if mv.Kind() == canonical.KindNull && !nullable(et) {
				d.fail("is null, want %s", kindName(et))
			} else {
				d.value(mv, e)
				m.SetMapIndex(reflect.ValueOf(string(name)).Convert(out.Type().Key()), e)
			}
			d.pop()
		}
		out.Set(m)
	case reflect.Struct:
		if v.Kind() != canonical.KindObject {
			d.typeError(v, "an object")
			return
		}
		fields := fieldsOf(out.Type())
		var seenBits uint64
		var seenMore []bool
		if len(fields.list) > 64 {
			seenMore = make([]bool, len(fields.list))
		}
		for name, mv := range v.MemberNames() {
			d.push(name, 0)
			d.member(fields, name, mv, out, &seenBits, seenMore)
			d.pop()
		}
		for i, f := range fields.list {
			seen := seenBits&(1<<i) != 0
			if seenMore != nil {
				seen = seenMore[i]
			}
			if !seen && f.required {
				d.push([]byte(f.name), 0)
				d.fail("missing required field")
				d.pop()
			}
		}
	default:
		panic("document: unsupported field type " + out.Type().String())
	}
}

// member decodes the member name of a struct of fields into out.
func (d *decoder) member(fields *structFields, name []byte, mv *canonical.Value, out reflect.Value, seenBits *uint64, seenMore []bool) {
	idx, ok := fields.byName[string(name)]
	if !ok {
		d.fail("unknown field")
		return
	}
	if seenMore != nil {
		seenMore[idx] = true
	} else {
		*seenBits |= 1 << idx
	}
	f := fields.list[idx]
	if mv.Kind() == canonical.KindNull && (!f.nullable || !f.required) {
		if f.required {
			d.fail("is null, want %s", kindName(f.typ))
		} else {
			d.fail("is null; omit the member instead")
		}
		return
	}
	if f.maxItems > 0 && (mv.Kind() == canonical.KindArray || mv.Kind() == canonical.KindObject) {
		if n := mv.Len(); n > f.maxItems {
			d.fail("has %d items, at most %d", n, f.maxItems)
			return
		}
	}
	fv := out.Field(f.index)
	d.value(mv, fv)
	if !f.required && isEmptyValue(fv) && emptyJSON(mv) {
		d.fail("%s; omit the member instead", emptyWord(mv))
	}
}

// nullable reports whether JSON null can be stored in a value of type t.
func nullable(t reflect.Type) bool {
	k := t.Kind()
	return k == reflect.Pointer || k == reflect.Interface
}

// isEmptyValue is encoding/json's omitempty test: the values an optional
// member must not be sent with (it is left out instead).
func isEmptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	}
	return false
}

// emptyJSON reports whether v is an empty value as written (so that a
// mistyped value, already reported, is not reported twice).
func emptyJSON(v *canonical.Value) bool {
	switch v.Kind() {
	case canonical.KindString:
		return len(v.Raw()) == 2
	case canonical.KindArray, canonical.KindObject:
		return v.Len() == 0
	case canonical.KindBool:
		return !v.Bool()
	case canonical.KindNumber:
		_, f := v.Number()
		return f == 0
	}
	return false
}

func emptyWord(v *canonical.Value) string {
	switch v.Kind() {
	case canonical.KindString:
		return "empty"
	case canonical.KindArray:
		return "an empty array"
	case canonical.KindObject:
		return "an empty object"
	}
	return "the zero value " + string(v.Raw())
}

func quoteShort(raw []byte) string {
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}

func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice:
		return "an array"
	}
	return "a value"
}

// toAny converts a tree into the values encoding/json would produce
// (JSON null is a nil interface).
func toAny(v *canonical.Value) any {
	switch v.Kind() {
	case canonical.KindNull:
		return nil
	case canonical.KindBool:
		return v.Bool()
	case canonical.KindNumber:
		_, f := v.Number()
		return f
	case canonical.KindString:
		return v.Str()
	case canonical.KindArray:
		out := make([]any, v.Len())
		for i, e := range v.Elements() {
			out[i] = toAny(e)
		}
		return out
	}
	out := make(map[string]any, v.Len())
	for name, mv := range v.Members() {
		out[name] = toAny(mv)
	}
	return out
}

type fieldInfo struct {
	name     string
	index    int
	typ      reflect.Type
	required bool
	nullable bool
	// maxItems, from the tag maxitems:"N", bounds the elements of an array
	// or the members of an object, checked before anything is allocated
	// for them.
	maxItems int
}

type structFields struct {
	list   []fieldInfo
	byName map[string]int
}

var fieldCache sync.Map // reflect.Type -> *structFields

func fieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*structFields)
	}
	sf := &structFields{byName: map[string]int{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		k := f.Type.Kind()
		sf.byName[name] = len(sf.list)
		maxItems, _ := strconv.Atoi(f.Tag.Get("maxitems"))
		sf.list = append(sf.list, fieldInfo{
			name: name, index: i, typ: f.Type,
			required: !strings.Contains(opts, "omitempty"),
			nullable: k == reflect.Pointer || k == reflect.Interface,
			maxItems: maxItems,
		})
	}
	fieldCache.Store(t, sf)
	return sf
}
