package decode_test

// NOTE: how the decoder is checked.
//
// Three independent sources of truth, each checked against the others:
//
//   - hand-written tables (TestDecodeContract and friends), one row per rule
//     or note of contract §2 that can be decided from the bytes, with the
//     expected sentinel, code, offset and message fields written out;
//   - a reference model (refScan, refDecode below): a deliberately naive,
//     byte-at-a-time pushdown automaton that knows nothing of the
//     decoder's fast paths, plus an envelope reader built on encoding/json;
//     every table row is also checked against it, so the model is itself
//     under test;
//   - generated and mutated bodies (TestDecodeGenerated), compared with the
//     model: random ids, methods, params, escapes, whitespace and member
//     orders, then byte flips, insertions, deletions and truncations.
//
// chunk_test.go checks that every way of feeding the same bytes (Write in
// any chunking, DecodeReader with odd readers) reaches the one-shot verdict,
// suite_test.go runs the public corpora, alloc_test.go pins zero
// allocations.

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/klauspost/compress/zstd"

	"github.com/rpcedge/rpcedge/decode"
)

const mib = 1 << 20

// ---------------------------------------------------------------------------
// Verdicts: everything a decode reports, in one comparable value.

// verdict is what a decode produced, in a form that compares with ==.
// Byte slices are strings, with nilBytes standing for nil (a JSON text
// never holds the byte 0xFF, so it cannot collide with a real value).
type verdict struct {
	Err        error // the sentinel; nil for a valid message
	Code       int
	Offset     int64
	EchoID     bool
	Kind       decode.Kind
	ID         string
	IDType     decode.IDType
	Method     string
	Params     string
	ParamsType decode.ParamsType
	AnswerID   string
}

const nilBytes = "\xff<nil>"

func bs(b []byte) string {
	if b == nil {
		return nilBytes
	}
	return string(b)
}

func (v verdict) String() string {
	if v.Err != nil {
		return fmt.Sprintf("{%v code=%d off=%d echo=%v kind=%v id=%q/%v answer=%q}", v.Err, v.Code, v.Offset, v.EchoID, v.Kind, v.ID, v.IDType, v.AnswerID)
	}
	return fmt.Sprintf("{%v id=%q/%v method=%q params=%.40q/%v answer=%q}", v.Kind, v.ID, v.IDType, v.Method, v.Params, v.ParamsType, v.AnswerID)
}

// stream returns the part of v that streaming decides: sentinel, code and
// offset.
func (v verdict) stream() verdict {
	return verdict{Err: v.Err, Code: v.Code, Offset: v.Offset}
}

// verdictOf reads the verdict of a decode that filled m and returned err.
// It fails tb when err and m disagree.
func verdictOf(tb testing.TB, m *decode.Message, err error) verdict {
	tb.Helper()
	v := verdict{
		Kind:       m.Kind,
		ID:         bs(m.ID),
		IDType:     m.IDType,
		Method:     bs(m.Method),
		Params:     bs(m.Params),
		ParamsType: m.ParamsType,
		AnswerID:   string(m.AnswerID()),
	}
	if err == nil {
		if m.Kind == decode.KindInvalid || m.Error != (decode.Error{}) {
			tb.Errorf("nil error but Kind=%v Error=%+v", m.Kind, m.Error)
		}
		return v
	}
	var e *decode.Error
	if !errors.As(err, &e) {
		tb.Fatalf("error %v (%T) is not a *decode.Error", err, err)
	}
	if e != &m.Error {
		tb.Errorf("returned error is not &m.Error")
	}
	if m.Kind != decode.KindInvalid {
		tb.Errorf("error %v but Kind=%v", err, m.Kind)
	}
	if !errors.Is(err, e.Err) || e.Err == nil {
		tb.Errorf("error %v does not wrap its sentinel %v", err, e.Err)
	}
	if e.Reason == "" {
		tb.Errorf("error %v has no reason", err)
	}
	v.Err, v.Code, v.Offset, v.EchoID = e.Err, e.Code, e.Offset, e.EchoID
	return v
}

// codeOf is the JSON-RPC code the contract gives each sentinel.
func codeOf(err error) int {
	switch err {
	case nil:
		return 0
	case decode.ErrSyntax, decode.ErrCorrupt:
		return decode.CodeParseError
	}
	return decode.CodeInvalidRequest
}

func newDecoder(tb testing.TB, opts decode.Options) *decode.Decoder {
	tb.Helper()
	d, err := decode.NewDecoder(opts)
	if err != nil {
		tb.Fatalf("NewDecoder(%+v): %v", opts, err)
	}
	return d
}

// decodeOnce decodes body with Decode.
func decodeOnce(tb testing.TB, d *decode.Decoder, body []byte) verdict {
	tb.Helper()
	var m decode.Message
	// Clipped, so that the bounds-checked build (-tags purego) panics on a
	// read past the end of the body.
	return verdictOf(tb, &m, d.Decode(slices.Clip(body), &m))
}

// ---------------------------------------------------------------------------
// The reference model.

// refMember is one member of the top-level object: the name's content
// (without quotes) and the raw value.
type refMember struct {
	nameStart, nameEnd, valStart, valEnd int
}

// refResult is the reference model's view of some bytes.
type refResult struct {
	err     error // nil, decode.ErrSyntax, decode.ErrBatch or decode.ErrDepth
	off     int
	top     byte // the first byte of the top-level value
	members []refMember
}

// reference states.
const (
	rValue    = iota // a value is expected
	rArrFirst        // after '[': a value or ']'
	rObjFirst        // after '{': a name or '}'
	rObjNext         // after ',' in an object: a name
	rColon           // after a name
	rAfter           // after a value in a container
	rDone            // after the top-level value
	rStr             // in a string
	rEsc             // after '\'
	rHex             // in the 4 digits of \u
	rLowBS           // after a high surrogate escape: '\' must follow
	rLowU            // then 'u'
	rLowHex          // then 4 digits of a low surrogate
	rUTF8            // continuation bytes of a multi-byte sequence
	rNum             // in a number
	rLit             // in true, false or null
)

// number states of the model; numEnd says which may end a number.
const (
	nmSign  = iota // after '-'
	nmZero         // a leading 0
	nmInt          // integer digits
	nmDot          // after '.'
	nmFrac         // fraction digits
	nmE            // after e or E
	nmESign        // after the exponent's sign
	nmExp          // exponent digits
)

var numEnd = [...]bool{nmZero: true, nmInt: true, nmFrac: true, nmExp: true}

func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func hexv(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// refScan runs the reference model over b. With decoder set it behaves as
// the Decoder's scan (a top-level '[' is a batch, nesting is limited to
// maxDepth, top-level members are recorded); otherwise as Valid. With final
// unset, b is only a prefix: a valid prefix gives a nil err.
func refScan(b []byte, maxDepth int, decoder, final bool) refResult {
	var (
		res     refResult
		st      = rValue
		stack   []byte
		isKey   bool
		hexN    int
		cp      int
		need    int // continuation bytes still needed
		lo, hi  byte
		num     int
		lit     string
		litPos  int
		cur     refMember
		started bool
	)
	fail := func(err error, i int) refResult {
		res.err, res.off = err, i
		return res
	}
	inTopObj := func() bool { return decoder && len(stack) == 1 && stack[0] == '{' }
	// valueDone ends a value whose last byte is at end-1.
	valueDone := func(end int) {
		if len(stack) == 0 {
			st = rDone
			return
		}
		st = rAfter
		if inTopObj() {
			cur.valEnd = end
			res.members = append(res.members, cur)
		}
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
	again:
		switch st {
		case rValue, rArrFirst:
			if isWS(c) {
				continue
			}
			if !started {
				started = true
				res.top = c
			}
			if inTopObj() {
				cur.valStart = i
			}
			switch {
			case c == '{' || c == '[':
				if c == '[' && decoder && len(stack) == 0 {
					return fail(decode.ErrBatch, i)
				}
				if len(stack) >= maxDepth {
					return fail(decode.ErrDepth, i)
				}
				stack = append(stack, c)
				if c == '{' {
					st = rObjFirst
				} else {
					st = rArrFirst
				}
			case c == ']' && st == rArrFirst:
				stack = stack[:len(stack)-1]
				valueDone(i + 1)
			case c == '"':
				st, isKey = rStr, false
			case c == '-':
				st, num = rNum, nmSign
			case c == '0':
				st, num = rNum, nmZero
			case c >= '1' && c <= '9':
				st, num = rNum, nmInt
			case c == 't' || c == 'f' || c == 'n':
				st, litPos = rLit, 1
				lit = map[byte]string{'t': "true", 'f': "false", 'n': "null"}[c]
			default:
				return fail(decode.ErrSyntax, i)
			}
		case rObjFirst, rObjNext:
			switch {
			case isWS(c):
			case c == '"':
				st, isKey = rStr, true
				if inTopObj() {
					cur = refMember{nameStart: i + 1}
				}
			case c == '}' && st == rObjFirst:
				stack = stack[:len(stack)-1]
				valueDone(i + 1)
			default:
				return fail(decode.ErrSyntax, i)
			}
		case rColon:
			switch {
			case isWS(c):
			case c == ':':
				st = rValue
			default:
				return fail(decode.ErrSyntax, i)
			}
		case rAfter:
			top := stack[len(stack)-1]
			switch {
			case isWS(c):
			case c == ',' && top == '{':
				st = rObjNext
			case c == ',':
				st = rValue
			case c == '}' && top == '{', c == ']' && top == '[':
				stack = stack[:len(stack)-1]
				valueDone(i + 1)
			default:
				return fail(decode.ErrSyntax, i)
			}
		case rDone:
			if !isWS(c) {
				return fail(decode.ErrSyntax, i)
			}
		case rStr:
			switch {
			case c == '"':
				if isKey {
					if inTopObj() {
						cur.nameEnd = i
					}
					st = rColon
				} else {
					valueDone(i + 1)
				}
			case c == '\\':
				st = rEsc
			case c < 0x20:
				return fail(decode.ErrSyntax, i)
			case c < 0x80:
			case c >= 0xC2 && c <= 0xDF:
				st, need, lo, hi = rUTF8, 1, 0x80, 0xBF
			case c >= 0xE0 && c <= 0xEF:
				st, need, lo, hi = rUTF8, 2, 0x80, 0xBF
				if c == 0xE0 {
					lo = 0xA0 // not overlong
				} else if c == 0xED {
					hi = 0x9F // not a surrogate
				}
			case c >= 0xF0 && c <= 0xF4:
				st, need, lo, hi = rUTF8, 3, 0x80, 0xBF
				if c == 0xF0 {
					lo = 0x90 // not overlong
				} else if c == 0xF4 {
					hi = 0x8F // not above U+10FFFF
				}
			default:
				return fail(decode.ErrSyntax, i)
			}
		case rUTF8:
			if c < lo || c > hi {
				return fail(decode.ErrSyntax, i)
			}
			lo, hi = 0x80, 0xBF
			if need--; need == 0 {
				st = rStr
			}
		case rEsc:
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				st = rStr
			case 'u':
				st, hexN, cp = rHex, 0, 0
			default:
				return fail(decode.ErrSyntax, i)
			}
		case rHex:
			v := hexv(c)
			if v < 0 {
				return fail(decode.ErrSyntax, i)
			}
			cp = cp<<4 | v
			hexN++
			if hexN == 2 && cp >= 0xDC && cp <= 0xDF {
				return fail(decode.ErrSyntax, i) // a low surrogate first
			}
			if hexN == 4 {
				if cp >= 0xD800 && cp <= 0xDBFF {
					st = rLowBS
				} else {
					st = rStr
				}
			}
		case rLowBS:
			if c != '\\' {
				return fail(decode.ErrSyntax, i)
			}
			st = rLowU
		case rLowU:
			if c != 'u' {
				return fail(decode.ErrSyntax, i)
			}
			st, hexN = rLowHex, 0
		case rLowHex:
			v := hexv(c)
			if v < 0 || hexN == 0 && v != 0xD || hexN == 1 && v < 0xC {
				return fail(decode.ErrSyntax, i)
			}
			if hexN++; hexN == 4 {
				st = rStr
			}
		case rNum:
			digit := c >= '0' && c <= '9'
			next := -1
			switch num {
			case nmSign:
				if c == '0' {
					next = nmZero
				} else if digit {
					next = nmInt
				}
			case nmZero, nmInt:
				switch {
				case digit && num == nmInt:
					next = nmInt
				case c == '.':
					next = nmDot
				case c == 'e' || c == 'E':
					next = nmE
				}
			case nmDot, nmFrac:
				if digit {
					next = nmFrac
				} else if num == nmFrac && (c == 'e' || c == 'E') {
					next = nmE
				}
			case nmE:
				if c == '+' || c == '-' {
					next = nmESign
				} else if digit {
					next = nmExp
				}
			case nmESign, nmExp:
				if digit {
					next = nmExp
				}
			}
			if next >= 0 {
				num = next
				continue
			}
			if !numEnd[num] {
				return fail(decode.ErrSyntax, i)
			}
			valueDone(i)
			goto again
		case rLit:
			if c != lit[litPos] {
				return fail(decode.ErrSyntax, i)
			}
			if litPos++; litPos == len(lit) {
				valueDone(i + 1)
			}
		}
	}
	if !final {
		return res
	}
	if st == rNum && numEnd[num] {
		valueDone(len(b))
	}
	if st != rDone {
		return fail(decode.ErrSyntax, len(b))
	}
	return res
}

// policyAccepts says which id types each policy takes, written out
// independently of the package's bit sets.
func policyAccepts(p decode.IDPolicy, t decode.IDType) bool {
	switch p {
	case 0, decode.IDsJSONRPC:
		return t == decode.IDString || t == decode.IDInteger || t == decode.IDNumber || t == decode.IDNull
	case decode.IDsMCP:
		return t == decode.IDString || t == decode.IDInteger
	}
	return p.Accepts(t)
}

// refIDType classifies a raw id value.
func refIDType(v []byte) decode.IDType {
	switch {
	case v[0] == '"':
		return decode.IDString
	case string(v) == "null":
		return decode.IDNull
	case v[0] == '-' || v[0] >= '0' && v[0] <= '9':
		if bytes.ContainsAny(v, ".eE") {
			return decode.IDNumber
		}
		return decode.IDInteger
	}
	return decode.IDOther
}

// unquote resolves a valid JSON string's escapes (content without quotes)
// with encoding/json.
func unquote(tb testing.TB, content []byte) string {
	var s string
	if err := json.Unmarshal(append(append([]byte{'"'}, content...), '"'), &s); err != nil {
		tb.Fatalf("unquote(%q): %v", content, err)
	}
	return s
}

// refDecode is the verdict the contract gives body under opts, by the
// reference model. For refusals of rows 8 and 9 only the sentinel, code and
// answer id are meaningful; the offset of rows 8–10 is not part of the
// contract and is copied from got when got has the same sentinel.
func refDecode(tb testing.TB, body []byte, opts decode.Options) verdict {
	tb.Helper()
	maxBytes := opts.MaxBytes
	if maxBytes == 0 {
		maxBytes = decode.DefaultMaxBytes
	}
	maxDepth := opts.MaxDepth
	if maxDepth == 0 {
		maxDepth = decode.DefaultMaxDepth
	}
	none := verdict{ID: nilBytes, Method: nilBytes, Params: nilBytes, AnswerID: "null"}
	refuse := func(err error, off int64) verdict {
		v := none
		v.Err, v.Code, v.Offset = err, codeOf(err), off
		return v
	}
	var r refResult
	if int64(len(body)) > maxBytes {
		r = refScan(body[:maxBytes], maxDepth, true, false)
		if r.err == nil {
			return refuse(decode.ErrTooLarge, maxBytes)
		}
	} else {
		r = refScan(body, maxDepth, true, true)
	}
	if r.err != nil {
		return refuse(r.err, int64(r.off))
	}
	if r.top != '{' {
		return refuse(decode.ErrNotObject, -1)
	}
	seen := map[string]bool{}
	vals := map[string][]byte{}
	for _, mb := range r.members {
		name := unquote(tb, body[mb.nameStart:mb.nameEnd])
		if seen[name] {
			return refuse(decode.ErrDuplicateName, -1)
		}
		seen[name] = true
		vals[name] = body[mb.valStart:mb.valEnd]
	}
	v := none
	if id, ok := vals["id"]; ok {
		v.ID, v.IDType = string(id), refIDType(id)
		v.EchoID = policyAccepts(opts.IDs, v.IDType)
	}
	if p, ok := vals["params"]; ok {
		v.Params, v.ParamsType = string(p), decode.ParamsOther
		if p[0] == '{' {
			v.ParamsType = decode.ParamsObject
		}
	}
	method, hasMethod := vals["method"]
	if hasMethod && method[0] == '"' {
		v.Method = unquote(tb, method[1:len(method)-1])
	}
	var version any
	if jr, ok := vals["jsonrpc"]; ok {
		// UseNumber: any valid number is a version, if not "2.0" (1e700,
		// past float64, failed the model itself: found by the fuzz smoke
		// on 2026-12-06)
		dec := json.NewDecoder(bytes.NewReader(jr))
		dec.UseNumber()
		if err := dec.Decode(&version); err != nil {
			tb.Fatalf("jsonrpc %q: %v", jr, err)
		}
	}
	_, hasResult := vals["result"]
	_, hasError := vals["error"]
	switch {
	case version != "2.0",
		!hasMethod && (hasResult || hasError),
		v.Method == nilBytes,
		v.IDType != decode.IDAbsent && !v.EchoID:
		v.Err, v.Code, v.Offset = decode.ErrEnvelope, decode.CodeInvalidRequest, -1
		if v.EchoID {
			v.AnswerID = v.ID
		}
		return v
	}
	v.EchoID = false
	v.Kind = decode.KindNotification
	if v.IDType != decode.IDAbsent {
		v.Kind = decode.KindRequest
		v.AnswerID = v.ID
	}
	return v
}

// sameVerdict compares got with the reference want. Offsets of rows 8–10
// (want.Offset == -1) are not compared; nor are the message fields of a
// refusal beyond the answer id.
func sameVerdict(got, want verdict) bool {
	if want.Offset == -1 {
		want.Offset = got.Offset
	}
	if want.Err != nil {
		return got.stream() == want.stream() && got.EchoID == want.EchoID && got.AnswerID == want.AnswerID && got.Kind == want.Kind
	}
	return got == want
}

// checkRef decodes body one shot under opts and compares with the model.
func checkRef(tb testing.TB, d *decode.Decoder, body []byte, opts decode.Options) verdict {
	tb.Helper()
	got := decodeOnce(tb, d, body)
	want := refDecode(tb, body, opts)
	if !sameVerdict(got, want) {
		tb.Errorf("Decode(%s) under %+v:\n got %v\nwant %v", short(body), opts, got, want)
	}
	return got
}

// short quotes b for a failure message, eliding the middle of long bodies.
func short(b []byte) string {
	if len(b) <= 160 {
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("%q…(%d bytes)…%q", b[:100], len(b), b[len(b)-40:])
}

// ---------------------------------------------------------------------------
// The contract, row by row.

// rpcCase is one body and what the contract says of it.
type rpcCase struct {
	name string
	body string
	opts decode.Options
	want verdict // the expected verdict; Offset -1 = not pinned
}

var (
	policyJSONRPC = decode.Options{}
	policyMCP     = decode.Options{IDs: decode.IDsMCP}
)

// ok is the verdict of a valid message. id "" means absent.
func ok(id, method, params string) verdict {
	v := verdict{Kind: decode.KindNotification, ID: nilBytes, Method: method, Params: nilBytes, AnswerID: "null"}
	if id != "" {
		v.Kind, v.ID, v.AnswerID = decode.KindRequest, id, id
		v.IDType = refIDType([]byte(id))
	}
	if params != "" {
		v.Params, v.ParamsType = params, decode.ParamsOther
		if params[0] == '{' {
			v.ParamsType = decode.ParamsObject
		}
	}
	return v
}

// refused is the verdict of a refusal before the envelope (rows 7–9).
func refused(err error, off int64) verdict {
	return verdict{Err: err, Code: codeOf(err), Offset: off, ID: nilBytes, Method: nilBytes, Params: nilBytes, AnswerID: "null"}
}

// envelope is the verdict of a row-10 refusal that answers with answer.
func envelope(answer string) verdict {
	return verdict{Err: decode.ErrEnvelope, Code: decode.CodeInvalidRequest, Offset: -1, EchoID: answer != "null", ID: nilBytes, Method: nilBytes, Params: nilBytes, AnswerID: answer}
}

// req builds a request body around the given members.
func req(members ...string) string { return "{" + strings.Join(members, ",") + "}" }

const (
	ceilingPrefix = `{"jsonrpc":"2.0","method":"`
	v2            = `"jsonrpc":"2.0"`
	ping          = `"method":"ping"`
)

func nested(open, close string, n int, inner string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// contractCases are the table of contract §2, rows 7 to 10 and the notes.
func contractCases() []rpcCase {
	depthObj := func(levels int) string { // a top object holding levels-1 more levels
		return `{"jsonrpc":"2.0","method":"m","params":` + nested(`{"a":`, `}`, levels-2, `{}`) + `}`
	}
	depthArr := func(levels int) string {
		return `{"jsonrpc":"2.0","method":"m","params":` + nested(`[`, `]`, levels-1, ``) + `}`
	}
	lenDepthPrefix := int64(len(`{"jsonrpc":"2.0","method":"m","params":`))
	huge := strings.Repeat("x", 2*mib)
	cs := []rpcCase{
		// Valid messages and what is read from them.
		{"request", req(v2, `"id":1`, `"method":"tools/call"`, `"params":{"name":"echo"}`), policyJSONRPC, ok("1", "tools/call", `{"name":"echo"}`)},
		{"notification", req(v2, `"method":"notifications/initialized"`), policyJSONRPC, ok("", "notifications/initialized", "")},
		{"notification with params", req(v2, `"method":"n"`, `"params":{}`), policyMCP, ok("", "n", "{}")},
		{"member order", req(`"params":{"a":[1,2]}`, `"id":"x"`, `"method":"m"`, v2), policyMCP, ok(`"x"`, "m", `{"a":[1,2]}`)},
		{"unknown members ignored", req(`"x":1`, v2, `"_meta":{"id":2}`, `"id":7`, `"Method":3`, ping, `"ID":null`), policyMCP, ok("7", "ping", "")},
		{"whitespace everywhere", " \t\r\n{ \"jsonrpc\" :\t\"2.0\" ,\n\"id\"\r: 3 , \"method\" : \"m\" , \"params\" : [ ] } \n\t\r ", policyJSONRPC, ok("3", "m", "[ ]")},
		{"params absent", req(v2, `"id":1`, ping), policyJSONRPC, ok("1", "ping", "")},
		{"params {}", req(v2, `"id":1`, ping, `"params":{}`), policyJSONRPC, ok("1", "ping", "{}")},
		{"params array", req(v2, `"id":1`, ping, `"params":[1,"a"]`), policyJSONRPC, ok("1", "ping", `[1,"a"]`)},
		{"params null", req(v2, `"id":1`, ping, `"params":null`), policyJSONRPC, ok("1", "ping", `null`)},
		{"params string", req(v2, `"id":1`, ping, `"params":"p"`), policyJSONRPC, ok("1", "ping", `"p"`)},
		{"params number", req(v2, `"id":1`, ping, `"params":-1.5e3`), policyJSONRPC, ok("1", "ping", `-1.5e3`)},
		{"params false", req(v2, `"id":1`, ping, `"params":false`), policyJSONRPC, ok("1", "ping", `false`)},
		{"params raw with spaces", req(v2, `"id":1`, ping, `"params": { "a" : [ 1 , 2 ] } `), policyJSONRPC, ok("1", "ping", `{ "a" : [ 1 , 2 ] }`)},
		{"result with method is a request", req(v2, `"id":1`, ping, `"result":{}`), policyMCP, ok("1", "ping", "")},
		{"error with method is a request", req(v2, `"id":1`, ping, `"error":{"code":1}`), policyMCP, ok("1", "ping", "")},
		{"result with method is a notification", req(v2, ping, `"result":1`, `"error":2`), policyMCP, ok("", "ping", "")},
		{"empty method", req(v2, `"id":1`, `"method":""`), policyMCP, ok("1", "", "")},

		// Escapes resolved before any comparison.
		{`"\u006dethod"`, req(v2, `"id":1`, `"\u006dethod":"m"`), policyMCP, ok("1", "m", "")},
		{`"tools\/call"`, req(v2, `"id":1`, `"method":"tools\/call"`), policyMCP, ok("1", "tools/call", "")},
		{`"2\u002e0"`, req(`"jsonrpc":"2\u002e0"`, `"id":1`, ping), policyMCP, ok("1", "ping", "")},
		{`"\u0032\u002E\u0030"`, req(`"jsonrpc":"\u0032\u002E\u0030"`, `"id":1`, ping), policyMCP, ok("1", "ping", "")},
		{"escaped jsonrpc name", req(`"\u006a\u0073\u006f\u006e\u0072\u0070\u0063":"2.0"`, ping), policyMCP, ok("", "ping", "")},
		{"escaped id name", req(v2, `"\u0069\u0064":5`, ping), policyMCP, ok("5", "ping", "")},
		{"escaped params name", req(v2, ping, `"p\u0061rams":[]`), policyMCP, ok("", "ping", "[]")},
		{"method with every escape", req(v2, `"method":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\u2028"`), policyMCP, ok("", "\"\\/\b\f\n\r\té😀\u2028", "")},
		{"method non-ASCII raw", req(v2, `"method":"café/日本/😀"`), policyMCP, ok("", "café/日本/😀", "")},
		{"method \\u0000", req(v2, `"method":"a\u0000b"`), policyMCP, ok("", "a\x00b", "")},
		{"escaped result name with method", req(v2, ping, `"r\u0065sult":1`), policyMCP, ok("", "ping", "")},

		// Ids come back verbatim.
		{"id 12345678901234567890123", req(v2, `"id":12345678901234567890123`, ping), policyMCP, ok("12345678901234567890123", "ping", "")},
		{"id 1e400 on JSON-RPC", req(v2, `"id":1e400`, ping), policyJSONRPC, ok("1e400", "ping", "")},
		{"id 1e400 on MCP", req(v2, `"id":1e400`, ping), policyMCP, envelope("null")},
		{`id "caf\u00e9"`, req(v2, `"id":"caf\u00e9"`, ping), policyMCP, ok(`"caf\u00e9"`, "ping", "")},
		{"id -0", req(v2, `"id":-0`, ping), policyMCP, ok("-0", "ping", "")},
		{"id -0.0 on JSON-RPC", req(v2, `"id":-0.0`, ping), policyJSONRPC, ok("-0.0", "ping", "")},
		{"id 1.5 on MCP", req(v2, `"id":1.5`, ping), policyMCP, envelope("null")},
		{"id 1E2 on MCP", req(v2, `"id":1E2`, ping), policyMCP, envelope("null")},
		{"id 1E2 on JSON-RPC", req(v2, `"id":1E2`, ping), policyJSONRPC, ok("1E2", "ping", "")},
		{"id 0", req(v2, `"id":0`, ping), policyMCP, ok("0", "ping", "")},
		{"id -9223372036854775809", req(v2, `"id":-9223372036854775809`, ping), policyMCP, ok("-9223372036854775809", "ping", "")},
		{"id empty string", req(v2, `"id":""`, ping), policyMCP, ok(`""`, "ping", "")},
		{"id string with escapes", req(v2, `"id":"a\"b\\c\/\ud83d\ude00"`, ping), policyMCP, ok(`"a\"b\\c\/\ud83d\ude00"`, "ping", "")},
		{"id null on JSON-RPC", req(v2, `"id":null`, ping), policyJSONRPC, ok("null", "ping", "")},
		{"id null on MCP", req(v2, `"id":null`, ping), policyMCP, envelope("null")},
		{"id true", req(v2, `"id":true`, ping), policyJSONRPC, envelope("null")},
		{"id false", req(v2, `"id":false`, ping), policyMCP, envelope("null")},
		{"id object", req(v2, `"id":{"a":1}`, ping), policyJSONRPC, envelope("null")},
		{"id array", req(v2, `"id":[1]`, ping), policyJSONRPC, envelope("null")},
		{"id with spaces around", req(v2, `"id" :  42  `, ping), policyMCP, ok("42", "ping", "")},

		// Row 10: the envelope, with the id rule of rows 10–18.
		{"jsonrpc missing", req(`"id":1`, ping), policyMCP, envelope("1")},
		{"jsonrpc missing, notification", req(ping), policyMCP, envelope("null")},
		{`jsonrpc "1.0"`, req(`"jsonrpc":"1.0"`, `"id":"a"`, ping), policyMCP, envelope(`"a"`)},
		{"jsonrpc 2.0 as a number", req(`"jsonrpc":2.0`, `"id":1`, ping), policyMCP, envelope("1")},
		{"jsonrpc 2 as a number", req(`"jsonrpc":2`, `"id":1`, ping), policyMCP, envelope("1")},
		{`jsonrpc "2.0 "`, req(`"jsonrpc":"2.0 "`, `"id":1`, ping), policyMCP, envelope("1")},
		{`jsonrpc "2.00"`, req(`"jsonrpc":"2.00"`, `"id":1`, ping), policyMCP, envelope("1")},
		{`jsonrpc "2"`, req(`"jsonrpc":"2"`, `"id":1`, ping), policyMCP, envelope("1")},
		{`jsonrpc ""`, req(`"jsonrpc":""`, `"id":1`, ping), policyMCP, envelope("1")},
		{"jsonrpc null", req(`"jsonrpc":null`, `"id":1`, ping), policyMCP, envelope("1")},
		{`jsonrpc ["2.0"]`, req(`"jsonrpc":["2.0"]`, `"id":1`, ping), policyMCP, envelope("1")},
		{`jsonrpc "2\u002e0 " escaped, wrong`, req(`"jsonrpc":"2\u002e0\u0020"`, `"id":1`, ping), policyMCP, envelope("1")},
		{`jsonrpc very long escaped`, req(`"jsonrpc":"\u0032\u002e\u0030\u0030\u0030\u0030\u0030\u0030"`, `"id":1`, ping), policyMCP, envelope("1")},
		{`"JSONRPC" is not jsonrpc`, req(`"JSONRPC":"2.0"`, `"id":1`, ping), policyMCP, envelope("1")},
		{"method missing", req(v2, `"id":1`), policyMCP, envelope("1")},
		{`"Method" is not method`, req(v2, `"id":1`, `"Method":"ping"`), policyMCP, envelope("1")},
		{`"METHOD" is not method`, req(v2, `"METHOD":"ping"`), policyMCP, envelope("null")},
		{"method a number", req(v2, `"id":"r"`, `"method":1`), policyMCP, envelope(`"r"`)},
		{"method null", req(v2, `"id":2`, `"method":null`), policyMCP, envelope("2")},
		{"method an object", req(v2, `"id":2`, `"method":{}`), policyMCP, envelope("2")},
		{"method an array", req(v2, `"method":["ping"]`), policyMCP, envelope("null")},
		{"response with result", req(v2, `"id":1`, `"result":{}`), policyMCP, envelope("1")},
		{"response with error", req(v2, `"id":"e"`, `"error":{"code":-32600,"message":"x"}`), policyMCP, envelope(`"e"`)},
		{"response with null result", req(v2, `"id":9`, `"result":null`), policyMCP, envelope("9")},
		{"response with unaccepted id", req(v2, `"id":1.5`, `"result":1`), policyMCP, envelope("null")},
		{"response without id", req(v2, `"result":1`), policyMCP, envelope("null")},
		{"response, escaped result name", req(v2, `"id":1`, `"\u0072esult":1`), policyMCP, envelope("1")},
		{"empty object", `{}`, policyMCP, envelope("null")},
		{"id bad and method missing", req(v2, `"id":true`), policyMCP, envelope("null")},

		// Row 9: duplicate top-level names, after unescaping.
		{"method twice", req(v2, `"id":1`, ping, `"method":"other"`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"same method twice", req(v2, ping, ping), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{`\u0069d vs id`, req(v2, `"id":1`, ping, `"\u0069d":2`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{`id vs \u0069\u0064`, req(`"\u0069\u0064":1`, v2, `"id":1`, ping), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"jsonrpc twice", req(v2, v2, ping), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"params twice", req(v2, ping, `"params":{}`, `"params":{}`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"result twice", req(v2, ping, `"result":1`, `"result":2`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"error twice", req(v2, `"error":1`, `"error":2`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"unknown name twice", req(v2, `"x":1`, ping, `"x":2`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"unknown name twice, escaped", req(v2, `"ab":1`, ping, `"a\u0062":2`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"unknown name twice, escaped surrogates", req(v2, `"\ud83d\ude00":1`, ping, `"😀":2`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"empty name twice", req(v2, `"":1`, ping, `"":2`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"names differing in case are distinct", req(v2, `"x":1`, `"X":1`, ping, `"Id":1`, `"iD":1`), policyMCP, ok("", "ping", "")},
		{"duplicate beats bad envelope", req(`"jsonrpc":1`, `"x":1`, `"x":1`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"duplicate beats response shape", req(v2, `"id":1`, `"result":1`, `"id":1`), policyMCP, refused(decode.ErrDuplicateName, -1)},
		{"duplicate inside params not checked", req(v2, ping, `"params":{"a":1,"a":2}`), policyMCP, ok("", "ping", `{"a":1,"a":2}`)},
		{"duplicate deeper not checked", req(v2, ping, `"x":{"method":1,"method":2}`), policyMCP, ok("", "ping", "")},

		// Row 8: a complete valid body that is not an object.
		{"string", `"hello"`, policyMCP, refused(decode.ErrNotObject, -1)},
		{"number", ` 42 `, policyMCP, refused(decode.ErrNotObject, -1)},
		{"true", `true`, policyMCP, refused(decode.ErrNotObject, -1)},
		{"null", "\nnull", policyMCP, refused(decode.ErrNotObject, -1)},
		{"not object beats nothing: string then garbage is syntax", `"a" x`, policyMCP, refused(decode.ErrSyntax, 4)},

		// Row 7a: batches, refused at once.
		{"batch", `[{"jsonrpc":"2.0","method":"m"}]`, policyMCP, refused(decode.ErrBatch, 0)},
		{"empty batch", `[]`, policyMCP, refused(decode.ErrBatch, 0)},
		{"batch after whitespace", " \r\n\t[1]", policyMCP, refused(decode.ErrBatch, 4)},
		{"batch, rest invalid", "[\x00\xff}}}", policyMCP, refused(decode.ErrBatch, 0)},
		{"lone [", `[`, policyMCP, refused(decode.ErrBatch, 0)},
		{"[ + 2 MiB", "[" + huge, policyMCP, refused(decode.ErrBatch, 0)},
		{"[ + 2 MiB, ceiling 1", "[" + huge, decode.Options{MaxBytes: 1}, refused(decode.ErrBatch, 0)},
		{"batch beats depth limit 1", `[[[[`, decode.Options{MaxDepth: 1}, refused(decode.ErrBatch, 0)},

		// Row 7b: syntax.
		{"empty body", ``, policyMCP, refused(decode.ErrSyntax, 0)},
		{"only whitespace", " \t\r\n", policyMCP, refused(decode.ErrSyntax, 4)},
		{"BOM", "\xEF\xBB\xBF" + req(v2, ping), policyMCP, refused(decode.ErrSyntax, 0)},
		{"BOM after space", " \xEF\xBB\xBF{}", policyMCP, refused(decode.ErrSyntax, 1)},
		{`{"a":[1,}`, `{"a":[1,}`, policyMCP, refused(decode.ErrSyntax, 8)},
		{`{"a":[1,} + 2 MiB`, `{"a":[1,}` + huge, policyMCP, refused(decode.ErrSyntax, 8)},
		{`{"a":[1,} + 2 MiB of spaces`, `{"a":[1,}` + strings.Repeat(" ", 2*mib), policyMCP, refused(decode.ErrSyntax, 8)},
		{"trailing bytes", req(v2, ping) + "x", policyMCP, refused(decode.ErrSyntax, int64(len(req(v2, ping))))},
		{"two objects", `{}{}`, policyMCP, refused(decode.ErrSyntax, 2)},
		{"two objects with a newline", "{}\n{}", policyMCP, refused(decode.ErrSyntax, 3)},
		{"trailing NUL", "{}\x00", policyMCP, refused(decode.ErrSyntax, 2)},
		{"form feed is not whitespace", "\f{}", policyMCP, refused(decode.ErrSyntax, 0)},
		{"vertical tab is not whitespace", "{}\v", policyMCP, refused(decode.ErrSyntax, 2)},
		{"NBSP is not whitespace", "{\xC2\xA0}", policyMCP, refused(decode.ErrSyntax, 1)},
		{"U+2028 is not whitespace", "{}\u2028", policyMCP, refused(decode.ErrSyntax, 2)},
		{"ends too early", `{"jsonrpc":"2.0"`, policyMCP, refused(decode.ErrSyntax, 16)},
		{"ends in a string", `{"jsonrpc":"2.`, policyMCP, refused(decode.ErrSyntax, 14)},
		{"ends in a name", `{"json`, policyMCP, refused(decode.ErrSyntax, 6)},
		{"ends in an escape", `{"a":"\u00`, policyMCP, refused(decode.ErrSyntax, 10)},
		{"ends in a literal", `{"a":tru`, policyMCP, refused(decode.ErrSyntax, 8)},
		{"ends in a number", `{"a":12`, policyMCP, refused(decode.ErrSyntax, 7)},
		{"ends after -", `{"a":-`, policyMCP, refused(decode.ErrSyntax, 6)},
		{"ends in UTF-8", "{\"a\":\"\xE6\x97", policyMCP, refused(decode.ErrSyntax, 8)},
		{"top-level - alone", `-`, policyMCP, refused(decode.ErrSyntax, 1)},
		{"top-level 1. alone", `1.`, policyMCP, refused(decode.ErrSyntax, 2)},
		{"top-level 1e alone", `1e`, policyMCP, refused(decode.ErrSyntax, 2)},
		{"single quotes", `{'a':1}`, policyMCP, refused(decode.ErrSyntax, 1)},
		{"unquoted name", `{a:1}`, policyMCP, refused(decode.ErrSyntax, 1)},
		{"trailing comma in object", `{"a":1,}`, policyMCP, refused(decode.ErrSyntax, 7)},
		{"trailing comma in array", `{"a":[1,]}`, policyMCP, refused(decode.ErrSyntax, 8)},
		{"missing colon", `{"a" 1}`, policyMCP, refused(decode.ErrSyntax, 5)},
		{"missing comma", `{"a":1 "b":2}`, policyMCP, refused(decode.ErrSyntax, 7)},
		{"leading zero", `{"a":01}`, policyMCP, refused(decode.ErrSyntax, 6)},
		{"leading zero negative", `{"a":-01}`, policyMCP, refused(decode.ErrSyntax, 7)},
		{"plus sign", `{"a":+1}`, policyMCP, refused(decode.ErrSyntax, 5)},
		{"dot without digits", `{"a":1.}`, policyMCP, refused(decode.ErrSyntax, 7)},
		{"dot first", `{"a":.5}`, policyMCP, refused(decode.ErrSyntax, 5)},
		{"exponent without digits", `{"a":1e}`, policyMCP, refused(decode.ErrSyntax, 7)},
		{"exponent sign without digits", `{"a":1e+}`, policyMCP, refused(decode.ErrSyntax, 8)},
		{"hex number", `{"a":0x1}`, policyMCP, refused(decode.ErrSyntax, 6)},
		{"NaN", `{"a":NaN}`, policyMCP, refused(decode.ErrSyntax, 5)},
		{"Infinity", `{"a":-Infinity}`, policyMCP, refused(decode.ErrSyntax, 6)},
		{"capital True", `{"a":True}`, policyMCP, refused(decode.ErrSyntax, 5)},
		{"literal cut", `{"a":nul}`, policyMCP, refused(decode.ErrSyntax, 8)},
		{"literal wrong", `{"a":fals3}`, policyMCP, refused(decode.ErrSyntax, 9)},
		{"literal followed by letters", `{"a":truex}`, policyMCP, refused(decode.ErrSyntax, 9)},
		{"control character in a string", "{\"a\":\"x\ty\"}", policyMCP, refused(decode.ErrSyntax, 7)},
		{"NUL in a string", "{\"a\":\"\x00\"}", policyMCP, refused(decode.ErrSyntax, 6)},
		{"newline in a name", "{\"a\nb\":1}", policyMCP, refused(decode.ErrSyntax, 3)},
		{"DEL is allowed in a string", "{\"jsonrpc\":\"2.0\",\"method\":\"\x7f\"}", policyMCP, ok("", "\x7f", "")},
		{"bad escape", `{"a":"\x"}`, policyMCP, refused(decode.ErrSyntax, 7)},
		{"escaped single quote", `{"a":"\'"}`, policyMCP, refused(decode.ErrSyntax, 7)},
		{"short \\u", `{"a":"\u12"}`, policyMCP, refused(decode.ErrSyntax, 10)},
		{"\\u with a non-hex digit", `{"a":"\u12G4"}`, policyMCP, refused(decode.ErrSyntax, 10)},
		{`"\ud800" then "`, `{"a":"\ud800"}`, policyMCP, refused(decode.ErrSyntax, 12)},
		{`"\ud800" then text`, `{"a":"\ud800abc"}`, policyMCP, refused(decode.ErrSyntax, 12)},
		{`"\ud800\n"`, `{"a":"\ud800\n"}`, policyMCP, refused(decode.ErrSyntax, 13)},
		{`"\ud800\u0041"`, `{"a":"\ud800\u0041"}`, policyMCP, refused(decode.ErrSyntax, 14)},
		{`"\ud800\ud800"`, `{"a":"\ud800\ud800"}`, policyMCP, refused(decode.ErrSyntax, 15)},
		{`"\uDBFF\uE000"`, `{"a":"\uDBFF\uE000"}`, policyMCP, refused(decode.ErrSyntax, 14)},
		{`"\ud800\udbff"`, `{"a":"\ud800\udbff"}`, policyMCP, refused(decode.ErrSyntax, 15)},
		{`"\ud800\uDB00"`, `{"a":"\ud800\uDB00"}`, policyMCP, refused(decode.ErrSyntax, 15)},
		{`lone low \udc00`, `{"a":"\udc00"}`, policyMCP, refused(decode.ErrSyntax, 9)},
		{`lone low \uDFFF`, `{"a":"\uDFFF"}`, policyMCP, refused(decode.ErrSyntax, 9)},
		{`lone low in a name`, `{"\uDc00":1}`, policyMCP, refused(decode.ErrSyntax, 5)},
		{`high surrogate in the id`, `{"jsonrpc":"2.0","id":"\uD834","method":"m"}`, policyJSONRPC, refused(decode.ErrSyntax, 29)},
		{`valid pair`, `{"jsonrpc":"2.0","method":"\uD834\uDD1E"}`, policyMCP, ok("", "𝄞", "")},
		{`\uD7FF and \uE000 are not surrogates`, `{"jsonrpc":"2.0","method":"\uD7FF\uE000"}`, policyMCP, ok("", "\uD7FF\uE000", "")},
		{"invalid UTF-8 \\xE0\\x80", "{\"a\":\"\xE0\x80\"}", policyMCP, refused(decode.ErrSyntax, 7)},
		{"overlong 2 bytes", "{\"a\":\"\xC0\xAF\"}", policyMCP, refused(decode.ErrSyntax, 6)},
		{"overlong C1", "{\"a\":\"\xC1\xBF\"}", policyMCP, refused(decode.ErrSyntax, 6)},
		{"overlong 4 bytes", "{\"a\":\"\xF0\x8F\xBF\xBF\"}", policyMCP, refused(decode.ErrSyntax, 7)},
		{"UTF-8 surrogate", "{\"a\":\"\xED\xA0\x80\"}", policyMCP, refused(decode.ErrSyntax, 7)},
		{"above U+10FFFF", "{\"a\":\"\xF4\x90\x80\x80\"}", policyMCP, refused(decode.ErrSyntax, 7)},
		{"F5 lead", "{\"a\":\"\xF5\x80\x80\x80\"}", policyMCP, refused(decode.ErrSyntax, 6)},
		{"lone continuation", "{\"a\":\"\x80\"}", policyMCP, refused(decode.ErrSyntax, 6)},
		{"truncated sequence then quote", "{\"a\":\"\xE6\x97\"}", policyMCP, refused(decode.ErrSyntax, 8)},
		{"Latin-1", "{\"a\":\"caf\xE9\"}", policyMCP, refused(decode.ErrSyntax, 10)},
		{"invalid UTF-8 in a name", "{\"\xFF\":1}", policyMCP, refused(decode.ErrSyntax, 2)},
		{"invalid UTF-8 outside strings", "{\xC3\xA9}", policyMCP, refused(decode.ErrSyntax, 1)},
		{"UTF-16LE", "{\x00}\x00", policyMCP, refused(decode.ErrSyntax, 1)},
		{"U+FFFF and U+10FFFF are valid", "{\"jsonrpc\":\"2.0\",\"method\":\"\xEF\xBF\xBF\xF4\x8F\xBF\xBF\"}", policyMCP, ok("", "\uFFFF\U0010FFFF", "")},

		// Row 7c: depth. The top-level object is level 1.
		{"depth 1000 of objects", depthObj(1000), policyMCP, ok("", "m", nested(`{"a":`, `}`, 998, `{}`))},
		{"depth 1001 of objects", depthObj(1001), policyMCP, refused(decode.ErrDepth, lenDepthPrefix+999*5)},
		{"depth 1000 of arrays", depthArr(1000), policyMCP, ok("", "m", nested(`[`, `]`, 999, ``))},
		{"depth 1001 of arrays", depthArr(1001), policyMCP, refused(decode.ErrDepth, lenDepthPrefix+999)},
		{"1001 nested top-level arrays then garbage", strings.Repeat("[", 1001) + "\xff garbage", policyMCP, refused(decode.ErrBatch, 0)},
		{"1001 nested arrays then garbage", `{"a":` + strings.Repeat("[", 1000) + "\xff\x00garbage" + huge, policyMCP, refused(decode.ErrDepth, 5+999)},
		{"1001 nested arrays inside a string are fine", req(v2, ping, `"x":"`+strings.Repeat("[", 1001)+`"`), policyMCP, ok("", "ping", "")},
		{"depth limit 1: object", `{}`, decode.Options{MaxDepth: 1}, envelope("null")},
		{"depth limit 1: params object", req(v2, ping, `"params":{}`), decode.Options{MaxDepth: 1}, refused(decode.ErrDepth, 42)},
		{"depth limit 1: params array", req(v2, ping, `"params":[]`), decode.Options{MaxDepth: 1}, refused(decode.ErrDepth, 42)},
		{"depth limit 2", req(v2, ping, `"params":{"a":[1]}`), decode.Options{MaxDepth: 2}, refused(decode.ErrDepth, 47)},
		{"depth limit 3", req(v2, ping, `"params":{"a":[1]}`), decode.Options{MaxDepth: 3}, ok("", "ping", `{"a":[1]}`)},
		{"depth limit 5000", depthArr(5000), decode.Options{MaxDepth: 5000}, ok("", "m", nested(`[`, `]`, 4999, ``))},
		{"depth limit 5000 + 1", depthArr(5001), decode.Options{MaxDepth: 5000}, refused(decode.ErrDepth, lenDepthPrefix+4999)},
		{"syntax before depth", `{"a":[[[x` + strings.Repeat("[", 2000), policyMCP, refused(decode.ErrSyntax, 8)},
		{"depth before syntax", `{"a":` + strings.Repeat("[", 1000) + `x`, policyMCP, refused(decode.ErrDepth, 1004)},

		// Row 7d: the ceiling; the failure is at byte ceiling + 1.
		{"2 MiB of spaces", strings.Repeat(" ", 2*mib), policyMCP, refused(decode.ErrTooLarge, mib)},
		{"2 MiB string", `{"a":"` + huge + `"}`, policyMCP, refused(decode.ErrTooLarge, mib)},
		{"ceiling + 1", `{"jsonrpc":"2.0","method":"` + strings.Repeat("m", mib-len(ceilingPrefix)-1) + `"}`, policyMCP, refused(decode.ErrTooLarge, mib)},
		{"exactly the ceiling", ceilingPrefix + strings.Repeat("m", mib-len(ceilingPrefix)-2) + `"}`, policyMCP, ok("", strings.Repeat("m", mib-len(ceilingPrefix)-2), "")},
		{"exactly the ceiling, then a space", ceilingPrefix + strings.Repeat("m", mib-len(ceilingPrefix)-2) + `"} `, policyMCP, refused(decode.ErrTooLarge, mib)},
		{"exactly the ceiling, then a second object", ceilingPrefix + strings.Repeat("m", mib-len(ceilingPrefix)-2) + `"}{}`, policyMCP, refused(decode.ErrTooLarge, mib)},
		{"syntax before the ceiling", `{x}`, decode.Options{MaxBytes: 2}, refused(decode.ErrSyntax, 1)},
		{"ceiling before syntax", `{"a"x`, decode.Options{MaxBytes: 3}, refused(decode.ErrTooLarge, 3)},
		{"depth before the ceiling", `{"a":[[[`, decode.Options{MaxBytes: 7, MaxDepth: 2}, refused(decode.ErrDepth, 6)},
		{"ceiling before depth", `{"a":[[[`, decode.Options{MaxBytes: 6, MaxDepth: 3}, refused(decode.ErrTooLarge, 6)},
		{"depth limit reached by the last byte", `{"a":[[`, decode.Options{MaxBytes: 7, MaxDepth: 2}, refused(decode.ErrDepth, 6)},
		// Ties: a failure at byte ceiling+1 (index MaxBytes) that is also a
		// syntax error, a batch or a depth overflow. The contract does not
		// say which wins; the decoder never looks past the ceiling, so the
		// ceiling does. Pinned so that a change is deliberate.
		{"tie: garbage at byte ceiling+1", `{}x`, decode.Options{MaxBytes: 2}, refused(decode.ErrTooLarge, 2)},
		{"tie: '[' at byte ceiling+1", " [", decode.Options{MaxBytes: 1}, refused(decode.ErrTooLarge, 1)},
		{"tie: depth at byte ceiling+1", `{"a":[[[`, decode.Options{MaxBytes: 6, MaxDepth: 2}, refused(decode.ErrTooLarge, 6)},
		{"ceiling 1, body 1", `5`, decode.Options{MaxBytes: 1}, refused(decode.ErrNotObject, -1)},
		{"ceiling 1, body 2", `{}`, decode.Options{MaxBytes: 1}, refused(decode.ErrTooLarge, 1)},
		{"ceiling 1, empty body", ``, decode.Options{MaxBytes: 1}, refused(decode.ErrSyntax, 0)},
		{"ceiling inside a UTF-8 sequence", "{\"a\":\"\xE6\x97\xA5\"}", decode.Options{MaxBytes: 8}, refused(decode.ErrTooLarge, 8)},
		{"ceiling inside an escape", `{"a":"\uD834\uDD1E"}`, decode.Options{MaxBytes: 12}, refused(decode.ErrTooLarge, 12)},
		{"ceiling after a bad surrogate", `{"a":"\uD834\u0041"}`, decode.Options{MaxBytes: 15}, refused(decode.ErrSyntax, 14)},
	}
	return cs
}

func TestDecodeContract(t *testing.T) {
	for _, tc := range contractCases() {
		t.Run(tc.name, func(t *testing.T) {
			d := newDecoder(t, tc.opts)
			body := []byte(tc.body)
			got := decodeOnce(t, d, body)
			if !sameVerdict(got, tc.want) {
				t.Errorf("Decode(%s):\n got %v\nwant %v", short(body), got, tc.want)
			}
			// The table and the reference model must agree, so that the
			// model can be trusted on generated input.
			if ref := refDecode(t, body, tc.opts); !sameVerdict(tc.want, ref) {
				t.Errorf("the reference model disagrees with the table:\nmodel %v\ntable %v", ref, tc.want)
			}
			if got.Err != nil && got.Code != codeOf(got.Err) {
				t.Errorf("code %d for %v, want %d", got.Code, got.Err, codeOf(got.Err))
			}
		})
	}
}

// TestDecodeEnvelopeFields pins the fields a refusal of row 10 still
// reports: the id, its type, the method and the params as they came.
func TestDecodeEnvelopeFields(t *testing.T) {
	var d decode.Decoder
	var m decode.Message
	err := d.Decode([]byte(`{"jsonrpc":"1.0","id":"x\/y","method":"a\/b","params":[1]}`), &m)
	if !errors.Is(err, decode.ErrEnvelope) {
		t.Fatalf("err = %v, want ErrEnvelope", err)
	}
	if string(m.ID) != `"x\/y"` || m.IDType != decode.IDString || string(m.Method) != "a/b" || string(m.Params) != "[1]" || m.ParamsType != decode.ParamsOther {
		t.Errorf("fields: id %q %v method %q params %q %v", m.ID, m.IDType, m.Method, m.Params, m.ParamsType)
	}
	if !m.Error.EchoID || string(m.AnswerID()) != `"x\/y"` {
		t.Errorf("EchoID %v AnswerID %q, want the id", m.Error.EchoID, m.AnswerID())
	}
	// For rows 7–9 the answer id is null, whatever the body held.
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m"}x`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":` + nested("[", "]", 1000, "") + `}`,
		`[{"jsonrpc":"2.0","id":1,"method":"m"}]`,
		`"id"`,
	} {
		err := d.Decode([]byte(body), &m)
		if err == nil || m.Error.EchoID || string(m.AnswerID()) != "null" || m.Kind != decode.KindInvalid {
			t.Errorf("%s: err %v EchoID %v AnswerID %q kind %v; want a refusal answered with null", short([]byte(body)), err, m.Error.EchoID, m.AnswerID(), m.Kind)
		}
	}
}

// TestDuplicateOffset: a refusal for a repeated top-level name points at
// the first name that repeats an earlier one (its opening quote), whether
// it is a well-known name or an unknown one, spelled plain or escaped, on
// the recorded path (few members) and the walked one (many).
func TestDuplicateOffset(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 17))
	pool := []string{"jsonrpc", "id", "method", "params", "result", "error", "a", "b", "c", "_meta", "x"}
	// spell writes name as JSON, sometimes with its first letter escaped.
	spell := func(b *bytes.Buffer, name string) {
		b.WriteByte('"')
		if rng.IntN(3) == 0 {
			fmt.Fprintf(b, `\u%04x`, name[0])
			b.WriteString(name[1:])
		} else {
			b.WriteString(name)
		}
		b.WriteByte('"')
	}
	var d decode.Decoder
	for n := range 3000 {
		members := 2 + rng.IntN(8)
		if n%5 == 0 {
			members = 33 + rng.IntN(40) // past the members the scanner records
		}
		var b bytes.Buffer
		b.WriteByte('{')
		seen := map[string]bool{}
		want := int64(-1)
		for i := range members {
			if i > 0 {
				b.WriteByte(',')
			}
			name := pool[rng.IntN(len(pool))]
			if rng.IntN(4) != 0 && i >= len(pool) {
				name = "u" + strconv.Itoa(i) // mostly distinct when many
			}
			if seen[name] && want < 0 {
				want = int64(b.Len())
			}
			seen[name] = true
			spell(&b, name)
			fmt.Fprintf(&b, `:%d`, rng.IntN(100))
		}
		b.WriteByte('}')
		v := decodeOnce(t, &d, b.Bytes())
		switch {
		case want < 0 && v.Err == decode.ErrDuplicateName:
			t.Fatalf("%s: %v, no name repeats", b.Bytes(), v)
		case want >= 0 && (v.Err != decode.ErrDuplicateName || v.Offset != want):
			t.Fatalf("%s: %v, want ErrDuplicateName at %d", b.Bytes(), v, want)
		}
	}
}

// TestDecodeManyMembers covers the duplicate check past the size where it
// switches from comparing pairs to hashing.
func TestDecodeManyMembers(t *testing.T) {
	build := func(n int, dupAt int, escaped bool) []byte {
		var b bytes.Buffer
		b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"m"`)
		for i := range n {
			name := "k" + strconv.Itoa(i)
			if dupAt >= 0 && i == n-1 {
				name = "k" + strconv.Itoa(dupAt)
			}
			if escaped {
				name = `\u006b` + name[1:]
			}
			fmt.Fprintf(&b, `,"%s":%d`, name, i)
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	var d decode.Decoder
	for _, n := range []int{2, 15, 16, 17, 18, 31, 32, 33, 64, 100, 1000, 10000} {
		for _, escaped := range []bool{false, true} {
			body := build(n, -1, escaped)
			if v := decodeOnce(t, &d, body); v.Err != nil || v.Kind != decode.KindRequest {
				t.Errorf("%d distinct members (escaped %v): %v", n, escaped, v)
			}
			for _, at := range []int{0, n / 2, n - 2} {
				if at < 0 || at >= n-1 {
					continue
				}
				body := build(n, at, escaped)
				if v := decodeOnce(t, &d, body); v.Err != decode.ErrDuplicateName || v.AnswerID != "null" {
					t.Errorf("%d members, the last repeating #%d (escaped %v): %v, want ErrDuplicateName", n, at, escaped, v)
				}
			}
		}
	}
	// Well-known names repeated after many unknown ones.
	for _, n := range []int{17, 1000} {
		var b bytes.Buffer
		b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"m"`)
		for i := range n {
			fmt.Fprintf(&b, `,"u%d":0`, i)
		}
		b.WriteString(`,"\u0069d":2}`)
		if v := decodeOnce(t, &d, b.Bytes()); v.Err != decode.ErrDuplicateName {
			t.Errorf("id repeated after %d members: %v", n, v)
		}
	}
	// Names whose hashes meet: one-byte names cover every low byte.
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","method":"m"`)
	for c := 0x20; c < 0x7f; c++ {
		if c == '"' || c == '\\' {
			continue
		}
		fmt.Fprintf(&b, `,"%c":0`, c)
	}
	distinct := append([]byte(nil), b.Bytes()...)
	if v := decodeOnce(t, &d, append(distinct, '}')); v.Err != nil {
		t.Errorf("all one-byte names: %v", v)
	}
	if v := decodeOnce(t, &d, append(distinct, `,"\u007e":1}`...)); v.Err != decode.ErrDuplicateName {
		t.Errorf("all one-byte names and ~ again: %v", v)
	}
}

// TestDecodeReuse decodes different bodies with one Decoder and one
// Message, in every order, and checks nothing leaks from one to the next.
func TestDecodeReuse(t *testing.T) {
	cases := contractCases()
	var d decode.Decoder
	var m decode.Message
	r := rand.New(rand.NewPCG(1, 2))
	for range 3 {
		r.Shuffle(len(cases), func(i, j int) { cases[i], cases[j] = cases[j], cases[i] })
		for _, tc := range cases {
			if err := d.SetOptions(tc.opts); err != nil {
				t.Fatal(err)
			}
			got := verdictOf(t, &m, d.Decode([]byte(tc.body), &m))
			if !sameVerdict(got, tc.want) {
				t.Errorf("%s after other bodies:\n got %v\nwant %v", tc.name, got, tc.want)
			}
		}
	}
}

// TestDecodeBodyUnchanged checks that decoding never writes to the body.
func TestDecodeBodyUnchanged(t *testing.T) {
	var d decode.Decoder
	var m decode.Message
	for _, tc := range contractCases() {
		body := []byte(tc.body)
		keep := bytes.Clone(body)
		d.SetOptions(tc.opts)
		d.Decode(body, &m)
		if !bytes.Equal(body, keep) {
			t.Errorf("%s: Decode modified the body", tc.name)
		}
	}
}

func TestZeroDecoder(t *testing.T) {
	var d decode.Decoder
	if got := d.Options(); got != (decode.Options{}) {
		t.Errorf("zero Decoder options %+v", got)
	}
	var m decode.Message
	// Defaults: a 1 MiB ceiling, depth 1000, JSON-RPC ids.
	if err := d.Decode([]byte(`{"jsonrpc":"2.0","id":null,"method":"m"}`), &m); err != nil {
		t.Errorf("null id under the default policy: %v", err)
	}
	if err := d.Decode([]byte(strings.Repeat(" ", mib+1)), &m); !errors.Is(err, decode.ErrTooLarge) || m.Error.Offset != mib {
		t.Errorf("default ceiling: %v", err)
	}
	if err := d.Decode([]byte(depthBody(1000)), &m); err != nil {
		t.Errorf("default depth 1000: %v", err)
	}
	if err := d.Decode([]byte(depthBody(1001)), &m); !errors.Is(err, decode.ErrDepth) {
		t.Errorf("default depth 1001: %v", err)
	}
	// The zero Decoder streams too, after Reset.
	var z decode.Decoder
	z.Reset()
	if _, err := z.Write([]byte(`{"jsonrpc":"2.0","method":"m","params":{"a":[1]}}`)); err != nil {
		t.Fatal(err)
	}
	if err := z.Finish(&m); err != nil || string(m.Method) != "m" {
		t.Errorf("zero Decoder streaming: %v", err)
	}
}

// depthBody is a request whose params nest to exactly levels (the top
// object counts).
func depthBody(levels int) string {
	return `{"jsonrpc":"2.0","method":"m","params":` + nested(`[`, `]`, levels-1, ``) + `}`
}

func TestOptions(t *testing.T) {
	for _, o := range []decode.Options{
		{MaxBytes: -1}, {MaxDepth: -1}, {IDs: decode.AcceptIDs(decode.IDOther) | 1<<7},
	} {
		if _, err := decode.NewDecoder(o); err == nil {
			t.Errorf("NewDecoder(%+v) accepted", o)
		}
		d := newDecoder(t, decode.Options{MaxBytes: 7})
		if err := d.SetOptions(o); err == nil {
			t.Errorf("SetOptions(%+v) accepted", o)
		}
		if d.Options().MaxBytes != 7 {
			t.Errorf("a refused SetOptions changed the options to %+v", d.Options())
		}
	}
	for _, o := range []decode.Options{{}, {MaxBytes: 1}, {MaxDepth: 1}, {IDs: decode.IDsMCP}, {IDs: decode.AcceptIDs(decode.IDString)}} {
		d, err := decode.NewDecoder(o)
		if err != nil || d.Options() != o {
			t.Errorf("NewDecoder(%+v) = %v, %v", o, d, err)
		}
	}
}

func TestIDPolicies(t *testing.T) {
	types := []decode.IDType{decode.IDAbsent, decode.IDNull, decode.IDString, decode.IDInteger, decode.IDNumber, decode.IDOther}
	for _, p := range []decode.IDPolicy{0, decode.IDsJSONRPC, decode.IDsMCP} {
		for _, ty := range types {
			if got, want := p.Accepts(ty), policyAccepts(p, ty); got != want {
				t.Errorf("%#x.Accepts(%v) = %v, want %v", p, ty, got, want)
			}
		}
	}
	if decode.AcceptIDs(decode.IDString, decode.IDInteger) != decode.IDsMCP {
		t.Errorf("AcceptIDs(string, integer) != IDsMCP")
	}
	if decode.AcceptIDs(decode.IDString, decode.IDInteger, decode.IDNumber, decode.IDNull) != decode.IDsJSONRPC {
		t.Errorf("AcceptIDs(all) != IDsJSONRPC")
	}
	if decode.AcceptIDs(decode.IDString, decode.IDOther, decode.IDAbsent) != decode.AcceptIDs(decode.IDString) {
		t.Errorf("AcceptIDs does not ignore IDOther and IDAbsent")
	}
	// Each single-type policy, through a Decoder.
	ids := map[decode.IDType]string{decode.IDNull: "null", decode.IDString: `"s"`, decode.IDInteger: "-12", decode.IDNumber: "0.5", decode.IDOther: "true"}
	for _, accept := range types[1:5] {
		d := newDecoder(t, decode.Options{IDs: decode.AcceptIDs(accept)})
		for ty, id := range ids {
			v := decodeOnce(t, d, []byte(`{"jsonrpc":"2.0","method":"m","id":`+id+`}`))
			if v.IDType != ty {
				t.Errorf("id %s: IDType %v, want %v", id, v.IDType, ty)
			}
			if want := ty == accept; (v.Err == nil) != want || (v.Err != nil && v.Err != decode.ErrEnvelope) {
				t.Errorf("policy {%v}, id %s: %v", accept, id, v)
			}
		}
		if v := decodeOnce(t, d, []byte(`{"jsonrpc":"2.0","method":"m"}`)); v.Kind != decode.KindNotification {
			t.Errorf("policy {%v}: a notification is %v", accept, v)
		}
	}
	for _, s := range []fmt.Stringer{decode.KindRequest, decode.KindNotification, decode.KindInvalid, decode.IDNumber, decode.ParamsObject} {
		if s.String() == "" {
			t.Errorf("%#v has no name", s)
		}
	}
}

func TestErrorMethods(t *testing.T) {
	var d decode.Decoder
	var m decode.Message
	for _, tc := range []struct {
		body   string
		status int
	}{
		{`{x`, 400}, {`[`, 400}, {`{}`, 400}, {`1`, 400}, {`{"a":1,"a":1}`, 400},
		{strings.Repeat(" ", mib+1), 413}, {`{"a":` + strings.Repeat("[", 1000), 400},
	} {
		err := d.Decode([]byte(tc.body), &m)
		var e *decode.Error
		if !errors.As(err, &e) {
			t.Fatalf("%s: %v", short([]byte(tc.body)), err)
		}
		if e.HTTPStatus() != tc.status {
			t.Errorf("%v: HTTPStatus %d, want %d", err, e.HTTPStatus(), tc.status)
		}
		s := err.Error()
		if !strings.HasPrefix(s, e.Err.Error()) || !strings.Contains(s, " at byte "+strconv.FormatInt(e.Offset, 10)) || !strings.Contains(s, e.Reason) {
			t.Errorf("Error() = %q", s)
		}
		if errors.Unwrap(err) != e.Err {
			t.Errorf("Unwrap = %v", errors.Unwrap(err))
		}
	}
}

// ---------------------------------------------------------------------------
// Generated bodies, compared with the model.

// gen makes random JSON-RPC bodies, valid and nearly valid.
type gen struct {
	r *rand.Rand
}

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, 0x5eed))} }

func (g *gen) pick(ss ...string) string { return ss[g.r.IntN(len(ss))] }

// ws is random JSON whitespace, usually none.
func (g *gen) ws() string {
	if g.r.IntN(4) != 0 {
		return ""
	}
	var b strings.Builder
	for range g.r.IntN(4) + 1 {
		b.WriteByte(" \t\r\n"[g.r.IntN(4)])
	}
	return b.String()
}

// text is a random Unicode string: ASCII, controls, quotes, non-ASCII of
// every length, noncharacters and the edges of the surrogate range.
func (g *gen) text(maxLen int) string {
	runes := []rune{'a', 'Z', '0', ' ', '/', '"', '\\', '\n', '\t', 0, 0x1f, 0x7f, 0x80, 0xe9, 0x7ff, 0x800, 0x2028, 0xd7ff, 0xe000, 0xfeff, 0xfffd, 0xffff, 0x10000, 0x1f600, 0x10ffff}
	n := g.r.IntN(maxLen + 1)
	var b strings.Builder
	for range n {
		if g.r.IntN(3) == 0 {
			b.WriteRune(runes[g.r.IntN(len(runes))])
		} else if g.r.IntN(5) == 0 {
			b.WriteRune(rune(g.r.IntN(0xd800)))
		} else {
			b.WriteByte(byte('a' + g.r.IntN(26)))
		}
	}
	return b.String()
}

// quote writes s as a JSON string, escaping what must be and, at random,
// what may be (\u escapes of either case, surrogate pairs, \/).
func (g *gen) quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	escapeAll := g.r.IntN(8) == 0
	for _, c := range s {
		esc := escapeAll || g.r.IntN(6) == 0
		switch {
		case c == '"' || c == '\\':
			if esc && g.r.IntN(2) == 0 {
				fmt.Fprintf(&b, `\u%04x`, c)
			} else {
				b.WriteByte('\\')
				b.WriteRune(c)
			}
		case c < 0x20:
			if e, ok := map[rune]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}[c]; ok && g.r.IntN(2) == 0 {
				b.WriteString(e)
			} else {
				fmt.Fprintf(&b, `\u%04X`, c)
			}
		case !esc:
			b.WriteRune(c)
		case c == '/':
			b.WriteString(`\/`)
		case c >= 0x10000:
			c -= 0x10000
			f := `\u%04x\u%04x`
			if g.r.IntN(2) == 0 {
				f = `\u%04X\u%04X`
			}
			fmt.Fprintf(&b, f, 0xd800+c>>10, 0xdc00+c&0x3ff)
		default:
			fmt.Fprintf(&b, `\u%04x`, c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// number is a random JSON number in every form.
func (g *gen) number() string {
	var b strings.Builder
	if g.r.IntN(3) == 0 {
		b.WriteByte('-')
	}
	if g.r.IntN(4) == 0 {
		b.WriteByte('0')
	} else {
		b.WriteByte(byte('1' + g.r.IntN(9)))
		for range g.r.IntN(25) {
			b.WriteByte(byte('0' + g.r.IntN(10)))
		}
	}
	if g.r.IntN(4) == 0 {
		b.WriteByte('.')
		for range g.r.IntN(6) + 1 {
			b.WriteByte(byte('0' + g.r.IntN(10)))
		}
	}
	if g.r.IntN(5) == 0 {
		b.WriteString(g.pick("e", "E", "e+", "E-", "e-"))
		for range g.r.IntN(4) + 1 {
			b.WriteByte(byte('0' + g.r.IntN(10)))
		}
	}
	return b.String()
}

func (g *gen) integer() string {
	s := g.number()
	if i := strings.IndexAny(s, ".eE"); i >= 0 {
		s = s[:i]
	}
	return s
}

// value is a random JSON value nested at most depth levels.
func (g *gen) value(depth int) string {
	k := g.r.IntN(10)
	if depth <= 0 && k >= 7 {
		k = g.r.IntN(7)
	}
	switch k {
	case 0, 1:
		return g.quote(g.text(12))
	case 2, 3:
		return g.number()
	case 4:
		return g.pick("true", "false", "null")
	case 5, 6:
		return g.quote(g.text(3))
	case 7, 8:
		var b strings.Builder
		b.WriteString("{" + g.ws())
		for i := range g.r.IntN(4) {
			if i > 0 {
				b.WriteString("," + g.ws())
			}
			b.WriteString(g.quote(g.text(6)) + g.ws() + ":" + g.ws() + g.value(depth-1) + g.ws())
		}
		b.WriteString("}")
		return b.String()
	default:
		var b strings.Builder
		b.WriteString("[" + g.ws())
		for i := range g.r.IntN(4) {
			if i > 0 {
				b.WriteString("," + g.ws())
			}
			b.WriteString(g.value(depth-1) + g.ws())
		}
		b.WriteString("]")
		return b.String()
	}
}

// id is a random id of any type, strings and integers of varying length.
func (g *gen) id() string {
	switch g.r.IntN(9) {
	case 0, 1, 2:
		return g.integer()
	case 3, 4:
		return g.quote(g.text(40))
	case 5:
		return g.number()
	case 6:
		return g.pick("null", "-0", "1e400", "12345678901234567890123", `"caf\u00e9"`, `""`)
	case 7:
		return g.pick("true", "false", "{}", "[]", `{"id":1}`, "[1,2]")
	}
	return `"` + strconv.Itoa(g.r.IntN(1e6)) + `"`
}

// name writes a member name, escaping it at random.
func (g *gen) name(s string) string { return g.quote(s) }

// message is a random JSON-RPC body: mostly valid requests and
// notifications, and every kind of envelope refusal.
func (g *gen) message() string {
	type mem struct{ name, value string }
	var ms []mem
	switch g.r.IntN(12) {
	case 0:
	case 1:
		ms = append(ms, mem{"jsonrpc", g.pick(`"1.0"`, `2.0`, `"2.0 "`, `"2"`, `null`, `"\u0032.0"`)})
	default:
		ms = append(ms, mem{"jsonrpc", g.pick(`"2.0"`, `"2.0"`, `"2\u002e0"`, `"\u0032\u002E\u0030"`)})
	}
	if g.r.IntN(5) != 0 {
		ms = append(ms, mem{"id", g.id()})
	}
	switch g.r.IntN(12) {
	case 0:
	case 1:
		ms = append(ms, mem{"method", g.value(1)})
	default:
		ms = append(ms, mem{"method", g.quote(g.pick("tools/call", "ping", "notifications/initialized", "SendMessage", "") + g.text(8))})
	}
	switch g.r.IntN(6) {
	case 0:
	case 1:
		ms = append(ms, mem{"params", g.value(3)})
	default:
		v := g.value(4)
		if !strings.HasPrefix(v, "{") {
			v = `{"arguments":` + v + `}`
		}
		ms = append(ms, mem{"params", v})
	}
	for range g.r.IntN(3) {
		ms = append(ms, mem{g.pick("result", "error", "x", "_meta", "Method", "ID", "", g.text(5)), g.value(2)})
	}
	if g.r.IntN(8) == 0 && len(ms) > 0 { // a duplicate
		ms = append(ms, mem{ms[g.r.IntN(len(ms))].name, g.value(1)})
	}
	g.r.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
	var b strings.Builder
	b.WriteString(g.ws() + "{" + g.ws())
	for i, m := range ms {
		if i > 0 {
			b.WriteString("," + g.ws())
		}
		b.WriteString(g.name(m.name) + g.ws() + ":" + g.ws() + m.value + g.ws())
	}
	b.WriteString("}" + g.ws())
	return b.String()
}

// interesting bytes for mutations: structure, escapes, number parts and
// the UTF-8 edge bytes.
const mutationBytes = "\"\\{}[],:u0-.eE+ \t\n\r\x00\x1f\x7f\x80\xbf\xc0\xc2\xdf\xe0\xed\xef\xf0\xf4\xf5\xff"

// mutate changes b at one or two random places.
func (g *gen) mutate(b []byte) []byte {
	b = bytes.Clone(b)
	for range g.r.IntN(2) + 1 {
		if len(b) == 0 {
			return b
		}
		i := g.r.IntN(len(b))
		c := mutationBytes[g.r.IntN(len(mutationBytes))]
		switch g.r.IntN(4) {
		case 0:
			b[i] = c
		case 1:
			b = append(b[:i], append([]byte{c}, b[i:]...)...)
		case 2:
			b = append(b[:i], b[i+1:]...)
		case 3:
			b = b[:i]
		}
	}
	return b
}

// generatedBodies returns n random bodies from seed, a third of them
// mutated.
func generatedBodies(seed uint64, n int) [][]byte {
	g := newGen(seed)
	out := make([][]byte, 0, n)
	for i := range n {
		b := []byte(g.message())
		if i%3 == 2 {
			b = g.mutate(b)
		}
		out = append(out, b)
	}
	return out
}

func TestDecodeGenerated(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 3000
	}
	policies := []decode.Options{policyJSONRPC, policyMCP, {MaxDepth: 3}, {MaxBytes: 64}}
	ds := make([]*decode.Decoder, len(policies))
	for i, o := range policies {
		ds[i] = newDecoder(t, o)
	}
	counts := map[error]int{}
	for i, body := range generatedBodies(7, n) {
		k := i % len(policies)
		v := checkRef(t, ds[k], body, policies[k])
		counts[v.Err]++
		if t.Failed() && i > 100 {
			break
		}
	}
	// The generator must reach every verdict, or the test proves little.
	for _, e := range []error{nil, decode.ErrSyntax, decode.ErrEnvelope, decode.ErrDuplicateName, decode.ErrDepth, decode.ErrTooLarge} {
		if counts[e] < 10 {
			t.Errorf("only %d generated bodies gave %v", counts[e], e)
		}
	}
	t.Logf("verdicts: %v", counts)
}

// TestDecodeGeneratedMethods checks the unescaped method and the verbatim
// id against the strings the generator started from.
func TestDecodeGeneratedMethods(t *testing.T) {
	g := newGen(11)
	var d decode.Decoder
	var m decode.Message
	for range 5000 {
		method := g.text(30)
		id := g.id()
		body := `{"jsonrpc":"2.0",` + g.name("method") + ":" + g.quote(method) + `,"id":` + id + `,"params":` + g.value(3) + "}"
		err := d.Decode([]byte(body), &m)
		ty := refIDType([]byte(id))
		if !policyAccepts(0, ty) {
			if !errors.Is(err, decode.ErrEnvelope) {
				t.Errorf("%s: %v, want ErrEnvelope", body, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		if string(m.Method) != method || string(m.ID) != id || m.IDType != ty {
			t.Errorf("%s:\nmethod %q, want %q\nid %s (%v), want %s (%v)", body, m.Method, method, m.ID, m.IDType, id, ty)
		}
	}
}

// TestValidGenerated compares Valid and Validate with the model and with
// encoding/json on generated values (not only objects) and their
// mutations.
func TestValidGenerated(t *testing.T) {
	g := newGen(3)
	n := 30000
	if testing.Short() {
		n = 5000
	}
	for i := range n {
		b := []byte(g.ws() + g.value(5) + g.ws())
		if i%2 == 1 {
			b = g.mutate(b)
		}
		checkValid(t, b)
	}
}

// checkValid checks Valid and Validate on b against the model, and the
// verdict against encoding/json where RFC 8259 leaves it no choice.
func checkValid(tb testing.TB, b []byte) {
	tb.Helper()
	b = slices.Clip(b)
	ref := refScan(b, int(^uint(0)>>1), false, true)
	if got := decode.Valid(b); got != (ref.err == nil) {
		tb.Errorf("Valid(%s) = %v, model says %v", short(b), got, ref.err == nil)
	}
	err := decode.Validate(b)
	if ref.err == nil {
		if err != nil {
			tb.Errorf("Validate(%s) = %v", short(b), err)
		}
	} else {
		var e *decode.Error
		if !errors.As(err, &e) || e.Err != decode.ErrSyntax || e.Code != decode.CodeParseError || e.Offset != int64(ref.off) {
			tb.Errorf("Validate(%s) = %v, model says syntax error at %d", short(b), err, ref.off)
		}
	}
	// encoding/json agrees except where it is lenient: invalid UTF-8 and
	// unpaired surrogates, which it accepts.
	// encoding/json also stops at 10000 levels.
	lenient := !utf8.Valid(b) || bytes.Contains(bytes.ToLower(b), []byte(`\ud`))
	if jv := json.Valid(b); jv != (ref.err == nil) && !(jv && lenient) && bytes.Count(b, []byte("["))+bytes.Count(b, []byte("{")) < 10000 {
		tb.Errorf("encoding/json.Valid(%s) = %v, the model %v", short(b), jv, ref.err == nil)
	}
}

func TestValidTable(t *testing.T) {
	for _, tc := range []struct {
		in  string
		off int // -1: valid
	}{
		{`[]`, -1}, {`[[[[[]]]]]`, -1}, {`"x"`, -1}, {` 0 `, -1}, {`-0.0e-0`, -1}, {`1E+2`, -1}, {`null`, -1},
		{`{"a":[1,}`, 8}, {``, 0}, {` `, 1}, {`[1,]`, 3}, {`[1 2]`, 3}, {`["a" "b"]`, 5}, {"\xEF\xBB\xBF[]", 0},
		{`"\ud800"`, 7}, {`"\udc00"`, 4}, {"\"\xE0\x80\"", 2}, {`[1]]`, 3}, {`{"a":1,"a":1}`, -1},
		{nested("[", "]", 100000, ""), -1}, {nested("[", "]", 100000, "") + "]", 200000},
		{`123abc`, 3}, {`tru`, 3}, {`[tru]`, 4}, {`01`, 1}, {`1.e1`, 2}, {`"\u00"`, 5}, {"\"a\x00\"", 2},
	} {
		got := decode.Validate([]byte(tc.in))
		valid := decode.Valid([]byte(tc.in))
		if tc.off < 0 {
			if got != nil || !valid {
				t.Errorf("Validate(%s) = %v, Valid %v; want valid", short([]byte(tc.in)), got, valid)
			}
		} else {
			var e *decode.Error
			if !errors.As(got, &e) || e.Offset != int64(tc.off) || !errors.Is(got, decode.ErrSyntax) || valid {
				t.Errorf("Validate(%s) = %v, Valid %v; want a syntax error at %d", short([]byte(tc.in)), got, valid, tc.off)
			}
		}
		checkValid(t, []byte(tc.in))
	}
}

// TestDecodeReaderErrors covers readers that fail.
func TestDecodeReaderErrors(t *testing.T) {
	var d decode.Decoder
	var m decode.Message
	boom := errors.New("boom")
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	// An error from the reader is returned as is, once the bytes before it
	// decided nothing.
	err := d.DecodeReader(io.MultiReader(bytes.NewReader(body[:10]), errReader{boom}), &m)
	if err != boom {
		t.Errorf("reader error: got %v, want %v", err, boom)
	}
	// A verdict reached before the error wins: the server answers it.
	err = d.DecodeReader(io.MultiReader(bytes.NewReader([]byte(`{x`)), errReader{boom}), &m)
	if !errors.Is(err, decode.ErrSyntax) {
		t.Errorf("syntax then reader error: got %v", err)
	}
	// Data and an error in the same Read: the data is judged first.
	err = d.DecodeReader(&dataThenErr{data: []byte(`[`), err: boom}, &m)
	if !errors.Is(err, decode.ErrBatch) {
		t.Errorf("batch with a reader error: got %v", err)
	}
	err = d.DecodeReader(&dataThenErr{data: body, err: io.EOF}, &m)
	if err != nil || string(m.ID) != "1" {
		t.Errorf("data with io.EOF: got %v", err)
	}
	// The decoder stops reading once the verdict is known.
	cr := &countingReader{r: bytes.NewReader(append([]byte(`{"a":[1,}`), make([]byte, 3*mib)...))}
	err = d.DecodeReader(cr, &m)
	if !errors.Is(err, decode.ErrSyntax) || m.Error.Offset != 8 {
		t.Errorf("syntax error then 3 MiB: %v", err)
	}
	if cr.n > 64<<10 {
		t.Errorf("read %d bytes after a syntax error at byte 8", cr.n)
	}
	cr = &countingReader{r: strings.NewReader(strings.Repeat(" ", 3*mib))}
	err = d.DecodeReader(cr, &m)
	if !errors.Is(err, decode.ErrTooLarge) || m.Error.Offset != mib {
		t.Errorf("3 MiB of spaces: %v", err)
	}
	if cr.n != mib+1 {
		t.Errorf("read %d bytes of a body over the ceiling, want the ceiling + 1 = %d", cr.n, mib+1)
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// dataThenErr returns all its data with err in one Read.
type dataThenErr struct {
	data []byte
	err  error
	done bool
}

func (r *dataThenErr) Read(p []byte) (int, error) {
	if r.done {
		return 0, r.err
	}
	if len(p) < len(r.data) {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	r.done = true
	return copy(p, r.data), r.err
}

type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestWriteSticky checks that once Write has reported a refusal, it keeps
// reporting it and Finish returns it.
func TestWriteSticky(t *testing.T) {
	var d decode.Decoder
	var m decode.Message
	d.Reset()
	if _, err := d.Write([]byte(`{"a":`)); err != nil {
		t.Fatal(err)
	}
	n, err := d.Write([]byte(`x}`))
	if !errors.Is(err, decode.ErrSyntax) {
		t.Fatalf("Write: %v", err)
	}
	_ = n
	first := *err.(*decode.Error)
	if _, err := d.Write([]byte(`"valid"}`)); err == nil || *err.(*decode.Error) != first {
		t.Errorf("Write after a refusal: %v, want %v", err, &first)
	}
	if err := d.Finish(&m); err == nil || m.Error != first {
		t.Errorf("Finish after a refusal: %v, want %v", err, &first)
	}
	// Reset makes the Decoder usable again.
	d.Reset()
	d.Write([]byte(`{"jsonrpc":"2.0","method":"m"}`))
	if err := d.Finish(&m); err != nil {
		t.Errorf("after Reset: %v", err)
	}
	// Write never keeps more than the ceiling.
	d2 := newDecoder(t, decode.Options{MaxBytes: 10})
	n, err = d2.Write([]byte(`{"a":"0123456789"}`))
	if !errors.Is(err, decode.ErrTooLarge) || n > 10 {
		t.Errorf("Write over the ceiling: n=%d err=%v", n, err)
	}
}

// TestSurrogateEscapes sweeps \u escapes around the surrogate range: a
// first escape, then a second whose leading two hex digits take every
// value, in both cases, in names and values, whole and in pieces.
func TestSurrogateEscapes(t *testing.T) {
	firsts := []string{"0041", "D7FF", "d800", "D800", "DA00", "DBFF", "dbff", "DC00", "dfff", "E000", "FFFF"}
	var d decode.Decoder
	for _, first := range firsts {
		for hi := range 256 {
			for _, f := range []string{"%02X", "%02x"} {
				second := fmt.Sprintf(f, hi) + "00"
				s := `\u` + first + `\u` + second
				for _, body := range []string{
					`{"jsonrpc":"2.0","method":"` + s + `"}`,
					`{"jsonrpc":"2.0","method":"m","` + s + `":1}`,
				} {
					b := []byte(body)
					checkValid(t, b)
					want := checkRef(t, &d, b, decode.Options{})
					for _, cut := range []int{30, 31, 32, 33, 34, 35} {
						if got := decodeWrites(t, &d, b, []int{cut}, want); got != want {
							t.Errorf("%s split at %d: %v, want %v", body, cut, got, want)
						}
					}
				}
			}
		}
	}
	// The pairs at the edges decode to the right code points.
	for s, want := range map[string]string{`\ud800\udc00`: "\U00010000", `\uDBFF\uDFFF`: "\U0010FFFF", `\uD834\uDD1E`: "𝄞"} {
		var m decode.Message
		if err := d.Decode([]byte(`{"jsonrpc":"2.0","method":"`+s+`"}`), &m); err != nil || string(m.Method) != want {
			t.Errorf("%s: %v, method %q, want %q", s, err, m.Method, want)
		}
	}
}

// encodeWith compresses body with the codings of a Content-Encoding list,
// in order.
func encodeWith(tb testing.TB, list string, body []byte) []byte {
	tb.Helper()
	out := body
	for _, c := range strings.Split(list, ",") {
		var b bytes.Buffer
		var w io.WriteCloser
		switch strings.TrimSpace(c) {
		case "gzip":
			w = gzip.NewWriter(&b)
		case "deflate":
			w = zlib.NewWriter(&b)
		case "zstd":
			zw, err := zstd.NewWriter(&b, zstd.WithWindowSize(1<<20))
			if err != nil {
				tb.Fatal(err)
			}
			w = zw
		default:
			tb.Fatalf("coding %q", c)
		}
		if _, err := w.Write(out); err != nil {
			tb.Fatal(err)
		}
		if err := w.Close(); err != nil {
			tb.Fatal(err)
		}
		out = b.Bytes()
	}
	return out
}

// TestDecodeBody covers the Content-Encoding entry point: every coding
// reaches Decode's verdict on the decoded bytes; a broken stream is
// refused with ErrCorrupt (-32700) where it is met, unless the decoded
// bytes failed first; the ceiling applies to the decoded bytes.
func TestDecodeBody(t *testing.T) {
	lists := []string{"gzip", "deflate", "zstd", "gzip, zstd", "deflate, gzip"}
	var m decode.Message
	d := newDecoder(t, decode.Options{MaxBytes: 64 << 10})
	bodies := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":"caf\u00e9","method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("hi ", 1000) + `"}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		[]byte(`[{"jsonrpc":"2.0","method":"m"}]`),
		[]byte(`{"a":[1,}` + strings.Repeat("x", 100<<10)),
		[]byte(`{"jsonrpc":"2.0","id":1,"result":1}`),
		[]byte(strings.Repeat(" ", 100<<10)),
		[]byte(``),
	}
	for _, list := range lists {
		enc, err := decode.ParseEncoding([]byte(list))
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range bodies {
			want := decodeOnce(t, d, body)
			wire := encodeWith(t, list, body)
			got := verdictOf(t, &m, d.DecodeBody(bytes.NewReader(wire), enc, &m))
			if got != want {
				t.Errorf("%s of %s:\n got %v\nwant %v", list, short(body), got, want)
			}
			got = verdictOf(t, &m, d.DecodeBody(iotest.OneByteReader(bytes.NewReader(wire)), enc, &m))
			if got != want {
				t.Errorf("%s of %s, one byte at a time:\n got %v\nwant %v", list, short(body), got, want)
			}
		}
		// A valid prefix, then the stream ends: corrupt.
		body := bodies[0]
		wire := encodeWith(t, list, body)
		for _, broken := range [][]byte{wire[:len(wire)/2], wire[:len(wire)-1], append(bytes.Clone(wire), 0, 1, 2)} {
			got := verdictOf(t, &m, d.DecodeBody(bytes.NewReader(broken), enc, &m))
			if got.Err != decode.ErrCorrupt || got.Code != decode.CodeParseError || got.AnswerID != "null" || m.Error.HTTPStatus() != 400 {
				t.Errorf("%s, %d of %d wire bytes: %v, want ErrCorrupt", list, len(broken), len(wire), got)
			}
		}
		// A syntax error in the decoded bytes comes before a break met
		// later in the stream. (The body spans several zstd blocks: the
		// zstd reader withholds a frame's last block until the frame is
		// complete, so a break in a one-block frame is met before any
		// decoded byte.)
		body = append([]byte(`{"a":[1,}`), noise(400<<10)...)
		wire = encodeWith(t, list, body)
		big := newDecoder(t, decode.Options{MaxBytes: 4 * mib})
		got := verdictOf(t, &m, big.DecodeBody(bytes.NewReader(wire[:len(wire)/2]), enc, &m))
		if got.Err != decode.ErrSyntax || got.Offset != 8 {
			t.Errorf("%s: syntax error then a truncated stream: %v, want ErrSyntax at 8", list, got)
		}
		// The decoded bytes pass the ceiling: 413 at the ceiling.
		body = []byte(`{"jsonrpc":"2.0","method":"m","params":"` + strings.Repeat("z", 200<<10) + `"}`)
		got = verdictOf(t, &m, d.DecodeBody(bytes.NewReader(encodeWith(t, list, body)), enc, &m))
		if got.Err != decode.ErrTooLarge || got.Offset != 64<<10 || m.Error.HTTPStatus() != 413 {
			t.Errorf("%s: decoded body over the ceiling: %v", list, got)
		}
		// The Decoder is fine afterwards.
		if err := d.DecodeBody(bytes.NewReader(encodeWith(t, list, bodies[1])), enc, &m); err != nil {
			t.Errorf("%s: after refusals: %v", list, err)
		}
	}
}

// TestDecodeBodyZstdTrailer: a zstd frame's checksum and declared size
// are checked after its last block is decoded, and klauspost's decoder
// reports a failure there before it hands out that block's bytes. Those
// bytes come first in byte order, so a failure met in them as they stream
// (rows 7a-7d) decides: a body that fails in its last block (most bodies
// are one block) gets the same verdict whether the checksum after it is
// intact, wrong or cut short; one that is fine, or fails only a check of
// the complete body (rows 8-10), is refused as corrupt.
func TestDecodeBodyZstdTrailer(t *testing.T) {
	enc, err := decode.ParseEncoding([]byte("zstd"))
	if err != nil {
		t.Fatal(err)
	}
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(true), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(41, 3))
	var m decode.Message
	for n := range 40 {
		id := strconv.Itoa(rng.IntN(1 << 30))
		text := strings.Repeat(string(rune('a'+rng.IntN(26))), 20+rng.IntN(3000))
		bodies := []string{
			`{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}}}`,
			`[{"jsonrpc":"2.0","id":` + id + `,"method":"m"}]`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"m","params":` + strings.Repeat("[", 1001) + strings.Repeat("]", 1001) + `}`,
			`{"a":` + id + `}x`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"` + text + `",` + `"id":2}`,
			`{"jsonrpc":"2.0","id":` + id + `,"method":"m","params":{"s":"\ud800"}}`,
		}
		limit := int64(64 << 10)
		if n%4 == 1 {
			limit = int64(100 + rng.IntN(400)) // the first body passes it
		}
		d := newDecoder(t, decode.Options{MaxBytes: limit})
		for _, body := range bodies {
			want := decodeOnce(t, d, []byte(body))
			wire := zw.EncodeAll([]byte(body), nil)
			// The frame ends with its 4-byte checksum: flip a bit of it,
			// or cut 1 to 4 bytes of it.
			bad := [][]byte{bytes.Clone(wire)}
			bad[0][len(wire)-1-rng.IntN(4)] ^= byte(1 << rng.IntN(8))
			for cut := 1; cut <= 4; cut++ {
				bad = append(bad, wire[:len(wire)-cut])
			}
			for i, b := range bad {
				for _, chunked := range []bool{false, true} {
					var r io.Reader = bytes.NewReader(b)
					if chunked {
						r = iotest.OneByteReader(r)
					}
					got := verdictOf(t, &m, d.DecodeBody(r, enc, &m))
					// Rows 7a-7d are met as the bytes stream in; rows 8-10
					// need the complete body, which a broken stream is not.
					streamed := want.Err == decode.ErrSyntax || want.Err == decode.ErrBatch ||
						want.Err == decode.ErrDepth || want.Err == decode.ErrTooLarge
					switch {
					case streamed && got != want:
						t.Errorf("limit %d, trailer %d, one byte at a time %v, %s:\n got %v\nwant %v", limit, i, chunked, short([]byte(body)), got, want)
					case !streamed && (got.Err != decode.ErrCorrupt || got.Code != decode.CodeParseError):
						t.Errorf("limit %d, trailer %d, one byte at a time %v, %s: %v, want ErrCorrupt", limit, i, chunked, short([]byte(body)), got)
					}
				}
			}
		}
	}
}

// noise returns n pseudo-random bytes: incompressible, so that every
// layer of a compressed body spans several blocks.
func noise(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestHugeCeiling: any MaxBytes that NewDecoder accepts works in every
// entry point, up to math.MaxInt64 (where ceiling+1 overflows).
func TestHugeCeiling(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
	for _, maxBytes := range []int64{math.MaxInt64, math.MaxInt64 - 1, 1 << 62, math.MaxInt32, math.MaxInt32 + 1} {
		d, err := decode.NewDecoder(decode.Options{MaxBytes: maxBytes})
		if err != nil {
			continue // refusing the value is fine too
		}
		want := decodeOnce(t, d, body)
		if want.Err != nil {
			t.Errorf("MaxBytes %d: Decode: %v", maxBytes, want)
		}
		for how, f := range map[string]func(m *decode.Message) error{
			"Write/Finish": func(m *decode.Message) error { d.Reset(); d.Write(body); return d.Finish(m) },
			"DecodeReader": func(m *decode.Message) error { return d.DecodeReader(bytes.NewReader(body), m) },
			"DecodeBody gzip": func(m *decode.Message) error {
				return d.DecodeBody(bytes.NewReader(encodeWith(t, "gzip", body)), gzipEncoding, m)
			},
		} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("MaxBytes %d: %s panics: %v", maxBytes, how, r)
					}
				}()
				var m decode.Message
				if got := verdictOf(t, &m, f(&m)); got != want {
					t.Errorf("MaxBytes %d: %s = %v, want %v", maxBytes, how, got, want)
				}
			}()
		}
	}
}

// TestConcurrent runs Valid, Validate and one Decoder per goroutine in
// parallel (meaningful under -race: the package's pools are shared).
func TestConcurrent(t *testing.T) {
	cases := contractCases()
	var bodies [][]byte
	for _, tc := range cases {
		if len(tc.body) < 64<<10 {
			bodies = append(bodies, []byte(tc.body))
		}
	}
	wantValid := make([]bool, len(bodies))
	wires := make([][]byte, len(bodies))
	for i, b := range bodies {
		wantValid[i] = decode.Valid(b)
		wires[i] = encodeWith(t, "gzip", b)
	}
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			var d decode.Decoder
			var m decode.Message
			for k := range len(bodies) {
				i := (k*7 + g) % len(bodies)
				if decode.Valid(bodies[i]) != wantValid[i] || (decode.Validate(bodies[i]) == nil) != wantValid[i] {
					t.Errorf("goroutine %d: Valid(%s) changed its mind", g, short(bodies[i]))
					return
				}
				wire := bodies[i]
				enc := decode.Encoding{}
				if k%2 == 0 {
					wire, enc = wires[i], gzipEncoding
				}
				err := d.DecodeBody(bytes.NewReader(wire), enc, &m)
				if wantValid[i] && errors.Is(err, decode.ErrSyntax) {
					t.Errorf("goroutine %d: %s: %v", g, short(bodies[i]), err)
					return
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
}

// TestWriteCopies: Write keeps a copy, so the caller may reuse its buffer
// at once (as a network read loop does).
func TestWriteCopies(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"x":[1,2,3]}}`)
	var d decode.Decoder
	var m decode.Message
	buf := make([]byte, 5)
	d.Reset()
	for i := 0; i < len(body); i += len(buf) {
		n := copy(buf, body[i:])
		if _, err := d.Write(buf[:n]); err != nil {
			t.Fatal(err)
		}
		for j := range buf {
			buf[j] = 'X' // the caller reuses its buffer
		}
	}
	if err := d.Finish(&m); err != nil || string(m.ID) != `"abc"` || string(m.Method) != "tools/call" || string(m.Params) != `{"x":[1,2,3]}` {
		t.Errorf("Finish: %v, id %s method %s params %s", err, m.ID, m.Method, m.Params)
	}
	// And a body read by DecodeReader does not depend on the reader's
	// memory after the call.
	src := bytes.Clone(body)
	if err := d.DecodeReader(bytes.NewReader(src), &m); err != nil {
		t.Fatal(err)
	}
	clear(src)
	if string(m.ID) != `"abc"` || string(m.Params) != `{"x":[1,2,3]}` {
		t.Errorf("DecodeReader: id %s params %s after the source changed", m.ID, m.Params)
	}
	// A batch is refused after the first read.
	cr := &countingReader{r: io.MultiReader(strings.NewReader("["), strings.NewReader(strings.Repeat("1,", 2*mib)))}
	if err := d.DecodeReader(cr, &m); !errors.Is(err, decode.ErrBatch) || cr.n > 64<<10 {
		t.Errorf("batch: %v after reading %d bytes", err, cr.n)
	}
}

// emptyThen returns nothing (0, nil) for its first empty Reads, then its
// data, then io.EOF.
type emptyThen struct {
	empty int
	data  []byte
}

func (r *emptyThen) Read(p []byte) (int, error) {
	if r.empty > 0 {
		r.empty--
		return 0, nil
	}
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestDecodeReaderNoProgress: DecodeReader waits through 99 empty Reads in
// a row, and gives up with io.ErrNoProgress (not a decode error, m
// invalid) at the 100th, as bufio does; a byte in between restarts the
// count.
func TestDecodeReaderNoProgress(t *testing.T) {
	d, err := decode.NewDecoder(decode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"jsonrpc":"2.0","id":"np","method":"ping"}`)
	var m decode.Message
	if err := d.DecodeReader(&emptyThen{empty: 99, data: body}, &m); err != nil || m.Kind != decode.KindRequest || string(m.ID) != `"np"` {
		t.Fatalf("99 empty reads: %v, %v %s", err, m.Kind, m.ID)
	}
	err = d.DecodeReader(&emptyThen{empty: 100, data: body}, &m)
	var de *decode.Error
	if err != io.ErrNoProgress || errors.As(err, &de) || m.Kind != decode.KindInvalid {
		t.Fatalf("100 empty reads: %v, kind %v; want io.ErrNoProgress and an invalid message", err, m.Kind)
	}
	// 99 empty reads before each byte: never 100 in a row.
	r := &oneAfterEmpties{data: body}
	if err := d.DecodeReader(r, &m); err != nil || m.Kind != decode.KindRequest {
		t.Fatalf("99 empty reads before every byte: %v, %v", err, m.Kind)
	}
}

// oneAfterEmpties returns one byte after every 99 empty Reads.
type oneAfterEmpties struct {
	data []byte
	k    int
}

func (r *oneAfterEmpties) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	if r.k++; r.k%100 != 0 {
		return 0, nil
	}
	p[0] = r.data[0]
	r.data = r.data[1:]
	return 1, nil
}
