package decode

// NOTE: the scanner.
//
// One resumable state machine validates RFC 8259 JSON strictly, for whole
// bodies and for bodies that arrive in chunks. Its verdicts obey one rule
// that makes them independent of chunking: every check of byte i looks only
// at bytes 0..i, and a failure is reported at the first byte that cannot
// continue a valid text (len(buf) when the text ends too early). A chunked
// caller therefore sees the same verdict, at the same offset, as a one-shot
// caller; a ceiling is applied by cutting the input at the ceiling and
// scanning with final=false.
//
// The scanner keeps no copy of the input. When a chunk ends inside a token it
// remembers a resume point: inside strings the last clean boundary (never
// inside an escape or a UTF-8 sequence, so at most 11 bytes are looked at
// twice), inside numbers a sub-state, inside literals the token start.
//
// While it scans it records, for the top-level object only, each member's
// name span and value span, so the envelope can be read without a second
// pass over params.

import (
	"encoding/binary"
	"math/bits"
)

// scanner states.
const (
	sTop      uint8 = iota // before the top-level value
	sValue                 // a value is expected (after ':' or after ',' in an array)
	sObjFirst              // after '{': a member name or '}'
	sObjNext               // after ',' in an object: a member name
	sColon                 // after a member name
	sArrFirst              // after '[': a value or ']'
	sAfter                 // after a value inside a container: ',' or the closer
	sDone                  // after the top-level value: whitespace only
	sString                // inside a string
	sNumber                // inside a number
	sLiteral               // inside true, false or null
)

// number sub-states; the "end" states may finish the number.
const (
	nStart uint8 = iota // at the first byte
	nSign               // after '-'
	nZero               // after a leading 0 (end)
	nInt                // in integer digits (end)
	nDot                // after '.'
	nFrac               // in fraction digits (end)
	nE                  // after 'e' or 'E'
	nESign              // after the exponent sign
	nExp                // in exponent digits (end)
)

// scan results.
const (
	scanMore uint8 = iota // the input so far is a valid prefix; feed more
	scanDone              // final input: a complete, valid text
	scanFail              // s.err describes the failure
	scanSIMD              // runScalar handed a container to the SIMD stage
)

// member records one member of the top-level object: spans into the body.
type member struct {
	nameStart, nameEnd int // the name's content, without the quotes
	valStart, valEnd   int // the raw value
	nameEsc            bool
}

const noLimit = int(^uint(0) >> 1)

type scanner struct {
	maxDepth int
	record   bool // record top-level members

	state  uint8
	num    uint8
	isKey  bool
	esc    bool // the current string has escapes
	top    byte // first byte of the top-level value
	depth  int  // number of open containers
	tok    int  // start of the current token
	pos    int  // resume position
	stack  []uint64
	member member
	// members of the top-level object, in order: the first
	// maxRecordedMembers of them; more says there were others.
	members []member
	more    bool

	errKind   error
	errOff    int
	errReason string

	simdMin int // the least depth (after the opening bracket) handed to the SIMD stage
	simd    simdState
}

func (s *scanner) reset(maxDepth int, record bool) {
	s.maxDepth = maxDepth
	s.record = record
	s.state = sTop
	s.num = 0
	s.depth = 0
	s.top = 0
	s.pos = 0
	s.members = s.members[:0]
	s.more = false
	s.errKind = nil
	s.simd.active = false
	s.simd.off = false
	s.simdMin = 1
	if record {
		s.simdMin = 2
	}
}

func (s *scanner) fail(kind error, off int, reason string) uint8 {
	s.errKind = kind
	s.errOff = off
	s.errReason = reason
	return scanFail
}

// strSafe[c] is true for bytes that stand for themselves inside a string.
var strSafe = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return
}()

const (
	lo8 = 0x0101010101010101
	hi8 = 0x8080808080808080
)

// special returns a mask whose lowest set bit is the high bit of the
// first byte of x (little-endian) that needs attention inside a string:
// '"', '\\', a control character or a non-ASCII byte. Bytes before that
// one are plain ASCII, so they neither set a high bit nor borrow; bits
// above the lowest may be spurious.
func special(x uint64) uint64 {
	return ((x - lo8*0x20) | ((x ^ lo8*'"') - lo8) | ((x ^ lo8*'\\') - lo8) | x) & hi8
}

// run scans buf from s.pos. final says buf holds the whole input.
func (s *scanner) run(buf []byte, final bool) uint8 {
	for {
		if s.simd.active && s.simdRun(buf, final) == simdMore {
			return scanMore
		}
		if r := s.runScalar(buf, final); r != scanSIMD {
			return r
		}
	}
}

// runScalar is the scalar scanner: it scans buf from s.pos, and returns
// scanSIMD when it hands a container to the SIMD stage.
//
// The states are labels, so that the common transitions (name, colon,
// value, comma) jump straight to the code that expects them; the state is
// written back to s only when run returns.
func (s *scanner) runScalar(buf []byte, final bool) uint8 {
	var (
		i     = s.pos
		n     = len(buf)
		depth = s.depth
		state = s.state
		tok   = s.tok
		c     byte
		r     uint8
		inObj = depth > 0 && s.stack[(depth-1)>>6]&(1<<(uint(depth-1)&63)) != 0
	)
	switch state {
	case sTop, sValue, sArrFirst:
		goto value
	case sObjFirst, sObjNext:
		goto name
	case sColon:
		goto colon
	case sAfter:
		goto after
	case sDone:
		goto done
	case sString:
		if s.isKey {
			goto key
		}
		goto str
	case sNumber:
		goto number
	case sLiteral:
		goto literal
	}
	panic("decode: scanner in an impossible state")

value: // sTop, sValue or sArrFirst
	if i >= n {
		goto eof
	}
	c = buf[i]
	if c <= ' ' {
		if i = skipSpace(buf, i); i >= n {
			goto eof
		}
		c = buf[i]
	}
	if depth == 1 {
		s.member.valStart = i
	}
	tok = i
	if c == '"' { // the commonest value, without the switch's indirect jump
		i++
		goto str
	}
	switch valueClass[c] {
	case vObject:
		if depth >= s.maxDepth {
			goto tooDeep
		}
		if state == sTop {
			s.top = c
		}
		s.push(depth, true)
		depth++
		inObj = true
		i++
		state = sObjFirst
		if depth >= s.simdMin && n-i >= simdThreshold && simdOK && !s.simd.off {
			s.pos, s.state, s.depth = i, state, depth
			s.simdEnter(i, depth, true)
			return scanSIMD
		}
		goto name
	case vArray:
		if state == sTop {
			if s.record {
				s.pos, s.state, s.depth = i, state, depth
				return s.fail(ErrBatch, i, "batch (a JSON array) where one message was expected")
			}
			s.top = c
		}
		if depth >= s.maxDepth {
			goto tooDeep
		}
		s.push(depth, false)
		depth++
		inObj = false
		i++
		state = sArrFirst
		if depth >= s.simdMin && n-i >= simdThreshold && simdOK && !s.simd.off {
			s.pos, s.state, s.depth = i, state, depth
			s.simdEnter(i, depth, false)
			return scanSIMD
		}
		goto value
	case vLiteral:
		if i+4 <= n {
			if w := binary.LittleEndian.Uint32(buf[i:]); w == litTrue || w == litNull {
				i += 4
				goto scalarDone
			}
		}
		goto literal
	case vNumber:
		// Fast path: a complete number followed, within buf, by a byte
		// that may follow it. Anything else goes to scanNumber.
		{
			j := i
			if c == '-' {
				j++
				if j >= n {
					goto slowNumber
				}
				c = buf[j]
			}
			if c == '0' {
				j++
			} else if c-'1' <= 8 {
				j++
				for j < n && buf[j]-'0' <= 9 {
					j++
				}
			} else {
				goto slowNumber
			}
			if j >= n {
				goto slowNumber
			}
			if buf[j] == '.' {
				j++
				k := j
				for j < n && buf[j]-'0' <= 9 {
					j++
				}
				if j == k || j >= n {
					goto slowNumber
				}
			}
			if buf[j]|0x20 == 'e' {
				j++
				if j < n && (buf[j] == '+' || buf[j] == '-') {
					j++
				}
				k := j
				for j < n && buf[j]-'0' <= 9 {
					j++
				}
				if j == k || j >= n {
					goto slowNumber
				}
			}
			if !numberEnd[buf[j]] {
				goto slowNumber
			}
			i = j
			goto scalarDone
		}
	slowNumber:
		s.num = nStart
		goto number
	case vClose:
		if state == sArrFirst && c == ']' {
			goto close
		}
	}
	if state == sTop {
		s.top = c
	}
	s.pos, s.state, s.depth = i, state, depth
	if state == sTop && c == 0xEF {
		return s.fail(ErrSyntax, i, "byte order mark or invalid character at the start")
	}
	return s.fail(ErrSyntax, i, "invalid character where a value was expected")

name: // sObjFirst or sObjNext
	if i >= n {
		goto eof
	}
	c = buf[i]
	if c <= ' ' {
		if i = skipSpace(buf, i); i >= n {
			goto eof
		}
		c = buf[i]
	}
	if c == '"' {
		tok = i
		s.esc = false
		i++
		goto key
	}
	if c == '}' && state == sObjFirst {
		goto close
	}
	s.pos, s.state, s.depth = i, state, depth
	return s.fail(ErrSyntax, i, "invalid character where a member name was expected")

key: // inside a member name
	for i+8 <= n {
		if m := special(load64(buf, i)); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			break
		}
		i += 8
	}
	if i < n && buf[i] == '"' {
		i++
	} else {
		s.isKey = true
		s.tok = tok
		if i, r = s.scanString(buf, i, final); r != scanDone {
			s.state, s.depth = sString, depth
			return r
		}
	}
	if depth == 1 {
		s.member.nameStart = tok + 1
		s.member.nameEnd = i - 1
		s.member.nameEsc = s.esc
	}
	// The colon, usually right after the name.
	if i < n && buf[i] == ':' {
		i++
		state = sValue
		goto value
	}

colon:
	if i >= n {
		state = sColon
		goto eof
	}
	c = buf[i]
	if c <= ' ' {
		if i = skipSpace(buf, i); i >= n {
			state = sColon
			goto eof
		}
		c = buf[i]
	}
	if c != ':' {
		s.pos, s.state, s.depth = i, sColon, depth
		return s.fail(ErrSyntax, i, "expected ':' after a member name")
	}
	i++
	state = sValue
	goto value

str: // inside a string value, at a clean boundary
	for i+16 <= n {
		if m := special(load64(buf, i)); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			goto strEnd
		}
		if m := special(load64(buf, i+8)); m != 0 {
			i += 8 + bits.TrailingZeros64(m)>>3
			goto strEnd
		}
		i += 16
	}
	if i+8 <= n {
		if m := special(load64(buf, i)); m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			goto strEnd
		}
		i += 8
	}
strEnd:
	if i < n && buf[i] == '"' {
		i++
	} else {
		s.isKey = false
		s.tok = tok
		if i, r = s.scanString(buf, i, final); r != scanDone {
			s.state, s.depth = sString, depth
			return r
		}
	}
	goto scalarDone

number:
	if i, r = s.scanNumber(buf, i, final); r != scanDone {
		s.tok = tok
		s.state, s.depth = sNumber, depth
		return r
	}
	goto scalarDone

literal:
	{
		lit := "null"
		if buf[tok] == 't' {
			lit = "true"
		} else if buf[tok] == 'f' {
			lit = "false"
		}
		for k := i - tok; k < len(lit); k++ {
			if i >= n {
				s.tok = tok
				s.pos, s.state, s.depth = i, sLiteral, depth
				if final {
					return s.fail(ErrSyntax, i, "unexpected end of input in a literal")
				}
				return scanMore
			}
			if buf[i] != lit[k] {
				s.pos, s.state, s.depth = i, sLiteral, depth
				return s.fail(ErrSyntax, i, "invalid literal")
			}
			i++
		}
	}
	goto scalarDone

close: // buf[i] closes the innermost container
	i++
	depth--
	if depth > 0 {
		inObj = s.stack[(depth-1)>>6]&(1<<(uint(depth-1)&63)) != 0
	}
scalarDone:
	if depth <= 1 {
		if depth == 0 {
			goto done
		}
		if s.record {
			s.addMember(i)
		}
	}

after: // sAfter: ',' or the closer of the innermost container
	if i >= n {
		state = sAfter
		goto eof
	}
	c = buf[i]
	if c <= ' ' {
		if i = skipSpace(buf, i); i >= n {
			state = sAfter
			goto eof
		}
		c = buf[i]
	}
	if c == ',' {
		i++
		if inObj {
			state = sObjNext
			goto name
		}
		state = sValue
		goto value
	}
	if inObj {
		if c == '}' {
			goto close
		}
		s.pos, s.state, s.depth = i, sAfter, depth
		return s.fail(ErrSyntax, i, "expected ',' or '}' after an object member")
	}
	if c == ']' {
		goto close
	}
	s.pos, s.state, s.depth = i, sAfter, depth
	return s.fail(ErrSyntax, i, "expected ',' or ']' after an array element")

done: // sDone: whitespace only
	if i < n && buf[i] <= ' ' {
		i = skipSpace(buf, i)
	}
	if i >= n {
		state = sDone
		goto eof
	}
	s.pos, s.state, s.depth = i, sDone, depth
	return s.fail(ErrSyntax, i, "data after the top-level value")

tooDeep:
	s.pos, s.state, s.depth = i, state, depth
	return s.fail(ErrDepth, i, "nesting deeper than the limit")

eof:
	s.pos, s.state, s.depth = i, state, depth
	if !final {
		return scanMore
	}
	if state == sDone {
		return scanDone
	}
	if state == sTop {
		return s.fail(ErrSyntax, i, "empty body")
	}
	return s.fail(ErrSyntax, i, "unexpected end of input")
}

// value classes, by first byte.
const (
	vInvalid = iota
	vString
	vObject
	vArray
	vLiteral
	vNumber
	vClose
)

var valueClass = [256]uint8{
	'"': vString, '{': vObject, '[': vArray, 't': vLiteral, 'f': vLiteral, 'n': vLiteral,
	'-': vNumber, '0': vNumber, '1': vNumber, '2': vNumber, '3': vNumber, '4': vNumber,
	'5': vNumber, '6': vNumber, '7': vNumber, '8': vNumber, '9': vNumber, ']': vClose,
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(buf []byte, i int) int {
	for i < len(buf) {
		switch buf[i] {
		case ' ', '\n', '\r', '\t':
			i++
			continue
		}
		break
	}
	return i
}

var (
	litTrue = binary.LittleEndian.Uint32([]byte("true"))
	litNull = binary.LittleEndian.Uint32([]byte("null"))
)

// numberEnd[c] is true for the bytes that may follow a number.
var numberEnd = [256]bool{',': true, '}': true, ']': true, ' ': true, '\t': true, '\n': true, '\r': true}

// maxRecordedMembers is how many top-level members the scanner records:
// a message has a handful. Past it the envelope walks the body instead
// (envelope.fill), so that a message of many members costs no span per
// member.
const maxRecordedMembers = 32

// addMember records s.member, whose value ends at valEnd. It copies the
// fields one by one: they were just stored one by one, and a block copy
// would load them in wider words than were stored, which stalls store
// forwarding.
func (s *scanner) addMember(valEnd int) {
	n := len(s.members)
	if n == maxRecordedMembers {
		s.more = true
		return
	}
	if n < cap(s.members) {
		s.members = s.members[:n+1]
	} else {
		s.members = append(s.members, member{})
	}
	p := &s.members[n]
	p.nameStart = s.member.nameStart
	p.nameEnd = s.member.nameEnd
	p.valStart = s.member.valStart
	p.valEnd = valEnd
	p.nameEsc = s.member.nameEsc
}

func (s *scanner) push(depth int, obj bool) {
	w := depth >> 6
	for w >= len(s.stack) {
		s.stack = append(s.stack, 0)
	}
	bit := uint64(1) << (uint(depth) & 63)
	if obj {
		s.stack[w] |= bit
	} else {
		s.stack[w] &^= bit
	}
}

// scanNumber continues a number at buf[i]. On scanDone it returns the index
// of the first byte after the number.
func (s *scanner) scanNumber(buf []byte, i int, final bool) (int, uint8) {
	n := len(buf)
	st := s.num
	for i < n {
		c := buf[i]
		switch st {
		case nStart:
			if c == '-' {
				st = nSign
			} else if c == '0' {
				st = nZero
			} else {
				st = nInt
			}
		case nSign:
			if c == '0' {
				st = nZero
			} else if c >= '1' && c <= '9' {
				st = nInt
			} else {
				s.pos = i
				return i, s.fail(ErrSyntax, i, "invalid number: a digit must follow '-'")
			}
		case nZero:
			if c == '.' {
				st = nDot
			} else if c == 'e' || c == 'E' {
				st = nE
			} else {
				s.pos = i
				return i, scanDone
			}
		case nInt:
			for c >= '0' && c <= '9' {
				i++
				if i >= n {
					goto more
				}
				c = buf[i]
			}
			if c == '.' {
				st = nDot
			} else if c == 'e' || c == 'E' {
				st = nE
			} else {
				s.pos = i
				return i, scanDone
			}
		case nDot:
			if c < '0' || c > '9' {
				s.pos = i
				return i, s.fail(ErrSyntax, i, "invalid number: a digit must follow '.'")
			}
			st = nFrac
		case nFrac:
			for c >= '0' && c <= '9' {
				i++
				if i >= n {
					goto more
				}
				c = buf[i]
			}
			if c == 'e' || c == 'E' {
				st = nE
			} else {
				s.pos = i
				return i, scanDone
			}
		case nE:
			if c == '+' || c == '-' {
				st = nESign
			} else if c >= '0' && c <= '9' {
				st = nExp
			} else {
				s.pos = i
				return i, s.fail(ErrSyntax, i, "invalid number: a digit must follow the exponent")
			}
		case nESign:
			if c < '0' || c > '9' {
				s.pos = i
				return i, s.fail(ErrSyntax, i, "invalid number: a digit must follow the exponent sign")
			}
			st = nExp
		case nExp:
			for c >= '0' && c <= '9' {
				i++
				if i >= n {
					goto more
				}
				c = buf[i]
			}
			s.pos = i
			return i, scanDone
		}
		i++
	}
more:
	s.pos = i
	s.num = st
	if !final {
		return i, scanMore
	}
	switch st {
	case nZero, nInt, nFrac, nExp:
		return i, scanDone
	}
	return i, s.fail(ErrSyntax, i, "unexpected end of input in a number")
}

// scanString continues a string at buf[i] (after the opening quote or at a
// resume point). On scanDone it returns the index just past the closing
// quote.
func (s *scanner) scanString(buf []byte, i int, final bool) (int, uint8) {
	n := len(buf)
	for {
		for i+8 <= n {
			m := special(load64(buf, i))
			if m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto slow
			}
			i += 8
		}
		for i < n && strSafe[buf[i]] {
			i++
		}
		if i >= n {
			return s.strMore(i, final)
		}
	slow:
		c := buf[i]
		switch {
		case c == '"':
			return i + 1, scanDone
		case c == '\\':
			j, r := s.scanEscape(buf, i, final)
			if r != scanDone {
				return j, r
			}
			s.esc = true
			i = j
		case c < 0x20:
			s.pos = i
			return i, s.fail(ErrSyntax, i, "control character in a string")
		case c < 0x80:
			i++
		default:
			// A run of multi-byte sequences, validated in line while
			// they are complete in buf.
			for {
				x := utf8Accept[c]
				size := int(x >> 4)
				if size == 0 || i+size > n {
					break
				}
				b1 := buf[i+1]
				if b1 < utf8Lo[x&7] || b1 > utf8Hi[x&7] {
					break
				}
				if size > 2 && buf[i+2]&0xC0 != 0x80 {
					break
				}
				if size > 3 && buf[i+3]&0xC0 != 0x80 {
					break
				}
				i += size
				if i >= n {
					break
				}
				c = buf[i]
				if c < 0x80 {
					break
				}
			}
			if c >= 0x80 && i < n {
				j, r := s.scanUTF8(buf, i, final)
				if r != scanDone {
					return j, r
				}
				i = j
			}
		}
	}
}

// utf8Accept[c] describes a lead byte: the high nibble is the sequence
// length (0 for a byte that cannot lead), the low bits index utf8Lo and
// utf8Hi, the range of the second byte.
var utf8Accept = func() (t [256]byte) {
	for c := 0xC2; c < 0xE0; c++ {
		t[c] = 2 << 4 // range index 0: any continuation byte
	}
	for c := 0xE0; c < 0xF0; c++ {
		t[c] = 3 << 4
	}
	t[0xE0] = 3<<4 | 1
	t[0xED] = 3<<4 | 2
	for c := 0xF0; c < 0xF5; c++ {
		t[c] = 4 << 4
	}
	t[0xF0] = 4<<4 | 3
	t[0xF4] = 4<<4 | 4
	return
}()

var (
	utf8Lo = [8]byte{0x80, 0xA0, 0x80, 0x90, 0x80}
	utf8Hi = [8]byte{0xBF, 0xBF, 0x9F, 0xBF, 0x8F}
)

func (s *scanner) strMore(i int, final bool) (int, uint8) {
	s.pos = i
	if final {
		return i, s.fail(ErrSyntax, i, "unexpected end of input in a string")
	}
	return i, scanMore
}

// scanUTF8 validates the multi-byte sequence at buf[i]. The failure is at
// the first byte that cannot continue a well-formed sequence.
func (s *scanner) scanUTF8(buf []byte, i int, final bool) (int, uint8) {
	n := len(buf)
	c := buf[i]
	var size int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c < 0xC2:
		s.pos = i
		return i, s.fail(ErrSyntax, i, "invalid UTF-8")
	case c < 0xE0:
		size = 2
	case c < 0xF0:
		size = 3
		if c == 0xE0 {
			lo = 0xA0
		} else if c == 0xED {
			hi = 0x9F
		}
	case c < 0xF5:
		size = 4
		if c == 0xF0 {
			lo = 0x90
		} else if c == 0xF4 {
			hi = 0x8F
		}
	default:
		s.pos = i
		return i, s.fail(ErrSyntax, i, "invalid UTF-8")
	}
	for k := 1; k < size; k++ {
		if i+k >= n {
			s.pos = i // resume at the lead byte
			if final {
				return i, s.fail(ErrSyntax, n, "unexpected end of input in a string")
			}
			return i, scanMore
		}
		b := buf[i+k]
		if b < lo || b > hi {
			s.pos = i
			return i, s.fail(ErrSyntax, i+k, "invalid UTF-8")
		}
		lo, hi = 0x80, 0xBF
	}
	return i + size, scanDone
}

// hexVal maps hex digits to their value and everything else to 0xFF.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c-'a') + 10
		t[c-'a'+'A'] = byte(c-'a') + 10
	}
	return
}()

// scanEscape validates the escape at buf[i] == '\\', including a
// surrogate pair. Unpaired surrogates fail at the first byte that shows
// the pair cannot be completed.
func (s *scanner) scanEscape(buf []byte, i int, final bool) (int, uint8) {
	n := len(buf)
	start := i
	k := i + 1
	if k >= n {
		return s.escMore(start, final, n)
	}
	switch buf[k] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return k + 1, scanDone
	case 'u':
	default:
		s.pos = start
		return start, s.fail(ErrSyntax, k, "invalid escape")
	}
	// \uXXXX
	var r rune
	for d := 0; d < 4; d++ {
		k++
		if k >= n {
			return s.escMore(start, final, n)
		}
		v := hexVal[buf[k]]
		if v == 0xFF {
			s.pos = start
			return start, s.fail(ErrSyntax, k, "invalid \\u escape")
		}
		r = r<<4 | rune(v)
		if d == 1 && r >= 0xDC && r <= 0xDF {
			s.pos = start
			return start, s.fail(ErrSyntax, k, "unpaired low surrogate in \\u escape")
		}
	}
	k++
	if r < 0xD800 || r > 0xDBFF {
		return k, scanDone
	}
	// A high surrogate: a \u escape of a low surrogate must follow.
	if k >= n {
		return s.escMore(start, final, n)
	}
	if buf[k] != '\\' {
		s.pos = start
		return start, s.fail(ErrSyntax, k, "unpaired high surrogate in \\u escape")
	}
	k++
	if k >= n {
		return s.escMore(start, final, n)
	}
	if buf[k] != 'u' {
		s.pos = start
		return start, s.fail(ErrSyntax, k, "unpaired high surrogate in \\u escape")
	}
	for d := 0; d < 4; d++ {
		k++
		if k >= n {
			return s.escMore(start, final, n)
		}
		c := buf[k]
		v := hexVal[c]
		ok := v != 0xFF
		if d == 0 {
			ok = v == 0xD
		} else if d == 1 {
			ok = v >= 0xC && v <= 0xF
		}
		if !ok {
			s.pos = start
			if v == 0xFF {
				return start, s.fail(ErrSyntax, k, "invalid \\u escape")
			}
			return start, s.fail(ErrSyntax, k, "unpaired high surrogate in \\u escape")
		}
	}
	return k + 1, scanDone
}

func (s *scanner) escMore(start int, final bool, n int) (int, uint8) {
	s.pos = start
	if final {
		return start, s.fail(ErrSyntax, n, "unexpected end of input in an escape")
	}
	return start, scanMore
}
