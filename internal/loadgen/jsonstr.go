package loadgen

// NOTE: answers are validated and walked by decode (decode.Valid, then
// decode.Members over the validated bytes: one JSON walker in the
// project, strict by RFC 8259 and UTF-8). What is left here compares raw
// JSON string contents with each other and with Go strings without
// allocating, escapes resolved rune by rune: an echoed text or a string
// id may come back spelled with other escapes than were sent.

import (
	"unicode/utf16"
	"unicode/utf8"
)

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
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

// parseIntLiteral reports whether v is a JSON number without fraction or
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
