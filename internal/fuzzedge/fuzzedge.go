// Package fuzzedge gives fuzz targets the integers a parser of svc's
// documents must get right: every documented maximum of docs/FORMATS.md,
// one either side of it, and the edges where a conversion to a
// fixed-width integer or to nanoseconds overflows. Documents reads a JSON
// document and returns copies of it with each integer literal replaced by
// each of these, as seeds.
package fuzzedge

import "slices"

// edges are the values, as JSON number texts (a fuzzer's mutations of the
// digits then reach the values near them).
var edges = []string{
	"0", "1", "-1",
	// Small documented maxima: ceremony power (24), logits and disclose
	// lists (64), names and fields (128, 256), zk proof bytes (1024),
	// verifying key points (4103), contributions (10,000), details bytes
	// (16,384), disclosed bytes (65,536).
	"24", "25", "64", "65", "128", "129", "256", "257", "1024", "1025", "4103", "4104",
	"10000", "10001", "16384", "16385", "65536", "65537",
	// 32-bit: logits (int32), threshold and max_tokens (up to 2^32-1),
	// operator counts (up to 2^32).
	"2147483647", "2147483648", "-2147483648", "-2147483649",
	"4294967295", "4294967296", "4294967297",
	// 2^40: min_duration_seconds, calibration_passes.
	"1099511627775", "1099511627776", "1099511627777",
	// Seconds whose nanoseconds overflow int64 (time.Duration), and
	// milliseconds likewise.
	"9223372036", "9223372037", "-9223372036", "-9223372037", "9223372036854", "9223372036855",
	// 2^53: every integer of a document lies within ±(2^53-1).
	"9007199254740991", "9007199254740992", "9007199254740993", "-9007199254740991", "-9007199254740992",
	// int64 and uint64.
	"4611686018427387904", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
	"-9223372036854775809", "18446744073709551615", "18446744073709551616",
}

// Ints returns the edge values as JSON number texts (a new slice each
// call).
func Ints() []string { return slices.Clone(edges) }

// Documents returns copies of doc, a JSON text, in which one integer
// literal (a number token of digits with an optional minus sign, outside
// strings) is replaced by one edge value: every literal with every value,
// at most limit copies in all (the first literals first).
func Documents(doc []byte, limit int) [][]byte {
	var out [][]byte
	for _, span := range integers(doc) {
		for _, v := range edges {
			if len(out) >= limit {
				return out
			}
			if string(doc[span[0]:span[1]]) == v {
				continue
			}
			c := make([]byte, 0, len(doc)+len(v))
			c = append(append(append(c, doc[:span[0]]...), v...), doc[span[1]:]...)
			out = append(out, c)
		}
	}
	return out
}

// integers returns the [start, end) byte spans of the integer literals of
// a JSON text: number tokens without fraction or exponent, outside strings.
func integers(doc []byte) [][2]int {
	var out [][2]int
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; {
		case c == '"':
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
		case c == '-' || '0' <= c && c <= '9':
			start := i
			for i++; i < len(doc) && '0' <= doc[i] && doc[i] <= '9'; i++ {
			}
			if i < len(doc) && (doc[i] == '.' || doc[i] == 'e' || doc[i] == 'E') {
				for ; i < len(doc) && (doc[i] == '.' || doc[i] == 'e' || doc[i] == 'E' || doc[i] == '+' || doc[i] == '-' || '0' <= doc[i] && doc[i] <= '9'); i++ {
				}
				i--
				continue
			}
			if i-start > 1 || doc[start] != '-' {
				out = append(out, [2]int{start, i})
			}
			i--
		}
	}
	return out
}
