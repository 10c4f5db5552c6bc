package mcp

// NOTE: raw JSON helpers.
//
// Everything this package reads from a request (params, _meta, tool
// arguments) is raw JSON that the decoder has already validated, so these
// helpers walk bytes without validating again and without allocating:
// strings are compared and measured escape by escape, arrays are walked
// with decode.SkipValue, numbers are compared as decimals (number.go).
// Given invalid JSON their results are unspecified, but they never panic.

import (
	"bytes"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/decode"
)

// JSON value kinds, from the first byte of a raw value.
const (
	kindNone byte = iota
	kindObject
	kindArray
	kindString
	kindNumber
	kindBool
	kindNull
)

func kindOf(v []byte) byte {
	if len(v) == 0 {
		return kindNone
	}
	switch v[0] {
	case '{':
		return kindObject
	case '[':
		return kindArray
	case '"':
		return kindString
	case 't', 'f':
		return kindBool
	case 'n':
		return kindNull
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return kindNumber
	}
	return kindNone
}

// isString reports whether the raw value v is a JSON string.
func isString(v []byte) bool { return len(v) >= 2 && v[0] == '"' }

// unescapeRune decodes the escape at the start of s (s[0] == '\\') and
// returns the rune and how many bytes of s it used; a surrogate pair
// counts as one escape.
func unescapeRune(s []byte) (rune, int) {
	if len(s) < 2 {
		return utf8.RuneError, len(s)
	}
	switch s[1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		if len(s) < 6 {
			return utf8.RuneError, len(s)
		}
		r := hex4(s[2:6])
		if r >= 0xD800 && r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			r2 := hex4(s[8:12])
			if r2 >= 0xDC00 && r2 < 0xE000 {
				return 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00), 12
			}
		}
		return r, 6
	}
	return rune(s[1]), 2 // '"', '\\', '/'
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// nextRune decodes the first character of raw string content, escape or
// UTF-8, and returns it with the bytes it used.
func nextRune(raw []byte) (rune, int) {
	if raw[0] == '\\' {
		return unescapeRune(raw)
	}
	if raw[0] < utf8.RuneSelf {
		return rune(raw[0]), 1
	}
	return utf8.DecodeRune(raw)
}

// stringLength returns the length in Unicode code points of the raw JSON
// string v once its escapes are resolved (a surrogate pair escape is one
// code point).
func stringLength(v []byte) int {
	if !isString(v) {
		return 0
	}
	raw := v[1 : len(v)-1]
	n := 0
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\':
			_, used := unescapeRune(raw[i:])
			i += used
			n++
		case c < utf8.RuneSelf:
			i++
			n++
		default:
			// Count lead bytes only: the input is valid UTF-8.
			i++
			for i < len(raw) && raw[i]&0xC0 == 0x80 {
				i++
			}
			n++
		}
	}
	return n
}

func skipWS(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\r' || v[i] == '\n') {
		i++
	}
	return i
}

// trimWS returns v without surrounding JSON whitespace.
func trimWS(v []byte) []byte {
	i := skipWS(v, 0)
	j := len(v)
	for j > i && (v[j-1] == ' ' || v[j-1] == '\t' || v[j-1] == '\r' || v[j-1] == '\n') {
		j--
	}
	return v[i:j]
}

// duplicateName returns a member name of obj that appears more than once
// (escapes resolved) and true, or false when every name is unique. It
// allocates; use decode.DuplicateName to test, this to report.
func duplicateName(obj []byte) (string, bool) {
	if !decode.DuplicateName(obj) {
		return "", false
	}
	seen := make(map[string]bool)
	var it decode.Members
	for it.Reset(obj); it.Next(); {
		name := memberName(&it)
		if seen[name] {
			return name, true
		}
		seen[name] = true
	}
	return "", false
}

// memberName returns the current member's name with escapes resolved.
func memberName(it *decode.Members) string {
	raw := it.Name()
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	return string(decode.AppendUnquoted(nil, q))
}

// equalJSON reports whether the raw JSON values a and b are equal as JSON
// Schema's enum compares them: same type; strings equal after unescaping;
// numbers equal as mathematical values (1, 1.0 and 10e-1 are equal);
// arrays equal element by element; objects with the same member names
// (order ignored) and equal values.
func equalJSON(a, b []byte) bool {
	ka, kb := kindOf(a), kindOf(b)
	if ka != kb {
		return false
	}
	switch ka {
	case kindString:
		return decode.StringsEqual(a, b)
	case kindNumber:
		return compareNumbers(a, b) == 0
	case kindBool, kindNull:
		return bytes.Equal(a, b)
	case kindArray:
		return equalElements(a, b, equalJSON)
	case kindObject:
		if decode.DuplicateName(a) || decode.DuplicateName(b) {
			return equalObjectsLastWins(a, b)
		}
		if countMembers(a) != countMembers(b) {
			return false
		}
		var ia, ib decode.Members
		for ia.Reset(a); ia.Next(); {
			found := false
			for ib.Reset(b); ib.Next(); {
				if namesEqual(ia.Name(), ib.Name()) {
					found = true
					if !equalJSON(ia.Value(), ib.Value()) {
						return false
					}
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return false
}

// equalElements reports whether the arrays a and b hold as many
// elements, equal pair by pair by eq.
func equalElements(a, b []byte, eq func(x, y []byte) bool) bool {
	var ia, ib decode.Elements
	ia.Reset(a)
	ib.Reset(b)
	for {
		na, nb := ia.Next(), ib.Next()
		if na != nb {
			return false
		}
		if !na {
			return true
		}
		if !eq(ia.Value(), ib.Value()) {
			return false
		}
	}
}

// namesEqual compares two raw member names (no quotes, escapes kept).
func namesEqual(a, b []byte) bool {
	if bytes.IndexByte(a, '\\') < 0 && bytes.IndexByte(b, '\\') < 0 {
		return bytes.Equal(a, b)
	}
	for len(a) > 0 && len(b) > 0 {
		x, nx := nextRune(a)
		y, ny := nextRune(b)
		if x != y {
			return false
		}
		a, b = a[nx:], b[ny:]
	}
	return len(a) == 0 && len(b) == 0
}

// nameIsEsc reports whether the raw member name (no quotes, escapes kept)
// is exactly want once unescaped. esc says raw holds a backslash
// (decode.Members.NameEscaped), so that a plain name, the usual one, is
// one comparison.
func nameIsEsc(raw []byte, esc bool, want []byte) bool {
	if !esc {
		return string(raw) == string(want)
	}
	for len(raw) > 0 {
		r, n := nextRune(raw)
		var tmp [utf8.UTFMax]byte
		u := utf8.AppendRune(tmp[:0], r)
		if !bytes.HasPrefix(want, u) {
			return false
		}
		raw, want = raw[n:], want[len(u):]
	}
	return len(want) == 0
}

func countMembers(obj []byte) int {
	n := 0
	var it decode.Members
	for it.Reset(obj); it.Next(); {
		n++
	}
	return n
}

// smallSet is the member count up to which nameSet compares names pair by
// pair; beyond it, callers fall back to decode.DuplicateName (hashing).
const smallSet = 16

// nameSet finds a repeated member name while an object is walked once,
// without walking it again: names are kept as raw slices and compared
// pair by pair (escapes resolved only when present). The zero value is
// empty. After more than smallSet names it stops comparing and reports
// overflow; the caller then asks decode.DuplicateName.
type nameSet struct {
	n        int
	raw      [smallSet][]byte
	esc      [smallSet]bool
	overflow bool
	idx      *argIndex // filled in by a top-level checkObject, if not nil
}

// add records the current member name of it (raw, escapes kept) and
// reports whether it repeats an earlier one.
func (s *nameSet) add(it *decode.Members) bool {
	if s.n >= smallSet {
		s.overflow = true
		return false
	}
	name, esc := it.Name(), it.NameEscaped()
	for i := 0; i < s.n; i++ {
		if !esc && !s.esc[i] {
			if string(s.raw[i]) == string(name) {
				return true
			}
		} else if namesEqual(s.raw[i], name) {
			return true
		}
	}
	s.raw[s.n], s.esc[s.n] = name, esc
	s.n++
	return false
}

// equalObjectsLastWins is equalJSON for objects of which one repeats a
// member name: each is read as every reader reads it, the last occurrence
// of a name winning.
func equalObjectsLastWins(a, b []byte) bool {
	distinct := func(o []byte) (n int) {
		var last lastValues
		var it decode.Members
		for it.Reset(o); it.Next(); {
			if last.is(o, memberName(&it), it.Value()) {
				n++
			}
		}
		return n
	}
	if distinct(a) != distinct(b) {
		return false // so that the lookups below walk b at most len(b) times
	}
	var last lastValues
	var it decode.Members
	for it.Reset(a); it.Next(); {
		name := memberName(&it)
		if !last.is(a, name, it.Value()) {
			continue
		}
		bv, n := decode.Lookup(b, name)
		if n == 0 || !equalJSON(it.Value(), bv) {
			return false
		}
	}
	return true
}
