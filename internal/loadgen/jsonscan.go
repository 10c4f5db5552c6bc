package loadgen

// NOTE: a small, allocation-free JSON reader for answers. It validates the
// whole answer against RFC 8259 (strings with their escapes and UTF-8,
// numbers, literals, nesting) and walks objects member by member, handing
// back raw slices of the buffer; nothing is decoded unless compared.
// Answers are tiny, so the walk is recursive with a fixed depth limit.

import (
	"unicode/utf16"
	"unicode/utf8"
)

// maxAnswerDepth bounds nesting in an answer; deeper answers are malformed
// as far as loadgen is concerned.
const maxAnswerDepth = 256

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// scanValue validates the JSON value that starts at b[i] (no leading
// whitespace) and returns the index just past it.
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) {
		return i, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{':
		if depth >= maxAnswerDepth {
			return i, false
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return i, false
			}
			var ok bool
			if i, ok = scanString(b, i); !ok {
				return i, false
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return i, false
			}
			i = skipWS(b, i+1)
			if i, ok = scanValue(b, i, depth+1); !ok {
				return i, false
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == '}' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipWS(b, i+1)
		}
	case c == '[':
		if depth >= maxAnswerDepth {
			return i, false
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = scanValue(b, i, depth+1); !ok {
				return i, false
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return i, false
			}
			if b[i] == ']' {
				return i + 1, true
			}
			if b[i] != ',' {
				return i, false
			}
			i = skipWS(b, i+1)
		}
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		return scanNumber(b, i)
	}
	return i, false
}

func scanLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return i, false
	}
	return i + len(lit), true
}

// scanNumber validates an RFC 8259 number starting at b[i].
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	if i >= len(b) {
		return i, false
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == s {
			return i, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		s := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == s {
			return i, false
		}
	}
	return i, true
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

func hex4(b []byte) rune {
	if len(b) < 4 {
		return -1
	}
	var r rune
	for _, c := range b[:4] {
		v := hexVal(c)
		if v < 0 {
			return -1
		}
		r = r<<4 | v
	}
	return r
}

// plainStringByte marks the bytes that stand for themselves inside a
// string: printable ASCII other than the quote and the backslash.
var plainStringByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString validates the string literal that starts with the quote at
// b[i] and returns the index just past its closing quote.
func scanString(b []byte, i int) (int, bool) {
	i++
	for i < len(b) {
		c := b[i]
		if plainStringByte[c] {
			i++
			continue
		}
		switch {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if _, n := decodeEscape(b[i:]); n == 0 {
				return i, false
			} else {
				i += n
			}
		case c < 0x20:
			return i, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n <= 1 {
				return i, false
			}
			i += n
		}
	}
	return i, false
}

// decodeEscape decodes the escape sequence at the start of b (b[0] is the
// backslash), a surrogate pair included, and returns the rune and the
// number of bytes used; 0 bytes means an invalid escape (an unpaired
// surrogate among them).
func decodeEscape(b []byte) (rune, int) {
	if len(b) < 2 {
		return 0, 0
	}
	switch b[1] {
	case '"', '\\', '/':
		return rune(b[1]), 2
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
		r := hex4(b[2:])
		if r < 0 {
			return 0, 0
		}
		if !utf16.IsSurrogate(r) {
			return r, 6
		}
		if r >= 0xDC00 || len(b) < 12 || b[6] != '\\' || b[7] != 'u' {
			return 0, 0
		}
		r2 := hex4(b[8:])
		if r2 < 0xDC00 || r2 > 0xDFFF {
			return 0, 0
		}
		return utf16.DecodeRune(r, r2), 12
	}
	return 0, 0
}

// nextRune decodes one character of the raw (already validated) contents
// of a JSON string at s[i] and returns it with the index after it.
func nextRune(s []byte, i int) (rune, int) {
	if s[i] == '\\' {
		r, n := decodeEscape(s[i:])
		if n == 0 {
			return utf8.RuneError, len(s)
		}
		return r, i + n
	}
	if s[i] < utf8.RuneSelf {
		return rune(s[i]), i + 1
	}
	r, n := utf8.DecodeRune(s[i:])
	return r, i + n
}

// strEqual reports whether two raw JSON string contents (between the
// quotes, escapes unresolved) decode to the same text.
func strEqual(a, b []byte) bool {
	if string(a) == string(b) {
		return true
	}
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		var ra, rb rune
		ra, i = nextRune(a, i)
		rb, j = nextRune(b, j)
		if ra != rb {
			return false
		}
	}
	return i == len(a) && j == len(b)
}

// strIs reports whether raw JSON string contents decode to s.
func strIs(raw []byte, s string) bool {
	if string(raw) == s {
		return true
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' {
			return strEqualString(raw, s)
		}
	}
	return false
}

func strEqualString(raw []byte, s string) bool {
	i, j := 0, 0
	for i < len(raw) && j < len(s) {
		var r rune
		r, i = nextRune(raw, i)
		sr, n := utf8.DecodeRuneInString(s[j:])
		j += n
		if r != sr {
			return false
		}
	}
	return i == len(raw) && j == len(s)
}

// objWalker walks the members of one validated-on-the-fly JSON object.
// The zero value is not usable; call start.
type objWalker struct {
	b    []byte
	i    int
	done bool
	bad  bool
}

// start positions the walker on the object that begins at b[i]; it
// reports false when b[i] is not '{'.
func (w *objWalker) start(b []byte, i int) bool {
	w.b, w.done, w.bad = b, false, false
	if i >= len(b) || b[i] != '{' {
		w.bad = true
		return false
	}
	w.i = skipWS(b, i+1)
	if w.i < len(b) && b[w.i] == '}' {
		w.i++
		w.done = true
	}
	return true
}

// next returns the next member: its raw key contents and the raw bytes of
// its value. It returns ok false at the end of the object or on a syntax
// error (then w.bad is set). After the end, w.i is just past the '}'.
func (w *objWalker) next() (key, val []byte, ok bool) {
	if w.done || w.bad {
		return nil, nil, false
	}
	b, i := w.b, w.i
	if i >= len(b) || b[i] != '"' {
		w.bad = true
		return nil, nil, false
	}
	ke, ok := scanString(b, i)
	if !ok {
		w.bad = true
		return nil, nil, false
	}
	key = b[i+1 : ke-1]
	i = skipWS(b, ke)
	if i >= len(b) || b[i] != ':' {
		w.bad = true
		return nil, nil, false
	}
	vs := skipWS(b, i+1)
	ve, ok := scanValue(b, vs, 1)
	if !ok {
		w.bad = true
		return nil, nil, false
	}
	val = b[vs:ve]
	i = skipWS(b, ve)
	switch {
	case i < len(b) && b[i] == ',':
		w.i = skipWS(b, i+1)
	case i < len(b) && b[i] == '}':
		w.i = i + 1
		w.done = true
	default:
		w.bad = true
		return nil, nil, false
	}
	return key, val, true
}

// isIntegerLiteral reports whether v is a JSON number without fraction or
// exponent, and returns its value when it fits in an int64.
func parseIntLiteral(v []byte) (int64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	neg := v[0] == '-'
	d := v
	if neg {
		d = v[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}
