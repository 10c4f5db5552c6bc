package loadgen

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func expect(s Shape, id, text string) *expectation {
	ex := expectByShape[s]
	e := &expectation{shape: s, status: ex.status, code: ex.code, idNull: ex.idNull, echo: ex.echo}
	e.idLen = uint8(copy(e.id[:], id))
	e.text = []byte(`"` + text + `"`) // as the JSON string it was sent as
	return e
}

func answer(status int, headers, body string) string {
	return "HTTP/1.1 " + strconv.Itoa(status) + " X\r\n" + headers + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

const jsonCT = "Content-Type: application/json\r\n"

func TestCheck(t *testing.T) {
	echoOK := `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hi caf\u00e9"}]}}`
	for _, tc := range []struct {
		name  string
		exp   *expectation
		resp  string
		v2026 bool
		want  Class
	}{
		{"call ok", expect(ShapeCall, "42", "hi café"), answer(200, jsonCT, echoOK), false, ClassOK},
		{"call ok, other spelling and members", expect(ShapeCall, "42", `hi caf\u00e9`),
			answer(200, "Content-Type: application/json; charset=utf-8\r\n", ` {"result":{"isError":false,"content":[ {"text":"hi café","type":"text"} ],"x":1},"id":42,"jsonrpc":"2\u002e0"} `), false, ClassOK},
		{"call string id", expect(ShapeCall, `"lg-1"`, "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":"lg-1","result":{"content":[{"type":"text","text":"t"}]}}`), false, ClassOK},
		{"call 2026 ok", expect(ShapeCall, "1", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[{"type":"text","text":"t"}]}}`), true, ClassOK},
		{"call 2026 no resultType", expect(ShapeCall, "1", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"t"}]}}`), true, ClassResult},
		{"wrong status", expect(ShapeCall, "42", "hi café"), answer(500, jsonCT, echoOK), false, ClassStatus},
		{"no content type", expect(ShapeCall, "42", "hi café"), answer(200, "", echoOK), false, ClassHeader},
		{"text/plain", expect(ShapeCall, "42", "hi café"), answer(200, "Content-Type: text/plain\r\n", echoOK), false, ClassHeader},
		{"gzip", expect(ShapeCall, "42", "hi café"), answer(200, jsonCT+"Content-Encoding: gzip\r\n", echoOK), false, ClassHeader},
		// A field of one value given twice is wrong even when the lines
		// agree (the last one would win); framing by Transfer-Encoding
		// and Content-Length at once is forbidden (RFC 9112 §6.1).
		{"two Content-Type lines", expect(ShapeCall, "42", "hi café"), answer(200, "Content-Type: text/html\r\n"+jsonCT, echoOK), false, ClassHeader},
		{"two equal Content-Type lines", expect(ShapeCall, "42", "hi café"), answer(200, jsonCT+jsonCT, echoOK), false, ClassHeader},
		{"two Content-Type lines on a 202", expect(ShapeNotify, "", ""), "HTTP/1.1 202 Accepted\r\n" + jsonCT + jsonCT + "Content-Length: 0\r\n\r\n", false, ClassHeader},
		{"Transfer-Encoding and Content-Length", expect(ShapeCall, "42", "hi café"),
			"HTTP/1.1 200 OK\r\n" + jsonCT + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(echoOK)), 16) + "\r\n" + echoOK + "\r\n0\r\n\r\n", false, ClassHeader},
		{"gzip, then identity", expect(ShapeCall, "42", "hi café"), answer(200, jsonCT+"Content-Encoding: gzip\r\nContent-Encoding: identity\r\n", echoOK), false, ClassHeader},
		{"identity", expect(ShapeCall, "42", "hi café"), answer(200, jsonCT+"Content-Encoding: identity\r\n", echoOK), false, ClassOK},
		{"not json", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0",`), false, ClassBody},
		{"trailing bytes", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{}} x`), false, ClassBody},
		{"array", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `[]`), false, ClassBody},
		{"no jsonrpc", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"id":42,"result":{}}`), false, ClassBody},
		{"jsonrpc 1.0", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"1.0","id":42,"result":{}}`), false, ClassBody},
		{"duplicate id", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"id":42,"result":{}}`), false, ClassBody},
		// A member twice at any depth: a reader that keeps the last one
		// sees another answer than one that keeps the first.
		{"text twice in a content item", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"u","text":"t"}]}}`), false, ClassBody},
		{"type twice in a content item", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"image","text":"t","type":"text"}]}}`), false, ClassBody},
		{"content twice in the result", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{"content":[],"content":[{"type":"text","text":"t"}]}}`), false, ClassBody},
		{"isError twice, escaped", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{"isError":true,"is\u0045rror":false,"content":[{"type":"text","text":"t"}]}}`), false, ClassBody},
		{"a member twice in error.data", expect(ShapeUnknown, "9", ""), answer(404, jsonCT, `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no","data":[{"a":1,"a":2}]}}`), false, ClassBody},
		{"an unknown member twice", expect(ShapeCustom, "7", ""), answer(200, jsonCT, `{"jsonrpc":"2.0","id":7,"x":1,"x":2,"result":{}}`), false, ClassBody},
		{"same name in two objects", expect(ShapeCustom, "7", ""), answer(200, jsonCT, `{"jsonrpc":"2.0","id":7,"result":{"a":{"b":1},"c":{"b":1}}}`), false, ClassOK},
		// A message with a method is a request or a notification
		// (contract, "Names, values, and the rest"), whatever else it holds.
		{"method beside result", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"method":"sampling/createMessage","result":{"content":[{"type":"text","text":"t"}]}}`), false, ClassBody},
		{"method beside error", expect(ShapeUnknown, "9", ""), answer(404, jsonCT, `{"jsonrpc":"2.0","id":9,"method":"x","error":{"code":-32601,"message":"no"}}`), false, ClassBody},
		{"method null", expect(ShapeCustom, "7", ""), answer(200, jsonCT, `{"jsonrpc":"2.0","id":7,"method":null,"result":{}}`), false, ClassBody},
		{"result and error", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{},"error":{"code":1,"message":""}}`), false, ClassBody},
		{"neither", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42}`), false, ClassBody},
		{"wrong id", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":43,"result":{}}`), false, ClassID},
		{"id as string", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":"42","result":{}}`), false, ClassID},
		{"id re-encoded", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42.0,"result":{}}`), false, ClassID},
		// The contract echoes the id's bytes verbatim: the same string
		// spelled with an escape is another id.
		{"string id re-spelled", expect(ShapeCall, `"lg-1"`, "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":"\u006cg-1","result":{"content":[{"type":"text","text":"t"}]}}`), false, ClassID},
		{"string id escaped slash", expect(ShapeCustom, `"a/b"`, ""), answer(200, jsonCT, `{"jsonrpc":"2.0","id":"a\/b","result":{}}`), false, ClassID},
		{"no id", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","result":{}}`), false, ClassID},
		{"error for call", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"error":{"code":-32602,"message":"x"}}`), false, ClassCode},
		{"echo wrong text", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"u"}]}}`), false, ClassResult},
		{"echo two items", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"t"},{}]}}`), false, ClassResult},
		{"echo isError", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{"isError":true,"content":[{"type":"text","text":"t"}]}}`), false, ClassResult},
		{"echo wrong type", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"image","text":"t"}]}}`), false, ClassResult},
		{"echo no content", expect(ShapeCall, "42", "t"), answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{}}`), false, ClassResult},
		{"custom any result", expect(ShapeCustom, "7", ""), answer(200, jsonCT, `{"jsonrpc":"2.0","id":7,"result":null}`), false, ClassOK},

		{"notify ok", expect(ShapeNotify, "", ""), "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", false, ClassOK},
		{"notify ok, no length", expect(ShapeNotify, "", ""), "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n", false, ClassOK},
		{"notify body", expect(ShapeNotify, "", ""), answer(202, "", `{}`), false, ClassBody},
		{"notify content type", expect(ShapeNotify, "", ""), answer(202, jsonCT, ``), false, ClassHeader},
		{"notify 200", expect(ShapeNotify, "", ""), answer(200, jsonCT, `{}`), false, ClassStatus},

		{"unknown ok", expect(ShapeUnknown, "9", ""), answer(404, jsonCT, `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"no","data":[1]}}`), false, ClassOK},
		{"unknown wrong code", expect(ShapeUnknown, "9", ""), answer(404, jsonCT, `{"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"no"}}`), false, ClassCode},
		{"unknown result", expect(ShapeUnknown, "9", ""), answer(404, jsonCT, `{"jsonrpc":"2.0","id":9,"result":{}}`), false, ClassCode},
		{"unknown no message", expect(ShapeUnknown, "9", ""), answer(404, jsonCT, `{"jsonrpc":"2.0","id":9,"error":{"code":-32601}}`), false, ClassBody},
		{"unknown code float", expect(ShapeUnknown, "9", ""), answer(404, jsonCT, `{"jsonrpc":"2.0","id":9,"error":{"code":-32601.0,"message":""}}`), false, ClassBody},
		{"unknown error not object", expect(ShapeUnknown, "9", ""), answer(404, jsonCT, `{"jsonrpc":"2.0","id":9,"error":"x"}`), false, ClassBody},
		{"badparams ok", expect(ShapeBadParams, "9", ""), answer(200, jsonCT, `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":""}}`), false, ClassOK},
		{"parse ok", expect(ShapeParse, "5", ""), answer(400, jsonCT, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":""}}`), false, ClassOK},
		{"parse id echoed", expect(ShapeParse, "5", ""), answer(400, jsonCT, `{"jsonrpc":"2.0","id":5,"error":{"code":-32700,"message":""}}`), false, ClassID},
		{"parse 200", expect(ShapeParse, "5", ""), answer(200, jsonCT, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":""}}`), false, ClassStatus},
		{"batch ok", expect(ShapeBatch, "5", ""), answer(400, jsonCT, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":""}}`), false, ClassOK},
		{"batch as parse error", expect(ShapeBatch, "5", ""), answer(400, jsonCT, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":""}}`), false, ClassCode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r response
			done, err := r.parse([]byte(tc.resp), false)
			if !done || err != nil {
				t.Fatalf("parse: %v %v", done, err)
			}
			v := check(tc.exp, &r, tc.v2026)
			if v.class != tc.want {
				t.Errorf("class %v (%s), want %v", v.class, v.detail(), tc.want)
			}
			if (v.class == ClassOK) != (v.why == "") {
				t.Errorf("verdict %+v", v)
			}
		})
	}
}

func TestCheckStream(t *testing.T) {
	const sseCT = "Content-Type: text/event-stream\r\n"
	note := `data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}` + "\n\n"
	final := `data: {"jsonrpc":"2.0","id":7,"result":{"content":[]}}` + "\n\n"
	streamed := func(n int) *expectation {
		e := expect(ShapeCustom, "7", "")
		e.events = n
		return e
	}
	for _, tc := range []struct {
		name   string
		exp    *expectation
		resp   string
		want   Class
		events int
	}{
		{"two events", streamed(2), answer(200, sseCT, note+note+final), ClassOK, 2},
		{"comments and CRLF", streamed(1), answer(200, sseCT+"", ": keep-alive\n\n"+strings.ReplaceAll(note, "\n", "\r\n")+": x\n\n"+final), ClassOK, 1},
		{"data split over lines", streamed(1), answer(200, sseCT, "data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"x\"}\n\n"+final), ClassOK, 1},
		{"event field", streamed(1), answer(200, sseCT, "event: message\n"+note+final), ClassOK, 1},
		{"too few", streamed(3), answer(200, sseCT, note+note+final), ClassBody, 0},
		{"too many", streamed(1), answer(200, sseCT, note+note+final), ClassBody, 0},
		{"no response", streamed(2), answer(200, sseCT, note+note), ClassBody, 0},
		{"after the response", streamed(1), answer(200, sseCT, note+final+note), ClassBody, 0},
		{"unterminated", streamed(1), answer(200, sseCT, note+strings.TrimSuffix(final, "\n")), ClassBody, 0},
		// Lines end in CR, LF or CRLF (the SSE spec's grammar).
		{"CR line ends", streamed(2), answer(200, sseCT, strings.ReplaceAll("event: message\n"+note+note+final, "\n", "\r")), ClassOK, 2},
		{"CRLF line ends", streamed(2), answer(200, sseCT, strings.ReplaceAll(note+": c\n\n"+note+final, "\n", "\r\n")), ClassOK, 2},
		{"line ends mixed", streamed(1), answer(200, sseCT, strings.TrimSuffix(note, "\n\n")+"\r\r\n"+strings.ReplaceAll(final, "\n", "\r")), ClassOK, 1},
		{"data split over CR lines", streamed(1), answer(200, sseCT, "data: {\"jsonrpc\":\"2.0\",\rdata: \"method\":\"x\"}\r\r"+final), ClassOK, 1},
		// Comments, and fields without data, are not events, after the
		// response as before it; an event left unfinished at the end
		// is dropped, so one of comments only costs nothing.
		{"a comment after the response", streamed(1), answer(200, sseCT, note+final+": bye\n\n"), ClassOK, 1},
		{"a comment after the response, CR", streamed(1), answer(200, sseCT, strings.ReplaceAll(note+final+": bye\n\n", "\n", "\r")), ClassOK, 1},
		{"an unfinished comment after the response", streamed(1), answer(200, sseCT, note+final+": bye\n"), ClassOK, 1},
		{"an id field after the response", streamed(1), answer(200, sseCT, note+final+"id: 7\n\n"), ClassOK, 1},
		{"data after a comment after the response", streamed(1), answer(200, sseCT, note+final+": bye\n\n"+note), ClassBody, 0},
		{"unfinished data after the response", streamed(1), answer(200, sseCT, note+final+"data: {}\n"), ClassBody, 0},
		// A line "data" without a colon is a data field, empty: a line
		// of its own in the event's data.
		{"a bare data line", streamed(1), answer(200, sseCT, "data\n"+note+final), ClassOK, 1},
		{"only a bare data line", streamed(1), answer(200, sseCT, "data\n\n"+note+final), ClassOK, 1},       // empty data: no event
		{"two bare data lines", streamed(1), answer(200, sseCT, "data\ndata\n\n"+note+final), ClassBody, 0}, // data "\n": an event, not JSON
		{"data: then a bare data line", streamed(1), answer(200, sseCT, "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\ndata\n\n"+final), ClassOK, 1},
		{"datax is another field", streamed(1), answer(200, sseCT, "datax: 1\n"+note+final), ClassOK, 1},
		{"a notification with a member twice", streamed(1), answer(200, sseCT, `data: {"jsonrpc":"2.0","method":"x","params":{"p":1,"p":2}}`+"\n\n"+final), ClassBody, 0},
		{"a request before the response", streamed(1), answer(200, sseCT, `data: {"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage"}`+"\n\n"+final), ClassBody, 0},
		{"notification not JSON", streamed(1), answer(200, sseCT, "data: {\"jsonrpc\":\n\n"+final), ClassBody, 0},
		{"plain JSON where a stream is due", streamed(1), answer(200, jsonCT, `{"jsonrpc":"2.0","id":7,"result":{}}`), ClassHeader, 0},
		{"wrong id in the response", streamed(1), answer(200, sseCT, note+`data: {"jsonrpc":"2.0","id":8,"result":{}}`+"\n\n"), ClassID, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r response
			done, err := r.parse([]byte(tc.resp), false)
			if !done || err != nil {
				t.Fatalf("parse: %v %v", done, err)
			}
			v := check(tc.exp, &r, false)
			if v.class != tc.want || v.class == ClassOK && v.events != tc.events {
				t.Errorf("class %v (%s), %d events; want %v, %d", v.class, v.detail(), v.events, tc.want, tc.events)
			}
		})
	}
}

// A2A streams (Config.A2A): the order and shapes of the events.
func TestCheckA2AStream(t *testing.T) {
	sse := "Content-Type: text/event-stream\r\n"
	ev := func(result string) string {
		return "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":" + result + "}\n\n"
	}
	task10 := `{"task":{"id":"t1","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`
	art10 := `{"artifactUpdate":{"taskId":"t1","contextId":"c","artifact":{"artifactId":"a","parts":[{"text":"x"}]},"append":false,"lastChunk":true}}`
	done10 := `{"statusUpdate":{"taskId":"t1","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`
	work10 := `{"statusUpdate":{"taskId":"t1","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`
	task03 := `{"kind":"task","id":"t1","contextId":"c","status":{"state":"working"}}`
	done03 := `{"kind":"status-update","taskId":"t1","contextId":"c","status":{"state":"canceled"},"final":true}`
	work03 := `{"kind":"status-update","taskId":"t1","contextId":"c","status":{"state":"working"},"final":false}`
	for _, tc := range []struct {
		name   string
		events int
		body   string
		want   Class
	}{
		{"1.0 task, artifact, completed", 3, ev(task10) + ": keep-alive\n\n" + ev(art10) + ev(done10), ClassOK},
		{"0.3 task, working, canceled", 3, ev(task03) + ev(work03) + ev(done03), ClassOK},
		{"a message alone", 1, ev(`{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`), ClassOK},
		{"a finished task alone", 1, ev(`{"task":{"id":"t1","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`), ClassOK},
		{"a task in progress alone", 1, ev(task10), ClassResult},
		{"too few", 3, ev(task10) + ev(done10), ClassResult},              // the final status comes early
		{"too many", 2, ev(task10) + ev(art10) + ev(done10), ClassResult}, // the second event must be the final one
		{"cut short", 3, ev(task10) + ev(art10), ClassBody},
		{"not ended by a final status", 3, ev(task10) + ev(art10) + ev(work10), ClassResult},
		{"goes on after a final status", 3, ev(task10) + ev(done10) + ev(done10), ClassResult},
		{"an update first", 2, ev(work10) + ev(done10), ClassResult},
		{"another task", 2, ev(task10) + ev(strings.Replace(done10, `"t1"`, `"t2"`, 1)), ClassResult},
		{"0.3 final on a working status", 3, ev(task03) + ev(strings.Replace(work03, "false", "true", 1)) + ev(done03), ClassResult},
		{"0.3 no final on the last", 2, ev(task03) + ev(strings.Replace(done03, `,"final":true`, "", 1)), ClassResult},
		{"an error event", 2, ev(task10) + "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32603,\"message\":\"x\"}}\n\n", ClassCode},
		{"another id", 2, ev(task10) + strings.Replace(ev(done10), `"id":5`, `"id":6`, 1), ClassID},
		{"1.0 two kinds", 1, ev(`{"task":{"id":"t"},"message":{}}`), ClassResult},
		{"a message then more", 2, ev(`{"message":{"messageId":"m"}}`) + ev(done10), ClassResult},
		{"0.3 kind not a string", 1, ev(`{"kind":1,"id":"t1"}`), ClassResult}, // sliced as a string, it panicked
		// A state is a string: null (or a number) is no state.
		{"a task whose state is null", 1, ev(`{"task":{"id":"t1","contextId":"c","status":{"state":null}}}`), ClassResult},
		{"CR line ends and a comment after", 3, strings.ReplaceAll(ev(task10)+ev(art10)+ev(done10)+": bye\n\n", "\n", "\r"), ClassOK},
		{"an unfinished comment after", 1, ev(`{"message":{"messageId":"m"}}`) + ": bye\n", ClassOK},
		{"an update whose state is null", 3, ev(task10) + ev(strings.Replace(work10, `"TASK_STATE_WORKING"`, `null`, 1)) + ev(done10), ClassResult},
	} {
		e := expect(ShapeCustom, "5", "")
		e.events, e.a2a = tc.events, true
		var r response
		raw := []byte(answer(200, sse, tc.body))
		if done, err := r.parse(raw, true); !done || err != nil {
			t.Fatalf("%s: parse: %v %v", tc.name, done, err)
		}
		v := check(e, &r, false)
		if v.class != tc.want {
			t.Errorf("%s: %v (%s), want %v", tc.name, v.class, v.detail(), tc.want)
		}
		if v.class == ClassOK && v.events != tc.events {
			t.Errorf("%s: %d events counted", tc.name, v.events)
		}
	}
}

// TestCheckStrict: an answer is judged valid JSON by RFC 8259 and UTF-8
// (decode.Valid), wherever in it a value is wrong: each value is put
// into the result of an answer whose request accepts any result. Where
// encoding/json is strict too it must agree (it lets invalid UTF-8 and
// lone surrogates pass); nesting has no depth limit of loadgen's own.
func TestCheckStrict(t *testing.T) {
	deep := strings.Repeat("[", 300) + strings.Repeat("]", 300)
	for _, tc := range []struct {
		in     string
		ok     bool
		stdLax bool // encoding/json accepts it though RFC 8259 does not
	}{
		{`{}`, true, false},
		{`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"],"b":{}}`, true, false},
		{`"\ud83d\ude00"`, true, false},
		{`0`, true, false},
		{`-0.0e0`, true, false},
		{`[]`, true, false},
		{deep, true, false},
		{`{"a":1,}`, false, false},
		{`[1,]`, false, false},
		{`01`, false, false},
		{`1.`, false, false},
		{`1e`, false, false},
		{`-`, false, false},
		{`"\ud800"`, false, true},
		{`"\udc00\ud800"`, false, true},
		{`"\x"`, false, false},
		{"\"a\x01\"", false, false},
		{"\"\xff\"", false, true},
		{`tru`, false, false},
		{`nul`, false, false},
		{`{"a" 1}`, false, false},
		{`{1:2}`, false, false},
		{`"abc`, false, false},
		{``, false, false},
	} {
		body := `{"jsonrpc":"2.0","id":7,"result":` + tc.in + `}`
		want := ClassBody
		if tc.ok {
			want = ClassOK
		}
		var r response
		if done, err := r.parse([]byte(answer(200, jsonCT, body)), false); !done || err != nil {
			t.Fatalf("%.40q: parse: %v %v", tc.in, done, err)
		}
		if v := check(expect(ShapeCustom, "7", ""), &r, false); v.class != want {
			t.Errorf("result %.40q: %v (%s), want %v", tc.in, v.class, v.detail(), want)
		}
		if !tc.stdLax && tc.ok != json.Valid([]byte(tc.in)) {
			t.Errorf("%.40q: the case disagrees with encoding/json", tc.in)
		}
	}
}

// TestCanonicalEcho: the byte-for-byte path takes exactly the usual
// answer (the id and text as sent), and anything else goes to the full
// check, which still refuses what is wrong.
func TestCanonicalEcho(t *testing.T) {
	for _, text := range []string{"hi", "caf\u00e9 \\\"q\\\"", `\u00e9`} {
		e := expect(ShapeCall, `"lg-7"`, text)
		canon := `{"jsonrpc":"2.0","id":"lg-7","result":{"content":[{"type":"text","text":` + string(e.textBytes()) + `}]}}`
		if !canonicalEcho([]byte(canon), e.idBytes(), e.textBytes()) {
			t.Errorf("%s: the usual answer missed the byte-for-byte path", canon)
		}
		if v := checkAnswer(e, []byte(canon), false); v.class != ClassOK {
			t.Errorf("%s: %v", canon, v.why)
		}
		for _, bad := range []string{
			strings.Replace(canon, `"lg-7"`, `"lg-8"`, 1),
			strings.Replace(canon, `"text":"`, `"text":"x`, 1),
			strings.Replace(canon, `}]}}`, `}]},"method":"m"}`, 1),
			strings.Replace(canon, `{"type":"text",`, `{"type":"text","type":"text",`, 1),
			canon + " ",
			canon[:len(canon)-1],
		} {
			if canonicalEcho([]byte(bad), e.idBytes(), e.textBytes()) {
				t.Errorf("%s: taken by the byte-for-byte path", bad)
			}
		}
		if v := checkAnswer(e, []byte(strings.Replace(canon, `{"type":"text",`, `{"type":"text","type":"text",`, 1)), false); v.class != ClassBody {
			t.Errorf("a repeated name: %v, want a wrong body", v.class)
		}
	}
	e := expect(ShapeCall, "42", "hi")
	ans := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hi"}]}}`)
	if n := testing.AllocsPerRun(100, func() { checkAnswer(e, ans, false) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func BenchmarkCheckEchoAnswer(b *testing.B) {
	e := expect(ShapeCall, `"lg-123456"`, strings.Repeat("fixture text ", 13))
	canon := []byte(`{"jsonrpc":"2.0","id":"lg-123456","result":{"content":[{"type":"text","text":` + string(e.textBytes()) + `}]}}`)
	other := []byte(`{"jsonrpc":"2.0","id":"lg-123456","result":{"content":[{"text":` + string(e.textBytes()) + `,"type":"text"}]}}`)
	for name, ans := range map[string][]byte{"usual": canon, "other-order": other} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if v := checkAnswer(e, ans, false); v.class != ClassOK {
					b.Fatal(v.why)
				}
			}
		})
	}
}
