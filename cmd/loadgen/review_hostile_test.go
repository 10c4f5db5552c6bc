package main

// A hostile review of loadgen's answer checking and accounting, run
// through the command (run) against a hand-written server on 127.0.0.1
// that answers subtly wrong: every wrong answer must be counted wrong, in
// its class, and every right spelling of a right answer counted right.
// The server decodes each request with encoding/json, not with the
// decode package loadgen checks with, so that a fault shared by the two
// cannot hide; ids and texts are loadgen's own, varied per request.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/internal/loadgen"
)

// hostileReq is one request as the hostile server read it.
type hostileReq struct {
	k       int64           // 1 for the first request read, across connections
	body    []byte          // as sent
	id      json.RawMessage // as sent; nil for a notification
	method  string
	rawText json.RawMessage // params.arguments.text as sent, nil if none
	text    string          // the same, decoded by encoding/json
	array   bool            // params is an array
}

// hostile is a hand-written HTTP/1.1 server on 127.0.0.1. answer returns
// the bytes to write for each request (nil: hold the request until the
// test ends; empty: close the connection), written delay after the
// request is read; after, when set, returns bytes written afterDelay
// (default 3 ms) after the answer; closeAfter closes the connection after
// its first answer. Each connection serves at most maxPerConn requests and
// lives at most 30 s.
type hostile struct {
	answer     func(q *hostileReq) []byte
	after      func(q *hostileReq) []byte
	closeAfter bool          // close each connection after its first answer
	afterDelay time.Duration // before after's bytes; 0: 3 ms
	delay      time.Duration // before each answer

	n    atomic.Int64
	url  string
	done chan struct{}
	mu   sync.Mutex
	wg   sync.WaitGroup
	cs   []net.Conn
}

const maxPerConn = 100_000

func startHostile(t *testing.T, h *hostile) *hostile {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.done = make(chan struct{})
	h.url = "http://" + ln.Addr().String() + "/mcp"
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(30 * time.Second))
			h.mu.Lock()
			h.cs = append(h.cs, c)
			h.mu.Unlock()
			h.wg.Add(1)
			go func() {
				defer h.wg.Done()
				defer c.Close()
				h.serve(c)
			}()
		}
	}()
	t.Cleanup(func() {
		close(h.done)
		ln.Close()
		h.mu.Lock()
		for _, c := range h.cs {
			c.Close()
		}
		h.mu.Unlock()
		h.wg.Wait()
	})
	return h
}

func (h *hostile) serve(c net.Conn) {
	br := bufio.NewReader(c)
	for range maxPerConn {
		q, ok := h.read(br)
		if !ok {
			return
		}
		time.Sleep(h.delay)
		out := h.answer(q)
		if out == nil {
			<-h.done
			return
		}
		if len(out) == 0 {
			return
		}
		if _, err := c.Write(out); err != nil || h.closeAfter {
			return
		}
		if h.after != nil {
			if extra := h.after(q); extra != nil {
				d := h.afterDelay
				if d == 0 {
					d = 3 * time.Millisecond
				}
				time.Sleep(d)
				if _, err := c.Write(extra); err != nil {
					return
				}
			}
		}
	}
}

func (h *hostile) read(br *bufio.Reader) (*hostileReq, bool) {
	if _, err := br.ReadString('\n'); err != nil {
		return nil, false
	}
	cl := -1
	for range 100 {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, false
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if k, v, _ := strings.Cut(line, ":"); strings.EqualFold(k, "Content-Length") {
			cl, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if cl < 0 || cl > 1<<20 {
		return nil, false
	}
	q := &hostileReq{k: h.n.Add(1), body: make([]byte, cl)}
	if _, err := io.ReadFull(br, q.body); err != nil {
		return nil, false
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if json.Unmarshal(q.body, &msg) == nil {
		q.id, q.method = msg.ID, msg.Method
		q.array = len(msg.Params) > 0 && msg.Params[0] == '['
		var p struct {
			Arguments struct {
				Text json.RawMessage `json:"text"`
			} `json:"arguments"`
		}
		if !q.array && json.Unmarshal(msg.Params, &p) == nil && p.Arguments.Text != nil {
			q.rawText = p.Arguments.Text
			_ = json.Unmarshal(q.rawText, &q.text)
		}
	}
	return q, true
}

// httpAnswer frames body as an HTTP/1.1 answer with the given status and
// header lines (each ending in CRLF).
func httpAnswer(status int, headers, body string) []byte {
	return []byte("HTTP/1.1 " + strconv.Itoa(status) + " X\r\n" + headers + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}

const ctJSON = "Content-Type: application/json\r\n"

// jsonString encodes s as encoding/json does, HTML escaping off: a
// spelling of the text other than loadgen's where it sent escapes.
func jsonString(s string) string {
	var b strings.Builder
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	_ = e.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// uEscaped spells s with every character other than ASCII letters and
// digits as \uXXXX (pairs above the BMP): the same text.
func uEscaped(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case r >= 0x10000:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04X`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// echoBody is the JSON-RPC answer to an echo call with id and text as
// given (raw JSON).
func echoBody(id, text string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":` + text + `}]}}`
}

// rightFor is the right answer to any shape loadgen sends without MCP
// headers, the echoed text re-encoded by encoding/json.
func rightFor(q *hostileReq) []byte {
	errAnswer := func(status int, id string, code int) []byte {
		return httpAnswer(status, ctJSON, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":`+strconv.Itoa(code)+`,"message":"m"}}`)
	}
	switch {
	case len(q.body) > 0 && q.body[0] == '[':
		return errAnswer(400, "null", -32600)
	case !json.Valid(q.body):
		return errAnswer(400, "null", -32700)
	case q.id == nil:
		return []byte("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
	case q.method != "tools/call":
		return errAnswer(404, string(q.id), -32601)
	case q.array || q.rawText == nil:
		return errAnswer(200, string(q.id), -32602)
	}
	return httpAnswer(200, ctJSON, echoBody(string(q.id), jsonString(q.text)))
}

// hostileReport is the part of the -json report these tests read.
type hostileReport struct {
	Sent         uint64            `json:"sent"`
	Answers      uint64            `json:"answers"`
	OK           uint64            `json:"ok"`
	Wrong        uint64            `json:"wrong"`
	RPS          float64           `json:"rps"`
	WrongByClass map[string]uint64 `json:"wrong_by_class"`
	Latency      loadgen.Latency   `json:"latency_us"`
	ExitCode     int               `json:"exit_code"`
	Examples     []loadgen.Example `json:"wrong_examples"`
}

// runHostile runs loadgen with args and -json, and returns the exit
// status and the report.
func runHostile(t *testing.T, args ...string) (int, hostileReport) {
	t.Helper()
	r := runCmd(t, env{}, append(args, "-json")...)
	var rep hostileReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("exit %d, report %v\nstdout %s\nstderr %s", r.code, err, r.stdout, r.stderr)
	}
	if rep.ExitCode != r.code {
		t.Errorf("exit status %d, report's exit_code %d", r.code, rep.ExitCode)
	}
	if rep.OK+rep.Wrong != rep.Sent {
		t.Errorf("ok %d + wrong %d != sent %d", rep.OK, rep.Wrong, rep.Sent)
	}
	return r.code, rep
}

// replaceText returns the answer to q with its echoed text spelled text.
func replaceText(q *hostileReq, text string) []byte {
	if q.rawText == nil {
		return rightFor(q)
	}
	return httpAnswer(200, ctJSON, echoBody(string(q.id), text))
}

// oneRuneOff changes the last non-ASCII rune of s (or its last rune) to
// its neighbour: the same bytes but one character.
func oneRuneOff(s string) string {
	rs := []rune(s)
	i := len(rs) - 1
	for j := len(rs) - 1; j >= 0; j-- {
		if rs[j] >= 0x80 {
			i = j
			break
		}
	}
	rs[i]++
	if !utf8.ValidRune(rs[i]) {
		rs[i] -= 2
	}
	return string(rs)
}

// respellID spells the id q was sent with otherwise: a number as a
// decimal fraction or a string, a string with an escape; the same value
// to some readers, another id to the contract (its bytes verbatim).
func respellID(q *hostileReq) string {
	id := string(q.id)
	if id[0] == '"' {
		return `"\u` + fmt.Sprintf("%04x", id[1]) + id[2:]
	}
	if q.k%2 == 0 {
		return id + ".0"
	}
	return `"` + id + `"`
}

// TestHostileWrongAnswers: each way of answering subtly wrong is counted
// wrong, every answer, in its class, through every engine.
func TestHostileWrongAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mix    string
		answer func(q *hostileReq) []byte
		class  string // "": any class, but none right
	}{
		{"id re-spelled", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, echoBody(respellID(q), jsonString(q.text)))
		}, "id"},
		{"id with a space inside a string", "call=1", func(q *hostileReq) []byte {
			id := string(q.id)
			if id[0] == '"' {
				id = `" ` + id[1:]
			} else {
				id = `"` + id + ` "`
			}
			return httpAnswer(200, ctJSON, echoBody(id, jsonString(q.text)))
		}, "id"},
		{"id missing", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, `{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":`+jsonString(q.text)+`}]}}`)
		}, "id"},
		{"result and error", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, `{"jsonrpc":"2.0","id":`+string(q.id)+`,"result":{"content":[{"type":"text","text":`+jsonString(q.text)+`}]},"error":{"code":-32603,"message":"m"}}`)
		}, "body"},
		{"jsonrpc missing", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, `{"id":`+string(q.id)+`,"result":{"content":[{"type":"text","text":`+jsonString(q.text)+`}]}}`)
		}, "body"},
		{"jsonrpc 2.1", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, strings.Replace(echoBody(string(q.id), jsonString(q.text)), `"2.0"`, `"2.1"`, 1))
		}, "body"},
		{"jsonrpc a number", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, strings.Replace(echoBody(string(q.id), jsonString(q.text)), `"2.0"`, `2.0`, 1))
		}, "body"},
		{"id twice, the last right", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, `{"jsonrpc":"2.0","id":"x`+strconv.FormatInt(q.k, 10)+`","id":`+string(q.id)+`,"result":{"content":[{"type":"text","text":`+jsonString(q.text)+`}]}}`)
		}, "body"},
		{"id twice, the first right", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, `{"jsonrpc":"2.0","id":`+string(q.id)+`,"\u0069d":null,"result":{"content":[{"type":"text","text":`+jsonString(q.text)+`}]}}`)
		}, "body"},
		{"trailing garbage in the body", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, echoBody(string(q.id), jsonString(q.text))+`x`)
		}, "body"},
		{"a second JSON value in the body", "call=1", func(q *hostileReq) []byte {
			b := echoBody(string(q.id), jsonString(q.text))
			return httpAnswer(200, ctJSON, b+"\n"+b)
		}, "body"},
		{"invalid UTF-8 in the text", "call=1", func(q *hostileReq) []byte {
			// The text as sent, its last character's first byte
			// replaced by a Latin-1 é: not UTF-8.
			s := jsonString(q.text)
			return replaceText(q, s[:len(s)-2]+"\xe9"+s[len(s)-1:])
		}, "body"},
		{"a lone surrogate in the text", "call=1", func(q *hostileReq) []byte {
			s := jsonString(q.text)
			return replaceText(q, s[:len(s)-1]+`\ud83d"`)
		}, "body"},
		{"one character differs", "call=1", func(q *hostileReq) []byte {
			return replaceText(q, jsonString(oneRuneOff(q.text)))
		}, "result"},
		{"one escaped character differs", "call=1", func(q *hostileReq) []byte {
			return replaceText(q, uEscaped(oneRuneOff(q.text)))
		}, "result"},
		{"text of no escape resolved", "call=1", func(q *hostileReq) []byte {
			// The raw text's backslashes escaped: what a server that
			// echoes the JSON source of the text shows.
			return replaceText(q, jsonString(string(q.rawText[1:len(q.rawText)-1])+"\\"))
		}, "result"},
		{"the text a character short", "call=1", func(q *hostileReq) []byte {
			r := []rune(q.text)
			return replaceText(q, jsonString(string(r[:len(r)-1])))
		}, "result"},
		{"isError true", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, `{"jsonrpc":"2.0","id":`+string(q.id)+`,"result":{"isError":true,"content":[{"type":"text","text":`+jsonString(q.text)+`}]}}`)
		}, "result"},
		{"two content items", "call=1", func(q *hostileReq) []byte {
			t := `{"type":"text","text":` + jsonString(q.text) + `}`
			return httpAnswer(200, ctJSON, `{"jsonrpc":"2.0","id":`+string(q.id)+`,"result":{"content":[`+t+`,`+t+`]}}`)
		}, "result"},
		{"HTTP 200 with a JSON-RPC error", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, `{"jsonrpc":"2.0","id":`+string(q.id)+`,"error":{"code":-32603,"message":"m"}}`)
		}, "code"},
		{"a result to an unknown method", "unknown=1", func(q *hostileReq) []byte {
			return httpAnswer(404, ctJSON, `{"jsonrpc":"2.0","id":`+string(q.id)+`,"result":{}}`)
		}, "code"},
		{"another error code", "badparams=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, `{"jsonrpc":"2.0","id":`+string(q.id)+`,"error":{"code":-32603,"message":"m"}}`)
		}, "code"},
		{"error code as a fraction", "unknown=1", func(q *hostileReq) []byte {
			return httpAnswer(404, ctJSON, `{"jsonrpc":"2.0","id":`+string(q.id)+`,"error":{"code":-32601.0,"message":"m"}}`)
		}, "body"},
		{"parse error with the id guessed", "parse=1", func(q *hostileReq) []byte {
			return httpAnswer(400, ctJSON, `{"jsonrpc":"2.0","id":1,"error":{"code":-32700,"message":"m"}}`)
		}, "id"},
		{"text/plain", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, "Content-Type: text/plain\r\n", echoBody(string(q.id), jsonString(q.text)))
		}, "header"},
		{"application/jsonl", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, "Content-Type: application/jsonl\r\n", echoBody(string(q.id), jsonString(q.text)))
		}, "header"},
		{"no Content-Type", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, "", echoBody(string(q.id), jsonString(q.text)))
		}, "header"},
		{"an SSE stream for a JSON answer", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, "Content-Type: text/event-stream\r\n", "data: "+echoBody(string(q.id), jsonString(q.text))+"\n\n")
		}, "header"},
		{"gzip not asked for", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON+"Content-Encoding: gzip\r\n", echoBody(string(q.id), jsonString(q.text)))
		}, "header"},
		{"Content-Length one short", "call=1", func(q *hostileReq) []byte {
			b := echoBody(string(q.id), jsonString(q.text))
			return []byte("HTTP/1.1 200 OK\r\n" + ctJSON + "Content-Length: " + strconv.Itoa(len(b)-1) + "\r\n\r\n" + b)
		}, ""},
		{"Content-Length five long, then close", "call=1", func(q *hostileReq) []byte {
			b := echoBody(string(q.id), jsonString(q.text))
			return []byte("HTTP/1.1 200 OK\r\n" + ctJSON + "Content-Length: " + strconv.Itoa(len(b)+5) + "\r\n\r\n" + b)
		}, "transport"},
		{"chunked, cut in a chunk", "call=1", func(q *hostileReq) []byte {
			b := echoBody(string(q.id), jsonString(q.text))
			return []byte("HTTP/1.1 200 OK\r\n" + ctJSON + "Transfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(b)), 16) + "\r\n" + b[:len(b)/2])
		}, "transport"},
		{"chunked, no last chunk", "call=1", func(q *hostileReq) []byte {
			b := echoBody(string(q.id), jsonString(q.text))
			return []byte("HTTP/1.1 200 OK\r\n" + ctJSON + "Transfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(b)), 16) + "\r\n" + b + "\r\n")
		}, "transport"},
		{"an answer to a notification", "notify=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, `{"jsonrpc":"2.0","id":null,"result":{}}`)
		}, "status"},
		{"a 202 with a body", "notify=1", func(q *hostileReq) []byte {
			return httpAnswer(202, "", `{}`)
		}, "body"},
		{"a 202 with a Content-Type", "notify=1", func(q *hostileReq) []byte {
			return httpAnswer(202, ctJSON, "")
		}, "header"},
		{"two answers in one write", "call=1", func(q *hostileReq) []byte {
			b := rightFor(q)
			return append(b, b...)
		}, "body"},
	} {
		for _, eng := range loadgen.Engines() {
			t.Run(tc.name+"/"+eng, func(t *testing.T) {
				h := startHostile(t, &hostile{answer: tc.answer,
					closeAfter: strings.Contains(tc.name, "then close") || strings.Contains(tc.name, "chunked")})
				const n = 40
				code, rep := runHostile(t, "-url", h.url, "-n", strconv.Itoa(n), "-c", "2", "-mix", tc.mix, "-engine", eng, "-timeout", "2s", "-examples", "1")
				if code != 1 || rep.OK != 0 || rep.Sent != n || (tc.class != "" && rep.WrongByClass[tc.class] != n) {
					t.Errorf("exit %d, sent %d, ok %d, wrong %v; want all %d wrong in class %q\nexamples %+v", code, rep.Sent, rep.OK, rep.WrongByClass, n, tc.class, rep.Examples)
				}
			})
		}
	}
}

// TestHostileRightSpellings: every right answer is counted right,
// however the server spells it: the text escaped otherwise (é for
// \u00e9, \u escapes everywhere, surrogate pairs in either case), white
// space between tokens, members in another order or added, chunked
// framing, an interim 100, Content-Type parameters and case.
func TestHostileRightSpellings(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mix    string
		answer func(q *hostileReq) []byte
	}{
		{"text verbatim", "call=1", func(q *hostileReq) []byte { return replaceText(q, string(q.rawText)) }},
		{"text re-encoded", "call=1,notify=1,unknown=1,badparams=1,parse=1,batch=1", rightFor},
		{"text all escaped", "call=1", func(q *hostileReq) []byte { return replaceText(q, uEscaped(q.text)) }},
		{"white space and another order", "call=1", func(q *hostileReq) []byte {
			return httpAnswer(200, ctJSON, "\r\n { \"result\" : {\"_meta\":{}, \"content\" : [ { \"text\" :\t"+jsonString(q.text)+" , \"type\":\"text\" } ] ,\"isError\":false} ,\n\"id\" : "+string(q.id)+" , \"jsonrpc\" : \"2\\u002e0\" }\n")
		}},
		{"chunked after a 100", "call=1", func(q *hostileReq) []byte {
			b := echoBody(string(q.id), uEscaped(q.text))
			h := len(b) / 3
			return []byte("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: Application/JSON; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n" +
				strconv.FormatInt(int64(h), 16) + ";x=y\r\n" + b[:h] + "\r\n" + strconv.FormatInt(int64(len(b)-h), 16) + "\r\n" + b[h:] + "\r\n0\r\nX-Trailer: 1\r\n\r\n")
		}},
	} {
		for _, eng := range loadgen.Engines() {
			t.Run(tc.name+"/"+eng, func(t *testing.T) {
				h := startHostile(t, &hostile{answer: tc.answer})
				const n = 120
				code, rep := runHostile(t, "-url", h.url, "-n", strconv.Itoa(n), "-c", "3", "-mix", tc.mix, "-engine", eng, "-timeout", "2s")
				if code != 0 || rep.OK != n || rep.Sent != n {
					t.Errorf("exit %d, sent %d, ok %d, wrong %v; want all %d right\nexamples %+v", code, rep.Sent, rep.OK, rep.WrongByClass, n, rep.Examples)
				}
			})
		}
	}
}

// swapper pairs requests in flight at once, on two connections, and
// answers each with what its partner should get: the partner's whole
// answer (its id and text), or the partner's text under the request's
// own id. A request that finds no partner within 300 ms is answered
// right.
type swapper struct {
	textOnly bool
	mu       sync.Mutex
	waiting  *hostileReq
	partner  chan *hostileReq
	swapped  atomic.Int64
}

func (s *swapper) answer(q *hostileReq) []byte {
	s.mu.Lock()
	if p := s.waiting; p != nil {
		ch := s.partner
		s.waiting, s.partner = nil, nil
		s.mu.Unlock()
		ch <- q
		return s.swap(q, p)
	}
	ch := make(chan *hostileReq, 1)
	s.waiting, s.partner = q, ch
	s.mu.Unlock()
	select {
	case p := <-ch:
		return s.swap(q, p)
	case <-time.After(300 * time.Millisecond):
	}
	s.mu.Lock()
	if s.waiting == q {
		s.waiting, s.partner = nil, nil
		s.mu.Unlock()
		return rightFor(q)
	}
	s.mu.Unlock()
	return s.swap(q, <-ch) // a partner came as the wait ended
}

// swap returns the answer to q built from p's request.
func (s *swapper) swap(q, p *hostileReq) []byte {
	s.swapped.Add(1)
	id := p.id
	if s.textOnly {
		id = q.id
	}
	return httpAnswer(200, ctJSON, echoBody(string(id), jsonString(p.text)))
}

// TestHostileSwappedAnswers: two requests in flight at once, each
// answered with the other's right answer (or the other's text under its
// own id): every swapped answer is wrong, every other one right.
func TestHostileSwappedAnswers(t *testing.T) {
	for _, textOnly := range []bool{false, true} {
		for _, eng := range loadgen.Engines() {
			t.Run(fmt.Sprintf("textOnly=%v/%s", textOnly, eng), func(t *testing.T) {
				s := &swapper{textOnly: textOnly}
				h := startHostile(t, &hostile{answer: s.answer})
				const n = 60
				code, rep := runHostile(t, "-url", h.url, "-n", strconv.Itoa(n), "-c", "2", "-engine", eng, "-timeout", "3s")
				class := "id"
				if textOnly {
					class = "result"
				}
				sw := uint64(s.swapped.Load())
				if sw < n/2 || code != 1 || rep.Sent != n || rep.Wrong != sw || rep.WrongByClass[class] != sw || rep.OK != n-sw {
					t.Errorf("swapped %d of %d; exit %d, ok %d, wrong %v; want the swapped ones wrong in class %s", sw, n, code, rep.OK, rep.WrongByClass, class)
				}
			})
		}
	}
}

// TestHostileLatencyToLastByte: latency runs to the answer's last byte,
// not its first: a server that sends the head and most of the body at
// once and the rest 40 ms later, or a chunked answer whose last chunk
// comes 40 ms late, shows at least 40 ms in every percentile; the same
// server sending it all at once, well under.
func TestHostileLatencyToLastByte(t *testing.T) {
	const delay = 40 * time.Millisecond
	for _, split := range []string{"none", "body", "chunked"} {
		for _, eng := range loadgen.Engines() {
			t.Run(split+"/"+eng, func(t *testing.T) {
				h := &hostile{afterDelay: delay}
				switch split {
				case "none":
					h.answer = rightFor
				case "body":
					h.answer = func(q *hostileReq) []byte { b := rightFor(q); return b[:len(b)-10] }
					h.after = func(q *hostileReq) []byte { b := rightFor(q); return b[len(b)-10:] }
				case "chunked":
					h.answer = func(q *hostileReq) []byte {
						body := echoBody(string(q.id), jsonString(q.text))
						return []byte("HTTP/1.1 200 OK\r\n" + ctJSON + "Transfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n")
					}
					h.after = func(*hostileReq) []byte { return []byte("0\r\n\r\n") }
				}
				startHostile(t, h)
				code, rep := runHostile(t, "-url", h.url, "-n", "12", "-c", "2", "-engine", eng, "-timeout", "2s")
				if code != 0 || rep.OK != 12 || rep.Latency.Count != 12 {
					t.Fatalf("exit %d, ok %d, latency count %d, wrong %v %+v", code, rep.OK, rep.Latency.Count, rep.WrongByClass, rep.Examples)
				}
				p50 := time.Duration(rep.Latency.P50) * time.Microsecond
				if split == "none" {
					if p50 >= delay {
						t.Errorf("p50 %v for answers sent whole", p50)
					}
					return
				}
				if p50 < delay {
					t.Errorf("p50 %v, want at least %v: latency stopped before the last byte", p50, delay)
				}
			})
		}
	}
}

// TestHostileFailuresCounted: requests that get no answer — held past
// -timeout, the connection reset, closed without a byte — are each
// counted sent and wrong (transport), and in the latency at the time they
// waited; none is dropped from the denominator. The run stays bounded by
// -n: the server sees exactly the requests loadgen counts.
func TestHostileFailuresCounted(t *testing.T) {
	const timeout = 150 * time.Millisecond
	for _, tc := range []struct {
		name   string
		answer func(q *hostileReq) []byte
	}{
		{"held", func(q *hostileReq) []byte {
			if q.k%3 == 0 {
				return nil
			}
			return rightFor(q)
		}},
		{"closed", func(q *hostileReq) []byte {
			if q.k%3 == 0 {
				return []byte{}
			}
			return rightFor(q)
		}},
		{"garbage", func(q *hostileReq) []byte {
			if q.k%3 == 0 {
				return []byte("HTTP/1.1 2OO OK\r\n\r\n")
			}
			return rightFor(q)
		}},
	} {
		for _, eng := range loadgen.Engines() {
			t.Run(tc.name+"/"+eng, func(t *testing.T) {
				h := startHostile(t, &hostile{answer: tc.answer})
				const n = 30
				code, rep := runHostile(t, "-url", h.url, "-n", strconv.Itoa(n), "-c", "3", "-engine", eng, "-timeout", timeout.String())
				bad := rep.WrongByClass["transport"]
				if code != 1 || rep.Sent != n || uint64(h.n.Load()) != n || bad < n/3 || rep.OK != n-bad || rep.Latency.Count != n {
					t.Errorf("exit %d, sent %d (server read %d), ok %d, wrong %v, latency count %d; want %d sent, a third or more transport failures, all in the latency",
						code, rep.Sent, h.n.Load(), rep.OK, rep.WrongByClass, rep.Latency.Count, n)
				}
				if tc.name == "held" && time.Duration(rep.Latency.Max)*time.Microsecond < timeout {
					t.Errorf("max latency %dµs, want the timeout's %v", rep.Latency.Max, timeout)
				}
			})
		}
	}
}

// TestHostileRPSCountsAnswers: requests/s counts complete answers, right
// or wrong, as Report.RPS documents; a run with any wrong answer exits 1,
// so a figure from a run that exits 0 is one of right answers.
func TestHostileRPSCountsAnswers(t *testing.T) {
	h := startHostile(t, &hostile{answer: func(q *hostileReq) []byte {
		return httpAnswer(200, ctJSON, echoBody(respellID(q), jsonString(q.text)))
	}})
	code, rep := runHostile(t, "-url", h.url, "-d", "300ms", "-c", "2", "-timeout", "2s")
	if code != 1 || rep.OK != 0 || rep.RPS <= 0 || rep.Wrong != rep.Answers {
		t.Errorf("exit %d, ok %d, wrong %d, answers %d, rps %v", code, rep.OK, rep.Wrong, rep.Answers, rep.RPS)
	}
}

// TestHostileStaleAnswerClosedLoop: a server that sends each answer
// twice on a keep-alive connection, the copy 3 ms after it (its answers
// 3 ms late as well, so that each copy and the next answer come in reads
// of their own). Each answer followed by a copy is wrong (contract: bytes
// after an answer). In a closed loop loadgen sends the next request as
// soon as an answer is in, and reads the copy as that request's answer.
// After a call the copy's id gives it away: the run is flagged, though
// the request after the copy is blamed, not the answer before it.
func TestHostileStaleAnswerClosedLoop(t *testing.T) {
	for _, eng := range loadgen.Engines() {
		t.Run(eng, func(t *testing.T) {
			h := startHostile(t, &hostile{answer: rightFor, after: rightFor, delay: 3 * time.Millisecond})
			const n = 20
			code, rep := runHostile(t, "-url", h.url, "-n", strconv.Itoa(n), "-c", "1", "-engine", eng, "-timeout", "2s")
			if code != 1 || rep.Sent != n || rep.Wrong < n/2 {
				t.Errorf("exit %d, sent %d, ok %d, wrong %v; want the run flagged, every answer was sent twice", code, rep.Sent, rep.OK, rep.WrongByClass)
			}
		})
	}
}

// TestHostileStaleNotifyClosedLoop: the same server, notifications only.
// A 202 carries no id, so its copy passes for the next notification's
// answer, that one's for the next, and so on: every answer is doubled,
// every one is counted right and the run exits 0 (each latency that of
// the answer before). The shift leaves the last answer unread: found
// after the run, it must flag the run.
func TestHostileStaleNotifyClosedLoop(t *testing.T) {
	for _, eng := range loadgen.Engines() {
		t.Run(eng, func(t *testing.T) {
			h := startHostile(t, &hostile{answer: rightFor, after: rightFor, delay: 3 * time.Millisecond})
			const n = 20
			code, rep := runHostile(t, "-url", h.url, "-n", strconv.Itoa(n), "-c", "1", "-mix", "notify=1", "-engine", eng, "-timeout", "2s")
			if code != 1 || rep.Sent != n || rep.Wrong == 0 {
				t.Errorf("exit %d, sent %d, ok %d, wrong %v; want the run flagged, every answer was sent twice", code, rep.Sent, rep.OK, rep.WrongByClass)
			}
		})
	}
}

// TestHostileInvalidHead: heads that are not HTTP/1.1 — a bare LF inside
// the status line or a field value, which a reader that takes a bare LF
// for a line end (RFC 9112 §2.2 lets it) reads as one more field line, or
// white space before a field's colon (§5.1) — must be wrong: other
// readers see a second Content-Type line in each, which loadgen refuses
// when it sees one.
func TestHostileInvalidHead(t *testing.T) {
	for _, tc := range []struct{ name, head string }{
		{"bare LF in the reason", "HTTP/1.1 200 OK\nContent-Type: text/html\r\n" + ctJSON},
		{"bare LF in Content-Type", "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\nContent-Type: text/html\r\n"},
		{"space before a colon", "HTTP/1.1 200 OK\r\n" + ctJSON + "Content-Type : text/html\r\n"},
	} {
		for _, eng := range loadgen.Engines() {
			t.Run(tc.name+"/"+eng, func(t *testing.T) {
				h := startHostile(t, &hostile{answer: func(q *hostileReq) []byte {
					b := echoBody(string(q.id), jsonString(q.text))
					return []byte(tc.head + "Content-Length: " + strconv.Itoa(len(b)) + "\r\n\r\n" + b)
				}})
				const n = 10
				code, rep := runHostile(t, "-url", h.url, "-n", strconv.Itoa(n), "-c", "1", "-engine", eng, "-timeout", "2s")
				if code != 1 || rep.OK != 0 || rep.Sent != n {
					t.Errorf("exit %d, sent %d, ok %d, wrong %v; want all %d wrong", code, rep.Sent, rep.OK, rep.WrongByClass, n)
				}
			})
		}
	}
}
