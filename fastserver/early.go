package fastserver

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// checkHeaders decides rows 3 to 5 from the request header: the status,
// code and message of the refusal, or status 0.
func (s *Server) checkHeaders(h *fasthttp.RequestHeader) (int, int, string) {
	if ct := h.Peek("Content-Type"); ct != nil && !isJSONType(ct) {
		return fasthttp.StatusUnsupportedMediaType, decode.CodeInvalidRequest, "Content-Type must be application/json"
	}
	if _, err := decode.ParseEncoding(h.Peek("Content-Encoding")); err != nil {
		return fasthttp.StatusUnsupportedMediaType, decode.CodeInvalidRequest, "unsupported Content-Encoding"
	}
	if cl := h.ContentLength(); cl > 0 && int64(cl) > s.cfg.MaxBodyBytes {
		return fasthttp.StatusRequestEntityTooLarge, decode.CodeInvalidRequest, "the body is longer than the ceiling"
	}
	return 0, 0, ""
}

// isJSONType reports whether a Content-Type value is application/json,
// parameters allowed.
func isJSONType(ct []byte) bool {
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = bytes.TrimSpace(ct)
	return len(ct) == len("application/json") && bytes.EqualFold(ct, ctJSON)
}

// continueHandler answers Expect: 100-continue: rows 1 to 6 are decided
// from the headers, and a request they refuse gets 417 instead of 100
// Continue, so the client never sends the body.
func (s *Server) continueHandler(h *fasthttp.RequestHeader) bool {
	ep := s.endpoints[string(h.RequestURI())]
	if ep == nil || !bytes.Equal(h.Method(), []byte("POST")) {
		if i := bytes.IndexByte(h.RequestURI(), '?'); i >= 0 {
			ep = s.endpoints[string(h.RequestURI()[:i])]
		}
		if ep == nil {
			return true
		}
	}
	if o := h.Peek("Origin"); o != nil && !s.origins.allowed(o) {
		return false
	}
	if st, _, _ := s.checkHeaders(h); st != 0 {
		return false
	}
	// Rows 2 and 6 need the peer and a reservation; they are decided in
	// the handler, where the body is still unread.
	return true
}

// errorHandler answers what fasthttp refuses before the handler runs:
// 431 for an oversized header block, 408 for a read timeout, 400 for a
// request it cannot parse. Plain text: there is no JSON-RPC message yet.
func (s *Server) errorHandler(ctx *fasthttp.RequestCtx, err error) {
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.As(err, &small):
		ctx.Error("request header too large", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case errors.As(err, &ne) && ne.Timeout():
		ctx.Error("request timeout", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("malformed request", fasthttp.StatusBadRequest)
	}
}

// earlyAnswer writes status and body on the hijacked connection, then
// half-closes it, drains what the client still sends for a bounded time
// and size, and closes it. fasthttp writes nothing itself.
func (s *Server) earlyAnswer(ctx *fasthttp.RequestCtx, status int, body []byte) {
	var resp bytes.Buffer
	resp.Grow(256 + len(body))
	resp.WriteString("HTTP/1.1 ")
	resp.WriteString(strconv.Itoa(status))
	resp.WriteByte(' ')
	resp.WriteString(fasthttp.StatusMessage(status))
	resp.WriteString("\r\nServer: rpcedge\r\nContent-Type: application/json\r\nContent-Length: ")
	resp.WriteString(strconv.Itoa(len(body)))
	resp.WriteString("\r\nConnection: close\r\n")
	ctx.Response.Header.VisitAll(func(k, v []byte) {
		switch string(k) {
		case "Retry-After", "Access-Control-Allow-Origin", "Vary":
			resp.Write(k)
			resp.WriteString(": ")
			resp.Write(v)
			resp.WriteString("\r\n")
		}
	})
	resp.WriteString("\r\n")
	resp.Write(body)
	raw := ctx.Conn()
	wt, dt, db := s.cfg.WriteTimeout, s.cfg.DrainTimeout, s.cfg.DrainBytes
	ctx.SetStatusCode(status)
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) {
		c.SetWriteDeadline(time.Now().Add(wt))
		if _, err := c.Write(resp.Bytes()); err != nil {
			return
		}
		if cw, ok := raw.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		c.SetReadDeadline(time.Now().Add(dt))
		io.CopyN(io.Discard, c, db)
	})
}

// preflight answers OPTIONS on an endpoint (CORS).
func (s *Server) preflight(ctx *fasthttp.RequestCtx) {
	origin := ctx.Request.Header.Peek("Origin")
	if origin == nil {
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	}
	if !s.origins.allowed(origin) {
		ctx.SetStatusCode(fasthttp.StatusForbidden)
		return
	}
	h := &ctx.Response.Header
	h.SetBytesV("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Allow-Methods", "POST, OPTIONS")
	if rh := ctx.Request.Header.Peek("Access-Control-Request-Headers"); len(rh) > 0 {
		h.SetBytesV("Access-Control-Allow-Headers", rh)
	} else {
		h.Set("Access-Control-Allow-Headers", "Content-Type, Content-Encoding, Accept, Accept-Encoding, Authorization, MCP-Protocol-Version, Mcp-Method, Mcp-Name, A2A-Version")
	}
	h.Set("Access-Control-Max-Age", "600")
	h.Set("Vary", "Origin")
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}
