package fuzz

// FuzzServer: arbitrary body, Content-Type, Content-Encoding, MCP and A2A
// headers, Origin, method and path, through the fasthttp server (over an
// in-memory listener; see server_harness_test.go). It checks that:
//
//   - the server never panics, and never logs a handler panic (a
//     slog.Logger writing to a buffer; "panicked") or an empty result;
//     every rpcedge_panics_total series stays 0 at GET /metrics;
//   - every answer to a POST on /mcp or /a2a is a (status, code) pair the
//     contract's §2 allows on that endpoint (allowedPairs), a JSON answer
//     being one object {"jsonrpc":"2.0","id":…, "result"|"error":…} with
//     Content-Type application/json, and a 202 having no body and no
//     Content-Type;
//   - rows 1 to 10, decided from the headers and the body alone, give the
//     status and code the contract gives, computed here independently:
//     the Origin rule, the media type, the content codings (decoded with
//     Go's and klauspost's reference decoders), the declared length, and
//     the body's verdict from the strict reference (reference_test.go)
//     with the endpoint's id policy (/mcp: string or integer; /a2a:
//     string, number or null);
//   - rows 11 to 19 for a valid message, from the reference of
//     dispatch_ref_test.go: the version headers, Mcp-Method and Mcp-Name
//     (the =?base64?…?= form decoded) and 2026-07-28's _meta; the methods
//     of each version; params, the target's name or uri, the target, the
//     duplicate names and the argument types of the demo tools, prompt
//     and resource; A2A's refusals, GetTask and CancelTask params and
//     SendMessage's skillId; and the text a 200 result of echo, add,
//     greet and the about resource carries;
//   - every optional header may come on two lines (flagDouble): the
//     server judges all lines combined with ", ", and two Origin or
//     Content-Type lines fail their row even when they agree (contract,
//     "Header fields, trailers and repeated lines");
//   - the id rule: null for rows 1 to 9 and for a notification; for row
//     10 the request's id bytes verbatim when present and of an accepted
//     type; for a valid request, its id bytes verbatim in every answer;
//   - an answer is compressed only when Accept-Encoding allows the coding
//     and it is at least 1 KiB (contract §2), and decompresses to a valid
//     answer;
//   - other paths answer 404, other methods on an endpoint 405 with
//     Allow: POST, OPTIONS, OPTIONS the CORS preflight of §1; 431 for a
//     header block past 8 KiB.
//
// Header values are cut to visible ASCII, space and tab: a client cannot
// send a control character in a header (fasthttp answers a plain 400).
// Rows 2 and 6 (rate limit, in-flight budget) are off or out of reach
// here; 429 and 503 are accepted as the non-JSON-RPC answers they may be.
// A Content-Type that is present but empty is refused at row 3 like any
// other value that is not application/json (contract §2).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

type pair struct{ status, code int }

// allowedPairs is contract §2's table: the answers a POST may get, by
// endpoint. Code 0 is a result (200) or no body (202).
var allowedPairs = map[string]map[pair]bool{
	"/mcp": pairs(
		pair{400, -32700}, pair{400, -32600}, pair{400, -32020}, pair{400, -32022},
		pair{403, -32600}, pair{404, -32601}, pair{413, -32600}, pair{415, -32600},
		pair{200, 0}, pair{200, -32601}, pair{200, -32602}, pair{202, 0}, pair{500, -32603},
		// §4, under 2026-07-28 only (checkServer holds them to it): params
		// or its _meta missing, a capability the client did not declare.
		pair{400, -32602}, pair{400, -32021},
	),
	"/a2a": pairs(
		pair{400, -32700}, pair{400, -32600}, pair{400, -32009},
		pair{403, -32600}, pair{404, -32601}, pair{413, -32600}, pair{415, -32600},
		pair{200, 0}, pair{200, -32601}, pair{200, -32602}, pair{200, -32004},
		pair{200, -32001}, pair{200, -32002}, pair{200, -32003}, pair{202, 0}, pair{500, -32603},
	),
}

func pairs(ps ...pair) map[pair]bool {
	m := map[pair]bool{}
	for _, p := range ps {
		m[p] = true
	}
	return m
}

// Flag bits of the fuzz input.
const (
	flagPath       = 0x3 // 0 /mcp, 1 /a2a, 2 /nope, 3 /mcp/
	flagCT         = 1 << 2
	flagCE         = 1 << 3
	flagMCPVersion = 1 << 4
	flagMCPMethod  = 1 << 5
	flagMCPName    = 1 << 6
	flagA2AVersion = 1 << 7
	flagOrigin     = 1 << 8
	flagCompress   = 1 << 9  // encode the body with the codings of Content-Encoding
	flagChunked    = 1 << 10 // Transfer-Encoding: chunked instead of Content-Length
	flagMethod     = 3 << 11 // 0, 1 POST; 2 GET; 3 OPTIONS
	flagHugeLength = 1 << 13 // declare a Content-Length past the ceiling
	flagAccept     = 3 << 14 // Accept-Encoding: acceptEncodings[(flags&flagAccept)>>14]
	flagRotate     = 7 << 16 // rotate the order of the optional headers by 0 to 7
	flagPadding    = 1 << 19 // "X-Pad-A: 0", "X-Pad-B:" (empty), "X-Pad-C: 0" before them
	flagDouble     = 7 << 20 // send one optional header on two lines: doubled[(flags&flagDouble)>>20]
)

// doubled are the headers flagDouble repeats (index 0: none); the
// second line comes after the other optional headers.
var doubled = [8]uint32{0, flagCT, flagCE, flagMCPVersion, flagMCPMethod, flagMCPName, flagA2AVersion, flagOrigin}

// doubledBit returns the flag bit of the header sent on two lines, or 0.
func doubledBit(flags uint32) uint32 { return doubled[(flags&flagDouble)>>20] & flags }

// acceptEncodings are the Accept-Encoding values sent (index 0: none) and
// the codings each lets the server use for an answer.
var acceptEncodings = []struct {
	header string
	ok     map[string]bool
}{
	{"", nil},
	{"gzip", map[string]bool{"gzip": true}},
	{"zstd;q=0.5, gzip;q=0, br", map[string]bool{"zstd": true}},
	{"br, identity;q=1, *;q=0", nil},
}

var serverPaths = []string{"/mcp", "/a2a", "/nope", "/mcp/"}

// mcpVersions are the MCP protocol versions served (contract §4).
var mcpVersions = map[string]bool{"2026-07-28": true, "2025-11-25": true, "2025-06-18": true, "2025-03-26": true}

// headerValue keeps the bytes a client can send in a header value.
func headerValue(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\t' || (c >= 0x20 && c < 0x7f) {
			b = append(b, c)
		}
	}
	return string(b)
}

// originAllowed is the contract's Origin rule: loopback origins only
// (localhost, 127.0.0.0/8, [::1], any scheme and port). It returns 1 for
// allowed, 0 for refused, -1 when the value is no origin a browser sends
// and the contract does not say (a port that is not a port number).
func originAllowed(o string) int {
	o = strings.Trim(o, " \t")
	i := strings.Index(o, "://")
	if i <= 0 {
		return 0
	}
	hostport := strings.ToLower(o[i+3:])
	if strings.ContainsAny(hostport, "/?#@") {
		return 0
	}
	host, port, hasPort := hostport, "", false
	if strings.HasPrefix(hostport, "[") {
		end := strings.IndexByte(hostport, ']')
		if end < 0 {
			return 0
		}
		host, port = hostport[:end+1], hostport[end+1:]
		if port != "" {
			if port[0] != ':' {
				return 0
			}
			port, hasPort = port[1:], true
		}
	} else if c := strings.LastIndexByte(hostport, ':'); c >= 0 {
		host, port, hasPort = hostport[:c], hostport[c+1:], true
	}
	loopback := host == "localhost" || host == "[::1]"
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() && a.As4()[0] == 127 {
		loopback = true
	}
	if !loopback {
		return 0
	}
	if hasPort {
		if n, err := strconv.Atoi(port); port != "" && (err != nil || n > 65535 || port[0] == '+' || port[0] == '-') {
			return -1
		}
	}
	return 1
}

// refMediaType is row 3 for a Content-Type that is present: 1 accepted,
// 0 refused, -1 when the contract leaves it open. It reads the value with
// mime.ParseMediaType, not as the server does, and adds what that parser
// does not know of HTTP (RFC 9110 §5.6.6, §8.3.1):
//
//   - two lines fail the row even when they agree (contract);
//   - the media type must be application/json (any case), and a charset
//     parameter, if any, must name UTF-8 (contract, RFC 8259 §8.1);
//   - empty parameters (";;", "; ;") are allowed by RFC 9110's grammar,
//     where mime.ParseMediaType takes only one trailing ';': each
//     parameter is parsed on its own, split at the ';' outside quoted
//     strings;
//   - a parameter that holds no '=' is no parameter: refused, and so is
//     one that mime.ParseMediaType cannot read (an empty value "x=", a
//     space in a name or a value, an unterminated quote): RFC 9110 calls
//     them malformed;
//   - RFC 2231's name*= forms are not HTTP's: such a parameter is just an
//     unknown one, never a charset (mime.ParseMediaType would decode it);
//   - open (-1) where mime.ParseMediaType reads otherwise than RFC 9110:
//     a backslash in a quoted string (mime resolves it only before its
//     tspecials; RFC 9110 before any character: charset="utf\-8" is
//     utf-8), '{' or '}' outside quotes (tchar excludes them, mime's
//     tokens do not), and white space other than SP and HTAB (mime trims
//     any Unicode space).
func refMediaType(h reqHeader) int {
	if h.lines > 1 {
		return 0
	}
	segs := splitParams(h.v)
	if mt, _, err := mime.ParseMediaType(segs[0]); err != nil || mt != "application/json" {
		return 0
	}
	verdict := 1
	for _, seg := range segs[1:] {
		if strings.Trim(seg, " \t") == "" {
			continue
		}
		name, _, hasEq := strings.Cut(seg, "=")
		if !hasEq {
			return 0
		}
		if (strings.Contains(seg, `"`) && strings.Contains(seg, `\`)) || strings.ContainsAny(seg, "{}\v\f\r\n\u0085\u00a0") {
			verdict = -1
			continue
		}
		name = strings.Trim(name, " \t")
		_, params, err := mime.ParseMediaType("application/json;" + seg)
		switch {
		case strings.Contains(name, "*"):
			// RFC 2231 (charset*=, charset*0=): not a charset in HTTP;
			// mime's reading of its value is RFC 2231's, not RFC 9110's.
			if err != nil {
				verdict = -1
			}
		case err != nil:
			return 0
		case strings.EqualFold(name, "charset") && !strings.EqualFold(params["charset"], "utf-8"):
			return 0
		}
	}
	return verdict
}

// splitParams splits a Content-Type value at each ';' outside a quoted
// string: the media type, then one piece per parameter.
func splitParams(v string) []string {
	var out []string
	start, quoted := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case !quoted && c == ';':
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

// parseCodings is row 4: the codings a Content-Encoding value stacks
// (identity and empty elements do not count), or ok = false.
func parseCodings(v string) (header string, ok bool) {
	var list []string
	for _, tok := range strings.Split(v, ",") {
		tok = strings.ToLower(strings.Trim(tok, " \t"))
		switch tok {
		case "", "identity":
		case "gzip", "x-gzip", "deflate", "zstd":
			list = append(list, tok)
		default:
			return "", false
		}
	}
	if len(list) > 2 {
		return "", false
	}
	return strings.Join(list, ", "), true
}

type serverInput struct {
	body                      []byte
	ct, ce, mpv, mmeth, mname string
	a2av, origin              string
	flags                     uint32
}

func FuzzServer(f *testing.F) {
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`
	call2026 := `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	send := `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"}]}}}`
	send03 := `{"jsonrpc":"2.0","id":"s","method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`
	all := uint32(flagCT | flagMCPVersion)
	seeds := []serverInput{
		{[]byte(call), "application/json", "", "2025-11-25", "", "", "", "", all},
		{[]byte(call2026), "application/json; charset=utf-8", "", "2026-07-28", "tools/call", "echo", "", "", all | flagMCPMethod | flagMCPName},
		{[]byte(call2026), "application/json", "gzip", "2026-07-28", "=?base64?dG9vbHMvY2FsbA==?=", "echo", "", "http://localhost:3000", all | flagMCPMethod | flagMCPName | flagOrigin | flagCE | flagCompress},
		{[]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "application/json", "", "2025-06-18", "", "", "", "", all},
		{[]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`), "", "", "", "", "", "", "", 0},
		{[]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`), "application/json", "zstd, gzip", "2025-03-26", "tools/list", "", "", "", all | flagCE | flagCompress | flagChunked},
		{[]byte(`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"rpcedge://about"}}`), "application/json", "deflate", "2025-11-25", "", "rpcedge://about", "", "", all | flagCE | flagCompress | flagMCPName},
		{[]byte(`{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"é"}}}`), "application/json", "", "2025-11-25", "", "", "", "", all},
		{[]byte(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":1e400,"b":2}}}`), "application/json", "", "", "", "", "", "", flagCT},
		{[]byte(`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`), "application/json", "", "2025-11-25", "", "", "", "", all},
		{[]byte(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`), "application/json", "", "2025-11-25", "", "", "", "", all},
		{[]byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), "application/json", "", "2099-01-01", "", "", "", "", all},
		{[]byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`), "application/json", "", "", "", "", "", "", flagCT},
		{[]byte(`{"a":[1,}`), "application/json", "", "", "", "", "", "", flagCT | flagChunked},
		{[]byte(call), "text/plain", "", "", "", "", "", "", flagCT},
		{[]byte(call), "application/json", "br", "", "", "", "", "", flagCT | flagCE},
		{[]byte(call), "application/json", "gzip, gzip, gzip", "", "", "", "", "", flagCT | flagCE},
		{[]byte(call), "application/json", "", "", "", "", "", "https://evil.example", flagCT | flagOrigin},
		{[]byte(call), "application/json", "", "", "", "", "", "", flagCT | flagHugeLength},
		{[]byte(call), "", "", "", "", "", "", "http://127.0.0.1:8080", flagOrigin | 2<<11},
		{[]byte(""), "", "", "", "", "", "", "http://[::1]", flagOrigin | 3<<11},
		{[]byte(send), "application/json", "", "", "", "", "1.0", "", flagCT | flagA2AVersion | 1},
		{[]byte(send03), "application/json", "gzip", "", "", "", "0.3", "", flagCT | flagA2AVersion | flagCE | flagCompress | 1},
		{[]byte(`{"jsonrpc":"2.0","id":1e400,"method":"GetTask","params":{"id":"nope"}}`), "application/json", "", "", "", "", "", "", flagCT | 1},
		{[]byte(`{"jsonrpc":"2.0","id":null,"method":"SendStreamingMessage","params":{}}`), "application/json", "", "", "", "", "", "", flagCT | 1},
		{[]byte(`{"jsonrpc":"2.0","method":"SendMessage"}`), "application/json", "", "", "", "", "2.0", "", flagCT | flagA2AVersion | 1},
		{[]byte(call), "application/json", "", "", "", "", "", "", flagCT | 2},
		{[]byte(call), "application/json", "", "", "", "", "", "", flagCT | 3},
		{[]byte(call), "application/json", "", strings.Repeat("x", 9000), "", "", "", "", flagCT | flagMCPVersion},
		{[]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("long text ", 300) + `"}}}`), "application/json", "", "2025-11-25", "", "", "", "", all | 1<<14},
		{[]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("long text ", 300) + `"}}}`), "application/json", "", "2025-11-25", "", "", "", "", all | 2<<14},
		{[]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`), "application/json", "", "2025-11-25", "", "", "", "", all | 3<<14},
		{[]byte(`{"jsonrpc":"2.0","id":"t","method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"` + strings.Repeat("é", 800) + `"}]}}}`), "application/json", "", "", "", "", "1.0", "", flagCT | flagA2AVersion | 1 | 2<<14},
	}
	// Row 3: parameters, quoting, empty values, case.
	for _, ct := range []string{
		"application/json; charset=latin1", `application/json; charset="utf-8"`, `application/json; charset="latin1"`,
		"", ";;", "application/json;;", "application/json; ;charset=utf-8;", "application/json; x", "application/json; x=",
		"APPLICATION/JSON; CHARSET=UTF-8", "Application/Json;charset=Utf-8", "application/json ; charset = utf-8",
		"application/json; charset=utf-8; charset=latin1", "application/json; charset*=utf-8''latin1",
		`application/json; x="a;b"`, `application/json; charset="utf\-8"`, "application/json, application/json", "application/jsonx",
	} {
		seeds = append(seeds, serverInput{[]byte(call), ct, "", "", "", "", "", "", flagCT})
	}
	for _, s := range append(seeds, dispatchSeeds()...) {
		f.Add(s.body, s.ct, s.ce, s.mpv, s.mmeth, s.mname, s.a2av, s.origin, s.flags)
	}
	srv := startServer(f)
	var execs atomic.Uint64
	f.Fuzz(func(t *testing.T, body []byte, ct, ce, mpv, mmeth, mname, a2av, origin string, flags uint32) {
		in := serverInput{body, headerValue(ct), headerValue(ce), headerValue(mpv), headerValue(mmeth), headerValue(mname), headerValue(a2av), headerValue(origin), flags}
		checkServer(t, srv, in)
		if logs := srv.log.Take(); strings.Contains(logs, "panicked") || strings.Contains(logs, "appended no result") {
			t.Fatalf("the server logged a handler failure for %+v:\n%s", in, logs)
		}
		if execs.Add(1)%256 == 1 {
			checkNoPanics(t, srv)
		}
	})
}

func checkNoPanics(t *testing.T, srv *testServer) {
	t.Helper()
	var resp fasthttp.Response
	if err := srv.roundTrip([]byte("GET /metrics HTTP/1.1\r\nHost: fuzz\r\n\r\n"), &resp); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(resp.Body()), "\n") {
		if strings.HasPrefix(line, "rpcedge_panics_total") && !strings.HasSuffix(line, "} 0") {
			t.Fatalf("metrics: %s", line)
		}
	}
}

// buildRequest writes the raw HTTP/1.1 request for in.
func buildRequest(tb testing.TB, in serverInput) (raw []byte, method, path string, wireBody []byte) {
	path = serverPaths[in.flags&flagPath]
	method = [...]string{"POST", "POST", "GET", "OPTIONS"}[(in.flags&flagMethod)>>11]
	wireBody = in.body
	if ce := headersOf(in).ce; in.flags&flagCompress != 0 && ce.present {
		if codings, ok := parseCodings(ce.v); ok && codings != "" {
			wireBody = compress(tb, codings, in.body)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: fuzz\r\n", method, path)
	type header struct {
		bit         uint32
		name, value string
	}
	optional := []header{
		{flagCT, "Content-Type", in.ct},
		{flagCE, "Content-Encoding", in.ce},
		{flagMCPVersion, "MCP-Protocol-Version", in.mpv},
		{flagMCPMethod, "Mcp-Method", in.mmeth},
		{flagMCPName, "Mcp-Name", in.mname},
		{flagA2AVersion, "A2A-Version", in.a2av},
		{flagOrigin, "Origin", in.origin},
	}
	if in.flags&flagPadding != 0 {
		// A value, an empty value, a value: the layout after which
		// fasthttp's Peek returns nil for an empty header.
		b.WriteString("X-Pad-A: 0\r\nX-Pad-B: \r\nX-Pad-C: 0\r\n")
	}
	rot := int(in.flags&flagRotate) >> 16
	for i := range optional {
		h := optional[(i+rot)%len(optional)]
		if in.flags&h.bit != 0 {
			fmt.Fprintf(&b, "%s: %s\r\n", h.name, h.value)
		}
	}
	for _, h := range optional {
		if h.bit == doubledBit(in.flags) {
			fmt.Fprintf(&b, "%s: %s\r\n", h.name, h.value)
		}
	}
	if ae := acceptEncodings[(in.flags&flagAccept)>>14]; ae.header != "" {
		fmt.Fprintf(&b, "Accept-Encoding: %s\r\n", ae.header)
	}
	switch {
	case in.flags&flagHugeLength != 0:
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", decode.DefaultMaxBytes+1)
		b.Write(wireBody) // the rest never comes: the server must not wait for it
		if len(wireBody) == 0 {
			// fasthttp calls the handler once the first body byte is in
			// (contract §3: rows 1–6 are decided after a prefetch of at
			// least one byte), so a request that sends none is cut by the
			// read timeout, as the contract has it, instead of answered.
			b.WriteByte(' ')
		}
	case in.flags&flagChunked != 0:
		b.WriteString("Transfer-Encoding: chunked\r\n\r\n")
		for rest := wireBody; len(rest) > 0; {
			n := min(len(rest), 1+len(rest)/3)
			fmt.Fprintf(&b, "%x\r\n", n)
			b.Write(rest[:n])
			b.WriteString("\r\n")
			rest = rest[n:]
		}
		b.WriteString("0\r\n\r\n")
	default:
		fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(wireBody))
		b.Write(wireBody)
	}
	return b.Bytes(), method, path, wireBody
}

func hasHeader(resp *fasthttp.Response, name string) bool {
	return bytes.Contains(bytes.ToLower(resp.Header.Header()), []byte("\r\n"+strings.ToLower(name)+":"))
}

func checkServer(t *testing.T, srv *testServer, in serverInput) {
	t.Helper()
	raw, method, path, wireBody := buildRequest(t, in)
	var resp fasthttp.Response
	if err := srv.roundTrip(raw, &resp); err != nil {
		t.Fatalf("%+v: %v", in, err)
	}
	st := resp.StatusCode()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("request:\n%q\nanswer %d: %q\n"+format, append([]any{raw, st, resp.Body()}, args...)...)
	}
	if st == 431 {
		if len(raw)-len(wireBody) < 8<<10-200 {
			fail("431 for a header block of %d bytes", len(raw)-len(wireBody))
		}
		return
	}
	if st == 400 && string(resp.Body()) == "malformed request" {
		fail("fasthttp could not parse the request")
	}
	allowed := allowedPairs[path]
	if allowed == nil { // not an endpoint
		if st != 404 {
			fail("want 404 on %s", path)
		}
		return
	}
	hdr := headersOf(in)
	originAsk := originAllowed(in.origin)
	if hdr.origin.lines > 1 {
		originAsk = 0 // two lines fail their row, even when they agree
	}
	hasOrigin := hdr.origin.present
	switch method {
	case "GET":
		if st != 405 || string(resp.Header.Peek("Allow")) != "POST, OPTIONS" {
			fail("want 405 with Allow: POST, OPTIONS")
		}
		return
	case "OPTIONS":
		switch {
		case !hasOrigin:
			if st != 204 || hasHeader(&resp, "Access-Control-Allow-Origin") {
				fail("preflight without Origin: want 204 without CORS headers")
			}
		case originAsk == 1:
			if st != 204 || string(resp.Header.Peek("Access-Control-Allow-Origin")) != strings.Trim(in.origin, " \t") {
				fail("preflight from an allowed origin: want 204 with Access-Control-Allow-Origin")
			}
		case originAsk == 0:
			if st != 403 {
				fail("preflight from a refused origin: want 403")
			}
		}
		return
	}

	// A POST to an endpoint.
	if st == 429 || st == 503 {
		return
	}
	code, id, result := 0, []byte(nil), []byte(nil)
	if st == 202 {
		if len(resp.Body()) != 0 || hasHeader(&resp, "Content-Type") {
			fail("a 202 has no body and no Content-Type")
		}
	} else {
		if ce := string(resp.Header.Peek("Content-Encoding")); ce != "" {
			if !acceptEncodings[(in.flags&flagAccept)>>14].ok[ce] {
				fail("answer compressed with %q; Accept-Encoding %q does not allow it", ce, acceptEncodings[(in.flags&flagAccept)>>14].header)
			}
			plain, err, over := refStage(ce, resp.Body(), 64*mib)
			if err != nil || over {
				fail("the %s answer does not decompress: %v", ce, err)
			}
			if len(plain) < 1<<10 {
				fail("an answer of %d bytes compressed: the contract compresses from 1 KiB", len(plain))
			}
			resp.Header.Del("Content-Encoding")
			resp.SetBody(plain)
		}
		code, id, result = parseAnswer(t, fail, &resp)
	}
	if !allowed[pair{st, code}] {
		fail("(%d, %d) is not an answer contract §2 allows on %s", st, code, path)
	}
	if st == 400 && (code == -32602 || code == -32021) && (in.flags&flagMCPVersion == 0 || strings.Trim(in.mpv, " \t") != "2026-07-28") {
		fail("(%d, %d) is an answer of §4's 2026-07-28 rules; the request did not ask for 2026-07-28", st, code)
	}

	// Rows 1 to 10, from the headers and the body.
	nullID := []byte("null")
	want := func(wst, wcode int, wid []byte, row string) {
		t.Helper()
		if st != wst || code != wcode || !bytes.Equal(id, wid) {
			fail("%s: want %d / %d with id %s; got %d / %d with id %s", row, wst, wcode, wid, st, code, id)
		}
	}
	if hasOrigin && originAsk == 0 {
		want(403, -32600, nullID, "row 1 (Origin)")
		return
	}
	if hasOrigin && originAsk == -1 {
		if st == 403 {
			return // either way
		}
	}
	if hdr.ct.present {
		switch refMediaType(hdr.ct) {
		case 0:
			want(415, -32600, nullID, "row 3 (Content-Type)")
			return
		case -1:
			if st == 415 {
				return // either way (refMediaType)
			}
		}
	}
	codings, ok := "", true
	if hdr.ce.present {
		codings, ok = parseCodings(hdr.ce.v)
	}
	if !ok {
		want(415, -32600, nullID, "row 4 (Content-Encoding)")
		return
	}
	if in.flags&flagHugeLength != 0 {
		want(413, -32600, nullID, "row 5 (Content-Length)")
		return
	}
	ids := decode.IDsMCP
	if path == "/a2a" {
		ids = decode.IDsJSONRPC
	}
	decoded := wireBody
	if codings != "" {
		var err error
		var over bool
		decoded, err, over = refBody(codings, wireBody, decode.DefaultMaxBytes)
		if err != nil || over {
			// A broken or oversized stream: where it fails against a
			// failure in the decoded bytes depends on the decoder's
			// buffering; every candidate row answers with id null.
			if !bytes.Equal(id, nullID) || !(pair{st, code} == pair{400, -32700} || pair{st, code} == pair{400, -32600} || pair{st, code} == pair{413, -32600}) {
				fail("broken or oversized %s stream (%v, over %v): want 400/-32700, 400/-32600 or 413/-32600 with id null", codings, err, over)
			}
			return
		}
	}
	exp := expect(decoded, decode.Options{IDs: ids})
	switch exp.err {
	case nil:
	case decode.ErrEnvelope:
		wid := nullID
		if exp.echo {
			wid = exp.id
		}
		want(400, -32600, wid, "row 10 (envelope)")
		return
	case decode.ErrTooLarge:
		want(413, -32600, nullID, "row 7d (ceiling)")
		return
	case decode.ErrSyntax:
		want(400, -32700, nullID, "row 7b (syntax)")
		return
	default:
		want(400, -32600, nullID, fmt.Sprintf("rows 7a, 7c, 8, 9 (%v)", exp.err))
		return
	}
	// A valid message: rows 11 to 19 (dispatch_ref_test.go).
	var o outcome
	if path == "/a2a" {
		o = refA2A(hdr, exp)
	} else {
		o = refMCP(hdr, exp)
	}
	if !o.allows(pair{st, code}) {
		fail("%s: want one of %v; got %d / %d", o.why, o.pairs, st, code)
	}
	if st == 202 {
		if exp.kind != decode.KindNotification {
			fail("a request answered 202")
		}
		return
	}
	wid := exp.id
	if exp.kind == decode.KindNotification {
		wid = nullID // refused at row 11 or 12
	}
	if !bytes.Equal(id, wid) {
		fail("the answer carries id %s, want %s verbatim", id, wid)
	}
	if st == 200 && code == 0 && o.result != nil {
		if msg := o.result(result); msg != "" {
			fail("%s: %s", o.why, msg)
		}
	}
}

// parseAnswer checks a JSON-RPC answer and returns its code (0 for a
// result), raw id and raw result (nil for an error).
func parseAnswer(t *testing.T, fail func(string, ...any), resp *fasthttp.Response) (int, []byte, []byte) {
	t.Helper()
	body := resp.Body()
	if ct := string(resp.Header.Peek("Content-Type")); ct != "application/json" {
		fail("Content-Type %q, want application/json", ct)
	}
	if !decode.Valid(body) || !json.Valid(body) {
		fail("the answer is not valid JSON")
	}
	members, ok := refMembers(body)
	if !ok {
		fail("the answer is not an object")
	}
	var jsonrpc, id, result, errObj []byte
	for _, m := range members {
		switch m.name {
		case "jsonrpc":
			jsonrpc = m.value
		case "id":
			id = m.value
		case "result":
			result = m.value
		case "error":
			errObj = m.value
		default:
			fail("unexpected member %q", m.name)
		}
	}
	if string(jsonrpc) != `"2.0"` || id == nil || (result == nil) == (errObj == nil) || len(members) != 3 {
		fail("want {\"jsonrpc\":\"2.0\",\"id\":…,\"result\"|\"error\":…}")
	}
	if result != nil {
		return 0, id, result
	}
	var e struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(errObj, &e); err != nil || e.Code == nil || e.Message == nil || *e.Code == 0 {
		fail("error member %s: %v", errObj, err)
	}
	return *e.Code, id, nil
}
