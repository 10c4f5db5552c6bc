package fastserver

import (
	"bytes"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// framingError refuses a request whose body framing is not one the
// contract's table takes (RFC 9112 §6), as nginx refuses it: obsolete line
// folding 400; a transfer coding other than chunked 501 (fasthttp lets
// "identity" through; it refuses the others itself, answered by
// errorHandler); Transfer-Encoding beside Content-Length 400, so that no
// two parsers can disagree on where the body ends. The status, and a
// plain-text reason, or 0.
func framingError(f *fields) (int, string) {
	if f.folded {
		return fasthttp.StatusBadRequest, "obsolete line folding is not accepted"
	}
	if f.badName {
		return fasthttp.StatusBadRequest, "a header line without a valid field name and colon"
	}
	if te := f.get(fTransferEncoding); te != nil {
		if !equalFoldASCII(te, "chunked") {
			return fasthttp.StatusNotImplemented, "transfer coding not implemented"
		}
		if f.get(fContentLength) != nil {
			return fasthttp.StatusBadRequest, "Content-Length and Transfer-Encoding together"
		}
	}
	return 0, ""
}

// checkHeaders decides rows 3 to 5 from the header snapshot: the status,
// code and message of the refusal, or status 0.
func (s *Server) checkHeaders(f *fields, h *fasthttp.RequestHeader, encErr error) (int, int, string) {
	if ct := f.get(fContentType); ct != nil && (f.count(fContentType) > 1 || !isJSONType(ct)) {
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

// isJSONType reports whether a Content-Type value is application/json:
// parameters are allowed, but a charset other than UTF-8 is not (JSON on
// the wire is UTF-8, RFC 8259 §8.1), and neither is a parameter that is
// not one (RFC 9110 §5.6.6: a token name, "=", a token or a quoted
// string; space around "=" is tolerated).
func isJSONType(ct []byte) bool {
	if string(ct) == "application/json" {
		return true // what nearly every client sends, decided by one comparison
	}
	switch string(ct) {
	case "application/json; charset=utf-8", "application/json;charset=utf-8",
		"application/json; charset=UTF-8", "application/json;charset=UTF-8":
		return true // the next most common spellings
	}
	params := []byte(nil)
	if i := bytes.IndexByte(ct, ';'); i >= 0 {
		ct, params = ct[:i], ct[i+1:]
	}
	ct = bytes.TrimSpace(ct)
	if len(ct) != len("application/json") || !bytes.EqualFold(ct, ctJSON) {
		return false
	}
	return utf8Params(params)
}

// utf8Params reports whether params, the parameters after a media type's
// first ';', are well formed and any charset among them is UTF-8 (case
// ignored; quoted and escaped forms resolved).
func utf8Params(p []byte) bool {
	ows := func(i int) int {
		for i < len(p) && (p[i] == ' ' || p[i] == '\t') {
			i++
		}
		return i
	}
	i := 0
	for {
		i = ows(i)
		if i == len(p) {
			return true
		}
		if p[i] == ';' { // an empty parameter
			i++
			continue
		}
		n := i
		for i < len(p) && isTchar(p[i]) {
			i++
		}
		name := p[n:i]
		if len(name) == 0 {
			return false
		}
		if i = ows(i); i == len(p) || p[i] != '=' {
			return false // a parameter without a value
		}
		i = ows(i + 1)
		charset := equalFoldASCII(name, "charset")
		const utf8Name = "utf-8"
		k, same := 0, true // the value compared with utf8Name as it is read
		match := func(c byte) {
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			same = same && k < len(utf8Name) && c == utf8Name[k]
			k++
		}
		if i < len(p) && p[i] == '"' {
			i++
			for {
				if i == len(p) {
					return false // an unterminated quoted string
				}
				c := p[i]
				if c == '"' {
					i++
					break
				}
				if c == '\\' {
					if i+1 == len(p) || !isQuotedPairChar(p[i+1]) {
						return false
					}
					i++
					c = p[i]
				} else if !isQdtext(c) {
					return false
				}
				match(c)
				i++
			}
		} else {
			v := i
			for i < len(p) && isTchar(p[i]) {
				match(p[i])
				i++
			}
			if i == v {
				return false // an empty value
			}
		}
		if charset && (!same || k != len(utf8Name)) {
			return false
		}
		if i = ows(i); i < len(p) && p[i] != ';' {
			return false
		}
	}
}

// isTchar reports whether c may appear in a token (RFC 9110 §5.6.2).
func isTchar(c byte) bool { return tchars[c] }

var tchars = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// isQdtext reports whether c may appear unescaped in a quoted string.
func isQdtext(c byte) bool {
	return c == '\t' || c == ' ' || c == 0x21 || (c >= 0x23 && c <= 0x5B) || (c >= 0x5D && c <= 0x7E) || c >= 0x80
}

// isQuotedPairChar reports whether c may follow a backslash in a quoted
// string.
func isQuotedPairChar(c byte) bool {
	return c == '\t' || c == ' ' || (c >= 0x21 && c <= 0x7E) || c >= 0x80
}

// expectHandler answers Expect: 100-continue: rows 1 to 6 are decided
// before the body is sent, and a request they refuse gets 417 instead of
// 100 Continue, so the client never sends the body. The rate-limit token
// it takes is noted in a RequestCtx user value, so that the handler does
// not take a second one. A request that routing refuses by its method
// and path alone (404, 405) gets that answer instead of 100 Continue.
func (s *Server) expectHandler(ctx *fasthttp.RequestCtx) (status int) {
	defer func() {
		if v := recover(); v != nil {
			s.panicked(stageExpect, v, "path", string(ctx.Path()))
			status = fasthttp.StatusExpectationFailed
		}
		if status != fasthttp.StatusContinue {
			// fasthttp closes the connection after the refusal: a client
			// that sent its body without waiting for 100 Continue would
			// get a reset, which can overtake the answer. Drain it.
			s.drainAtClose(ctx)
		}
	}()
	at(stageExpect)
	ep := s.endpointAt(ctx.Path())
	if st := s.routeRefusal(ctx, ep); st != 0 {
		// 404 or 405 whatever the body: not worth sending it.
		return st
	}
	if ep == nil || !ctx.IsPost() {
		return fasthttp.StatusContinue
	}
	h := &ctx.Request.Header
	var f fields
	f.snapshot(h)
	if st, _ := framingError(&f); st != 0 {
		return fasthttp.StatusExpectationFailed
	}
	if o := f.get(fOrigin); o != nil && (f.count(fOrigin) > 1 || !s.origins.allowed(o)) {
		return fasthttp.StatusExpectationFailed
	}
	if s.rate != nil {
		if s.rate.take(ctx, &f) > 0 {
			return fasthttp.StatusExpectationFailed
		}
		ctx.SetUserValue(userRated, true)
	}
	if ep.Authorize != nil {
		// Row 2a comes before rows 3 to 6, here as in the handler: a
		// client without valid credentials learns nothing from them and
		// holds no budget. It gets 100 Continue, then the handler's 401
		// or 403 (auth's doc).
		var r Request
		r.reset(&f, nil, nil)
		if ep.Authorize(&r) != nil {
			return fasthttp.StatusContinue
		}
	}
	enc, encErr := contentEncoding(&f)
	if st, _, _ := s.checkHeaders(&f, h, encErr); st != 0 {
		return fasthttp.StatusExpectationFailed
	}
	// Room in the budget is checked, not kept: if the body never came the
	// handler would not run to give it back. The handler reserves again.
	reserve, _ := s.firstReservation(h, enc)
	if enc.IsIdentity() {
		if !s.budget.acquire(reserve, s.cfg.BudgetWait) {
			return fasthttp.StatusExpectationFailed
		}
		s.budget.release(reserve)
	} else {
		if !s.budget.acquireState(reserve, s.cfg.BudgetWait) {
			return fasthttp.StatusExpectationFailed
		}
		s.budget.releaseState(reserve)
	}
	return fasthttp.StatusContinue
}

// userRated is the user-value key that says expectHandler took the
// request's rate-limit token.
const userRated = "rpcedge.rated"

// contentEncoding parses the Content-Encoding lines of the snapshot as
// one list (RFC 9110 §5.3): two lines "gzip" and "zstd" mean "gzip, zstd".
// Any length: identity and empty elements do not count (row 4), the
// header section's size bounds the list, and ParseEncoding reads it once.
func contentEncoding(f *fields) (decode.Encoding, error) {
	v := f.get(fContentEncoding)
	if v == nil {
		return decode.Encoding{}, nil // no line at all: identity
	}
	return decode.ParseEncoding(v)
}

// errorHandler answers what fasthttp refuses before the handler runs:
// 431 for an oversized header block, 408 for a read timeout, 400 for a
// request it cannot parse. Plain text: there is no JSON-RPC message yet.
//
// A transfer coding fasthttp does not implement is 501 Not Implemented (RFC
// 9112 §6.1, as nginx and Go's net/http answer it); Transfer-Encoding in
// an HTTP/1.0 request is faulty framing, 400.
func (s *Server) errorHandler(ctx *fasthttp.RequestCtx, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.recoverPlain(ctx, stageError, v)
		}
	}()
	at(stageError)
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	timeout := errors.As(err, &ne) && ne.Timeout()
	if !timeout {
		// fasthttp closes the connection after this answer, the request
		// perhaps still arriving. (A client its read timeout cut sends
		// nothing worth waiting for.)
		s.drainAtClose(ctx)
	}
	switch {
	case !errors.Is(err, fasthttp.ErrUnsupportedTransferEncoding) && strings.Contains(err.Error(), "unsupported transfer-encoding"):
		ctx.Error("transfer coding not implemented", fasthttp.StatusNotImplemented)
	case errors.As(err, &small):
		ctx.Error("request header too large", fasthttp.StatusRequestHeaderFieldsTooLarge)
	case timeout:
		ctx.Error("request timeout", fasthttp.StatusRequestTimeout)
	default:
		ctx.Error("malformed request", fasthttp.StatusBadRequest)
	}
}

// drainAtClose has the request's connection, when fasthttp closes it
// after the answer, half-close and drain what the client still sends
// (DrainTimeout, DrainBytes) before it closes, so that the client reads
// the answer rather than a reset. A connection that serves on (fasthttp
// read the rest of the body itself) forgets it when it goes idle.
func (s *Server) drainAtClose(ctx *fasthttp.RequestCtx) {
	if c := watchedConn(ctx.Conn()); c != nil {
		c.drainBytes = s.cfg.DrainBytes
		c.drainFor.Store(int64(s.cfg.DrainTimeout))
	}
}

// earlyAnswer writes status and body (of media type ctype) on the
// hijacked connection, then half-closes it, drains what the client still
// sends for a bounded time and size, and closes it. fasthttp writes
// nothing itself. Under net/http the answer is left in the response for
// the bridge, which hijacks the connection to do the same (nethttp.go).
func (s *Server) earlyAnswer(ctx *fasthttp.RequestCtx, status int, ctype, body []byte) {
	ctx.SetStatusCode(status)
	if b, ok := ctx.Conn().(*bridgeConn); ok {
		b.early = true
		ctx.Response.Header.SetContentTypeBytes(ctype)
		ctx.SetBody(body)
		return
	}
	resp := earlyBytes(&ctx.Response.Header, status, ctype, body)
	raw := ctx.Conn()
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(s.guardHijack(func(c net.Conn) { s.closeAfter(c, raw, resp) }))
}

// earlyBytes is the raw answer of an early refusal: status, body and the
// header fields of h a refusal carries, with Connection: close.
func earlyBytes(h *fasthttp.ResponseHeader, status int, ctype, body []byte) []byte {
	var resp bytes.Buffer
	resp.Grow(256 + len(body))
	resp.WriteString("HTTP/1.1 ")
	resp.WriteString(strconv.Itoa(status))
	resp.WriteByte(' ')
	resp.WriteString(fasthttp.StatusMessage(status))
	resp.WriteString("\r\nServer: " + serverName + "\r\nDate: ")
	resp.Write(appendHTTPDate(resp.AvailableBuffer(), time.Now()))
	resp.WriteString("\r\nContent-Type: ")
	resp.Write(ctype)
	resp.WriteString("\r\nContent-Length: ")
	resp.WriteString(strconv.Itoa(len(body)))
	resp.WriteString("\r\nConnection: close\r\n")
	for k, v := range h.All() {
		switch string(k) {
		case "Retry-After", "Access-Control-Allow-Origin", "Vary", "Www-Authenticate", "WWW-Authenticate":
			resp.Write(k)
			resp.WriteString(": ")
			resp.Write(v)
			resp.WriteString("\r\n")
		}
	}
	resp.WriteString("\r\n")
	resp.Write(body)
	return resp.Bytes()
}

// appendHTTPDate appends t as an HTTP date (RFC 9110 §5.6.7): an answer
// written on a hijacked connection carries Date like fasthttp's own
// (§6.6.1: an origin server with a clock must send it).
func appendHTTPDate(dst []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(dst, "Mon, 02 Jan 2006 15:04:05 GMT")
}

// closeAfter writes resp on c, half-closes the connection (raw is the
// one that can: c may be a TLS connection over it), drains what the
// client still sends for DrainTimeout and DrainBytes, and returns; the
// caller closes c.
func (s *Server) closeAfter(c, raw net.Conn, resp []byte) {
	c.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	if _, err := c.Write(resp); err != nil {
		return
	}
	drain(c, raw, s.cfg.DrainTimeout, s.cfg.DrainBytes)
}

// preflight answers OPTIONS on an endpoint (CORS).
func (s *Server) preflight(ctx *fasthttp.RequestCtx, ep *endpoint) {
	var f fields
	f.snapshot(&ctx.Request.Header)
	origin := f.get(fOrigin)
	if origin == nil {
		ctx.SetStatusCode(fasthttp.StatusNoContent)
		return
	}
	if f.count(fOrigin) > 1 || !s.origins.allowed(origin) {
		ctx.SetStatusCode(fasthttp.StatusForbidden)
		return
	}
	h := &ctx.Response.Header
	h.SetBytesV("Access-Control-Allow-Origin", origin)
	methods := ep.methods
	if ep.Other != nil && ep.OtherMethods == nil {
		// Every method is offered to Other: the one asked for is allowed
		// if it is a method at all.
		if rm, _ := f.lookup("Access-Control-Request-Method"); isToken(rm) {
			methods += ", " + string(rm)
		}
	}
	h.Set("Access-Control-Allow-Methods", methods)
	if rh, _ := f.lookup("Access-Control-Request-Headers"); len(rh) > 0 {
		h.SetBytesV("Access-Control-Allow-Headers", rh)
	} else {
		h.Set("Access-Control-Allow-Headers", "Content-Type, Content-Encoding, Accept, Accept-Encoding, Authorization, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID, A2A-Version")
	}
	h.Set("Access-Control-Max-Age", "600")
	h.Set("Vary", "Origin")
	ctx.SetStatusCode(fasthttp.StatusNoContent)
}
