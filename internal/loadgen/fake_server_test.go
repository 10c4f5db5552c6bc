package loadgen

import (
	"bytes"
	"encoding/json"
	"net"
	"strconv"
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
