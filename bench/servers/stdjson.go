package servers

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/valyala/fasthttp"
)

// The hand-written JSON-RPC echo handler of the nethttp-json and
// fasthttp-json candidates: encoding/json v1 in and out, the way a
// service without an MCP library would write it. It checks jsonrpc,
// method, tool name and that text is a string, answers a notification
// (no id) with 202, and reads no MCP header.

type rpcRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string `json:"name"`
		Arguments struct {
			Text *string `json:"text"`
		} `json:"arguments"`
	} `json:"params"`
}

type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *echoResult     `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type echoResult struct {
	Content    []textContent `json:"content"`
	ResultType string        `json:"resultType"`
}

type textContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

var nullID = json.RawMessage("null")

// echoJSON answers body: the HTTP status and the answer (nil for 202).
func echoJSON(body []byte) (int, []byte) {
	var req rpcRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return answer(400, nullID, nil, &rpcError{-32700, "parse error"})
	}
	if req.JSONRPC != "2.0" || req.Method == "" {
		return answer(400, nullID, nil, &rpcError{-32600, "invalid request"})
	}
	if req.ID == nil {
		return 202, nil
	}
	switch {
	case req.Method != "tools/call":
		return answer(404, req.ID, nil, &rpcError{-32601, "method not found"})
	case req.Params.Name != "echo":
		return answer(200, req.ID, nil, &rpcError{-32601, "unknown tool"})
	case req.Params.Arguments.Text == nil:
		return answer(200, req.ID, nil, &rpcError{-32602, "arguments.text must be a string"})
	}
	return answer(200, req.ID, &echoResult{
		Content:    []textContent{{Type: "text", Text: *req.Params.Arguments.Text}},
		ResultType: "complete",
	}, nil)
}

func answer(status int, id json.RawMessage, res *echoResult, e *rpcError) (int, []byte) {
	out, err := json.Marshal(rpcResponse{JSONRPC: "2.0", ID: id, Result: res, Error: e})
	if err != nil {
		return 500, []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"internal error"}}`)
	}
	return status, out
}

func newNetHTTPJSON() (Server, error) {
	return newHTTPServer(http.HandlerFunc(serveNetHTTPJSON)), nil
}

func serveNetHTTPJSON(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	status, out := echoJSON(body)
	if out != nil {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(status)
	w.Write(out)
}

func newFastHTTPJSON() (Server, error) {
	return fastServer{&fasthttp.Server{
		Handler:              serveFastHTTPJSON,
		NoDefaultContentType: true,
		ReadTimeout:          readTimeout,
		WriteTimeout:         writeTimeout,
		IdleTimeout:          idleTimeout,
		MaxRequestBodySize:   maxBody,
	}}, nil
}

var (
	pathMCP = []byte(Path)
	ctJSON  = []byte("application/json")
)

func serveFastHTTPJSON(ctx *fasthttp.RequestCtx) {
	if !bytes.Equal(ctx.Path(), pathMCP) {
		ctx.SetStatusCode(fasthttp.StatusNotFound)
		return
	}
	if !ctx.IsPost() {
		ctx.Response.Header.Set("Allow", "POST")
		ctx.SetStatusCode(fasthttp.StatusMethodNotAllowed)
		return
	}
	body := ctx.PostBody()
	if bytes.EqualFold(ctx.Request.Header.ContentEncoding(), []byte("gzip")) {
		// The size sweep's GZIP=1: undone as the floor undoes it.
		g := floorGunzips.Get().(*floorGunzip)
		defer floorGunzips.Put(g)
		if body = g.gunzip(body); body == nil || len(body) > maxBody {
			ctx.SetStatusCode(fasthttp.StatusBadRequest)
			return
		}
	}
	status, out := echoJSON(body)
	ctx.SetStatusCode(status)
	if out != nil {
		ctx.Response.Header.SetContentTypeBytes(ctJSON)
		ctx.SetBody(out)
	}
}
