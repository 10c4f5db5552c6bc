package decode

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// NOTE: walking raw values.
//
// The layers above the envelope (MCP's header checks, tool argument
// schemas, A2A's skill check) read members of params without decoding
// them into Go values. The helpers here walk raw JSON that has already
// been validated — params and ids of a decoded Message — so they skip
// values by bracket counting and never validate again. Given bytes that
// are not valid JSON their results are unspecified (but they never panic
// or loop).

// Members iterates over the members of a raw JSON object:
//
//	var it decode.Members
//	for it.Reset(m.Params); it.Next(); {
//		if it.NameIs("name") { ... it.Value() ... }
//	}
//
// The zero value holds no object. Name and Value borrow from the object.
// Members allocates nothing; it is not safe for concurrent use.
type Members struct {
	obj   []byte
	pos   int
	name  []byte // raw name content, escapes kept
	value []byte
	esc   bool
	open  bool // NextName stopped at the value, which starts at pos
	end   int  // just past the object's closing brace, once it was met
}

// Reset starts an iteration over obj, a valid JSON object. Anything that
// is not an object iterates over nothing.
func (it *Members) Reset(obj []byte) {
	it.obj, it.pos, it.name, it.value, it.open, it.end = nil, 0, nil, nil, false, 0
	i := skipWS(obj, 0)
	if i < len(obj) && obj[i] == '{' {
		it.obj = obj
		it.pos = i + 1
	}
}

// Next advances to the next member and reports whether there is one.
func (it *Members) Next() bool {
	return it.NextName() && it.TakeValue(0)
}

// NextName advances to the next member like Next, but stops where its
// value starts: Rest returns the value and what follows it, and Value is
// nil until TakeValue, Next or NextName moves past the value. A caller
// that walks the value itself (a schema check) saves the skip.
func (it *Members) NextName() bool {
	if it.open && !it.TakeValue(0) {
		return false
	}
	obj := it.obj
	i := skipWS(obj, it.pos)
	if i < len(obj) && obj[i] == ',' {
		i = skipWS(obj, i+1)
	}
	if i >= len(obj) || obj[i] != '"' {
		if i < len(obj) && obj[i] == '}' {
			it.end = i + 1
		}
		it.obj = nil
		return false
	}
	end, esc := skipString(obj, i)
	if end < i+2 {
		it.obj = nil // a name cut short: not valid JSON
		return false
	}
	it.name = obj[i+1 : end-1]
	it.esc = esc
	i = skipWS(obj, end)
	if i >= len(obj) || obj[i] != ':' {
		it.obj = nil
		return false
	}
	it.pos = skipWS(obj, i+1)
	it.value = nil
	it.open = true
	return true
}

// Rest returns, after NextName, the current member's value and the rest
// of the object after it; nil otherwise.
func (it *Members) Rest() []byte {
	if !it.open {
		return nil
	}
	return it.obj[it.pos:]
}

// TakeValue ends the current member's value, after NextName, n bytes
// into Rest (a walk of the value found its length), or where SkipValue
// finds its end when n <= 0. It reports false, ending the iteration, when
// the value does not end inside the object. After Next it does nothing
// and reports true.
func (it *Members) TakeValue(n int) bool {
	if !it.open {
		return it.obj != nil
	}
	it.open = false
	i := it.pos
	vend := i + n
	if n <= 0 {
		vend = SkipValue(it.obj, i)
	}
	if vend <= i || vend > len(it.obj) {
		it.obj = nil
		return false
	}
	it.value = it.obj[i:vend]
	it.pos = vend
	return true
}

// End returns the offset in the object given to Reset just past its
// closing brace, once Next or NextName has reported that no member is
// left; 0 before, or when the object was cut short. A walk over an object
// whose end was not known (Rest of an outer object) learns it here.
func (it *Members) End() int { return it.end }

// Name returns the current member's name as raw string content: without
// the quotes, escapes not resolved. Use NameIs to compare.
func (it *Members) Name() []byte { return it.name }

// NameEscaped reports whether the current member's raw name holds a
// backslash escape, which the walk learned while finding the name's end:
// a name without one can be compared byte for byte.
func (it *Members) NameEscaped() bool { return it.esc }

// NameIs reports whether the current member's name, escapes resolved,
// is exactly s (case-sensitive).
func (it *Members) NameIs(s string) bool {
	if !it.esc {
		return string(it.name) == s
	}
	return unescapedEqual(it.name, s)
}

// Value returns the current member's raw value.
func (it *Members) Value() []byte { return it.value }

// Elements iterates over the elements of a raw JSON array, as Members
// does over an object's members:
//
//	var it decode.Elements
//	for it.Reset(arr); it.Next(); {
//		... it.Value() ...
//	}
//
// The zero value holds no array. Value borrows from the array. Elements
// allocates nothing; it is not safe for concurrent use.
type Elements struct {
	arr   []byte
	pos   int
	value []byte
	first bool
	open  bool // NextStart stopped at the element, which starts at pos
	end   int
}

// Reset starts an iteration over arr, a valid JSON array. Anything that
// is not an array iterates over nothing.
func (it *Elements) Reset(arr []byte) {
	it.arr, it.pos, it.value, it.first, it.open, it.end = nil, 0, nil, true, false, 0
	i := skipWS(arr, 0)
	if i < len(arr) && arr[i] == '[' {
		it.arr, it.pos = arr, i+1
	}
}

// Next advances to the next element and reports whether there is one.
func (it *Elements) Next() bool {
	return it.NextStart() && it.TakeValue(0)
}

// NextStart advances to the next element like Next, but stops where it
// starts, as Members.NextName does: Rest returns the element and what
// follows it, and Value is nil until TakeValue, Next or NextStart moves
// past it. A caller that walks the element itself saves the skip.
func (it *Elements) NextStart() bool {
	if it.open && !it.TakeValue(0) {
		return false
	}
	a := it.arr
	i := skipWS(a, it.pos)
	if !it.first {
		if i >= len(a) || a[i] != ',' {
			if i < len(a) && a[i] == ']' {
				it.end = i + 1
			}
			it.arr = nil
			return false
		}
		i = skipWS(a, i+1)
	} else if i < len(a) && a[i] == ']' {
		it.end = i + 1
		it.arr = nil
		return false
	}
	it.first = false
	if i >= len(a) {
		it.arr = nil // cut short: not valid JSON
		return false
	}
	it.value, it.pos, it.open = nil, i, true
	return true
}

// Rest returns, after NextStart, the current element and the rest of the
// array after it; nil otherwise.
func (it *Elements) Rest() []byte {
	if !it.open {
		return nil
	}
	return it.arr[it.pos:]
}

// TakeValue ends the current element, after NextStart, n bytes into Rest
// (a walk of the element found its length), or where SkipValue finds its
// end when n <= 0. It reports false, ending the iteration, when the
// element does not end inside the array. After Next it does nothing and
// reports true.
func (it *Elements) TakeValue(n int) bool {
	if !it.open {
		return it.arr != nil
	}
	it.open = false
	i := it.pos
	vend := i + n
	if n <= 0 {
		vend = SkipValue(it.arr, i)
	}
	if vend <= i || vend > len(it.arr) {
		it.arr = nil // cut short: not valid JSON
		return false
	}
	it.value, it.pos = it.arr[i:vend], vend
	return true
}

// Value returns the current element's raw value.
func (it *Elements) Value() []byte { return it.value }

// End returns the offset in the array given to Reset just past its
// closing bracket, once Next has reported that no element is left; 0
// before, or when the array was cut short.
func (it *Elements) End() int { return it.end }

// Lookup returns the raw value of the member of obj named name (escapes
// resolved, case-sensitive) and how many members have that name. When the
// name appears more than once, value is the last one.
func Lookup(obj []byte, name string) (value []byte, count int) {
	var it Members
	for it.Reset(obj); it.Next(); {
		if it.NameIs(name) {
			value = it.value
			count++
		}
	}
	return value, count
}

// DuplicateName reports whether a member name appears twice in obj, a
// valid JSON object, names compared after unescaping. It walks obj once,
// compares every pair of names for small objects and hashes beyond that,
// so it stays linear; it allocates nothing in steady state but for the
// large objects Decode names.
func DuplicateName(obj []byte) bool {
	type name struct {
		raw []byte
		esc bool
	}
	var names [smallMembers]name
	n := 0
	var it Members
	for it.Reset(obj); it.Next(); n++ {
		if n == smallMembers {
			return duplicateLarge(obj)
		}
		for j := 0; j < n; j++ {
			if sameName(it.name, it.esc, names[j].raw, names[j].esc) {
				return true
			}
		}
		names[n] = name{it.name, it.esc}
	}
	return false
}

func sameName(a []byte, aesc bool, b []byte, besc bool) bool {
	if !aesc && !besc {
		return string(a) == string(b)
	}
	if !aesc {
		return unescapedEqual(b, a)
	}
	if !besc {
		return unescapedEqual(a, b)
	}
	return contentsEqual(a, b)
}

// duplicateLarge is DuplicateName for many members: a set of the names'
// offsets (names.go), sized from a first walk that counts them.
func duplicateLarge(obj []byte) bool {
	if len(obj) > maxSetObject {
		return duplicateHuge(obj)
	}
	n := 0
	var it Members
	for it.Reset(obj); it.Next(); {
		n++
	}
	s := getNameSet(obj, n)
	defer s.release()
	for it.Reset(obj); it.Next(); {
		if s.addName(nameOffset(obj, it.name), it.name, it.esc) {
			return true
		}
	}
	return false
}

// duplicateHuge is DuplicateName for an object past what a nameSet
// indexes (4 GiB): a map of the unescaped names.
func duplicateHuge(obj []byte) bool {
	seen := make(map[string]struct{})
	var it Members
	for it.Reset(obj); it.Next(); {
		name := string(appendUnescaped(nil, it.name))
		if _, dup := seen[name]; dup {
			return true
		}
		seen[name] = struct{}{}
	}
	return false
}

// AppendUnquoted appends the content of the raw JSON string s (with its
// quotes) to dst with every escape resolved, and returns the extended dst.
// If s is not a string it appends nothing. s must be valid JSON.
func AppendUnquoted(dst, s []byte) []byte {
	if len(s) < 2 || s[0] != '"' {
		return dst
	}
	// One growth, to the escaped length (an upper bound): appending byte
	// by byte would grow a large string by a quarter at a time, several
	// times its size in all.
	if n := len(s) - 2; cap(dst)-len(dst) < n {
		dst = slices.Grow(dst, n)
	}
	return appendUnescaped(dst, s[1:len(s)-1])
}

// StringIs reports whether the raw JSON value v is a string equal to s
// (a string or a byte slice) after unescaping (case-sensitive). It
// allocates nothing.
func StringIs[S ~string | ~[]byte](v []byte, s S) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == string(s)
	}
	return unescapedEqual(raw, s)
}

// StringsEqual reports whether the raw JSON strings a and b (quotes
// included) hold the same text once their escapes are resolved, as two
// spellings of one text do ("é" and "\u00e9", "/" and "\/"); false when
// either is not a string. Both must be valid JSON. It allocates nothing.
func StringsEqual(a, b []byte) bool {
	if len(a) < 2 || a[0] != '"' || len(b) < 2 || b[0] != '"' {
		return false
	}
	return bytes.Equal(a, b) || contentsEqual(a[1:len(a)-1], b[1:len(b)-1])
}

// IDsEqual reports whether two raw JSON-RPC ids (a Message's ID, a
// cancellation's requestId) name the same request: strings by their text
// once escapes are resolved (StringsEqual), other ids byte for byte, as a
// client writes its own ids the same way each time (1 and 1.0 differ). It
// allocates nothing.
func IDsEqual(a, b []byte) bool {
	if len(a) > 0 && a[0] == '"' {
		return StringsEqual(a, b)
	}
	return bytes.Equal(a, b)
}

// contentsEqual reports whether two raw string contents (escapes kept,
// no quotes) hold the same text, without allocating.
func contentsEqual(ra, rb []byte) bool {
	// Each side is read a unit at a time, the plain bytes up to its next
	// escape or the bytes one escape stands for, and the units are
	// compared as far as both reach.
	var ta, tb [utf8.UTFMax]byte
	var ua, ub []byte
	for {
		if len(ua) == 0 {
			ua, ra = nextUnit(ra, &ta)
		}
		if len(ub) == 0 {
			ub, rb = nextUnit(rb, &tb)
		}
		if len(ua) == 0 || len(ub) == 0 {
			return len(ua) == 0 && len(ub) == 0
		}
		n := min(len(ua), len(ub))
		if string(ua[:n]) != string(ub[:n]) {
			return false
		}
		ua, ub = ua[n:], ub[n:]
	}
}

// nextUnit splits the first unit off raw string content: the plain bytes
// before the next escape, or the bytes the escape at its start stands
// for, written into tmp. Both are empty when raw is.
func nextUnit(raw []byte, tmp *[utf8.UTFMax]byte) (unit, rest []byte) {
	if len(raw) == 0 {
		return nil, nil
	}
	if raw[0] != '\\' {
		if i := bytes.IndexByte(raw, '\\'); i >= 0 {
			return raw[:i], raw[i:]
		}
		return raw, nil
	}
	u, used := unescapeOne(tmp[:0], raw)
	return u, raw[used:]
}

// unescapedEqual compares raw string content with escapes against s
// without allocating.
func unescapedEqual[S ~string | ~[]byte](raw []byte, s S) bool {
	for len(raw) > 0 {
		i := bytes.IndexByte(raw, '\\')
		if i < 0 {
			return string(raw) == string(s)
		}
		if len(s) < i || string(raw[:i]) != string(s[:i]) {
			return false
		}
		s, raw = s[i:], raw[i:]
		var tmp [utf8.UTFMax]byte
		u, used := unescapeOne(tmp[:0], raw)
		if len(s) < len(u) || string(u) != string(s[:len(u)]) {
			return false
		}
		s, raw = s[len(u):], raw[used:]
	}
	return len(s) == 0
}

// SkipValue returns the index just past the valid JSON value that starts
// at v[i] (after optional whitespace), or i when there is none.
func SkipValue(v []byte, i int) int {
	i = skipWS(v, i)
	if i >= len(v) {
		return i
	}
	switch v[i] {
	case '"':
		return skipStringEnd(v, i)
	case '{', '[':
		depth := 0
		for i < len(v) {
			switch v[i] {
			case '"':
				i = skipStringEnd(v, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	// number or literal
	j := i
	for j < len(v) && !numberEnd[v[j]] {
		j++
	}
	return j
}

// skipString returns the index just past the string starting at v[i] ==
// '"' and whether it holds escapes. Its first 16 bytes are searched 8 at
// a time in a word; a longer string is searched with bytes.IndexByte
// (vector instructions), for the closing quote and then for backslashes
// before it, each byte at most once for each, so that skipping stays
// linear whatever the escapes.
func skipString(v []byte, i int) (int, bool) { return skipStringHead(v, i, true) }

// skipStringHead is skipString; past the first 16 bytes it hands over to
// skipLongString when the caller wants the escape flag, to skipLongEnd
// otherwise (then the flag reports only the escapes of the first bytes).
func skipStringHead(v []byte, i int, wantEsc bool) (int, bool) {
	esc := false
	i++
	for n := 0; n < 2; n++ {
		if i+8 > len(v) {
			// The end of v: the last bytes one at a time.
			for ; i < len(v); i++ {
				switch v[i] {
				case '"':
					return i + 1, esc
				case '\\':
					esc = true
					i++
				}
			}
			return len(v), esc
		}
		x := binary.LittleEndian.Uint64(v[i:])
		m := (((x ^ lo8*'"') - lo8) | ((x ^ lo8*'\\') - lo8)) &^ x & hi8
		if m == 0 {
			i += 8
			continue
		}
		i += bits.TrailingZeros64(m) >> 3
		if v[i] == '"' {
			return i + 1, esc
		}
		esc = true
		i += 2
	}
	if !wantEsc {
		return skipLongEnd(v, i), esc
	}
	return skipLongString(v, i, esc)
}

// skipStringEnd is skipString for a caller that needs only the end: past
// the first 16 bytes it searches for quotes alone and counts the
// backslashes right before each one it finds (skipLongEnd), one vector
// search over a string with no escaped quote where skipString makes two.
func skipStringEnd(v []byte, i int) int {
	end, _ := skipStringHead(v, i, false)
	return end
}

// skipLongEnd returns the index just past the first unescaped quote at
// or after v[i], where no escape is pending, or len(v). A quote is
// escaped when the run of backslashes before it, from i on, is odd; each
// byte is searched once and looked back at at most once.
func skipLongEnd(v []byte, i int) int {
	for {
		i = min(i, len(v))
		q := bytes.IndexByte(v[i:], '"')
		if q < 0 {
			return len(v)
		}
		q += i
		k := q
		for k > i && v[k-1] == '\\' {
			k--
		}
		if (q-k)&1 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// skipLongString is skipString past the first 16 bytes.
func skipLongString(v []byte, i int, esc bool) (int, bool) {
	for {
		i = min(i, len(v))
		q := bytes.IndexByte(v[i:], '"')
		if q < 0 { // unterminated: not valid JSON
			return len(v), esc || bytes.IndexByte(v[i:], '\\') >= 0
		}
		q += i
		for {
			b := bytes.IndexByte(v[i:q], '\\')
			if b < 0 {
				return q + 1, esc
			}
			esc = true
			if i += b + 2; i > q {
				break // the quote at q was escaped: find the next one
			}
		}
	}
}

func skipWS(v []byte, i int) int {
	// Every whitespace byte is at most ' ': one compare passes the usual
	// next byte, a name's quote or a value, without the four.
	for i < len(v) {
		if c := v[i]; c > ' ' || c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			break
		}
		i++
	}
	return i
}
