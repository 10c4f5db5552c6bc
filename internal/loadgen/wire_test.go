package loadgen

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRunWrongWire: answers that are wrong only in their bytes — an id
// re-spelled, a response that is also a request, a member twice deep
// inside the result, two Content-Type lines, Transfer-Encoding beside
// Content-Length — are each flagged in their class, through every engine.
func TestRunWrongWire(t *testing.T) {
	echo := func(r *rawRequest, body string) []byte { return []byte(answer(200, jsonCT, body)) }
	for _, tc := range []struct {
		name   string
		answer func(r *rawRequest) []byte
		class  string
		wrong  uint64 // of 100 requests; 0: all of them
	}{
		{"id re-spelled", func(r *rawRequest) []byte {
			// The same string, an escape in place of its first letter:
			// the contract wants the id's bytes back verbatim. On one
			// connection the ids alternate, integer and string.
			id := string(r.id)
			if strings.HasPrefix(id, `"lg-`) {
				id = `"\u006c` + id[2:]
			}
			return echo(r, `{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":`+string(r.text)+`}]}}`)
		}, "id", 50},
		{"a method in the answer", func(r *rawRequest) []byte {
			return echo(r, `{"jsonrpc":"2.0","id":`+string(r.id)+`,"method":"sampling/createMessage","result":{"content":[{"type":"text","text":`+string(r.text)+`}]}}`)
		}, "body", 100},
		{"text twice in a content item", func(r *rawRequest) []byte {
			return echo(r, `{"jsonrpc":"2.0","id":`+string(r.id)+`,"result":{"content":[{"type":"text","text":"WRONG","text":`+string(r.text)+`}]}}`)
		}, "body", 100},
		{"content twice in the result", func(r *rawRequest) []byte {
			return echo(r, `{"jsonrpc":"2.0","id":`+string(r.id)+`,"result":{"content":[{"type":"text","text":"WRONG"}],"content":[{"type":"text","text":`+string(r.text)+`}]}}`)
		}, "body", 100},
		{"a member twice in the error's data", func(r *rawRequest) []byte {
			if r.method == "tools/call" {
				return rightAnswer(r)
			}
			return []byte(answer(404, jsonCT, `{"jsonrpc":"2.0","id":`+string(r.id)+`,"error":{"code":-32601,"message":"m","data":{"a":1,"a":2}}}`))
		}, "body", 0},
		{"two Content-Type lines", func(r *rawRequest) []byte {
			return []byte(answer(200, "Content-Type: text/html\r\n"+jsonCT, rightEcho(r)))
		}, "header", 100},
		{"Transfer-Encoding and Content-Length", func(r *rawRequest) []byte {
			body := rightEcho(r)
			return []byte("HTTP/1.1 200 OK\r\n" + jsonCT + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n" +
				strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n")
		}, "header", 100},
	} {
		for _, eng := range Engines() {
			t.Run(tc.name+"/"+eng, func(t *testing.T) {
				f := startRaw(t, &rawFake{answer: tc.answer})
				mix := Mix{ShapeCall: 1}
				if strings.Contains(tc.name, "error") {
					mix = Mix{ShapeUnknown: 1}
				}
				conns := 2
				if tc.class == "id" {
					conns = 1 // one generator: half the ids are strings
				}
				rep := runOrFatal(t, Config{URL: f.url, Connections: conns, Requests: 100, Engine: eng, Mix: mix, Timeout: 5 * time.Second})
				want := tc.wrong
				if want == 0 {
					want = 100
				}
				if got := rep.WrongByClass[tc.class]; got != want || rep.Wrong != want || rep.ExitCode != 1 {
					t.Errorf("wrong %d %v, exit %d; want %d in class %s: %+v", rep.Wrong, rep.WrongByClass, rep.ExitCode, want, tc.class, rep.Examples)
				}
			})
		}
	}
}

// TestRunStreamLineEnds: streamed answers whose lines end in CR alone,
// or in CRLF, with a field before the first data and a comment after the
// response, are right; every stream's first event is timed.
func TestRunStreamLineEnds(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	for _, nl := range []string{"\r", "\r\n", "\n"} {
		stream := func(r *rawRequest) []byte {
			note := `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`
			s := "event: message" + nl + "data: " + note + nl + nl +
				"data" + nl + "data: " + note + nl + nl +
				"data: " + `{"jsonrpc":"2.0","id":` + string(r.id) + `,"result":{}}` + nl + nl +
				": bye" + nl + nl
			return []byte(answer(200, "Content-Type: text/event-stream\r\n", s))
		}
		for _, eng := range Engines() {
			t.Run(strconv.Quote(nl)+"/"+eng, func(t *testing.T) {
				f := startRaw(t, &rawFake{answer: stream})
				rep := runOrFatal(t, Config{URL: f.url, Connections: 2, Requests: 50, Engine: eng, Body: body, Events: 2})
				if rep.OK != 50 || rep.Events != 100 {
					t.Fatalf("ok %d, events %d; want 50, 100: %v %+v", rep.OK, rep.Events, rep.WrongByClass, rep.Examples)
				}
				if rep.FirstEvent.Count != 50 {
					t.Errorf("first event timed on %d streams of 50", rep.FirstEvent.Count)
				}
			})
		}
	}
}

// TestRunStaleAnswer: a server that sends every answer twice, the copy
// 2 ms after it. In an open loop the connection sits idle between slots
// (40 ms), and the copy is found there before the next request goes out:
// the answer it followed is judged wrong (bytes after the end of the
// answer), not the copy taken for the next request's answer (a copy of
// a notification's 202 passes for the next one's: without the idle look,
// 7 or 8 of 20 are judged wrong, those whose copy came with the next
// answer). A busy machine may deliver a copy after the next request went
// out, so 13 of 20, not all, must be caught.
func TestRunStaleAnswer(t *testing.T) {
	for _, eng := range Engines() {
		t.Run(eng, func(t *testing.T) {
			f := startRaw(t, &rawFake{after: rightAnswer})
			rep := runOrFatal(t, Config{URL: f.url, Connections: 1, Rate: 25, Requests: 20, Engine: eng, Mix: Mix{ShapeNotify: 1}})
			t.Logf("ok %d, wrong %v, reconnects %d", rep.OK, rep.WrongByClass, rep.Reconnects)
			// The last answer's copy may come after the run.
			if got := rep.WrongByClass["body"]; got < 13 || rep.OK+rep.Wrong != rep.Sent || rep.Sent != 20 || rep.ExitCode != 1 {
				t.Errorf("wrong %v, ok %d, sent %d; want at least 13 of 20 answers judged wrong for the bytes after them", rep.WrongByClass, rep.OK, rep.Sent)
			}
			// Found on the idle connection, or, when a busy machine let
			// the copy catch up with its answer, in the same read: either
			// way the answer is wrong for the bytes after it.
			if len(rep.Examples) == 0 || !strings.HasPrefix(rep.Examples[0].Detail, "bytes after the end of the answer") || !strings.HasPrefix(rep.Examples[0].Answer, "HTTP/1.1 202") {
				t.Errorf("examples %+v", rep.Examples)
			}
		})
	}
}
