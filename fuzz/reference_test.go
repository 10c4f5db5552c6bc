package fuzz

// NOTE: the reference.
//
// The strict reference is github.com/go-json-experiment/json's jsontext,
// with AllowInvalidUTF8(false) (its default, spelled out: invalid UTF-8,
// UTF-8-encoded surrogates and lone \u surrogates are errors) and
// AllowDuplicateNames(true): RFC 8259 leaves duplicate names to the
// application and rpcedge refuses them only at the top level, which the
// envelope check below does itself. The reference agrees with rpcedge on
// whitespace (space, tab, CR, LF only) and refuses a byte order mark.
//
// Everything rpcedge adds on top of RFC 8259 comes from the contract, not
// from the reference, and is computed here from the reference's tokens:
//
//   - a first non-whitespace '[' is ErrBatch at once, whatever follows;
//   - nesting past MaxDepth (the top-level value is level 1) is ErrDepth
//     at the byte that opens the level, when no syntax error comes first;
//   - a body past MaxBytes is ErrTooLarge at MaxBytes, unless the first
//     MaxBytes bytes already fail;
//   - not an object, a top-level duplicate name (after unescaping), and
//     the JSON-RPC envelope (jsonrpc "2.0", string method, id types).
//
// Byte offsets. rpcedge reports a syntax error at the first byte that
// cannot continue a valid text. The reference gives no such offset, so it
// is found from prefixes: "input[:k] is a prefix of some valid text" is
// monotone in k, and a binary search gives the longest such k; the
// failure is at k. The reference answers "a valid prefix" when it reports
// a clean or an unexpected EOF, except that it decides lazily inside a \u
// escape: "\udc" is only refused once the escape is complete, while no
// low surrogate can start a valid escape. escapeDeadEnd fills that gap
// with the Unicode rule (a high surrogate escape must be followed by a
// low one; a low one must follow a high one) so that the offsets are
// exact everywhere.
//
// A bracket opens a level only where a value may start ('[' where a
// member name is expected is a syntax error, not a level), so ErrDepth
// is expected at the bracket only when the text up to and including it is
// a valid prefix.
//
// The reference has a fixed nesting limit of 10000 that cannot be raised
// (WithDepthLimit is not implemented in this version), while decode.Valid
// has no depth limit: texts nested deeper than 10000 are not compared
// with Valid.

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/rpcedge/rpcedge/decode"
)

var refOpts = []jsontext.Options{
	jsontext.AllowInvalidUTF8(false),
	jsontext.AllowDuplicateNames(true),
}

// refDepthLimit is the reference's own, fixed nesting limit.
const refDepthLimit = 10000

// refState is the reference's view of a byte string.
type refState uint8

const (
	refInvalid    refState = iota // no valid text starts with these bytes
	refIncomplete                 // a proper prefix of some valid text (or only whitespace)
	refComplete                   // one complete valid text
	refTooDeep                    // the reference hit its own nesting limit
)

func refScan(b []byte) refState {
	d := jsontext.NewDecoder(bytes.NewReader(b), refOpts...)
	if _, err := d.ReadValue(); err != nil {
		switch {
		case err == io.EOF, errors.Is(err, io.ErrUnexpectedEOF):
			return refIncomplete
		case strings.Contains(err.Error(), "exceeded max depth"):
			return refTooDeep
		}
		return refInvalid
	}
	if _, err := d.ReadToken(); err != io.EOF {
		return refInvalid
	}
	return refComplete
}

// refValidPrefix reports whether b can begin a valid text.
// refScanExact is refScan with the reference's laziness inside \u
// escapes removed (see escapeDeadEnd).
func refScanExact(b []byte) refState {
	s := refScan(b)
	if s == refIncomplete && escapeDeadEnd(b) >= 0 {
		return refInvalid
	}
	return s
}

func refValidPrefix(b []byte) bool {
	s := refScanExact(b)
	return s == refIncomplete || s == refComplete
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// escapeDeadEnd walks the string left open at the end of b, a text the
// reference accepts as a prefix, with the surrogate rule of RFC 8259 and
// Unicode: a \u escape of a high surrogate (D800-DBFF) must be followed
// at once by a \u escape of a low one (DC00-DFFF), and a low one may
// appear only there. It returns the offset of the first byte that breaks
// the rule (the first hex digit that shows it), or -1.
func escapeDeadEnd(b []byte) int {
	start, open := -1, false
	for i := 0; i < len(b); i++ {
		switch {
		case open && b[i] == '\\':
			i++
		case b[i] == '"':
			open = !open
			start = i
		}
	}
	if !open {
		return -1
	}
	isD := func(c byte) bool { return c == 'd' || c == 'D' }
	isLow2 := func(c byte) bool { return bytes.IndexByte([]byte("cdefCDEF"), c) >= 0 }
	isHigh2 := func(c byte) bool { return bytes.IndexByte([]byte("89abAB"), c) >= 0 }
	high := false // the escape just before was a high surrogate
	for i := start + 1; i < len(b); {
		if b[i] != '\\' {
			if high {
				return i
			}
			i++
			continue
		}
		if i+1 >= len(b) {
			return -1
		}
		if b[i+1] != 'u' {
			if high {
				return i + 1
			}
			i += 2
			continue
		}
		h := b[i+2 : min(i+6, len(b))]
		for _, c := range h {
			if !isHex(c) {
				return -1 // the reference refuses this itself
			}
		}
		switch {
		case high && len(h) >= 1 && !isD(h[0]):
			return i + 2
		case high && len(h) >= 2 && !isLow2(h[1]):
			return i + 3
		case !high && len(h) >= 2 && isD(h[0]) && isLow2(h[1]):
			return i + 3
		}
		high = !high && len(h) == 4 && isD(h[0]) && isHigh2(h[1])
		i += 2 + len(h)
	}
	return -1
}

// refLongestPrefix returns the largest k <= len(b) such that b[:k] can
// begin a valid text.
func refLongestPrefix(b []byte) int {
	lo, hi := 0, len(b) // b[:lo] is a valid prefix (the empty one is)
	if refValidPrefix(b) {
		return len(b)
	}
	// Invariant: valid(lo), !valid(hi).
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if refValidPrefix(b[:mid]) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// firstNonWS returns the index of the first byte that is not JSON
// whitespace, or len(b).
func firstNonWS(b []byte) int {
	for i, c := range b {
		if !isWS(c) {
			return i
		}
	}
	return len(b)
}

// depthOverflow returns the offset of the bracket that opens level
// limit+1, counting brackets outside strings, or -1. It is exact on any
// valid prefix, which is where its answer is used.
func depthOverflow(b []byte, limit int) int {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if depth == limit {
				return i
			}
			depth++
		case '}', ']':
			depth--
		}
	}
	return -1
}

// maxDepth returns the deepest nesting of b, counting as depthOverflow.
func maxDepth(b []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// member is one top-level member as the reference reads it.
type refMember struct {
	quote int    // offset of the name's opening quote
	name  string // unescaped
	value []byte // raw, as it came
}

// expected is the verdict the contract gives a body, computed with the
// reference.
type expected struct {
	err  error // the sentinel; nil for a request or a notification
	code int
	// off is the offset; for ErrDuplicateName any of dupOffs will do
	// (the order in which duplicates are looked for is not specified).
	off     int
	dupOffs []int
	echo    bool // the answer carries the id (Message.AnswerID)

	kind       decode.Kind
	id         []byte
	idType     decode.IDType
	method     []byte
	params     []byte
	paramsType decode.ParamsType
}

// expect computes the verdict of a Decoder with the given options on in.
func expect(in []byte, opts decode.Options) expected {
	maxBytes := opts.MaxBytes
	if maxBytes == 0 {
		maxBytes = decode.DefaultMaxBytes
	}
	maxDep := opts.MaxDepth
	if maxDep == 0 {
		maxDep = decode.DefaultMaxDepth
	}
	cut, final := in, true
	if int64(len(in)) > maxBytes {
		cut, final = in[:maxBytes], false
	}
	// Rule 7a: a batch is refused at its '[' without looking further.
	if i := firstNonWS(cut); i < len(cut) && cut[i] == '[' {
		return refusal(decode.ErrBatch, i)
	}
	// Rules 7b to 7d: the first failure in byte order.
	if p := depthOverflow(cut, maxDep); p >= 0 {
		if refValidPrefix(cut[:p+1]) {
			return refusal(decode.ErrDepth, p)
		}
		return syntaxAt(cut[:p+1])
	}
	switch refScanExact(cut) {
	case refInvalid:
		return syntaxAt(cut)
	case refTooDeep:
		panic("unreachable: the decoder's depth limit is below the reference's")
	case refIncomplete:
		if final {
			return syntaxAt(cut)
		}
		return refusal(decode.ErrTooLarge, int(maxBytes))
	}
	if !final {
		return refusal(decode.ErrTooLarge, int(maxBytes))
	}
	return expectEnvelope(in, opts.IDs)
}

func refusal(err error, off int) expected {
	code := decode.CodeInvalidRequest
	if err == decode.ErrSyntax {
		code = decode.CodeParseError
	}
	return expected{err: err, code: code, off: off}
}

// syntaxAt is the syntax error of b, which is not a complete valid
// text: at the first byte that cannot continue one (len(b) when b ends
// too early).
func syntaxAt(b []byte) expected {
	return refusal(decode.ErrSyntax, refLongestPrefix(b))
}

// refMembers reads the top-level members of the valid text in, or
// reports that it is not an object (with the offset of its first byte).
func refMembers(in []byte) (members []refMember, isObject bool) {
	d := jsontext.NewDecoder(bytes.NewReader(in), refOpts...)
	if d.PeekKind() != '{' {
		return nil, false
	}
	if _, err := d.ReadToken(); err != nil {
		panic(err)
	}
	for d.PeekKind() != '}' {
		raw, err := d.ReadValue() // the name, raw
		if err != nil {
			panic(err)
		}
		quote := int(d.InputOffset()) - len(raw)
		name, err := jsontext.AppendUnquote(nil, raw)
		if err != nil {
			panic(err)
		}
		val, err := d.ReadValue()
		if err != nil {
			panic(err)
		}
		members = append(members, refMember{quote: quote, name: string(name), value: bytes.Clone(val)})
	}
	return members, true
}

func expectEnvelope(in []byte, ids decode.IDPolicy) expected {
	members, ok := refMembers(in)
	if !ok {
		return refusal(decode.ErrNotObject, firstNonWS(in))
	}
	seen := map[string]int{}
	var dups []int
	for i, m := range members {
		if _, dup := seen[m.name]; dup {
			dups = append(dups, m.quote)
		} else {
			seen[m.name] = i
		}
	}
	if len(dups) > 0 {
		e := refusal(decode.ErrDuplicateName, -1)
		e.dupOffs = dups
		return e
	}
	get := func(name string) []byte {
		if i, ok := seen[name]; ok {
			return members[i].value
		}
		return nil
	}
	jsonrpc, id, method, params := get("jsonrpc"), get("id"), get("method"), get("params")

	var e expected
	if id != nil {
		e.id = id
		e.idType = refIDType(id)
		e.echo = ids.Accepts(e.idType)
	}
	if params != nil {
		e.params = params
		e.paramsType = decode.ParamsOther
		if params[0] == '{' {
			e.paramsType = decode.ParamsObject
		}
	}
	if method != nil && method[0] == '"' {
		e.method = unquote(method)
	}
	envelope := func() expected {
		r := refusal(decode.ErrEnvelope, 0)
		r.echo = e.echo
		r.id, r.idType, r.method, r.params, r.paramsType = e.id, e.idType, e.method, e.params, e.paramsType
		return r
	}
	switch {
	case jsonrpc == nil, jsonrpc[0] != '"' || string(unquote(jsonrpc)) != "2.0":
		return envelope()
	case method == nil: // with result or error, a response: the same refusal
		return envelope()
	case method[0] != '"':
		return envelope()
	case id != nil && !e.echo:
		return envelope()
	}
	e.echo = false
	e.kind = decode.KindNotification
	if id != nil {
		e.kind = decode.KindRequest
	}
	return e
}

func unquote(raw []byte) []byte {
	b, err := jsontext.AppendUnquote([]byte{}, raw)
	if err != nil {
		panic(err)
	}
	return b
}

// refIDType is the contract's id type: a number without fraction or
// exponent is an integer.
func refIDType(v []byte) decode.IDType {
	switch jsontext.Value(v).Kind() {
	case '"':
		return decode.IDString
	case 'n':
		return decode.IDNull
	case '0':
		if bytes.ContainsAny(v, ".eE") {
			return decode.IDNumber
		}
		return decode.IDInteger
	}
	return decode.IDOther
}
