package fastserver

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// NOTE: one snapshot of the header section per request.
//
// The contract judges a field that holds one value (Origin, Content-Type,
// the protocol headers, Authorization) by all of its lines combined with
// ", " in order (RFC 9110 §5.3), and lets no trailer field take part in any
// check (RFC 9110 §6.5.1). fasthttp keeps some fields in fields of its own
// (it drops an identical second Content-Type line, and answers Peek with
// the first line of the rest) and merges chunked trailers into the request
// header once the body is read. So the rows never ask fasthttp: before
// the body is read, the server walks the header section exactly as it
// came off the wire (RequestHeader.RawHeaders) once, and keeps, for every
// field a row or an endpoint reads, the combined value of its lines. A
// field that came in one line is a subslice of the raw block; only a
// repeated field is copied, into a per-request buffer that is reused.
// Fields outside the table are found by the same walk on demand.

// field indexes the fields the pipeline and the endpoints read.
type field uint8

const (
	fOrigin field = iota
	fContentType
	fContentLength
	fContentEncoding
	fTransferEncoding
	fExpect
	fAccept
	fAcceptEncoding
	fAuthorization
	fXForwardedFor
	fForwarded
	fMCPProtocolVersion
	fMCPMethod
	fMCPName
	fMCPSessionID
	fA2AVersion
	fLastEventID
	numFields
)

// fieldNames are the canonical names, in field order.
var fieldNames = [numFields]string{
	fOrigin:             "Origin",
	fContentType:        "Content-Type",
	fContentLength:      "Content-Length",
	fContentEncoding:    "Content-Encoding",
	fTransferEncoding:   "Transfer-Encoding",
	fExpect:             "Expect",
	fAccept:             "Accept",
	fAcceptEncoding:     "Accept-Encoding",
	fAuthorization:      "Authorization",
	fXForwardedFor:      "X-Forwarded-For",
	fForwarded:          "Forwarded",
	fMCPProtocolVersion: "MCP-Protocol-Version",
	fMCPMethod:          "Mcp-Method",
	fMCPName:            "Mcp-Name",
	fMCPSessionID:       "Mcp-Session-Id",
	fA2AVersion:         "A2A-Version",
	fLastEventID:        "Last-Event-ID",
}

// byFirst lists the table's fields by the first letter of their names
// (folded to lower case, 'a' at 0), numFields after the last: the one
// index of the table, for lookupField and byFirstLetter.
var byFirst = func() (t [26][5]field) {
	for l := range t {
		n := 0
		for i, name := range fieldNames {
			if name[0]|0x20 == byte('a'+l) {
				t[l][n] = field(i)
				n++
			}
		}
		t[l][n] = numFields
	}
	return t
}()

// candidates returns the fields whose names begin with the letter c
// (either case), numFields after the last; nil when c is not a letter.
func candidates(c byte) []field {
	l := (c | 0x20) - 'a'
	if l >= 26 {
		return nil
	}
	return byFirst[l][:]
}

// lookupField returns the index of a field name (case-insensitive), or
// numFields when the table does not hold it.
func lookupField[T string | []byte](name T) field {
	if len(name) == 0 {
		return numFields
	}
	for _, i := range candidates(name[0]) {
		if i == numFields {
			break
		}
		// As spelled in the table first, else case-insensitive.
		if n := fieldNames[i]; len(name) == len(n) && (string(name) == n || equalFoldASCII(name, n)) {
			return i
		}
	}
	return numFields
}

// byFirstLetter finds the table field whose name starts raw at start
// and is followed by a colon: the field and the colon's offset, or
// numFields and start-1 when no name of the table is there. No name of
// the table holds a colon, so the colon found is the line's first: a
// line this does not match holds no field of the table.
func byFirstLetter(raw []byte, start int) (field, int) {
	for _, i := range candidates(raw[start]) {
		if i == numFields {
			break
		}
		name := fieldNames[i]
		e := start + len(name)
		if e < len(raw) && raw[e] == ':' && (string(raw[start:e]) == name || equalFoldASCII(raw[start:e], name)) {
			return i, e
		}
	}
	return numFields, start - 1
}

// equalFoldASCII compares an ASCII name case-insensitively.
func equalFoldASCII[T string | []byte](a T, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

// fields is the snapshot of one request's header section. The zero value
// holds no field. A fields is reused from request to request; its values
// borrow from the request's header block and from buf, and are valid
// until the handler returns.
type fields struct {
	val   [numFields][]byte // nil: absent; non-nil, maybe empty: present
	lines [numFields]uint8  // how many lines the field came in (saturating)
	// folded says a line of the section began with a space or a tab:
	// obsolete line folding (RFC 9112 §5.2), which the server refuses.
	folded bool
	// badName says a line's name was not a token right before its colon
	// (RFC 9110 §5.1, RFC 9112 §5.1: no white space before the colon), or
	// the line had no colon: the server refuses such a request.
	badName bool
	raw     []byte // the header section as received, or nil
	hdr     *fasthttp.RequestHeader
	buf     []byte // combined values of repeated fields
	// starts are the offsets in raw of the section's lines, then of the
	// line that ends it (or len(raw)), found by the first combine that
	// needed them; nil until then.
	starts []int32
}

// reset forgets the previous request's fields.
func (f *fields) reset() {
	f.val = [numFields][]byte{}
	f.lines = [numFields]uint8{}
	f.folded = false
	f.badName = false
	f.raw = nil
	f.hdr = nil
	f.buf = f.buf[:0]
	f.starts = f.starts[:0]
}

// snapshot takes the fields of h, before any byte of the body is read.
// It reads the header section as received; a header built in memory
// (no raw section) is read through fasthttp, line by line.
func (f *fields) snapshot(h *fasthttp.RequestHeader) {
	f.reset()
	f.hdr = h
	raw := h.RawHeaders()
	if len(raw) == 0 {
		f.fromHeader(h)
		return
	}
	f.raw = raw
	if f.walk(raw) {
		for i := range f.val {
			if f.lines[i] > 1 {
				f.val[i], _ = f.combine(fieldNames[i])
			}
		}
	}
}

// walk records the first value and the number of lines of every table
// field in raw, and whether a line is folded or has no colon; it reports
// whether a field came in more than one line.
func (f *fields) walk(raw []byte) (repeated bool) {
	// The walk of nextLine in one pass: a table field's colon is found by
	// its name, the line's end by one vector search, and a line outside
	// the table is only searched for a colon, not trimmed.
	for p := 0; p < len(raw); {
		start := p
		c := raw[p]
		if c == '\n' || (c == '\r' && (p+1 == len(raw) || raw[p+1] == '\n')) {
			break // the empty line that ends the section
		}
		// A table field is found by its name and the colon right after
		// it, without searching for the colon: the first colon of the
		// line, since no name in the table holds one.
		i, colon := byFirstLetter(raw, start)
		eol := len(raw)
		if e := bytes.IndexByte(raw[colon+1:], '\n'); e >= 0 {
			eol = colon + 1 + e
		}
		p = eol + 1
		if i == numFields {
			// Not a field of the table; only whether it is a field line
			// at all is left to see: a name of token bytes, then a colon.
			if c == ' ' || c == '\t' {
				f.folded = true // a continuation line (obsolete folding)
				continue
			}
			q := start
			for q < eol && tchars[raw[q]] {
				q++
			}
			if q == start || q == eol || raw[q] != ':' {
				// No name, no colon, or a byte outside a token in the name
				// (white space before the colon among them).
				f.badName = true
			}
			continue
		}
		value := trimValue(raw[colon+1 : eol])
		value = value[:len(value):len(value)]
		if f.val[i] == nil {
			f.val[i] = value
		} else {
			repeated = true
		}
		if f.lines[i] < 255 {
			f.lines[i]++
		}
	}
	return repeated
}

// fromHeader fills the snapshot from a header that has no raw section
// (built in memory, as tests of hooks do).
func (f *fields) fromHeader(h *fasthttp.RequestHeader) {
	for k, v := range h.All() {
		i := lookupField(k)
		if i == numFields {
			continue
		}
		if f.val[i] == nil {
			f.val[i] = v[:len(v):len(v)]
			if v == nil {
				f.val[i] = empty
			}
		} else {
			start := len(f.buf)
			f.buf = append(f.buf, f.val[i]...)
			f.buf = append(f.buf, ", "...)
			f.buf = append(f.buf, v...)
			f.val[i] = f.buf[start:len(f.buf):len(f.buf)]
		}
		if f.lines[i] < 255 {
			f.lines[i]++
		}
	}
}

// combine returns all lines of the named field joined with ", " in
// order, copied into f.buf. Earlier values in f.buf stay valid: buf only
// grows by appending within its capacity or by moving to a new array,
// leaving the old one to the slices that point into it.
//
// A line is the field's when the name, in any case, is followed at once
// by its colon: a line that is not a field line (folded, or white space
// before its colon) never matches a token. The section's line starts are
// found once, by the first call, so that a handler looking up several
// fields outside the table does not search for every line's end again.
func (f *fields) combine(name string) (value []byte, lines int) {
	if len(f.starts) == 0 {
		f.indexLines()
	}
	start := len(f.buf)
	raw, starts := f.raw, f.starts
	for i := 0; i+1 < len(starts); i++ {
		p, next := int(starts[i]), int(starts[i+1])
		// The line is raw[p:next] less its LF (the last line of a section
		// without the ending one may have none).
		end := next
		if end > p && raw[end-1] == '\n' {
			end--
		}
		colon := p + len(name)
		if colon >= end || raw[colon] != ':' || !equalFoldASCII(raw[p:colon], name) {
			continue
		}
		v := trimValue(raw[colon+1 : end])
		if lines > 0 {
			f.buf = append(f.buf, ", "...)
		}
		lines++
		f.buf = append(f.buf, v...)
	}
	return f.combined(start, lines), lines
}

// combined returns the value combine and combineHeader built in f.buf
// from start out of lines lines: nil for none, empty for empty lines.
func (f *fields) combined(start, lines int) []byte {
	switch {
	case lines == 0:
		return nil
	case len(f.buf) == start:
		return empty
	}
	return f.buf[start:len(f.buf):len(f.buf)]
}

// trimValue returns a field line's value without the line's final CR and
// the spaces and tabs around it.
func trimValue(v []byte) []byte {
	if n := len(v); n > 0 && v[n-1] == '\r' {
		v = v[:n-1]
	}
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}

// indexLines records in f.starts where each line of the section begins,
// up to the empty line that ends it, then where that line (or raw) ends.
func (f *fields) indexLines() {
	raw := f.raw
	p := 0
	for p < len(raw) {
		if raw[p] == '\n' || raw[p] == '\r' && (p+1 == len(raw) || raw[p+1] == '\n') {
			break // the empty line that ends the section
		}
		f.starts = append(f.starts, int32(p))
		e := bytes.IndexByte(raw[p:], '\n')
		if e < 0 {
			p = len(raw)
			break
		}
		p += e + 1
	}
	f.starts = append(f.starts, int32(p))
}

// get returns the combined value of field i: nil when absent, a non-nil
// (maybe empty) slice when present.
func (f *fields) get(i field) []byte { return f.val[i] }

// count returns how many lines field i came in.
func (f *fields) count(i field) int { return int(f.lines[i]) }

// lookup returns the combined value of any field by name, and how many
// lines it came in.
func (f *fields) lookup(name string) ([]byte, int) {
	if i := lookupField(name); i != numFields {
		return f.val[i], f.count(i)
	}
	if f.raw == nil {
		if f.hdr == nil {
			return nil, 0
		}
		return f.combineHeader(name)
	}
	return f.combine(name)
}

// combineHeader is combine for a header without a raw section.
func (f *fields) combineHeader(name string) (value []byte, lines int) {
	start := len(f.buf)
	for k, v := range f.hdr.All() {
		if !equalFoldASCII(k, name) {
			continue
		}
		if lines > 0 {
			f.buf = append(f.buf, ", "...)
		}
		lines++
		f.buf = append(f.buf, v...)
	}
	return f.combined(start, lines), lines
}

// nextLine splits the first line off a raw header section: the field
// name, its value without surrounding spaces and tabs, and the rest.
// ok is false for a line that is not a field line: a continuation line
// (obsolete folding), or one whose name is not a token before a colon. The
// empty line that ends the section ends the walk (rest is nil).
func nextLine(b []byte) (name, value, rest []byte, ok bool) {
	end := bytes.IndexByte(b, '\n')
	line := b
	if end >= 0 {
		line, rest = b[:end], b[end+1:]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) == 0 {
		return nil, nil, nil, true // the end of the section
	}
	if line[0] == ' ' || line[0] == '\t' {
		return nil, nil, rest, false
	}
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return nil, nil, rest, false
	}
	for _, c := range line[:colon] {
		if !tchars[c] {
			return nil, nil, rest, false
		}
	}
	name, value = line[:colon], line[colon+1:]
	for len(value) > 0 && (value[0] == ' ' || value[0] == '\t') {
		value = value[1:]
	}
	for len(value) > 0 && (value[len(value)-1] == ' ' || value[len(value)-1] == '\t') {
		value = value[:len(value)-1]
	}
	return name, value[:len(value):len(value)], rest, true
}
