package loadgen

// NOTE: the HTTP/1.1 response reader. Engines append what they read to a
// buffer and call parse until it reports the answer complete; parse starts
// over from the first byte each time (an answer is usually in one read),
// keeps no pointers between calls, and allocates nothing. Chunked bodies
// are de-chunked in place once complete.

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// maxHead bounds the status line and headers of one answer.
const maxHead = 64 << 10

// maxAnswer bounds one answer, head and body.
const maxAnswer = 64 << 20

var (
	errBadStatusLine = errors.New("malformed HTTP status line")
	errBadHeader     = errors.New("malformed HTTP header")
	errHeadTooLarge  = errors.New("HTTP head larger than 64 KiB")
	errBadLength     = errors.New("bad or conflicting Content-Length")
	errBadChunk      = errors.New("malformed chunked body")
	errTooLarge      = errors.New("answer larger than 64 MiB")
	errUnsupportedTE = errors.New("unsupported Transfer-Encoding")
)

// response is one parsed answer. Its slices point into the buffer given to
// parse and stay valid until that buffer is reused.
type response struct {
	status      int
	hasCType    bool
	ctype       []byte
	ctypeN      int    // how many Content-Type lines
	cenc        []byte // Content-Encoding: the first line other than identity, else the first; nil if absent
	teAndLength bool   // Transfer-Encoding and Content-Length both given
	close       bool   // the server will close the connection
	body        []byte
	end         int // bytes of the buffer this answer used
	http10      bool
	chunked     bool
	clen        int64 // -1 if absent
	contentLenN int   // how many Content-Length headers
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// equalFold reports whether b equals the lower-case ASCII s, ignoring case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		if lower(b[i]) != s[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether the comma-separated header value v holds the
// lower-case token t.
func hasToken(v []byte, t string) bool {
	for len(v) > 0 {
		i := 0
		for i < len(v) && v[i] != ',' {
			i++
		}
		part := trimOWS(v[:i])
		if equalFold(part, t) {
			return true
		}
		if i == len(v) {
			break
		}
		v = v[i+1:]
	}
	return false
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// lastToken returns the last element of a comma-separated value.
func lastToken(v []byte) []byte {
	i := len(v) - 1
	for i >= 0 && v[i] != ',' {
		i--
	}
	return trimOWS(v[i+1:])
}

// findCRLF returns the index of the next "\r\n" at or after i, or -1.
func findCRLF(b []byte, i int) int {
	for i < len(b) {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		if j > 0 && b[i+j-1] == '\r' {
			return i + j - 1
		}
		i += j + 1
	}
	return -1
}

// parse parses the answer at the start of b. eof reports that the peer has
// closed its side, so nothing more will come. It returns done false, nil
// error while more bytes are needed.
func (r *response) parse(b []byte, eof bool) (done bool, err error) {
	off := 0
	for {
		done, err = r.parseOne(b, off, eof)
		if !done || err != nil {
			return done, err
		}
		if r.status >= 200 {
			return true, nil
		}
		// A 1xx interim answer: skip it and read the final one.
		off = r.end
	}
}

func (r *response) parseOne(b []byte, off int, eof bool) (bool, error) {
	*r = response{clen: -1}
	line := findCRLF(b, off)
	if line < 0 {
		if len(b)-off > maxHead {
			return false, errHeadTooLarge
		}
		if eof {
			if len(b) == off {
				return false, errEOF
			}
			return false, errBadStatusLine
		}
		return false, nil
	}
	sl := b[off:line]
	// HTTP/1.x SP 3DIGIT [SP reason]
	if len(sl) < 12 || string(sl[:7]) != "HTTP/1." || (sl[7] != '0' && sl[7] != '1') || sl[8] != ' ' ||
		(len(sl) > 12 && sl[12] != ' ') || hasCTL(sl) {
		return false, errBadStatusLine
	}
	st := 0
	for _, c := range sl[9:12] {
		if c < '0' || c > '9' {
			return false, errBadStatusLine
		}
		st = st*10 + int(c-'0')
	}
	if st < 100 {
		return false, errBadStatusLine
	}
	r.status = st
	r.http10 = sl[7] == '0'
	keepAlive := false
	i := line + 2
	for {
		e := findCRLF(b, i)
		if e < 0 {
			if len(b)-off > maxHead {
				return false, errHeadTooLarge
			}
			if eof {
				return false, errBadHeader
			}
			return false, nil
		}
		if e == i {
			i += 2
			break
		}
		h := b[i:e]
		c := 0
		for c < len(h) && h[c] != ':' {
			c++
		}
		if c == 0 || c == len(h) || h[c-1] == ' ' || h[c-1] == '\t' || hasCTL(h) {
			return false, errBadHeader
		}
		name, val := h[:c], trimOWS(h[c+1:])
		switch {
		case equalFold(name, "content-length"):
			n, ok := parseDecimal(val)
			if !ok || (r.clen >= 0 && n != r.clen) {
				return false, errBadLength
			}
			r.clen = n
			r.contentLenN++
		case equalFold(name, "transfer-encoding"):
			if !equalFold(lastToken(val), "chunked") {
				return false, errUnsupportedTE
			}
			r.chunked = true
		case equalFold(name, "content-type"):
			r.hasCType = true
			r.ctype = val
			r.ctypeN++
		case equalFold(name, "content-encoding"):
			if r.cenc == nil || !equalFold(val, "identity") {
				r.cenc = val
			}
		case equalFold(name, "connection"):
			if hasToken(val, "close") {
				r.close = true
			}
			if hasToken(val, "keep-alive") {
				keepAlive = true
			}
		}
		i = e + 2
	}
	if r.http10 && !keepAlive {
		r.close = true
	}
	if r.chunked && r.contentLenN > 0 {
		// A sender must not send both (RFC 9112 §6.1); chunked decides
		// the framing (§6.3), and the connection is not reused after.
		r.teAndLength = true
		r.close = true
	}
	bodyStart := i
	switch {
	case r.status < 200 || r.status == 204 || r.status == 304:
		r.body = b[bodyStart:bodyStart]
		r.end = bodyStart
		return true, nil
	case r.chunked:
		return r.dechunk(b, bodyStart, eof)
	case r.clen >= 0:
		if r.clen > maxAnswer {
			return false, errTooLarge
		}
		end := bodyStart + int(r.clen)
		if len(b) < end {
			if eof {
				return false, errEOF
			}
			return false, nil
		}
		r.body = b[bodyStart:end]
		r.end = end
		return true, nil
	default:
		// No framing: the body runs to the end of the connection.
		r.close = true
		if !eof {
			if len(b) > maxAnswer {
				return false, errTooLarge
			}
			return false, nil
		}
		r.body = b[bodyStart:]
		r.end = len(b)
		return true, nil
	}
}

// hasCTL reports whether line holds a control byte other than HTAB: a
// bare CR or LF (which another reader may take for a line end), NUL, DEL.
// It looks at eight bytes at a time: a word none of whose bytes is below
// 0x20 or is DEL passes at once (most do: a tab is rare in a head); one
// that may hold one is looked at byte by byte.
func hasCTL(line []byte) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	for len(line) >= 8 {
		x := binary.LittleEndian.Uint64(line)
		// A byte below 0x20 (x - 0x20 borrows into its high bit, which x
		// lacks), or equal to DEL (x ^ DEL is zero there).
		below := (x - 0x20*ones) &^ x & highs
		del := x ^ 0x7f*ones
		if below|(del-ones)&^del&highs != 0 && slowCTL(line[:8]) {
			return true
		}
		line = line[8:]
	}
	return slowCTL(line)
}

// slowCTL is hasCTL a byte at a time.
func slowCTL(line []byte) bool {
	for _, c := range line {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

// parseDecimal returns the value of v, 1 to 15 decimal digits.
func parseDecimal(v []byte) (int64, bool) { return parseDigits(v, 15) }

// parseDigits returns the value of v, 1 to max decimal digits (max at
// most 18, so that it fits in an int64).
func parseDigits(v []byte, max int) (int64, bool) {
	if len(v) == 0 || len(v) > max {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// dechunk checks that the chunked body starting at b[i] is complete and,
// when it is, moves its data together in place.
func (r *response) dechunk(b []byte, i int, eof bool) (bool, error) {
	start := i
	var total int64
	for pass := 0; pass < 2; pass++ {
		i = start
		w := start
		for {
			e := findCRLF(b, i)
			if e < 0 {
				if eof {
					return false, errEOF
				}
				return false, nil
			}
			var n int64
			digits := 0
			for j := i; j < e && b[j] != ';' && b[j] != ' ' && b[j] != '\t'; j++ {
				v := hexVal(b[j])
				if v < 0 || digits >= 15 {
					return false, errBadChunk
				}
				n = n<<4 | int64(v)
				digits++
			}
			if digits == 0 {
				return false, errBadChunk
			}
			i = e + 2
			if n == 0 {
				// Trailers, then an empty line.
				for {
					t := findCRLF(b, i)
					if t < 0 {
						if eof {
							return false, errEOF
						}
						return false, nil
					}
					empty := t == i
					i = t + 2
					if empty {
						break
					}
				}
				if pass == 1 {
					r.body = b[start:w]
					r.end = i
					return true, nil
				}
				break
			}
			if pass == 0 {
				total += n
				if total > maxAnswer {
					return false, errTooLarge
				}
			}
			if int64(len(b)-i) < n+2 {
				if eof {
					return false, errEOF
				}
				return false, nil
			}
			if b[i+int(n)] != '\r' || b[i+int(n)+1] != '\n' {
				return false, errBadChunk
			}
			if pass == 1 {
				w += copy(b[w:], b[i:i+int(n)])
			}
			i += int(n) + 2
		}
	}
	return false, errBadChunk
}

// errEOF reports that the connection closed before the answer was
// complete.
var errEOF = errors.New("connection closed before the answer was complete")

// hexVal returns the value of the hexadecimal digit c, or -1.
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
