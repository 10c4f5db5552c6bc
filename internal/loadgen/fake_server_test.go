package loadgen

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// fakeServer is an in-process fasthttp server on 127.0.0.1 that answers the
// shapes loadgen sends the way contract.md says, decoding with
// encoding/json (so it re-encodes echoed text in its own spelling), with
// knobs that make it answer wrong on purpose.
type fakeServer struct {
	wrongIDEvery int64         // every Nth call answers a different id
	notifyBody   bool          // notifications get 202 with a body
	pauseAfter   time.Duration // once, after this long, hold all answers…
	pauseFor     time.Duration // …for this long
	closeAfter   int64         // close the connection after every Nth answer (Connection: close)

	n          atomic.Int64
	start      time.Time
	pauseOnce  sync.Once
	pauseUntil atomic.Int64 // unix ns
	url        string
	srv        *fasthttp.Server
	done       chan struct{}
}

func startFake(t testing.TB, f *fakeServer) *fakeServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.start = time.Now()
	f.url = "http://" + ln.Addr().String() + "/mcp"
	f.srv = &fasthttp.Server{Handler: f.handle, NoDefaultContentType: true, ReadTimeout: 20 * time.Second}
	f.done = make(chan struct{})
	go func() {
		defer close(f.done)
		_ = f.srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = f.srv.Shutdown()
		<-f.done
	})
	return f
}

func (f *fakeServer) maybePause() {
	if f.pauseFor == 0 || time.Since(f.start) < f.pauseAfter {
		return
	}
	f.pauseOnce.Do(func() { f.pauseUntil.Store(time.Now().Add(f.pauseFor).UnixNano()) })
	if d := time.Until(time.Unix(0, f.pauseUntil.Load())); d > 0 {
		time.Sleep(d)
	}
}

func answerError(ctx *fasthttp.RequestCtx, status int, id json.RawMessage, code int) {
	if id == nil {
		id = json.RawMessage("null")
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": "m"}})
	ctx.SetBody(b)
}

func (f *fakeServer) handle(ctx *fasthttp.RequestCtx) {
	f.maybePause()
	k := f.n.Add(1)
	if f.closeAfter > 0 && k%f.closeAfter == 0 {
		ctx.SetConnectionClose()
	}
	body := ctx.PostBody()
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		answerError(ctx, 400, nil, -32600)
		return
	}
	if !json.Valid(body) {
		answerError(ctx, 400, nil, -32700)
		return
	}
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &msg) != nil || msg.JSONRPC != "2.0" {
		answerError(ctx, 400, nil, -32600)
		return
	}
	version := string(ctx.Request.Header.Peek("MCP-Protocol-Version"))
	var params struct {
		Name      *string         `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      map[string]any  `json:"_meta"`
	}
	paramsObject := len(msg.Params) == 0 || msg.Params[0] == '{'
	if paramsObject && len(msg.Params) > 0 {
		_ = json.Unmarshal(msg.Params, &params)
	}
	if msg.ID != nil && version == "2026-07-28" {
		if string(ctx.Request.Header.Peek("Mcp-Method")) != msg.Method || params.Meta[metaKey] != version {
			answerError(ctx, 400, msg.ID, -32020)
			return
		}
	}
	if msg.ID == nil {
		ctx.SetStatusCode(202)
		if f.notifyBody {
			ctx.SetBodyString("{}")
		}
		return
	}
	if msg.Method != "tools/call" {
		answerError(ctx, 404, msg.ID, -32601)
		return
	}
	if !paramsObject || params.Name == nil {
		answerError(ctx, 200, msg.ID, -32602)
		return
	}
	if *params.Name != "echo" {
		answerError(ctx, 200, msg.ID, -32601)
		return
	}
	var args struct {
		Text *string `json:"text"`
	}
	if json.Unmarshal(params.Arguments, &args) != nil || args.Text == nil {
		answerError(ctx, 200, msg.ID, -32602)
		return
	}
	id := msg.ID
	if f.wrongIDEvery > 0 && k%f.wrongIDEvery == 0 {
		id = json.RawMessage(strconv.Quote("not-" + string(id)))
	}
	result := map[string]any{"content": []any{map[string]any{"type": "text", "text": *args.Text}}}
	if version == "2026-07-28" {
		result["resultType"] = "complete"
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// listenRaw serves each connection to a loopback listener with serve and
// returns the listener's /mcp URL; the listener closes with the test.
func listenRaw(t testing.TB, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return "http://" + ln.Addr().String() + "/mcp"
}

// rawFake is a hand-written HTTP/1.1 server on 127.0.0.1 for answers an
// HTTP library will not write: two Content-Type lines, Transfer-Encoding
// beside Content-Length, bytes after an answer, server-sent events with
// CR line ends, an id re-spelled. answer returns the whole answer to each
// request as bytes (rightAnswer builds the right one), nil to hold the
// request unanswered until the test ends, or an empty slice to close the
// connection without an answer; after, when set, returns bytes written on
// the connection a little (2 ms) after the answer.
type rawFake struct {
	answer func(r *rawRequest) []byte
	after  func(r *rawRequest) []byte

	n       atomic.Int64 // requests read, across connections
	url     string
	release chan struct{}
}

// rawRequest is one request as a rawFake read it.
type rawRequest struct {
	k      int64 // 1 for the first request the server read
	body   []byte
	id     json.RawMessage // the id as sent; nil for a notification
	method string
	text   json.RawMessage // params.arguments.text as sent, nil if none
}

func startRaw(t testing.TB, f *rawFake) *rawFake {
	t.Helper()
	if f.answer == nil {
		f.answer = rightAnswer
	}
	f.release = make(chan struct{})
	f.url = listenRaw(t, f.serve)
	t.Cleanup(func() { close(f.release) })
	return f
}

func (f *rawFake) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		cl := -1
		if _, err := br.ReadString('\n'); err != nil {
			return
		}
		for {
			h, err := br.ReadString('\n')
			if err != nil {
				return
			}
			h = strings.TrimRight(h, "\r\n")
			if h == "" {
				break
			}
			if k, v, _ := strings.Cut(h, ":"); strings.EqualFold(k, "Content-Length") {
				cl, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
		if cl < 0 {
			return
		}
		r := &rawRequest{k: f.n.Add(1), body: make([]byte, cl)}
		if _, err := io.ReadFull(br, r.body); err != nil {
			return
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments struct {
					Text json.RawMessage `json:"text"`
				} `json:"arguments"`
			} `json:"params"`
		}
		if json.Unmarshal(r.body, &msg) == nil {
			r.id, r.method, r.text = msg.ID, msg.Method, msg.Params.Arguments.Text
		}
		out := f.answer(r)
		if out == nil {
			<-f.release
			return
		}
		if len(out) == 0 {
			return
		}
		if _, err := c.Write(out); err != nil {
			return
		}
		if f.after != nil {
			if extra := f.after(r); extra != nil {
				time.Sleep(2 * time.Millisecond)
				if _, err := c.Write(extra); err != nil {
					return
				}
			}
		}
	}
}

// rightAnswer is the answer contract.md requires to the shapes loadgen
// sends without MCP headers: the id and the text are echoed as they were
// sent.
func rightAnswer(r *rawRequest) []byte {
	errorAnswer := func(status int, id string, code int) []byte {
		return []byte(answer(status, jsonCT, `{"jsonrpc":"2.0","id":`+id+`,"error":{"code":`+strconv.Itoa(code)+`,"message":"m"}}`))
	}
	switch {
	case bytes.HasPrefix(bytes.TrimLeft(r.body, " \t\r\n"), []byte("[")):
		return errorAnswer(400, "null", -32600)
	case !json.Valid(r.body):
		return errorAnswer(400, "null", -32700)
	case r.id == nil:
		return []byte("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
	case r.method != "tools/call":
		return errorAnswer(404, string(r.id), -32601)
	case r.text == nil:
		return errorAnswer(200, string(r.id), -32602)
	}
	return []byte(answer(200, jsonCT, rightEcho(r)))
}

// rightEcho is the right JSON-RPC answer to an echo call.
func rightEcho(r *rawRequest) string {
	return `{"jsonrpc":"2.0","id":` + string(r.id) + `,"result":{"content":[{"type":"text","text":` + string(r.text) + `}]}}`
}
