package decode

// NOTE: design of the answer encoders.
//
// An answer is fixed pieces of JSON with the caller's bytes spliced in, so
// AppendResult and AppendError are appends of constants and raw slices after
// one slices.Grow; the only real work is escaping the error message.
//
// AppendString is one pass over s. It tests eight bytes at a time with a SWAR
// mask (escapeMask, on a uint64 assembled from s: no unsafe) that flags
// exactly the bytes needing attention, skips plain words sixteen bytes per
// iteration (skipPlain), and within a flagged word walks the flags: the run of
// plain bytes before an escape goes out with one append. Valid multi-byte
// UTF-8 is checked (runeLen, one table lookup, inlined) and stays inside the
// run; only invalid bytes and U+2028/U+2029 end it.
//
// Invalid UTF-8 is replaced per byte: every byte that does not begin a valid,
// shortest-form, non-surrogate sequence becomes one \ufffd and the scan moves
// on by one byte. These are the semantics of utf8.DecodeRune, of ranging over
// a Go string and of encoding/json, so the output is byte for byte what
// encoding/json writes with SetEscapeHTML(false) (answer_test.go checks this).
// They differ from strings.ToValidUTF8, which writes one replacement per run
// of invalid bytes ("\xed\xa0\x80" is three U+FFFD here, one there), and from
// Unicode's "maximal subpart" practice only for a sequence cut short
// ("\xe2\x82" is two U+FFFD here, one there).

import (
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Fixed parts of an answer. Field order is jsonrpc, id, result or error.
const (
	answerHead   = `{"jsonrpc":"2.0","id":`
	answerResult = `,"result":`
	answerError  = `,"error":{"code":`
	answerMsg    = `,"message":`
	answerData   = `,"data":`
	answerNull   = `null`
)

// AppendResult appends the JSON-RPC 2.0 success answer
//
//	{"jsonrpc":"2.0","id":<id>,"result":<result>}
//
// to dst and returns the extended dst. dst may be nil.
//
// id is written verbatim: it is the raw JSON of the request's id member
// exactly as it came in (12345678901234567890123, 1e400 and "caf\u00e9" come
// back unchanged, never re-encoded). result is raw JSON written verbatim.
// Neither is validated or trimmed; the caller guarantees each is one valid
// JSON value. An empty or nil id, or an empty or nil result, is written as
// null. No whitespace is added.
//
// AppendResult does not allocate when dst has room for the answer. It is safe
// for concurrent use: it is a pure function of its arguments (concurrent calls
// must not append to the same dst).
func AppendResult(dst, id, result []byte) []byte {
	dst = slices.Grow(dst, len(answerHead)+rawLen(id)+len(answerResult)+rawLen(result)+1)
	dst = append(dst, answerHead...)
	dst = appendRaw(dst, id)
	dst = append(dst, answerResult...)
	dst = appendRaw(dst, result)
	return append(dst, '}')
}

// AppendError appends the JSON-RPC 2.0 error answer
//
//	{"jsonrpc":"2.0","id":<id>,"error":{"code":<code>,"message":<message>}}
//
// to dst and returns the extended dst, with ,"data":<data> after the message
// when data is not empty. dst may be nil.
//
// id follows AppendResult's rules (verbatim; empty or nil is null). message is
// any text, escaped as AppendString does, so the answer is valid JSON and
// valid UTF-8 whatever message holds. data is raw JSON written verbatim and
// not validated; the caller guarantees it is one valid JSON value. code is
// written in decimal (see the Code* constants).
//
// AppendError does not allocate when dst has room for the answer. It is safe
// for concurrent use: it is a pure function of its arguments (concurrent calls
// must not append to the same dst).
func AppendError(dst, id []byte, code int, message string, data []byte) []byte {
	n := len(answerHead) + rawLen(id) + len(answerError) + intLen(code) +
		len(answerMsg) + len(message) + 2 + 2
	if len(data) > 0 {
		n += len(answerData) + len(data)
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, answerHead...)
	dst = appendRaw(dst, id)
	dst = append(dst, answerError...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, answerMsg...)
	dst = AppendString(dst, message)
	if len(data) > 0 {
		dst = append(dst, answerData...)
		dst = append(dst, data...)
	}
	return append(dst, '}', '}')
}

// intLen is the length of code in decimal.
func intLen(code int) int {
	n := 1
	u := uint64(code)
	if code < 0 {
		n++
		u = -u
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

// AppendString appends s to dst as a JSON string literal, quotes included,
// and returns the extended dst. dst may be nil. s may be a string or a byte
// slice (or any type whose underlying type is one of them).
//
// The output is always valid JSON and valid UTF-8:
//   - '"' and '\' are escaped as \" and \\;
//   - control characters below U+0020 are written as \b, \f, \n, \r, \t, or
//     \u00XX (lower-case hex) for the others;
//   - U+2028 and U+2029 are written as \u2028 and \u2029, so the output is
//     also safe inside JavaScript source;
//   - each byte of s that does not begin a valid UTF-8 sequence (a stray
//     continuation byte, an overlong form, an encoded surrogate, a sequence
//     cut short, a byte above 0xF4) is written as \ufffd, one per byte, as
//     utf8.DecodeRune and encoding/json do;
//   - everything else, DEL and '<', '>', '&' included, is copied as is.
//
// For every input the result equals what encoding/json produces for the same
// string with SetEscapeHTML(false).
//
// AppendString does not allocate when dst has room for the result. It is safe
// for concurrent use: it is a pure function of its arguments (concurrent calls
// must not append to the same dst).
func AppendString[S ~string | ~[]byte](dst []byte, s S) []byte {
	dst = slices.Grow(dst, len(s)+2)
	dst = append(dst, '"')
	start := 0 // s[:start] is written
	// i is the start of eight bytes (the last few padded with plain spaces)
	// in which m flags exactly the bytes that need attention.
	i, m := skipPlain(s, 0)
	for m != 0 {
		next := i + 8
		for m != 0 {
			j := i + bits.TrailingZeros64(m)>>3
			c := s[j]
			if c < utf8.RuneSelf { // a control character, '"' or '\\'
				dst = appendRun(dst, s, start, j)
				if e := asciiEscape[c]; e == 'u' {
					dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
				} else {
					dst = append(dst, '\\', e)
				}
				start = j + 1
				m &= m - 1
				continue
			}
			// A byte from 0x80: check the UTF-8 from j on, up to the next
			// ASCII byte, so that a stretch of non-ASCII text costs one
			// pass through the mask.
			p := j
			for p < len(s) && s[p] >= utf8.RuneSelf {
				switch n := runeLen(s, p); {
				case n == 0:
					dst = appendRun(dst, s, start, p)
					dst = append(dst, `\ufffd`...)
					p++
					start = p
				case n == 3 && s[p] == 0xe2 && s[p+1] == 0x80 && s[p+2]&^1 == 0xa8:
					// U+2028 (E2 80 A8) or U+2029 (E2 80 A9).
					dst = appendRun(dst, s, start, p)
					dst = append(dst, '\\', 'u', '2', '0', '2', '8'+s[p+2]&1)
					p += 3
					start = p
				default: // valid UTF-8, kept in the run
					p += n
				}
			}
			if p >= next {
				next = p
				break
			}
			m &= ^uint64(0) << (uint(p-i) * 8) // drop the flags before p
		}
		// Dense text: look at the next eight bytes here, without a call.
		if i = next; i+8 <= len(s) {
			if m = escapeMask(loadAny64(s, i)); m == 0 {
				i, m = skipPlain(s, i+8)
			}
		} else {
			i, m = skipPlain(s, i)
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendRun appends s[start:i], skipping the call to memmove when it is empty
// (as it is between two escapes).
func appendRun[S ~string | ~[]byte](dst []byte, s S, start, i int) []byte {
	if start == i {
		return dst
	}
	return append(dst, s[start:i]...)
}

// rawLen is the length appendRaw writes for v.
func rawLen(v []byte) int {
	if len(v) == 0 {
		return len(answerNull)
	}
	return len(v)
}

// appendRaw appends the raw JSON v, or null when v is empty.
func appendRaw(dst, v []byte) []byte {
	if len(v) == 0 {
		return append(dst, answerNull...)
	}
	return append(dst, v...)
}

const hexDigits = "0123456789abcdef"

// asciiEscape maps an ASCII byte to 0 when it is copied as is, to the letter
// that follows the backslash in its short escape, or to 'u' for \u00XX.
var asciiEscape = func() (t [utf8.RuneSelf]byte) {
	for c := range 0x20 {
		t[c] = 'u'
	}
	t['\b'], t['\f'], t['\n'], t['\r'], t['\t'] = 'b', 'f', 'n', 'r', 't'
	t['"'], t['\\'] = '"', '\\'
	return t
}()

// SWAR constants: a 1, a 0x7f, a high bit in every byte.
const (
	lsbs = 0x0101010101010101
	lo7s = 0x7f7f7f7f7f7f7f7f
	msbs = 0x8080808080808080
)

// loadAny64 returns s[i:i+8] as a little-endian uint64: s[i] in the low byte.
// The compiler merges the eight loads into one.
func loadAny64[S ~string | ~[]byte](s S, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// skipPlain returns the first i' ≥ i, i' ≡ i (mod 8), whose eight bytes
// s[i':i'+8] (past the end of s: spaces, which are plain) hold a byte that
// escapeMask flags, and that mask; or i' ≥ len(s) and 0 when there is none.
// It is the hot loop of AppendString, kept apart so that it stays tight.
func skipPlain[S ~string | ~[]byte](s S, i int) (int, uint64) {
	if i >= len(s) {
		return i, 0
	}
	t := s[i:]
	for len(t) >= 16 {
		a, b := escapeMask(loadAny64(t, 0)), escapeMask(loadAny64(t, 8))
		if a|b != 0 {
			if a == 0 {
				return len(s) - len(t) + 8, b
			}
			return len(s) - len(t), a
		}
		t = t[16:]
	}
	if len(t) >= 8 {
		if m := escapeMask(loadAny64(t, 0)); m != 0 {
			return len(s) - len(t), m
		}
		t = t[8:]
	}
	if len(t) == 0 {
		return len(s), 0
	}
	return len(s) - len(t), escapeMask(loadTail(t))
}

// loadTail is loadAny64 for fewer than eight bytes: the bytes of t, then spaces.
func loadTail[S ~string | ~[]byte](t S) uint64 {
	x := uint64(lsbs * ' ')
	for k := len(t) - 1; k >= 0; k-- {
		x = x<<8 | uint64(t[k])
	}
	return x
}

// escapeMask returns x with the high bit set in exactly the bytes that
// AppendString must look at: control characters, '"', '\\', and bytes from
// 0x80. Unlike the classic has-zero tricks it has no carries between bytes,
// so every flag is exact and AppendString handles all the flagged bytes of
// a word from one mask.
func escapeMask(x uint64) uint64 {
	l := x & lo7s                          // the low seven bits of each byte
	ctl := l + lsbs*0x60                   // high bit clear: below 0x20
	quo := (l ^ lsbs*'"') + lo7s           // high bit clear: '"'
	bsl := (l ^ lsbs*'\\') + lo7s          // high bit clear: '\\'
	return (x | ^(ctl & quo & bsl)) & msbs // or a byte from 0x80
}

// runeLen returns the length of the valid UTF-8 sequence that starts at
// s[i], a byte from 0x80, or 0 when no valid sequence starts there. Valid
// means what utf8.DecodeRune accepts: shortest form, no surrogates, at most
// U+10FFFF. It is small enough to be inlined.
func runeLen[S ~string | ~[]byte](s S, i int) int {
	x := utf8Lead[s[i]]
	n := int(x & 7)
	if uint(n-1) >= uint(len(s)-i) || // no sequence starts with s[i], or s is too short
		s[i+1]-byte(x>>8) > byte(x>>16) || // the second byte is out of its range
		n > 2 && s[i+2]&0xc0 != 0x80 || n > 3 && s[i+3]&0xc0 != 0x80 {
		return 0
	}
	return n
}

// utf8Lead describes each byte as the first of a UTF-8 sequence: the length
// of the sequence (bits 0-7; 0 when the byte cannot begin one), and the range
// of the second byte as its low end (bits 8-15) and span (bits 16-23): b is
// in range when b-lo <= span.
var utf8Lead = func() (t [256]uint32) {
	const cont = 0x80 | 0x3f<<8 // 80..BF, the range of a continuation byte
	for c := 0xc2; c < 0xe0; c++ {
		t[c] = 2 | cont<<8
	}
	for c := 0xe0; c < 0xf0; c++ {
		t[c] = 3 | cont<<8
	}
	for c := 0xf0; c < 0xf5; c++ {
		t[c] = 4 | cont<<8
	}
	t[0xe0] = 3 | (0xa0|0x1f<<8)<<8 // E0 A0..BF: no overlong forms
	t[0xed] = 3 | (0x80|0x1f<<8)<<8 // ED 80..9F: no surrogates
	t[0xf0] = 4 | (0x90|0x2f<<8)<<8 // F0 90..BF: no overlong forms
	t[0xf4] = 4 | (0x80|0x0f<<8)<<8 // F4 80..8F: nothing past U+10FFFF
	return t
}()
