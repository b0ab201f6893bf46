package jsonvalue

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// Marshal validates v (events.md §3.5) and encodes it: member order kept, numbers in the
// ECMAScript shortest round-trip form, strings with RFC 8785 escaping (no HTML escaping).
func Marshal(v any) ([]byte, error) {
	c, err := CloneValue(v, "")
	if err != nil {
		return nil, err
	}
	return AppendEncoded(nil, c), nil
}

// AppendEncoded appends the encoding of an already validated value (one produced by Parse or
// CloneValue, or built only from the value model's types) without re-validating it.
func AppendEncoded(dst []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case float64:
		return AppendNumber(dst, x)
	case string:
		return appendQuoted(dst, x)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendEncoded(dst, e)
		}
		return append(dst, ']')
	case *Object:
		if x == nil {
			return append(dst, "null"...)
		}
		dst = append(dst, '{')
		for i, m := range x.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendQuoted(dst, m.Name)
			dst = append(dst, ':')
			dst = AppendEncoded(dst, m.Value)
		}
		return append(dst, '}')
	default:
		// Not of the value model: fall back to full validation so the output stays well-formed.
		c, err := CloneValue(v, "")
		if err != nil {
			return append(dst, "null"...)
		}
		return AppendEncoded(dst, c)
	}
}

// MarshalIndent is Marshal with each element on its own line, indented by indent (the CLI uses
// two spaces). Empty arrays and objects stay `[]` and `{}`.
func MarshalIndent(v any, indent string) ([]byte, error) {
	c, err := CloneValue(v, "")
	if err != nil {
		return nil, err
	}
	return AppendIndented(nil, c, indent, 0), nil
}

// AppendIndented appends the indented encoding of an already validated value.
func AppendIndented(dst []byte, v any, indent string, level int) []byte {
	newline := func(dst []byte, level int) []byte {
		dst = append(dst, '\n')
		for i := 0; i < level; i++ {
			dst = append(dst, indent...)
		}
		return dst
	}
	switch x := v.(type) {
	case []any:
		if len(x) == 0 {
			return append(dst, "[]"...)
		}
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, level+1)
			dst = AppendIndented(dst, e, indent, level+1)
		}
		dst = newline(dst, level)
		return append(dst, ']')
	case *Object:
		if x == nil {
			return append(dst, "null"...)
		}
		if len(x.members) == 0 {
			return append(dst, "{}"...)
		}
		dst = append(dst, '{')
		for i, m := range x.members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = newline(dst, level+1)
			dst = appendQuoted(dst, m.Name)
			dst = append(dst, ": "...)
			dst = AppendIndented(dst, m.Value, indent, level+1)
		}
		dst = newline(dst, level)
		return append(dst, '}')
	default:
		return AppendEncoded(dst, v)
	}
}

// Canonicalize validates v (events.md §3.5) and returns its RFC 8785 serialisation: no white
// space, members sorted by the UTF-16 code units of their names, JCS strings and numbers.
func Canonicalize(v any) ([]byte, error) {
	c, err := CloneValue(v, "")
	if err != nil {
		return nil, err
	}
	return AppendCanonical(nil, c), nil
}

// Fingerprint returns "sha256:" and the 64 lowercase hex digits of SHA-256 over Canonicalize(v).
func Fingerprint(v any) (string, error) {
	c, err := CloneValue(v, "")
	if err != nil {
		return "", err
	}
	return FingerprintOf(c), nil
}

// FingerprintOf is Fingerprint for an already validated value.
func FingerprintOf(v any) string {
	bp := canonicalBufs.Get().(*[]byte)
	buf := AppendCanonical((*bp)[:0], v)
	sum := sha256.Sum256(buf)
	if cap(buf) <= 1<<16 {
		*bp = buf
		canonicalBufs.Put(bp)
	}
	var out [7 + 64]byte
	copy(out[:], "sha256:")
	hex.Encode(out[7:], sum[:])
	return string(out[:])
}

// canonicalBufs recycles the scratch buffers FingerprintOf renders canonical forms into.
var canonicalBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// AppendCanonical appends the RFC 8785 form of an already validated value.
func AppendCanonical(dst []byte, v any) []byte {
	switch x := v.(type) {
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = AppendCanonical(dst, e)
		}
		return append(dst, ']')
	case *Object:
		if x == nil {
			return append(dst, "null"...)
		}
		dst = append(dst, '{')
		dst = appendSortedMembers(dst, x.members)
		return append(dst, '}')
	default:
		return AppendEncoded(dst, v)
	}
}

// appendSortedMembers appends the canonical members of o, ordered by the UTF-16 code units of
// their names. Small objects sort an on-stack index array instead of copying members.
func appendSortedMembers(dst []byte, ms []Member) []byte {
	var small [16]int
	var idx []int
	if len(ms) <= len(small) {
		idx = small[:len(ms)]
	} else {
		idx = make([]int, len(ms))
	}
	for i := range idx {
		idx[i] = i
	}
	if len(idx) > 32 {
		slices.SortFunc(idx, func(a, b int) int { return CompareUTF16(ms[a].Name, ms[b].Name) })
	} else {
		// Insertion sort: member lists are short and often nearly sorted.
		for i := 1; i < len(idx); i++ {
			for j := i; j > 0 && CompareUTF16(ms[idx[j-1]].Name, ms[idx[j]].Name) > 0; j-- {
				idx[j-1], idx[j] = idx[j], idx[j-1]
			}
		}
	}
	for i, k := range idx {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendQuoted(dst, ms[k].Name)
		dst = append(dst, ':')
		dst = AppendCanonical(dst, ms[k].Value)
	}
	return dst
}

// CompareUTF16 compares two valid UTF-8 strings by their UTF-16 code units (the RFC 8785 member
// order). It differs from byte order only for characters above U+FFFF against U+E000–U+FFFF.
func CompareUTF16(a, b string) int {
	for i, j := 0, 0; ; {
		if i >= len(a) || j >= len(b) {
			switch {
			case i >= len(a) && j >= len(b):
				return 0
			case i >= len(a):
				return -1
			default:
				return 1
			}
		}
		ca, cb := a[i], b[j]
		if ca < utf8.RuneSelf && cb < utf8.RuneSelf {
			if ca != cb {
				return int(ca) - int(cb)
			}
			i++
			j++
			continue
		}
		ra, sa := utf8.DecodeRuneInString(a[i:])
		rb, sb := utf8.DecodeRuneInString(b[j:])
		if ra == rb {
			i += sa
			j += sb
			continue
		}
		ua, ub := firstUnit(ra), firstUnit(rb)
		if ua != ub {
			return int(ua) - int(ub)
		}
		// Same high surrogate: compare the low surrogates.
		_, la := utf16.EncodeRune(ra)
		_, lb := utf16.EncodeRune(rb)
		return int(la) - int(lb)
	}
}

func firstUnit(r rune) rune {
	if r >= 0x10000 {
		hi, _ := utf16.EncodeRune(r)
		return hi
	}
	return r
}

const hexDigits = "0123456789abcdef"

// needsEscape marks the bytes RFC 8785 escapes in strings: control characters, `"` and `\`.
var needsEscape = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// AppendQuote appends s as a JSON string with RFC 8785 escaping: `"` and `\` escaped, control
// characters as \b \t \n \f \r or \u00xx (lowercase hex), everything else literal (no HTML
// escaping; U+2028 and U+2029 raw). Bytes that are not valid UTF-8 — possible only in strings
// built in Go, never in validated values — are written as U+FFFD so the output is always valid
// JSON text. Every contract encoder in agentwire quotes strings through this function.
func AppendQuote(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time through runs of plain ASCII, the common case.
		for i+8 <= len(s) && plainWord(loadWord(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				dst = append(dst, s[start:i]...)
				dst = append(dst, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		if !needsEscape[c] {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscape(dst, c)
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendQuoted is AppendQuote for strings known to be valid UTF-8 (every string of a validated
// value and every parsed member name): it skips the UTF-8 decoding, which is the encoder's and
// the fingerprint's hot loop.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		// Eight bytes at a time while none needs an escape.
		for i+8 <= len(s) && !escapeWord(loadWord(s, i)) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if !needsEscape[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		dst = appendEscape(dst, c)
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// loadWord returns the eight bytes of s at i (i+8 ≤ len(s)) as a little-endian word.
func loadWord(s string, i int) uint64 {
	return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[i:]), 8))
}

// escapeWord reports whether a byte of w needs an RFC 8785 escape: a control character, `"`
// or `\` (plainWord also refuses the bytes of multi-byte characters).
func escapeWord(w uint64) bool { return escapeBits(w)&wordHighs != 0 }

// appendEscape appends the RFC 8785 escape of a byte that needsEscape marks.
func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '\b':
		return append(dst, '\\', 'b')
	case '\t':
		return append(dst, '\\', 't')
	case '\n':
		return append(dst, '\\', 'n')
	case '\f':
		return append(dst, '\\', 'f')
	case '\r':
		return append(dst, '\\', 'r')
	}
	return append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
}

// Quote returns s as an RFC 8785 JSON string literal (quotes included).
func Quote(s string) string { return string(AppendQuote(nil, s)) }

// FormatNumber formats a finite float64 as ECMAScript's Number.prototype.toString does (the
// RFC 8785 number form): `-0` → `0`, `1e21` → `1e+21`, `100` → `100`, `1e-7` → `1e-7`.
func FormatNumber(f float64) string { return string(AppendNumber(nil, f)) }

// AppendNumber appends FormatNumber(f).
func AppendNumber(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0')
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(dst, "null"...)
	}
	// Integers up to 2^53 are common (sequences, token counts): format them directly.
	if f == math.Trunc(f) && math.Abs(f) < 1e21 && math.Abs(f) <= 1<<53 {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if f < 0 {
		dst = append(dst, '-')
		f = -f
	}
	// Shortest round-trip digits and exponent from strconv's 'e' form: d.ddddde±xx.
	var tmp [32]byte
	e := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64)
	var digits [24]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	exp, _ := strconv.Atoi(string(e[i+1:]))
	n := exp + 1 // position of the decimal point relative to the digits (ECMAScript's n)
	k := nd
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits[:k]...)
		for j := 0; j < n-k; j++ {
			dst = append(dst, '0')
		}
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		dst = append(dst, digits[n:k]...)
	case -6 < n && n <= 0:
		dst = append(dst, '0', '.')
		for j := 0; j < -n; j++ {
			dst = append(dst, '0')
		}
		dst = append(dst, digits[:k]...)
	default:
		dst = append(dst, digits[0])
		if k > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:k]...)
		}
		dst = append(dst, 'e')
		if n-1 >= 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, int64(n-1), 10)
	}
	return dst
}

// Equal reports whether two validated values are equal JSON values (member order ignored; -0
// equals 0).
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, m := range x.Members() {
			w, ok := y.Get(m.Name)
			if !ok || !Equal(m.Value, w) {
				return false
			}
		}
		return true
	}
	return false
}
