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
func (s *Server) checkHeaders(h *fasthttp.RequestHeader, encErr error) (int, int, string) {
	// fasthttp keeps Content-Type in a field of its own: absent and empty
	// both read as empty.
	if ct := h.ContentType(); len(ct) > 0 && !isJSONType(ct) {
		return fasthttp.StatusUnsupportedMediaType, decode.CodeInvalidRequest, "Content-Type must be application/json"
	}
	if encErr != nil {
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

// expectHandler answers Expect: 100-continue: rows 1 to 6 are decided
// before the body is sent, and a request they refuse gets 417 instead of
// 100 Continue, so the client never sends the body. The rate-limit token
// it takes is noted in a RequestCtx user value, so that the handler does
// not take a second one.
func (s *Server) expectHandler(ctx *fasthttp.RequestCtx) int {
	if !ctx.IsPost() {
		return fasthttp.StatusContinue
	}
	ep := s.endpoints[string(ctx.Path())]
	if ep == nil {
		return fasthttp.StatusContinue
	}
	h := &ctx.Request.Header
	if o := peekHeader(h, "Origin"); o != nil && !s.origins.allowed(o) {
		return fasthttp.StatusExpectationFailed
	}
	if s.rate != nil {
		if s.rate.take(ctx) > 0 {
			return fasthttp.StatusExpectationFailed
		}
		ctx.SetUserValue(userRated, true)
	}
	enc, encErr := contentEncoding(h)
	if st, _, _ := s.checkHeaders(h, encErr); st != 0 {
		return fasthttp.StatusExpectationFailed
	}
	// Room in the budget is checked, not kept: if the body never came the
	// handler would not run to give it back. The handler reserves again.
	reserve, _ := s.reservation(h, enc)
	if !s.budget.acquire(reserve, s.cfg.BudgetWait) {
		return fasthttp.StatusExpectationFailed
	}
	s.budget.release(reserve)
	return fasthttp.StatusContinue
}

// userRated is the user-value key that says expectHandler took the
// request's rate-limit token.
const userRated = "rpcedge.rated"

// contentEncoding parses every Content-Encoding line of h as one list
// (RFC 9110 §5.3): two lines "gzip" and "zstd" mean "gzip, zstd".
func contentEncoding(h *fasthttp.RequestHeader) (decode.Encoding, error) {
	first := h.Peek("Content-Encoding")
	if first == nil {
		return decode.Encoding{}, nil // no line at all: identity
	}
	lines := 0
	var joined [256]byte
	buf := joined[:0]
	var err error
	h.VisitAll(func(k, v []byte) {
		if !bytes.EqualFold(k, []byte("Content-Encoding")) {
			return
		}
		if lines > 0 {
			buf = append(buf, ',')
		}
		lines++
		if len(buf)+len(v) > len(joined) {
			err = errTooManyCodings
			return
		}
		buf = append(buf, v...)
	})
	if err != nil {
		return decode.Encoding{}, err
	}
	if lines <= 1 {
		return decode.ParseEncoding(first)
	}
	return decode.ParseEncoding(buf)
}

var errTooManyCodings = errors.New("fastserver: Content-Encoding too long")

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
	origin := peekHeader(&ctx.Request.Header, "Origin")
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
