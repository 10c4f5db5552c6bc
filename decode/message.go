package decode

import (
	"bytes"
	"hash/maphash"
	"unicode/utf8"
)

// Kind says what a decoded message is.
type Kind uint8

// The kinds of message.
const (
	// KindInvalid is a body that is not a JSON-RPC 2.0 request or
	// notification; Message.Error says why.
	KindInvalid Kind = iota
	// KindRequest is a call: it has an id and expects an answer.
	KindRequest
	// KindNotification has no id member: it gets no answer.
	KindNotification
)

// String returns "request", "notification" or "invalid".
func (k Kind) String() string {
	switch k {
	case KindRequest:
		return "request"
	case KindNotification:
		return "notification"
	}
	return "invalid"
}

// IDType is the JSON type of a message's id member.
type IDType uint8

// The id types.
const (
	IDAbsent  IDType = iota // no id member: a notification
	IDNull                  // "id": null
	IDString                // a JSON string
	IDInteger               // a number without fraction or exponent
	IDNumber                // a number with a fraction or an exponent
	IDOther                 // true, false, an object or an array: never accepted
)

// String names the id type: "absent", "null", "string", "integer",
// "number" or "other".
func (t IDType) String() string {
	switch t {
	case IDAbsent:
		return "absent"
	case IDNull:
		return "null"
	case IDString:
		return "string"
	case IDInteger:
		return "integer"
	case IDNumber:
		return "number"
	}
	return "other"
}

// IDPolicy is the set of id types an endpoint accepts. The zero value means
// IDsJSONRPC.
type IDPolicy uint8

// Predefined id policies.
const (
	// IDsJSONRPC accepts what JSON-RPC 2.0 allows: a string, a number
	// (any form) or null. It is the policy of /a2a and the default.
	IDsJSONRPC IDPolicy = policySet | 1<<IDString | 1<<IDInteger | 1<<IDNumber | 1<<IDNull
	// IDsMCP accepts what MCP allows: a string or an integer.
	IDsMCP IDPolicy = policySet | 1<<IDString | 1<<IDInteger
)

// AcceptIDs returns the policy that accepts exactly the given types.
// IDAbsent and IDOther are ignored: a missing id always makes a
// notification, and booleans, objects and arrays are never ids. A policy
// that accepts nothing (AcceptIDs() or AcceptIDs(IDOther)) is not the
// zero policy: Decoder.SetOptions refuses it.
func AcceptIDs(types ...IDType) IDPolicy {
	p := policySet
	for _, t := range types {
		if t != IDAbsent && t < IDOther {
			p |= 1 << t
		}
	}
	return p
}

// policySet marks a policy built by AcceptIDs, so that one that accepts
// nothing is not taken for the zero value.
const policySet IDPolicy = 1 << 7

// Accepts reports whether p accepts ids of type t.
func (p IDPolicy) Accepts(t IDType) bool {
	if p == 0 {
		p = IDsJSONRPC
	}
	return t < IDOther && p&(1<<t) != 0
}

// ParamsType is the JSON type of a message's params member.
type ParamsType uint8

// The params types.
const (
	ParamsAbsent ParamsType = iota // no params member
	ParamsObject                   // a JSON object
	ParamsOther                    // an array, string, number, boolean or null
)

// String names the params type: "absent", "object" or "other".
func (t ParamsType) String() string {
	switch t {
	case ParamsAbsent:
		return "absent"
	case ParamsObject:
		return "object"
	}
	return "other"
}

// nullID is what answers carry when the id rule says null.
var nullID = []byte("null")

// Message is one decoded JSON-RPC message. The zero value is ready to use;
// a Message may be reused for any number of decodes, which is how decoding
// stays free of allocations.
//
// The byte slices ID, Method and Params borrow from the decoded body (or,
// for Method with escapes, from the Message's own scratch space): they stay
// valid until the body is modified or the Message or the Decoder that
// filled it is reused, whichever comes first. Copy them to keep them longer.
//
// A Message is not safe for concurrent use.
type Message struct {
	// Kind is the verdict: request, notification or invalid.
	Kind Kind
	// ID holds the id member's raw bytes exactly as they came (a string
	// keeps its quotes and escapes); nil when absent.
	ID []byte
	// IDType is the id's JSON type.
	IDType IDType
	// Method is the method name with escapes resolved. It is nil when the
	// message has no string method.
	Method []byte
	// Params holds the params member's raw bytes; nil when absent.
	Params []byte
	// ParamsType is the params' JSON type.
	ParamsType ParamsType
	// Error says why the message is invalid; it is the zero Error for a
	// valid message. Decode returns a pointer to it.
	Error Error

	scratch []byte // unescaped method
}

// AnswerID returns the id an answer to m must carry under the contract's id
// rule: the id bytes verbatim for a request, and for an invalid message
// when its id was present and of an accepted type (Error.EchoID);
// otherwise the literal null. The returned slice must not be modified.
func (m *Message) AnswerID() []byte {
	if m.IDType == IDAbsent || m.ID == nil || (m.Kind == KindInvalid && !m.Error.EchoID) {
		return nullID
	}
	return m.ID
}

func (m *Message) clear() {
	m.Kind = KindInvalid
	m.ID = nil
	m.IDType = IDAbsent
	m.Method = nil
	m.Params = nil
	m.ParamsType = ParamsAbsent
	m.Error = Error{}
	m.scratch = m.scratch[:0]
}

// envelope holds the per-decode state of the envelope check: scratch space
// reused across decodes.
type envelope struct {
	names [][]byte // unescaped unknown member names
	index []int32  // the member index of each of names
	buf   []byte   // backing store for escaped names
	table []int32  // open-addressing set of indexes into names
	seed  maphash.Seed
}

// smallMembers is the member count up to which duplicates are found by
// comparing every pair; above it a hash set keeps the check linear.
const smallMembers = 16

// well-known member names.
const (
	nameOther = iota
	nameJSONRPC
	nameID
	nameMethod
	nameParams
	nameResult
	nameError
)

// classifyRaw classifies the name body[s:e], which has no escapes.
func classifyRaw(b []byte, s, e int) int {
	switch e - s {
	case 2:
		if b[s] == 'i' && b[s+1] == 'd' {
			return nameID
		}
	case 5:
		if string(b[s:e]) == "error" {
			return nameError
		}
	case 6:
		switch string(b[s:e]) {
		case "method":
			return nameMethod
		case "params":
			return nameParams
		case "result":
			return nameResult
		}
	case 7:
		if string(b[s:e]) == "jsonrpc" {
			return nameJSONRPC
		}
	}
	return nameOther
}

func classifyName(b []byte) int {
	if len(b) < 2 || len(b) > 7 {
		return nameOther
	}
	switch string(b) {
	case "jsonrpc":
		return nameJSONRPC
	case "id":
		return nameID
	case "method":
		return nameMethod
	case "params":
		return nameParams
	case "result":
		return nameResult
	case "error":
		return nameError
	}
	return nameOther
}

// fill reads the envelope of a valid JSON text held in body whose
// top-level members were recorded in members, and fills m. When more is
// set the scanner recorded only the first members, and fill walks the
// body for all of them instead (envelope.walk).
func (e *envelope) fill(body []byte, top byte, topOff int, members []member, more bool, ids IDPolicy, m *Message) error {
	if top != '{' {
		m.Error.set(ErrNotObject, CodeInvalidRequest, int64(topOff), "the message is not a JSON object")
		return &m.Error
	}
	var f envFields
	var dup int
	if more {
		dup = e.walk(body, &f, len(body) > maxSetObject)
	} else {
		dup = e.recorded(body, members, &f)
	}
	if dup >= 0 {
		m.Error.set(ErrDuplicateName, CodeInvalidRequest, int64(dup), "a top-level member name appears twice")
		return &m.Error
	}
	jsonrpc, id, method, params, seen := f.jsonrpc, f.id, f.method, f.params, f.seen
	hasResult := seen&(1<<nameResult|1<<nameError) != 0

	// The id first: it decides what the other refusals echo.
	if id != nil {
		m.ID = id
		m.IDType = idType(id)
		m.Error.EchoID = ids.Accepts(m.IDType)
	}
	if params != nil {
		m.Params = params
		m.ParamsType = ParamsOther
		if params[0] == '{' {
			m.ParamsType = ParamsObject
		}
	}
	if method != nil && method[0] == '"' {
		raw := method[1 : len(method)-1]
		if hasBackslash(raw) {
			m.scratch = appendUnescaped(m.scratch[:0], raw)
			m.Method = m.scratch
		} else {
			m.Method = raw
		}
	}

	switch {
	case jsonrpc == nil:
		return m.invalid(0, "jsonrpc member missing")
	case string(jsonrpc) != `"2.0"` && !StringIs(jsonrpc, "2.0"):
		return m.invalid(0, `jsonrpc is not "2.0"`)
	case method == nil && hasResult:
		return m.invalid(0, "a response where a request was expected")
	case method == nil:
		return m.invalid(0, "method member missing")
	case m.Method == nil:
		return m.invalid(0, "method is not a string")
	case id != nil && !m.Error.EchoID:
		return m.invalid(0, "id of a type this endpoint does not accept")
	}
	m.Error.EchoID = false
	if id == nil {
		m.Kind = KindNotification
	} else {
		m.Kind = KindRequest
	}
	return nil
}

// envFields are the well-known members of a message: the raw values
// of those it has, and a bit per well-known name seen.
type envFields struct {
	jsonrpc, id, method, params []byte
	seen                        uint8
}

// add records the value v of the well-known member k. It returns false
// when k was seen before.
func (f *envFields) add(k int, v []byte) bool {
	if f.seen&(1<<k) != 0 {
		return false
	}
	f.seen |= 1 << k
	switch k {
	case nameJSONRPC:
		f.jsonrpc = v
	case nameID:
		f.id = v
	case nameMethod:
		f.method = v
	case nameParams:
		f.params = v
	}
	return true
}

// recorded reads the members the scanner recorded into f: one pass in
// which well-known names are told apart by a bit each, so that only
// unknown names need comparing with one another. It returns the offset
// of the first repeated name (the quote opening it), or -1.
func (e *envelope) recorded(body []byte, members []member, f *envFields) int {
	e.names = e.names[:0]
	e.index = e.index[:0]
	e.buf = e.buf[:0]
	for i := range members {
		// mb points to the member rather than copying it: the scanner
		// stored its fields one by one, and a block copy would load
		// them in wider words, which stalls store forwarding.
		mb := &members[i]
		var k int
		if !mb.nameEsc {
			k = classifyRaw(body, mb.nameStart, mb.nameEnd)
			if k == nameOther {
				e.names = append(e.names, body[mb.nameStart:mb.nameEnd])
				e.index = append(e.index, int32(i))
				continue
			}
		} else {
			start := len(e.buf)
			e.buf = appendUnescaped(e.buf, body[mb.nameStart:mb.nameEnd])
			k = classifyName(e.buf[start:])
			if k == nameOther {
				e.names = append(e.names, e.buf[start:])
				e.index = append(e.index, int32(i))
				continue
			}
		}
		if !f.add(k, body[mb.valStart:mb.valEnd]) {
			// A well-known name given twice; an unknown one repeated
			// before it is the first repeated name.
			if len(e.names) > 1 {
				if d := e.duplicate(); d >= 0 {
					return members[e.index[d]].nameStart - 1
				}
			}
			return mb.nameStart - 1
		}
	}
	if len(e.names) > 1 {
		if d := e.duplicate(); d >= 0 {
			return members[e.index[d]].nameStart - 1
		}
	}
	return -1
}

// walk is recorded for an object of more members than the scanner
// records: it walks the body for all of them, and finds repeated unknown
// names with a nameSet (names.go) rather than a list of names. A
// repeated well-known name is reported where it is met, a repeated
// unknown one after the walk. A body past what a nameSet indexes (huge:
// over 4 GiB) has its unknown names kept in a map instead (such a body's
// members after the scanner's first 32 went unread until 2026-12-07).
func (e *envelope) walk(body []byte, f *envFields, huge bool) int {
	e.buf = e.buf[:0]
	var it Members
	var set *nameSet
	var seen map[string]struct{}
	if huge {
		seen = make(map[string]struct{})
	} else {
		n := 0
		for it.Reset(body); it.Next(); {
			n++
		}
		set = getNameSet(body, n)
		defer set.release()
	}
	dupAt := -1 // the offset of the first repeated unknown name
	for it.Reset(body); it.Next(); {
		ns := nameOffset(body, it.name) + 1
		var k int
		if !it.esc {
			k = classifyRaw(body, ns, ns+len(it.name))
		} else {
			start := len(e.buf)
			e.buf = appendUnescaped(e.buf, it.name)
			k = classifyName(e.buf[start:])
			e.buf = e.buf[:start] // the set unescapes on its own
		}
		if k == nameOther {
			var again bool
			if set != nil {
				again = set.addName(ns-1, it.name, it.esc)
			} else {
				name := string(appendUnescaped(nil, it.name))
				_, again = seen[name]
				seen[name] = struct{}{}
			}
			if again && dupAt < 0 {
				dupAt = ns - 1
			}
			continue
		}
		if !f.add(k, it.value) {
			if dupAt >= 0 { // an unknown name repeated before it
				return dupAt
			}
			return ns - 1
		}
	}
	return dupAt
}

func (m *Message) invalid(off int64, reason string) error {
	echo := m.Error.EchoID
	m.Error.set(ErrEnvelope, CodeInvalidRequest, off, reason)
	m.Error.EchoID = echo
	return &m.Error
}

// hasBackslash reports whether the content of a valid JSON string holds a
// backslash. It reads a word at a time in line: a method name is a few
// dozen bytes, too short for bytes.IndexByte's call to pay.
func hasBackslash(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		// A byte of x is zero where b has a backslash; (x-1)&^x
		// has a high bit set exactly when some byte of x is zero.
		x := load64(b, i) ^ lo8*'\\'
		if (x-lo8)&^x&hi8 != 0 {
			return true
		}
	}
	for ; i < len(b); i++ {
		if b[i] == '\\' {
			return true
		}
	}
	return false
}

func idType(v []byte) IDType {
	switch v[0] {
	case '"':
		return IDString
	case 'n':
		return IDNull
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		for _, c := range v {
			if c == '.' || c == 'e' || c == 'E' {
				return IDNumber
			}
		}
		return IDInteger
	}
	return IDOther
}

// duplicate returns the index of the first name that repeats an earlier
// one, or -1.
func (e *envelope) duplicate() int {
	names := e.names
	if len(names) <= smallMembers {
		for i := 1; i < len(names); i++ {
			for j := 0; j < i; j++ {
				if string(names[i]) == string(names[j]) {
					return i
				}
			}
		}
		return -1
	}
	size := 64
	for size < 2*len(names) {
		size <<= 1
	}
	if cap(e.table) < size {
		e.table = make([]int32, size)
		e.seed = maphash.MakeSeed()
	}
	t := e.table[:size]
	for i := range t {
		t[i] = -1
	}
	mask := uint64(size - 1)
	for i, name := range names {
		h := maphash.Bytes(e.seed, name) & mask
		for {
			j := t[h]
			if j < 0 {
				t[h] = int32(i)
				break
			}
			if string(names[j]) == string(name) {
				return i
			}
			h = (h + 1) & mask
		}
	}
	return -1
}

// appendUnescaped appends the content of a valid JSON string (without its
// quotes) to dst with every escape resolved.
func appendUnescaped(dst, s []byte) []byte {
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\\')
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		var used int
		dst, used = unescapeOne(dst, s[i:])
		s = s[i+used:]
	}
	return dst
}

// unescapeOne appends what the escape at the start of s stands for (a
// surrogate pair counts as one escape) and returns how many bytes of s it
// used. s must start with a valid escape; an escape cut short (invalid
// JSON) is taken as the bytes after its backslash, all of s used, so that
// the raw-value helpers keep their promise not to panic.
func unescapeOne(dst, s []byte) ([]byte, int) {
	if len(s) < 2 || s[1] == 'u' && len(s) < 6 {
		if len(s) > 1 {
			dst = append(dst, s[1:]...)
		}
		return dst, len(s)
	}
	switch s[1] {
	case 'b':
		return append(dst, '\b'), 2
	case 'f':
		return append(dst, '\f'), 2
	case 'n':
		return append(dst, '\n'), 2
	case 'r':
		return append(dst, '\r'), 2
	case 't':
		return append(dst, '\t'), 2
	case 'u':
		r := hex4(s[2:6])
		if r >= 0xD800 && r < 0xDC00 && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
			// A pair only when a low surrogate follows: in bytes that are
			// not valid JSON (the callers' contract) a lone high one must
			// not swallow the next six bytes.
			if r2 := hex4(s[8:12]); r2 >= 0xDC00 && r2 < 0xE000 {
				return utf8.AppendRune(dst, 0x10000+(r-0xD800)<<10+(r2-0xDC00)), 12
			}
		}
		return utf8.AppendRune(dst, r), 6 // a lone surrogate appends U+FFFD
	}
	return append(dst, s[1]), 2 // '"', '\\', '/'
}

func hex4(b []byte) rune {
	return rune(hexVal[b[0]])<<12 | rune(hexVal[b[1]])<<8 | rune(hexVal[b[2]])<<4 | rune(hexVal[b[3]])
}
