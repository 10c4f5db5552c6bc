package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// call builds a tools/call request with the given params members.
func call(params string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` + params + `}}`
}

// req builds a request of method with the given params members.
func req(method, params string) string {
	return `{"jsonrpc":"2.0","id":7,"method":"` + method + `","params":{` + params + `}}`
}

const echoArgs = `"name":"echo","arguments":{"text":"hi"}`

func TestHeaderRules(t *testing.T) {
	_, ep := testServer(t)
	v25 := func(more ...string) hdr { return append(hdr{HeaderProtocolVersion, "2025-11-25"}, more...) }
	const (
		ok       = 0
		mismatch = CodeHeaderMismatch
		badVer   = CodeUnsupportedVersion
		params   = decode.CodeInvalidParams
		notFound = decode.CodeMethodNotFound
	)
	tests := []struct {
		name    string
		headers hdr
		body    string
		status  int
		code    int
	}{
		// MCP-Protocol-Version.
		{"no version header is 2025-03-26, no _meta needed", nil, call(echoArgs), 200, ok},
		{"no version header: _meta not consulted", nil, call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01"}`), 200, ok},
		{"lower-case header name", hdr{"mcp-protocol-version", "2025-06-18"}, call(echoArgs), 200, ok},
		{"unserved version", hdr{HeaderProtocolVersion, "2024-11-05"}, call(echoArgs), 400, badVer},
		{"unserved version, near miss", hdr{HeaderProtocolVersion, "2026-07-28x"}, call(echoArgs), 400, badVer},
		{"unserved version, case", hdr{HeaderProtocolVersion, "DRAFT"}, call(echoArgs), 400, badVer},
		{"empty version header", hdr{HeaderProtocolVersion, ""}, call(echoArgs), 400, badVer},
		{"unserved version on a notification", hdr{HeaderProtocolVersion, "1.0"}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 400, badVer},
		{"unserved version before a header mismatch", hdr{HeaderProtocolVersion, "1.0", HeaderMethod, "other"}, call(echoArgs), 400, badVer},
		// Repeated lines are one combined value (RFC 9110 §5.3; contract
		// §2): never judged by the first line alone.
		{"two version lines that agree", hdr{HeaderProtocolVersion, "2025-11-25", HeaderProtocolVersion, "2025-11-25"}, call(echoArgs), 400, badVer},
		{"two version lines, the first served", hdr{HeaderProtocolVersion, "2025-11-25", HeaderProtocolVersion, "1999-01-01"}, call(echoArgs), 400, badVer},
		{"2026: two Mcp-Method lines, the first matching", v26("tools/call", HeaderMethod, "tools/list", HeaderName, "echo"), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: two Mcp-Method lines that agree", v26("tools/call", HeaderMethod, "tools/call", HeaderName, "echo"), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: two Mcp-Name lines, the first matching", v26("tools/call", HeaderName, "echo", HeaderName, "add"), call(echoArgs + "," + meta26), 400, mismatch},
		{"2025: two Mcp-Name lines that agree", v25(HeaderName, "echo", HeaderName, "echo"), call(echoArgs), 400, mismatch},
		// Two lines fail whatever they combine into: the lines "test://a"
		// and "b" make the uri "test://a, b", but a gateway reading one
		// line would route on "test://a" (README bug 22).
		{"2025: two Mcp-Name lines combining into the uri", v25(HeaderName, "test://a", HeaderName, "b"), req("resources/read", `"uri":"test://a, b"`), 400, mismatch},
		{"2026: two Mcp-Name lines combining into the name", v26("tools/call", HeaderName, "ec", HeaderName, "ho"), call(`"name":"ec, ho",` + meta26), 400, mismatch},
		{"2025: two Mcp-Method lines on a notification", v25(HeaderMethod, "notifications/initialized", HeaderMethod, "notifications/initialized"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 400, mismatch},

		// 2026-07-28: _meta.
		{"2026: complete request", v26("tools/call", HeaderName, "echo"), call(echoArgs + "," + meta26), 200, ok},
		// SEP-2575, as the conformance suite checks it: what every request
		// must carry and lacks is 400 / -32602; a version that differs from
		// the header, or a key given twice, is -32020.
		{"2026: no params", v26("tools/call", HeaderName, "echo"), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, 400, params},
		{"2026: params not an object", v26("tools/call", HeaderName, "echo"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`, 400, params},
		{"2026: no _meta", v26("tools/call", HeaderName, "echo"), call(echoArgs), 400, params},
		{"2026: _meta not an object", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":"2026-07-28"`), 400, params},
		{"2026: _meta without the key", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}`), 400, params},
		{"2026: _meta without clientCapabilities", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), 400, params},
		{"2026: clientCapabilities not an object", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}`), 400, params},
		// Below params the last one wins (contract §2; only _meta and its
		// protocol version key twice are refused).
		{"2026: clientCapabilities twice, the last an object", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[],"io.modelcontextprotocol/clientCapabilities":{}}`), 200, ok},
		{"2026: clientCapabilities twice, the last not an object", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientCapabilities":1}`), 400, params},
		{"2026: clientInfo is optional", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`), 200, ok},
		{"2026: _meta key differs", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{}}`), 400, mismatch},
		{"2026: _meta key not a string", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":20260728}`), 400, params},
		{"2026: _meta key case", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/ProtocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`), 400, params},
		{"2026: _meta twice", v26("tools/call", HeaderName, "echo"), call(echoArgs + "," + meta26 + "," + meta26), 400, mismatch},
		{"2026: _meta key twice, same value", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), 400, mismatch},
		{"2026: _meta key twice, one escaped", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol\/protocolVersion":"2026-07-28"}`), 400, mismatch},
		{"2026: _meta name escaped", v26("tools/call", HeaderName, "echo"), call(echoArgs + `,"\u005fmeta":{"io.modelcontextprotocol\/protocolVersion":"2026\u002d07-28","io.modelcontextprotocol\/client\u0043apabilities":{}}`), 200, ok},
		{"2026: _meta on a notification is not read", v26("notifications/initialized"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 202, ok},

		// 2026-07-28: Mcp-Method.
		{"2026: no Mcp-Method", hdr{HeaderProtocolVersion, "2026-07-28", HeaderName, "echo"}, call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Method differs", v26("tools/list", HeaderName, "echo"), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Method case", v26("TOOLS/CALL", HeaderName, "echo"), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Method lower-case header name", hdr{HeaderProtocolVersion, "2026-07-28", "mcp-method", "tools/call", "MCP-NAME", "echo"}, call(echoArgs + "," + meta26), 200, ok},
		{"2026: Mcp-Method against an escaped method", v26("tools/call", HeaderName, "echo"), `{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{` + echoArgs + "," + meta26 + `}}`, 200, ok},
		{"2026: Mcp-Method base64", v26("=?base64?dG9vbHMvY2FsbA==?=", HeaderName, "echo"), call(echoArgs + "," + meta26), 200, ok},
		{"2026: Mcp-Method bad base64", v26("=?base64?dG9vbHMvY2FsbA?=", HeaderName, "echo"), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Method empty", v26("", HeaderName, "echo"), call(echoArgs + "," + meta26), 400, mismatch},

		// 2026-07-28: Mcp-Name.
		{"2026: no Mcp-Name for tools/call", v26("tools/call"), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Name differs", v26("tools/call", HeaderName, "add"), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Name case", v26("tools/call", HeaderName, "Echo"), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Name base64", v26("tools/call", HeaderName, "=?base64?ZWNobw==?="), call(echoArgs + "," + meta26), 200, ok},
		{"2026: Mcp-Name base64 of non-ASCII name", v26("tools/call", HeaderName, "=?base64?Y2Fmw6k=?="), call(`"name":"caf\u00e9",` + meta26), 200, ok},
		{"2026: Mcp-Name base64 without padding", v26("tools/call", HeaderName, "=?base64?ZWNobw?="), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Name base64 bad characters", v26("tools/call", HeaderName, "=?base64?ZW!!bw==?="), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Name base64 non-canonical bits", v26("tools/call", HeaderName, "=?base64?ZWNobx==?="), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Name upper-case markers are literal", v26("tools/call", HeaderName, "=?BASE64?ZWNobw==?="), call(echoArgs + "," + meta26), 400, mismatch},
		{"2026: Mcp-Name sentinel without suffix is literal", v26("tools/call", HeaderName, "=?base64?ZWNobw=="), call(`"name":"=?base64?ZWNobw==",` + meta26), 200, notFound},
		{"2026: Mcp-Name literal that looks encoded", v26("tools/call", HeaderName, "=?base64?PT9iYXNlNjQ/ZWNobz89?="), call(`"name":"=?base64?echo?=",` + meta26), 200, notFound},
		{"2026: name absent, Mcp-Name present", v26("tools/call", HeaderName, "echo"), call(meta26), 400, mismatch},
		{"2026: name twice", v26("tools/call", HeaderName, "echo"), call(`"name":"echo","name":"echo",` + meta26), 400, mismatch},
		{"2026: name not a string", v26("tools/call", HeaderName, "5"), call(`"name":5,` + meta26), 400, mismatch},
		{"2026: unknown tool with matching headers", v26("tools/call", HeaderName, "nope"), call(`"name":"nope",` + meta26), 200, notFound},
		{"2026: prompts/get needs Mcp-Name", v26("prompts/get"), req("prompts/get", `"name":"greet","arguments":{"name":"x"},`+meta26), 400, mismatch},
		{"2026: prompts/get with Mcp-Name", v26("prompts/get", HeaderName, "greet"), req("prompts/get", `"name":"greet","arguments":{"name":"x"},`+meta26), 200, ok},
		{"2026: resources/read Mcp-Name is the uri", v26("resources/read", HeaderName, "test://about"), req("resources/read", `"uri":"test://about",`+meta26), 200, ok},
		{"2026: resources/read Mcp-Name is not params.name", v26("resources/read", HeaderName, "about"), req("resources/read", `"uri":"test://about","name":"about",`+meta26), 400, mismatch},
		{"2026: resources/read needs Mcp-Name", v26("resources/read"), req("resources/read", `"uri":"test://about",`+meta26), 400, mismatch},
		{"2026: Mcp-Name ignored on tools/list", v26("tools/list", HeaderName, "whatever"), req("tools/list", meta26), 200, ok},
		{"2026: Mcp-Name ignored on server/discover", v26("server/discover", HeaderName, "x"), req("server/discover", meta26), 200, ok},
		{"2026: server/discover needs _meta", v26("server/discover"), req("server/discover", ``), 400, params},
		{"2026: unknown method is checked before routing", v26("foo/bar"), req("foo/bar", ``), 400, params},
		{"2026: unknown method with headers", v26("foo/bar"), req("foo/bar", meta26), 404, notFound},

		// 2026-07-28 notifications: headers alone.
		{"2026: notification without headers", hdr{HeaderProtocolVersion, "2026-07-28"}, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, 202, ok},
		{"2026: notification with matching Mcp-Method", v26("notifications/cancelled"), `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, 202, ok},
		{"2026: notification with disagreeing Mcp-Method", v26("notifications/other"), `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, 400, mismatch},
		{"2026: notification with Mcp-Name ignored", v26("notifications/cancelled", HeaderName, "x"), `{"jsonrpc":"2.0","method":"notifications/cancelled"}`, 202, ok},
		{"2026: tools/call notification, Mcp-Name disagrees", v26("tools/call", HeaderName, "add"), `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`, 400, mismatch},
		{"2026: tools/call notification, no headers", hdr{HeaderProtocolVersion, "2026-07-28"}, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}`, 202, ok},

		// Earlier versions: headers optional, present ones must match.
		{"2025: no Mcp headers", v25(), call(echoArgs), 200, ok},
		{"2025: matching headers", v25(HeaderMethod, "tools/call", HeaderName, "echo"), call(echoArgs), 200, ok},
		{"2025: _meta ignored", v25(), call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`), 200, ok},
		{"2025: Mcp-Method differs", v25(HeaderMethod, "tools/list"), call(echoArgs), 400, mismatch},
		{"2025: Mcp-Name differs", v25(HeaderName, "add"), call(echoArgs), 400, mismatch},
		{"2025: Mcp-Name base64", v25(HeaderName, "=?base64?ZWNobw==?="), call(echoArgs), 200, ok},
		{"2025: Mcp-Name, name absent", v25(HeaderName, "echo"), call(`"arguments":{}`), 400, mismatch},
		{"2025: no Mcp-Name, name absent", v25(), call(`"arguments":{}`), 200, params},
		{"2025: Mcp-Name, name twice", v25(HeaderName, "echo"), call(`"name":"echo","name":"echo"`), 400, mismatch},
		{"2025: no Mcp-Name, name twice", v25(), call(`"name":"echo","name":"echo"`), 200, params},
		{"2025: Mcp-Name, name not a string", v25(HeaderName, "true"), call(`"name":true`), 400, mismatch},
		{"2025: no Mcp-Name, name not a string", v25(), call(`"name":true`), 200, params},
		{"2025: Mcp-Name, params not an object", v25(HeaderName, "echo"), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"echo"}`, 400, mismatch},
		{"2025: no Mcp-Name, params not an object", v25(), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"echo"}`, 200, params},
		{"2025: Mcp-Name on ping ignored", v25(HeaderName, "x"), req("ping", ""), 200, ok},
		{"2025: notification with disagreeing Mcp-Method", v25(HeaderMethod, "x"), `{"jsonrpc":"2.0","method":"notifications/initialized"}`, 400, mismatch},
		{"2025-03-26 (absent): Mcp-Method differs", hdr{HeaderMethod, "tools/list"}, call(echoArgs), 400, mismatch},
		{"2025-03-26 (absent): Mcp-Name differs", hdr{HeaderName, "x"}, call(echoArgs), 400, mismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := exchange(t, ep, tt.headers, tt.body)
			if a.Status != tt.status || a.Code != tt.code {
				t.Fatalf("got %d / %d (%s), want %d / %d", a.Status, a.Code, a.Msg, tt.status, tt.code)
			}
			if a.Code == mismatch && !strings.Contains(string(a.Data), `"header"`) {
				t.Errorf("-32020 data %s does not name the header", a.Data)
			}
			if a.Code == params && a.Status == 400 && !strings.Contains(string(a.Data), `"field"`) {
				t.Errorf("-32602 data %s does not name the field", a.Data)
			}
		})
	}
}

func TestUnsupportedVersionData(t *testing.T) {
	_, ep := testServer(t)
	for _, requested := range []string{"2024-11-05", "", `we"ird\`, "caf\xc3\xa9"} {
		a := exchange(t, ep, hdr{HeaderProtocolVersion, requested}, call(echoArgs))
		if a.Status != 400 || a.Code != CodeUnsupportedVersion {
			t.Fatalf("%q: %+v", requested, a)
		}
		var data struct {
			Supported []string `json:"supported"`
			Requested *string  `json:"requested"`
		}
		if err := json.Unmarshal(a.Data, &data); err != nil {
			t.Fatal(err)
		}
		want := []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"}
		if !reflect.DeepEqual(data.Supported, want) || data.Requested == nil || *data.Requested != requested {
			t.Errorf("%q: data %s", requested, a.Data)
		}
	}
}

func TestCheckStoresVersion(t *testing.T) {
	_, ep := testServer(t)
	for _, tc := range []struct {
		header string
		want   Version
	}{
		{"", Version20250326},
		{"2025-03-26", Version20250326},
		{"2025-06-18", Version20250618},
		{"2025-11-25", Version20251125},
		{"2026-07-28", Version20260728},
	} {
		var h fasthttp.RequestHeader
		if tc.header != "" {
			h.Set(HeaderProtocolVersion, tc.header)
			h.Set(HeaderMethod, "ping")
		}
		m := decodeOwn(t, []byte(req("ping", meta26)))
		var r fastserver.Request
		r.Reset(&h, &m, nil)
		r.Version = 99
		if e := ep.Check(&r); e != nil {
			t.Fatalf("%q: %v", tc.header, e)
		}
		if got := RequestVersion(&r); got != tc.want || r.Version != int(tc.want) {
			t.Errorf("%q: version %v (%d), want %v", tc.header, got, r.Version, tc.want)
		}
	}
}

// TestHeaderWhitespace shows that surrounding whitespace in header values,
// which HTTP does not count as part of the value, never reaches the
// comparison: fasthttp trims it while parsing (SEP-2243's "extra
// whitespace" conformance case).
func TestHeaderWhitespace(t *testing.T) {
	_, ep := testServer(t)
	raw := "POST /mcp HTTP/1.1\r\nHost: x\r\nMCP-Protocol-Version:  2026-07-28 \r\nMcp-Method:\ttools/call \r\nMcp-Name:  echo \t\r\n\r\n"
	var h fasthttp.RequestHeader
	if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		t.Fatal(err)
	}
	m := decodeOwn(t, []byte(call(echoArgs+","+meta26)))
	var r fastserver.Request
	r.Reset(&h, &m, nil)
	if a := serve(t, ep, &r); a.Status != 200 || a.Code != 0 {
		t.Fatalf("%+v", a)
	}
}

func TestHeaderValue(t *testing.T) {
	long := strings.Repeat("a", 1000)
	enc := "=?base64?" + b64.EncodeToString([]byte(long)) + "?="
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"plain", "plain", true},
		{"=?base64?SGVsbG8=?=", "Hello", true},
		{"=?base64?SGVsbG8sIOS4lueVjA==?=", "Hello, 世界", true},
		{"=?base64?IHBhZGRlZCA=?=", " padded ", true},
		{"=?base64??=", "", true},
		{"=?base64?SGVsbG8?=", "", false},
		{"=?base64?SGVs!!!bG8=?=", "", false},
		{"SGVsbG8=", "SGVsbG8=", true},
		{"=?base64?SGVsbG8=", "=?base64?SGVsbG8=", true},
		{"=?BASE64?SGVsbG8=?=", "=?BASE64?SGVsbG8=?=", true},
		{"=?base64?", "=?base64?", true},
		{enc, long, true},
	} {
		var buf [256]byte
		got, ok := headerValue([]byte(tc.in), &buf)
		if ok != tc.ok || ok && string(got) != tc.want {
			t.Errorf("headerValue(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		// headerCarries against the decoded value: the method's bytes, and
		// a JSON string (plain and escaped) of the same text or another.
		for _, w := range []string{tc.want, tc.want + "x", "Hello", "plain"} {
			want := tc.ok && w == tc.want
			if headerCarries([]byte(tc.in), []byte(w), false) != want {
				t.Errorf("headerCarries(%q, %q) != %v", tc.in, w, want)
			}
			for _, js := range []string{strconv.Quote(w), string(decode.AppendString(nil, w))} {
				if headerCarries([]byte(tc.in), []byte(js), true) != want {
					t.Errorf("headerCarries(%q, %s as a JSON string) != %v", tc.in, js, want)
				}
			}
			if esc := `"\u00` + fmt.Sprintf("%02x", 'H') + w[min(1, len(w)):] + `"`; len(w) > 0 && w[0] == 'H' {
				if headerCarries([]byte(tc.in), []byte(esc), true) != want {
					t.Errorf("headerCarries(%q, %s) != %v", tc.in, esc, want)
				}
			}
		}
	}
}

func TestStreamEndpoint(t *testing.T) {
	s, _ := testServer(t)
	ep := s.StreamEndpoint()
	if ep.Err != nil || ep.Path != Path {
		t.Fatal(ep)
	}
	tests := []struct {
		body      string
		status    int
		code      int
		stateless bool
	}{
		{call(echoArgs + "," + meta26), 200, 0, true},
		{call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}`), 200, 0, false},
		{call(echoArgs), 200, 0, false},
		{call(echoArgs + `,"_meta":{}`), 200, 0, false},
		{call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01"}`), 400, CodeUnsupportedVersion, false},
		{call(echoArgs + `,"_meta":{"io.modelcontextprotocol/protocolVersion":1}`), 200, decode.CodeInvalidParams, false},
		{call(echoArgs + "," + meta26 + "," + meta26), 200, decode.CodeInvalidParams, false},
		{req("initialize", meta26), 404, decode.CodeMethodNotFound, false},
		{req("initialize", `"protocolVersion":"2025-11-25"`), 200, 0, false},
		{`{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"x"}}}`, 202, 0, false},
	}
	for _, tt := range tests {
		// Headers, if any came, are not read on a stream.
		a := exchange(t, ep, hdr{HeaderProtocolVersion, "nonsense", HeaderMethod, "x"}, tt.body)
		if a.Status != tt.status || a.Code != tt.code {
			t.Errorf("%s: %d / %d (%s), want %d / %d", tt.body, a.Status, a.Code, a.Msg, tt.status, tt.code)
			continue
		}
		if a.Result != nil && strings.Contains(string(a.Result), `"resultType"`) != tt.stateless {
			t.Errorf("%s: %s", tt.body, a.Result)
		}
	}
}
