package loadgen

import (
	"bytes"
	"strconv"

	"github.com/rpcedge/rpcedge/decode"
)

// Class is the kind of a wrong answer. Each wrong answer is counted in
// exactly one class: the first of these checks, in this order, that fails.
type Class uint8

// The classes of wrong answers, in the order they are checked.
const (
	// ClassOK is a right answer.
	ClassOK Class = iota
	// ClassTransport: no complete HTTP answer — connection refused, reset
	// or closed early, timeout, or bytes that are not HTTP/1.1.
	ClassTransport
	// ClassStatus: the HTTP status is not the one the request must get.
	ClassStatus
	// ClassHeader: a JSON answer without Content-Type application/json, a
	// 202 with a Content-Type, Content-Type on more than one line,
	// Transfer-Encoding beside Content-Length, or a Content-Encoding
	// loadgen did not ask for (on any of its lines).
	ClassHeader
	// ClassBody: a body that is not one JSON-RPC 2.0 answer object (not
	// JSON, jsonrpc not "2.0", neither or both of result and error, a
	// method member, an error without an integer code and a string
	// message, a duplicate member), or a 202 with a body.
	ClassBody
	// ClassID: the answer's id is missing, or not the request's id byte
	// for byte (or not null where the contract wants null).
	ClassID
	// ClassCode: an error where a result was due, a result where an error
	// was due, or the wrong error code.
	ClassCode
	// ClassResult: a result, but not the right one (echo's text differs,
	// or its content is not [{"type":"text","text":…}]).
	ClassResult

	numClasses = iota
)

var classNames = [numClasses]string{"ok", "transport", "status", "header", "body", "id", "code", "result"}

// String returns the class's name as the report spells it.
func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "class(" + strconv.Itoa(int(c)) + ")"
}

// verdict is the outcome of checking one answer. It is built without
// allocating; detail formats it only when a wrong answer is kept.
type verdict struct {
	class     Class
	why       string // a constant phrase
	want, got int64  // numbers behind why, when hasNums
	hasNums   bool
	events    int // notifications a streamed answer carried before its response
}

func wrong(c Class, why string) verdict { return verdict{class: c, why: why} }

func wrongNums(c Class, why string, want, got int64) verdict {
	return verdict{class: c, why: why, want: want, got: got, hasNums: true}
}

func (v verdict) detail() string {
	if !v.hasNums {
		return v.why
	}
	return v.why + ": want " + strconv.FormatInt(v.want, 10) + ", got " + strconv.FormatInt(v.got, 10)
}

// isJSONType reports whether a Content-Type value is application/json,
// parameters such as charset allowed.
func isJSONType(v []byte) bool {
	i := 0
	for i < len(v) && v[i] != ';' {
		i++
	}
	return equalFold(trimOWS(v[:i]), "application/json")
}

// check judges a complete answer against what its request must get.
func check(e *expectation, r *response, v2026 bool) verdict {
	if r.status != e.status {
		return wrongNums(ClassStatus, "wrong HTTP status", int64(e.status), int64(r.status))
	}
	if r.ctypeN > 1 {
		// One value, so one line: with two, which one counts depends on
		// the reader (contract, "Header fields, trailers and repeated
		// lines").
		return wrong(ClassHeader, "Content-Type on more than one line")
	}
	if r.teAndLength {
		return wrong(ClassHeader, "Transfer-Encoding and Content-Length together (RFC 9112 §6.1)")
	}
	if r.cenc != nil && !equalFold(r.cenc, "identity") {
		return wrong(ClassHeader, "Content-Encoding on an answer to a request without Accept-Encoding")
	}
	if e.status == 202 {
		if r.hasCType {
			return wrong(ClassHeader, "202 with a Content-Type header")
		}
		if len(r.body) != 0 {
			return wrongNums(ClassBody, "202 with a body (bytes)", 0, int64(len(r.body)))
		}
		return verdict{}
	}
	if e.events > 0 && e.a2a {
		return checkA2AStream(e, r)
	}
	if e.events > 0 {
		return checkStream(e, r, v2026)
	}
	if !r.hasCType || !isJSONType(r.ctype) {
		return wrong(ClassHeader, "Content-Type is not application/json")
	}
	return checkAnswer(e, r.body, v2026)
}

// checkAnswer checks b, the JSON-RPC answer to the request e describes.
// b is validated whole, strictly (decode.Valid: RFC 8259, UTF-8), once,
// and refused when any of its objects holds a name twice; the walks over
// it and its members after that are decode's, which trust it.
func checkAnswer(e *expectation, b []byte, v2026 bool) verdict {
	if e.code == 0 && e.echo && !e.idNull && !v2026 && canonicalEcho(b, e.idBytes(), e.textBytes()) {
		return verdict{}
	}
	if i := skipWS(b, 0); i >= len(b) || b[i] != '{' {
		return wrong(ClassBody, "body is not a JSON object")
	}
	if !decode.Valid(b) {
		return wrong(ClassBody, "body is not valid JSON")
	}
	// A name twice in any object of the answer, at any depth (names
	// compared after unescaping): a reader that keeps the last one sees
	// another answer than one that keeps the first, so the answer has no
	// single meaning to check.
	if decode.HasDuplicateNameDeep(b) {
		return wrong(ClassBody, "a member name appears twice in one object of the answer")
	}
	var jsonrpc, id, result, errv []byte
	var haveJSONRPC, haveID, haveResult, haveError bool
	var it decode.Members
	for it.Reset(b); it.Next(); {
		val := it.Value()
		switch {
		case it.NameIs("jsonrpc"):
			haveJSONRPC, jsonrpc = true, val
		case it.NameIs("id"):
			haveID, id = true, val
		case it.NameIs("result"):
			haveResult, result = true, val
		case it.NameIs("error"):
			haveError, errv = true, val
		case it.NameIs("method"):
			// A message with a method is a request or a notification,
			// whatever else it holds (contract, "Names, values, and
			// the rest").
			return wrong(ClassBody, "the answer has a method: it is a request or notification, not a response")
		}
	}
	if !haveJSONRPC || !decode.StringIs(jsonrpc, "2.0") {
		return wrong(ClassBody, `jsonrpc is missing or not "2.0"`)
	}
	if haveResult == haveError {
		return wrong(ClassBody, "an answer needs exactly one of result and error")
	}
	if !haveID {
		return wrong(ClassID, "no id in the answer")
	}
	if e.idNull {
		if string(id) != "null" {
			return wrong(ClassID, "id should be null")
		}
	} else if !idEqual(id, e.idBytes()) {
		return wrong(ClassID, "id is not the request's id")
	}

	if e.code == 0 {
		if haveError {
			code, _ := errorCode(errv)
			return wrongNums(ClassCode, "an error instead of a result (code)", 0, code)
		}
		if e.echo {
			return checkEcho(result, e.textBytes(), v2026)
		}
		return verdict{}
	}
	if haveResult {
		return wrongNums(ClassCode, "a result instead of an error (code)", int64(e.code), 0)
	}
	code, why := errorCode(errv)
	if why != "" {
		return wrong(ClassBody, why)
	}
	if code != int64(e.code) {
		return wrongNums(ClassCode, "wrong error code", int64(e.code), code)
	}
	return verdict{}
}

// checkStream checks a streamed answer (Config.Events): 200
// text/event-stream whose events are e.events notifications, then the
// answer to the request, checked as a plain answer would be, and no event
// with data after it. Comments (keep-alives) and fields other than data
// are not events; a data field split over several lines is joined, in
// place, as SSE joins it.
func checkStream(e *expectation, r *response, v2026 bool) verdict {
	if !r.hasCType || !isEventStream(r.ctype) {
		return wrong(ClassHeader, "Content-Type is not text/event-stream")
	}
	b := r.body
	n := 0
	for i := 0; i < len(b); {
		data, next, ok := nextEvent(b, i)
		if !ok {
			return wrong(ClassBody, "malformed server-sent event")
		}
		i = next
		if data == nil {
			continue // a comment or an event without data
		}
		if n < e.events {
			if why := checkNotification(data); why != "" {
				return wrong(ClassBody, why)
			}
			n++
			continue
		}
		if moreEvents(b, i) {
			return wrong(ClassBody, "events after the response")
		}
		v := checkAnswer(e, data, v2026)
		v.events = n
		return v
	}
	if n < e.events {
		return wrongNums(ClassBody, "the stream ended early (notifications)", int64(e.events), int64(n))
	}
	return wrong(ClassBody, "the stream ended without the response")
}

// moreEvents reports whether the stream b holds an event with data at or
// after b[i], finished or not.
func moreEvents(b []byte, i int) bool {
	for i < len(b) {
		data, next, ok := nextEvent(b, i)
		if !ok || data != nil {
			return true
		}
		i = next
	}
	return false
}

func isEventStream(v []byte) bool {
	v = trimOWS(v)
	if i := bytes.IndexByte(v, ';'); i >= 0 {
		v = trimOWS(v[:i])
	}
	return equalFold(v, "text/event-stream")
}

// nextLine returns the line that starts at b[i], without its end, and
// where the next line starts. A line ends in CR, LF or CRLF, as the SSE
// spec's grammar has it; ok is false when b ends before the line does.
func nextLine(b []byte, i int) (line []byte, next int, ok bool) {
	rest := b[i:]
	end := bytes.IndexByte(rest, '\n')
	scan := rest
	if end >= 0 {
		scan = rest[:end]
	}
	if cr := bytes.IndexByte(scan, '\r'); cr >= 0 {
		next = i + cr + 1
		if next < len(b) && b[next] == '\n' {
			next++
		}
		return rest[:cr], next, true
	}
	if end < 0 {
		return nil, 0, false
	}
	return rest[:end], i + end + 1, true
}

var dataField = []byte("data")

// nextEvent reads the event that starts at b[i]: its data (nil when it
// has none, or only an empty data buffer, which SSE does not dispatch),
// where the next one starts, and whether it is well formed. An event
// ends with a blank line; at the end of b an unfinished event is dropped,
// as SSE drops it, which is well formed only when it had no data (a
// trailing comment). Each data field's value (the rest of the line after
// "data:" and one space, or nothing for a line "data" alone) is joined to
// the ones before it with "\n", in place.
func nextEvent(b []byte, i int) (data []byte, next int, ok bool) {
	w := -1 // where the joined data ends, -1 before the first data field
	start := -1
	for i < len(b) {
		line, after, complete := nextLine(b, i)
		if !complete {
			break
		}
		i = after
		if len(line) == 0 {
			if w <= start {
				return nil, i, true
			}
			return b[start:w], i, true
		}
		if line[0] == ':' {
			continue // a comment
		}
		name, v := line, line[len(line):]
		if c := bytes.IndexByte(line, ':'); c >= 0 {
			name, v = line[:c], line[c+1:]
			if len(v) > 0 && v[0] == ' ' {
				v = v[1:]
			}
		}
		if !bytes.Equal(name, dataField) {
			continue // event:, id:, retry: and unknown fields
		}
		if start < 0 {
			start = uintptrDiff(b, v)
			w = start + len(v)
		} else {
			b[w] = '\n'
			w++
			w += copy(b[w:], v)
		}
	}
	// The end of b, inside an event.
	return nil, len(b), start < 0
}

// uintptrDiff returns the offset of sub, a subslice of b, within b.
func uintptrDiff(b, sub []byte) int {
	return cap(b) - cap(sub)
}

// checkNotification checks one notification of a stream: a JSON object
// with jsonrpc "2.0", a string method and neither id, result nor error.
func checkNotification(b []byte) string {
	if i := skipWS(b, 0); i >= len(b) || b[i] != '{' {
		return "a streamed notification is not a JSON object"
	}
	if !decode.Valid(b) {
		return "a streamed notification is not valid JSON"
	}
	if decode.HasDuplicateNameDeep(b) {
		return "a member name appears twice in one object of a streamed notification"
	}
	var haveJSONRPC, haveMethod bool
	var it decode.Members
	for it.Reset(b); it.Next(); {
		val := it.Value()
		switch {
		case it.NameIs("jsonrpc"):
			haveJSONRPC = decode.StringIs(val, "2.0")
		case it.NameIs("method"):
			haveMethod = val[0] == '"'
		case it.NameIs("id"), it.NameIs("result"), it.NameIs("error"):
			return "a streamed event before the response is not a notification"
		}
	}
	if !haveJSONRPC || !haveMethod {
		return "a streamed notification lacks jsonrpc \"2.0\" or a method"
	}
	return ""
}

// idEqual compares an answer's id with the one sent, byte for byte: the
// contract echoes the request's id bytes verbatim ("The id in answers"),
// so the same string spelled with other escapes is another id.
func idEqual(got, sent []byte) bool {
	return string(got) == string(sent)
}

// errorCode returns the code of an error object (a validated value), or
// why it is malformed.
func errorCode(v []byte) (int64, string) {
	if len(v) == 0 || v[0] != '{' {
		return 0, "error is not an object"
	}
	var code int64
	haveCode, haveMsg := false, false
	var it decode.Members
	for it.Reset(v); it.Next(); {
		val := it.Value()
		switch {
		case it.NameIs("code"):
			n, ok := parseIntLiteral(val)
			if !ok || haveCode {
				return 0, "error.code is not one integer"
			}
			code, haveCode = n, true
		case it.NameIs("message"):
			if val[0] != '"' || haveMsg {
				return 0, "error.message is not one string"
			}
			haveMsg = true
		}
	}
	if !haveCode {
		return 0, "error has no code"
	}
	if !haveMsg {
		return code, "error has no message"
	}
	return code, ""
}

// canonicalEcho reports whether b is, byte for byte, the answer a server
// that echoes the text as it was sent writes in the usual member order:
// {"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":T}]}}
// with ID and T the bytes loadgen sent. Every byte of such an answer is
// either fixed here or loadgen's own, valid and without a repeated name,
// so it needs no walk; any other spelling (space, another order, the text
// escaped otherwise, more members) gets the full check.
func canonicalEcho(b, id, text []byte) bool {
	const head, mid, tail = `{"jsonrpc":"2.0","id":`, `,"result":{"content":[{"type":"text","text":`, `}]}}`
	n := len(head) + len(id) + len(mid) + len(text) + len(tail)
	if len(b) != n || len(id) == 0 || len(text) == 0 {
		return false
	}
	i := len(head)
	j := i + len(id)
	k := j + len(mid)
	l := k + len(text)
	return string(b[:i]) == head && string(b[i:j]) == string(id) && string(b[j:k]) == mid &&
		string(b[k:l]) == string(text) && string(b[l:]) == tail
}

// checkEcho checks echo's result: {"content":[{"type":"text","text":T}]}
// with T the text sent; isError, when present, false; under MCP
// 2026-07-28 resultType "complete". Other members are allowed.
func checkEcho(result, text []byte, v2026 bool) verdict {
	if len(result) == 0 || result[0] != '{' {
		return wrong(ClassResult, "result is not an object")
	}
	var content []byte
	haveContent, complete := false, false
	var it decode.Members
	for it.Reset(result); it.Next(); {
		val := it.Value()
		switch {
		case it.NameIs("content"):
			content, haveContent = val, true
		case it.NameIs("isError"):
			if string(val) != "false" {
				return wrong(ClassResult, "isError is set")
			}
		case it.NameIs("resultType"):
			complete = decode.StringIs(val, "complete")
		}
	}
	if !haveContent || content[0] != '[' {
		return wrong(ClassResult, "result.content is not an array")
	}
	if v2026 && !complete {
		return wrong(ClassResult, `result.resultType is not "complete"`)
	}
	i := skipWS(content, 1)
	if content[i] != '{' {
		return wrong(ClassResult, "result.content[0] is not an object")
	}
	end := decode.SkipValue(content, i)
	typeText, textOK := false, false
	for it.Reset(content[i:end]); it.Next(); {
		val := it.Value()
		switch {
		case it.NameIs("type"):
			typeText = decode.StringIs(val, "text")
		case it.NameIs("text"):
			textOK = decode.StringsEqual(val, text)
		}
	}
	if !typeText {
		return wrong(ClassResult, `result.content[0].type is not "text"`)
	}
	if !textOK {
		return wrong(ClassResult, "result.content[0].text is not the text sent")
	}
	if content[skipWS(content, end)] != ']' {
		return wrong(ClassResult, "result.content has more than one item")
	}
	return verdict{}
}

// checkA2AStream checks an A2A stream (Config.A2A): 200 text/event-stream
// whose e.events events are each a JSON-RPC response to the request with a
// result (checked as a call's answer), the results A2A stream responses in
// the order the spec asks: a task first (or a direct message, alone), then
// status and artifact updates naming the task, the last a status update
// that ends the stream; nothing after it.
func checkA2AStream(e *expectation, r *response) verdict {
	if !r.hasCType || !isEventStream(r.ctype) {
		return wrong(ClassHeader, "Content-Type is not text/event-stream")
	}
	b := r.body
	n := 0
	var taskID []byte
	for i := 0; i < len(b); {
		data, next, ok := nextEvent(b, i)
		if !ok {
			return wrong(ClassBody, "malformed server-sent event")
		}
		i = next
		if data == nil {
			continue
		}
		if n == e.events {
			return wrong(ClassBody, "events after the last one")
		}
		if v := checkAnswer(e, data, false); v.class != ClassOK {
			return v
		}
		result, _ := memberOf(data, "result")
		id, why := checkA2AEvent(result, n, n == e.events-1, taskID)
		if why != "" {
			return wrong(ClassResult, why)
		}
		if n == 0 {
			taskID = id
		}
		n++
	}
	if n < e.events {
		return wrongNums(ClassBody, "the A2A stream ended early (events)", int64(e.events), int64(n))
	}
	return verdict{events: n}
}

// memberOf returns the value of the first member named name of the
// object b, a validated value (anything else has none).
func memberOf(b []byte, name string) ([]byte, bool) {
	var it decode.Members
	for it.Reset(b); it.Next(); {
		if it.NameIs(name) {
			return it.Value(), true
		}
	}
	return nil, false
}

// a2aKinds10 are the members an A2A 1.0 StreamResponse holds one of.
var a2aKinds10 = []string{"task", "message", "statusUpdate", "artifactUpdate"}

// a2aEndStates are the states after which an A2A stream ends, in both
// wire versions' spellings.
var a2aEndStates = []string{
	"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED", "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED",
	"completed", "failed", "canceled", "rejected", "input-required", "auth-required",
}

// checkA2AEvent checks the result of event number i of an A2A stream (last
// when it is the last one). The first event returns the task's id; the
// others must carry it as taskId. It returns why the event is wrong, or "".
func checkA2AEvent(res []byte, i int, last bool, taskID []byte) (id []byte, why string) {
	if len(res) == 0 || res[0] != '{' {
		return nil, "an A2A stream result is not an object"
	}
	// 1.0: one member naming the kind (kind10); 0.3: the object with
	// "kind" (kind, the raw value).
	var kind, body []byte
	var kind10 string
	var kind03 bool
	members := 0
	var it decode.Members
	for it.Reset(res); it.Next(); {
		members++
		if it.NameIs("kind") {
			kind, body, kind03 = it.Value(), res, true
			continue
		}
		if kind03 {
			continue
		}
		for _, k := range a2aKinds10 {
			if it.NameIs(k) {
				kind10, body = k, it.Value()
				break
			}
		}
	}
	if kind03 && kind[0] != '"' {
		return nil, "a 0.3 A2A stream event's kind is not a string"
	}
	if !kind03 && (kind10 == "" || members != 1) {
		return nil, "an A2A stream result is neither a 1.0 StreamResponse nor a 0.3 kind-tagged event"
	}
	is := func(k10, k03 string) bool {
		if kind03 {
			return decode.StringIs(kind, k03)
		}
		return kind10 == k10
	}
	state := func() []byte { // status.state when it is a string (raw), else nil
		st, _ := memberOf(body, "status")
		if s, _ := memberOf(st, "state"); len(s) > 0 && s[0] == '"' {
			return s
		}
		return nil
	}
	ends := func() bool {
		s := state()
		for _, e := range a2aEndStates {
			if decode.StringIs(s, e) {
				return true
			}
		}
		return false
	}
	switch {
	case i == 0 && is("message", "message"):
		if !last {
			return nil, "an A2A stream that starts with a message must end with it"
		}
		return nil, ""
	case i == 0 && is("task", "task"):
		id, _ = memberOf(body, "id")
		if len(id) < 3 || id[0] != '"' || state() == nil {
			return nil, "the first task of an A2A stream lacks an id or a status"
		}
		if last && !ends() {
			return nil, "an A2A stream of one task ended with the task in progress"
		}
		return id, ""
	case i == 0:
		return nil, "an A2A stream does not start with a task or a message"
	case is("statusUpdate", "status-update"), is("artifactUpdate", "artifact-update"):
		// A task id is a value of the result, not the JSON-RPC id: any
		// JSON spelling of the same string names the same task.
		tid, _ := memberOf(body, "taskId")
		if !decode.StringsEqual(tid, taskID) {
			return nil, "an A2A stream event names another task"
		}
		status := is("statusUpdate", "status-update")
		if status && state() == nil || !status && !hasMember(body, "artifact") {
			return nil, "an A2A update event lacks its status or artifact"
		}
		final, _ := memberOf(body, "final")
		switch {
		case last && (!status || !ends()):
			return nil, "an A2A stream ended without a final status"
		case !last && status && ends():
			return nil, "an A2A stream went on after a final status"
		case kind03 && status && (string(final) == "true") != last:
			return nil, "a 0.3 status-update's final flag is not true on the last event alone"
		}
		return nil, ""
	}
	return nil, "an A2A stream event after the first is not a status or artifact update"
}

func hasMember(b []byte, name string) bool {
	_, ok := memberOf(b, name)
	return ok
}

// isWS reports whether c is JSON whitespace.
func isWS(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// skipWS returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipWS(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

// parseIntLiteral reports whether v is a JSON number without fraction or
// exponent, and returns its value when it fits in an int64 (18 digits at
// most).
func parseIntLiteral(v []byte) (int64, bool) {
	if len(v) > 0 && v[0] == '-' {
		n, ok := parseDigits(v[1:], 18)
		return -n, ok
	}
	return parseDigits(v, 18)
}
