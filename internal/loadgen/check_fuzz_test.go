package loadgen

import (
	"testing"
)

// FuzzCheck: whatever a server answers, loadgen's response parser and
// checker give a verdict and never panic: bytes off the wire parsed as an
// HTTP answer (plain, chunked, server-sent events), then checked against
// each kind of request loadgen sends (MCP calls of both wire versions,
// the refusal shapes, streams of notifications, A2A streams). The
// verdict's class must be OK exactly when it gives no reason.
func FuzzCheck(f *testing.F) {
	const sse = "Content-Type: text/event-stream\r\n"
	for _, s := range []string{
		answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"hi caf\u00e9"}]}}`),
		answer(200, jsonCT, `{"jsonrpc":"2.0","id":42,"result":{"resultType":"complete","content":[{"type":"text","text":"t"}],"isError":false}}`),
		answer(404, jsonCT, `{"jsonrpc":"2.0","id":42,"error":{"code":-32601,"message":"no"}}`),
		answer(400, jsonCT, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":""}}`),
		"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n" + jsonCT + "\r\n5\r\n{\"a\":\r\n3\r\n1}\n\r\n0\r\n\r\n",
		answer(200, sse, "data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{}}\n\n"),
		answer(200, sse, "data: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"task\":{\"id\":\"t1\",\"status\":{\"state\":\"TASK_STATE_WORKING\"}}}}\n\n"+
			"data: {\"jsonrpc\":\"2.0\",\"id\":42,\"result\":{\"kind\":\"status-update\",\"taskId\":\"t1\",\"status\":{\"state\":\"completed\"},\"final\":true}}\n\n"),
		"HTTP/1.1 100 Continue\r\n\r\n" + answer(200, jsonCT, `{}`),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// parse joins a chunked body in place, and check an event's data
		// lines: each parse gets the answer as it came.
		var r response
		done, err := r.parse(append([]byte(nil), b...), true)
		if !done || err != nil {
			return
		}
		for _, s := range []Shape{ShapeCall, ShapeNotify, ShapeUnknown, ShapeBadParams, ShapeParse, ShapeBatch, ShapeCustom} {
			for _, ev := range []struct {
				events int
				a2a    bool
			}{{0, false}, {1, false}, {2, true}} {
				for _, v2026 := range []bool{false, true} {
					e := expect(s, "42", "hi café")
					e.events, e.a2a = ev.events, ev.a2a
					var rc response
					if done, err := rc.parse(append([]byte(nil), b...), true); !done || err != nil {
						t.Fatalf("the answer parsed once, not twice: %v %v", done, err)
					}
					v := check(e, &rc, v2026)
					if (v.class == ClassOK) != (v.why == "") {
						t.Fatalf("verdict %+v", v)
					}
				}
			}
		}
	})
}
