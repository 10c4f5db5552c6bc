package mcp

// Review 5 (2026-12-07): the Mcp-Param headers (SEP-2243) attacked. The
// tests whose comments say "Found by review" failed on the first version
// and pin its fixes; the others pin attacks it resisted.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// r5Seen records what the review's tools ran with.
type r5Seen struct {
	mu   sync.Mutex
	runs int
	last string // the argument the tool read (region, or target.zone)
}

func (s *r5Seen) set(v string) {
	s.mu.Lock()
	s.runs++
	s.last = v
	s.mu.Unlock()
}

func (s *r5Seen) get() (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runs, s.last
}

const r5RouteSchema = `{"type":"object","properties":{` +
	`"region":{"type":"string","x-mcp-header":"Region"},` +
	`"priority":{"type":"integer","minimum":0,"x-mcp-header":"Priority"},` +
	`"dryRun":{"type":"boolean","x-mcp-header":"DryRun"}},"required":["region"]}`

// r5Server has route (region, priority, dryRun mirrored), esc (the same,
// its property name escaped in the schema), zoned (target.zone
// mirrored), stream (route's schema, Streaming, sends a progress
// message) and typed (a typed tool with a written schema mirroring
// region and target.zone).
func r5Server(t testing.TB) (*Server, *r5Seen) {
	t.Helper()
	s, err := New(Info{Name: "review5", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	seen := &r5Seen{}
	region := ToolFunc(func(c *Call) error {
		v, err := c.ArgString("region")
		if err != nil {
			return err
		}
		seen.set(string(v))
		c.AddText(string(v))
		return nil
	})
	add := func(tl Tool) {
		t.Helper()
		if err := s.AddTool(tl); err != nil {
			t.Fatal(err)
		}
	}
	add(Tool{Name: "route", InputSchema: r5RouteSchema, Handler: region})
	add(Tool{Name: "esc", InputSchema: `{"type":"object","properties":{"re\u0067ion":{"type":"string","x-mcp-h\u0065ader":"Re\u0067ion"}}}`, Handler: region})
	add(Tool{Name: "zoned", InputSchema: `{"type":"object","properties":{"target":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`,
		Handler: ToolFunc(func(c *Call) error {
			zone, _ := decode.Lookup(c.Arg("target"), "zone") // the last, as the contract reads deeper duplicates
			seen.set(string(decode.AppendUnquoted(nil, zone)))
			return nil
		})})
	add(Tool{Name: "stream", InputSchema: r5RouteSchema, Streaming: true, Handler: ToolFunc(func(c *Call) error {
		if err := c.Progress(1, 2, "half"); err != nil {
			return err
		}
		return region(c)
	})})
	type target struct {
		Zone string `json:"zone"`
	}
	type typedIn struct {
		Region string `json:"region"`
		Target target `json:"target"`
	}
	if err := AddTool(s, Tool{Name: "typed", InputSchema: `{"type":"object","properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},` +
		`"target":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`},
		func(_ context.Context, _ *Call, in typedIn) (string, error) {
			seen.set(in.Region + "/" + in.Target.Zone)
			return "ok", nil
		}); err != nil {
		t.Fatal(err)
	}
	return s, seen
}

// r5Call sends a tools/call of params members under version v ("" for
// no MCP-Protocol-Version), with the 2026-07-28 header set and _meta
// when v is 2026-07-28, plus extra headers.
func r5Call(t testing.TB, ep *fastserver.Endpoint, v, tool, members string, extra ...string) answer {
	t.Helper()
	var h hdr
	body := members
	if v == "2026-07-28" {
		h = v26("tools/call", HeaderName, tool)
		body += "," + meta26
	} else if v != "" {
		h = hdr{HeaderProtocolVersion, v}
	}
	return exchange(t, ep, append(h, extra...), call(body))
}

// TestReview5NestedDuplicateNeedsHeader: a mirrored value below the
// arguments' own level given twice (which row 17 does not refuse: the last
// one wins, and it is the one the schema judges and the handler reads) is
// that last value, and under 2026-07-28 needs its header. (Found by
// review: it counted as absent, and the call ran without Mcp-Param-Zone on
// zone "b".)
func TestReview5NestedDuplicateNeedsHeader(t *testing.T) {
	s, seen := r5Server(t)
	ep := s.Endpoint()
	for _, tc := range []struct{ tool, args string }{
		{"zoned", `{"target":{"zone":"a","zone":"b"}}`},
		{"zoned", `{"target":{"zone":"a","zon\u0065":"b"}}`},
		{"typed", `{"region":"eu","target":{"zone":"a","zone":"b"}}`},
	} {
		extra := []string{}
		if tc.tool == "typed" {
			extra = append(extra, "Mcp-Param-Region", "eu")
		}
		before, _ := seen.get()
		a := r5Call(t, ep, "2026-07-28", tc.tool, `"name":"`+tc.tool+`","arguments":`+tc.args, extra...)
		after, last := seen.get()
		if a.Status != 400 || a.Code != CodeHeaderMismatch {
			t.Errorf("%s %s without Mcp-Param-Zone: %d %d %s (tool ran %d time(s) with %q), want 400 / -32020",
				tc.tool, tc.args, a.Status, a.Code, a.Msg, after-before, last)
		}
	}
}

// TestReview5SaturatedExponent: numbers are compared with their exponents
// saturated at 2^50, so a header and a body whose integers differ beyond
// that must not be taken as equal (both pass "type": "integer"): only the
// same text carries such a number. (Found by review: they were equal.)
func TestReview5SaturatedExponent(t *testing.T) {
	s, _ := r5Server(t)
	ep := s.Endpoint()
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		a := r5Call(t, ep, v, "route", `"name":"route","arguments":{"region":"eu","priority":1e1125899906842625}`,
			"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "1e9999999999999999999")
		if a.Status != 400 || a.Code != CodeHeaderMismatch {
			t.Errorf("%s: priority 1e1125899906842625 with header 1e9999999999999999999: %d %d %s %s, want 400 / -32020", v, a.Status, a.Code, a.Msg, a.Result)
		}
	}
}

// TestReview5SplitHeaderLines: a value holding ", " must not be matched by
// two header lines joined (RFC 9110 §5.3): Mcp-Param-Region is no list
// field, and an intermediary that reads one line (the first, or the last)
// would route on "us-west1" while the tool runs on "us-west1, eu-west1".
// Over the wire, in either case of the name. (Found by review: it passed.)
func TestReview5SplitHeaderLines(t *testing.T) {
	s, seen := r5Server(t)
	a := r5Call(t, s.Endpoint(), "2026-07-28", "route", `"name":"route","arguments":{"region":"us-west1, eu-west1"}`,
		"Mcp-Param-Region", "us-west1", "Mcp-Param-Region", "eu-west1")
	if a.Status != 400 || a.Code != CodeHeaderMismatch {
		t.Errorf("in memory: %d %d %s, want 400 / -32020", a.Status, a.Code, a.Msg)
	}
	_, url := serveLoopback(t, s, fastserver.Config{})
	st, body := r5Raw(t, url, r5Post(`{"region":"us-west1, eu-west1"}`, "Mcp-Param-Region: us-west1\r\nmcp-param-region: eu-west1\r\n"))
	if st != 400 || !strings.Contains(body, "-32020") {
		_, last := seen.get()
		t.Errorf("wire: %d %s (the tool ran with %q), want 400 / -32020", st, body, last)
	}
}

// TestReview5DependenciesScan: draft-07's "dependencies" maps property
// names to schemas (or arrays of names): an annotation under a dependency
// named after an instance keyword ("default", "const", "enum",
// "examples") is found and refused, and a dependency on a property named
// "x-mcp-header" is no annotation (dependentRequired alike). (Found by
// review: the scan read "dependencies" as a schema.)
func TestReview5DependenciesScan(t *testing.T) {
	const d7 = `"$schema":"http://json-schema.org/draft-07/schema#",`
	for _, name := range []string{"default", "const", "enum", "examples"} {
		s, _ := New(Info{Name: "t", Version: "1"})
		err := s.AddTool(Tool{Name: "t", Handler: ToolFunc(func(*Call) error { return nil }), InputSchema: `{` + d7 +
			`"type":"object","properties":{"` + name + `":{"type":"string"}},` +
			`"dependencies":{"` + name + `":{"properties":{"r":{"type":"string","x-mcp-header":"R"}}}}}`})
		if err == nil {
			t.Errorf("an annotation under dependencies.%s: accepted, want refused", name)
		}
	}
	for _, schema := range []string{
		`{` + d7 + `"type":"object","properties":{"x-mcp-header":{"type":"string"},"a":{"type":"string"}},"dependencies":{"x-mcp-header":["a"]}}`,
		`{"type":"object","properties":{"x-mcp-header":{"type":"string"},"a":{"type":"string"}},"dependentRequired":{"x-mcp-header":["a"]}}`,
	} {
		s, _ := New(Info{Name: "t", Version: "1"})
		if err := s.AddTool(Tool{Name: "t", InputSchema: schema, Handler: ToolFunc(func(*Call) error { return nil })}); err != nil {
			t.Errorf("%s: %v, want accepted (no annotation in it)", schema, err)
		}
	}
}

// TestReview5BodyTricks: escapes, member order, duplicates, Unicode forms,
// numbers and booleans: the tool runs only on the value the header
// carries.
func TestReview5BodyTricks(t *testing.T) {
	s, seen := r5Server(t)
	ep := s.Endpoint()
	const (
		ok       = 0
		mismatch = CodeHeaderMismatch
		params   = decode.CodeInvalidParams
		refused  = -1 // any refusal: -32020 or -32602
	)
	big := strings.Repeat("x", 3000)
	tests := []struct {
		name    string
		tool    string
		members string
		headers hdr
		code    int
		saw     string // the value the tool read, for ok
	}{
		{"escaped member name, header of another value", "route", `"name":"route","arguments":{"re\u0067ion":"eu"}`, hdr{"Mcp-Param-Region", "us"}, mismatch, ""},
		{"escaped member name, header of its value", "route", `"name":"route","arguments":{"re\u0067ion":"eu"}`, hdr{"Mcp-Param-Region", "eu"}, ok, "eu"},
		{"escaped member name, no header", "route", `"name":"route","arguments":{"re\u0067ion":"eu"}`, nil, mismatch, ""},
		{"escaped value", "route", `"name":"route","arguments":{"region":"\u0065u"}`, hdr{"Mcp-Param-Region", "eu"}, ok, "eu"},
		{"escaped name in the schema", "esc", `"name":"esc","arguments":{"region":"eu"}`, hdr{"Mcp-Param-Region", "us"}, mismatch, ""},
		{"escaped name in the schema, no header", "esc", `"name":"esc","arguments":{"region":"eu"}`, nil, mismatch, ""},
		{"escaped name in the schema, header agrees", "esc", `"name":"esc","arguments":{"region":"eu"}`, hdr{"Mcp-Param-Region", "eu"}, ok, "eu"},
		{"member name in another case", "route", `"name":"route","arguments":{"region":"eu","Region":"us"}`, hdr{"Mcp-Param-Region", "eu"}, ok, "eu"},
		{"value twice, one escaped", "route", `"name":"route","arguments":{"region":"us","re\u0067ion":"eu"}`, hdr{"Mcp-Param-Region", "us"}, refused, ""},
		{"arguments twice, the first matching", "route", `"name":"route","arguments":{"region":"us"},"arguments":{"region":"eu"}`, hdr{"Mcp-Param-Region", "us"}, refused, ""},
		{"arguments twice, the last matching", "route", `"name":"route","arguments":{"region":"us"},"arguments":{"region":"eu"}`, hdr{"Mcp-Param-Region", "eu"}, refused, ""},
		{"arguments twice, one escaped", "route", `"name":"route","arguments":{"region":"us"},"argument\u0073":{"region":"eu"}`, hdr{"Mcp-Param-Region", "us"}, refused, ""},
		{"arguments on both sides of the name", "route", `"arguments":{"region":"us"},"name":"route","arguments":{"region":"eu"}`, hdr{"Mcp-Param-Region", "us"}, refused, ""},
		{"arguments before the name", "route", `"arguments":{"region":"eu"},"name":"route"`, hdr{"Mcp-Param-Region", "us"}, mismatch, ""},
		{"arguments before the name, agreeing", "route", `"arguments":{"region":"eu"},"name":"route"`, hdr{"Mcp-Param-Region", "eu"}, ok, "eu"},
		{"arguments failing the schema first", "route", `"name":"route","arguments":{"region":"eu","priority":-1}`, hdr{"Mcp-Param-Region", "us", "Mcp-Param-Priority", "-1"}, mismatch, ""},
		{"name twice", "route", `"name":"route","arguments":{"region":"eu"},"name":"route"`, hdr{"Mcp-Param-Region", "eu"}, refused, ""},
		{"escaped tool name", "route", `"name":"rout\u0065","arguments":{"region":"eu"}`, hdr{"Mcp-Param-Region", "us"}, mismatch, ""},
		{"composed vs decomposed", "route", `"name":"route","arguments":{"region":"caf\u00e9"}`, hdr{"Mcp-Param-Region", b64Sentinel("cafe\u0301")}, mismatch, ""},
		{"decomposed vs composed", "route", `"name":"route","arguments":{"region":"cafe\u0301"}`, hdr{"Mcp-Param-Region", b64Sentinel("caf\u00e9")}, mismatch, ""},
		{"case of the value", "route", `"name":"route","arguments":{"region":"EU"}`, hdr{"Mcp-Param-Region", "eu"}, mismatch, ""},
		{"NUL escaped, sentinel", "route", `"name":"route","arguments":{"region":"a\u0000b"}`, hdr{"Mcp-Param-Region", b64Sentinel("a\x00b")}, ok, "a\x00b"},
		{"NUL escaped, sentinel without it", "route", `"name":"route","arguments":{"region":"a\u0000b"}`, hdr{"Mcp-Param-Region", b64Sentinel("ab")}, mismatch, ""},
		{"a raw NUL in the header", "route", `"name":"route","arguments":{"region":"a\u0000b"}`, hdr{"Mcp-Param-Region", "a\x00b"}, mismatch, ""},
		{"a sentinel of several KiB", "route", `"name":"route","arguments":{"region":"` + big + `"}`, hdr{"Mcp-Param-Region", b64Sentinel(big)}, ok, big},
		{"a sentinel of several KiB, one byte off", "route", `"name":"route","arguments":{"region":"` + big + `"}`, hdr{"Mcp-Param-Region", b64Sentinel(big[1:] + "y")}, mismatch, ""},
		{"sentinel markers overlapping", "route", `"name":"route","arguments":{"region":"x"}`, hdr{"Mcp-Param-Region", "=?base64?=", "Mcp-Param-Region", "?="}, mismatch, ""},
		{"empty sentinel for an empty string", "route", `"name":"route","arguments":{"region":""}`, hdr{"Mcp-Param-Region", "=?base64??="}, ok, ""},
		{"empty sentinel for a value", "route", `"name":"route","arguments":{"region":"x"}`, hdr{"Mcp-Param-Region", "=?base64??="}, mismatch, ""},

		{"-0 is 0", "route", `"name":"route","arguments":{"region":"eu","priority":-0}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "0"}, ok, "eu"},
		{"1e0 is 1", "route", `"name":"route","arguments":{"region":"eu","priority":1}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "1e0"}, ok, "eu"},
		{"huge header exponent", "route", `"name":"route","arguments":{"region":"eu","priority":1}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "1e999999999"}, mismatch, ""},
		{"huge negative header exponent", "route", `"name":"route","arguments":{"region":"eu","priority":0}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "1e-999999999"}, mismatch, ""},
		{"long digit string, equal", "route", `"name":"route","arguments":{"region":"eu","priority":1e3999}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "1" + strings.Repeat("0", 3999)}, ok, "eu"},
		{"long digit string, one off", "route", `"name":"route","arguments":{"region":"eu","priority":1e3999}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "1" + strings.Repeat("0", 3998) + "1"}, mismatch, ""},
		{"hex", "route", `"name":"route","arguments":{"region":"eu","priority":16}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "0x10"}, mismatch, ""},
		{"Infinity", "route", `"name":"route","arguments":{"region":"eu","priority":1e999}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "Infinity"}, mismatch, ""},
		{"a number as a string body", "route", `"name":"route","arguments":{"region":"eu","priority":"7"}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "7"}, params, ""},
		{"TRUE", "route", `"name":"route","arguments":{"region":"eu","dryRun":true}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-DryRun", "TRUE"}, mismatch, ""},
		{"true in base64", "route", `"name":"route","arguments":{"region":"eu","dryRun":true}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-DryRun", b64Sentinel("true")}, ok, "eu"},
		{"false for true", "route", `"name":"route","arguments":{"region":"eu","dryRun":true}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-DryRun", b64Sentinel("false")}, mismatch, ""},
		{"true as a string body", "route", `"name":"route","arguments":{"region":"eu","dryRun":"true"}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-DryRun", "true"}, params, ""},
	}
	for _, tc := range tests {
		before, _ := seen.get()
		a := r5Call(t, ep, "2026-07-28", tc.tool, tc.members, tc.headers...)
		after, last := seen.get()
		ran := after != before
		switch {
		case tc.code == ok:
			if a.Code != 0 || !ran || last != tc.saw {
				t.Errorf("%s: %d %d %s, ran %v with %.40q, want a result on %.40q", tc.name, a.Status, a.Code, a.Msg, ran, last, tc.saw)
			}
		case ran:
			t.Errorf("%s: the tool ran with %.40q (%d %d), want a refusal", tc.name, last, a.Status, a.Code)
		case tc.code == refused:
			if a.Code != CodeHeaderMismatch && a.Code != params {
				t.Errorf("%s: %d %d %s, want -32020 or -32602", tc.name, a.Status, a.Code, a.Msg)
			}
		case a.Code != tc.code:
			t.Errorf("%s: %d %d %s, want %d", tc.name, a.Status, a.Code, a.Msg, tc.code)
		}
	}
}

// TestReview5Versions: under 2025-xx (also with no MCP-Protocol-Version,
// 2025-03-26) a header present must agree and an absent one is allowed;
// on the stdio stream endpoint no header is read, even under
// 2026-07-28; a tools/call notification never runs the tool.
func TestReview5Versions(t *testing.T) {
	s, seen := r5Server(t)
	ep := s.Endpoint()
	for _, v := range []string{"", "2025-03-26", "2025-06-18", "2025-11-25"} {
		if a := r5Call(t, ep, v, "route", `"name":"route","arguments":{"region":"eu"}`, "Mcp-Param-Region", "us"); a.Code != CodeHeaderMismatch {
			t.Errorf("%q disagreeing: %+v", v, a)
		}
		if a := r5Call(t, ep, v, "route", `"name":"route","arguments":{"region":"eu"}`); a.Code != 0 {
			t.Errorf("%q without the header: %+v", v, a)
		}
	}
	sep := s.StreamEndpoint()
	if a := exchange(t, sep, hdr{"Mcp-Param-Region", "us"}, call(`"name":"route","arguments":{"region":"eu"},`+meta26)); a.Code != 0 {
		t.Errorf("stream endpoint: %+v, want a result (no headers on a stream)", a)
	}
	before, _ := seen.get()
	a := exchange(t, ep, v26("tools/call", HeaderName, "route", "Mcp-Param-Region", "eu"),
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"route","arguments":{"region":"us"},`+meta26+`}}`)
	if after, _ := seen.get(); a.Status != 202 || after != before {
		t.Errorf("notification: %+v, the tool ran %d time(s)", a, after-before)
	}
}

// TestReview5TypedAndStreaming: a typed tool with a written schema
// holding x-mcp-header, and a Streaming tool, are checked before they
// run; the typed tool decodes the same member the check read (escaped
// name, case-sensitive).
func TestReview5TypedAndStreaming(t *testing.T) {
	s, seen := r5Server(t)
	ep := s.Endpoint()
	typed := []struct {
		args    string
		headers hdr
		code    int
		saw     string
	}{
		{`{"region":"eu","target":{"zone":"b"}}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Zone", "b"}, 0, "eu/b"},
		{`{"region":"eu","target":{"zone":"b"}}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Zone", "c"}, CodeHeaderMismatch, ""},
		{`{"re\u0067ion":"eu","target":{"zon\u0065":"b"}}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Zone", "b"}, 0, "eu/b"},
		{`{"re\u0067ion":"eu","target":{"zone":"b"}}`, hdr{"Mcp-Param-Region", "us", "Mcp-Param-Zone", "b"}, CodeHeaderMismatch, ""},
		{`{"Region":"us","region":"eu","target":{"Zone":"c","zone":"b"}}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Zone", "b"}, 0, "eu/b"},
		{`{"region":"eu","target":{"zone":"b"}}`, hdr{"Mcp-Param-Region", "eu"}, CodeHeaderMismatch, ""},
	}
	for _, tc := range typed {
		before, _ := seen.get()
		a := r5Call(t, ep, "2026-07-28", "typed", `"name":"typed","arguments":`+tc.args, tc.headers...)
		after, last := seen.get()
		if a.Code != tc.code || (tc.code == 0) != (after != before) || tc.code == 0 && last != tc.saw {
			t.Errorf("typed %s %v: %d %d %s, ran %d with %q", tc.args, tc.headers, a.Status, a.Code, a.Msg, after-before, last)
		}
	}

	// The streaming tool over HTTP, with a progress token: refused before
	// it streams when a header disagrees; streamed when all agree.
	_, url := serveLoopback(t, s, fastserver.Config{})
	post := func(region string) (*http.Response, string) {
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stream","arguments":{"region":"eu"},` +
			`"_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
		rq, _ := http.NewRequest("POST", url, strings.NewReader(body))
		rq.Header.Set("Content-Type", "application/json")
		rq.Header.Set("Accept", "application/json, text/event-stream")
		rq.Header.Set(HeaderProtocolVersion, "2026-07-28")
		rq.Header.Set(HeaderMethod, "tools/call")
		rq.Header.Set(HeaderName, "stream")
		if region != "" {
			rq.Header.Set("Mcp-Param-Region", region)
		}
		resp, err := http.DefaultClient.Do(rq)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	for _, region := range []string{"us", ""} {
		before, _ := seen.get()
		resp, body := post(region)
		if after, _ := seen.get(); resp.StatusCode != 400 || !strings.Contains(body, "-32020") || after != before {
			t.Errorf("streaming, header %q: %d %s", region, resp.StatusCode, body)
		}
	}
	resp, body := post("eu")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") || !strings.Contains(body, "notifications/progress") {
		t.Errorf("streaming, agreeing: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// r5Post is a 2026-07-28 tools/call of route with the given arguments and
// extra header lines (each ending in CRLF), with a Content-Length.
func r5Post(args, lines string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"route","arguments":` + args + `,` + meta26 + `}}`
	return "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n" +
		"Mcp-Method: tools/call\r\nMcp-Name: route\r\n" + lines + fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body
}

// r5Chunked is r5Post with a chunked body and a trailer section.
func r5Chunked(args, lines, trailer string) string {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"route","arguments":` + args + `,` + meta26 + `}}`
	return "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n" +
		"Mcp-Method: tools/call\r\nMcp-Name: route\r\n" + lines + "Trailer: Mcp-Param-Region\r\nTransfer-Encoding: chunked\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n0\r\n%s\r\n", len(body), body, trailer)
}

// r5Raw writes one request on a new loopback connection to the server at
// url and reads the answer: its status and body (0 when the connection
// closed without one).
func r5Raw(t testing.TB, url, request string) (int, string) {
	t.Helper()
	addr := strings.TrimPrefix(url, "http://")
	addr = addr[:strings.IndexByte(addr, '/')]
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestReview5Wire: bytes, folding, names and trailers over a socket, the
// way a hostile client writes them: nothing runs the tool on a value the
// header section does not carry.
func TestReview5Wire(t *testing.T) {
	s, seen := r5Server(t)
	_, url := serveLoopback(t, s, fastserver.Config{})
	var many strings.Builder
	for i := range 250 {
		fmt.Fprintf(&many, "Mcp-Param-X%d: y\r\n", i)
	}
	big := strings.Repeat("z", 4000)
	tests := []struct {
		name    string
		request string
		ok      bool
		saw     string
	}{
		{"NUL in the value", r5Post(`{"region":"a\u0000b"}`, "Mcp-Param-Region: a\x00b\r\n"), false, ""},
		{"bare CR in the value", r5Post(`{"region":"a\rb"}`, "Mcp-Param-Region: a\rb\r\n"), false, ""},
		{"byte 0x80", r5Post(`{"region":"a\u0080b"}`, "Mcp-Param-Region: a\x80b\r\n"), false, ""},
		{"byte 0xff", r5Post(`{"region":"a"}`, "Mcp-Param-Region: a\xff\r\n"), false, ""},
		{"DEL", r5Post(`{"region":"a\u007f"}`, "Mcp-Param-Region: a\x7f\r\n"), false, ""},
		{"obs-fold continuing a matching line", r5Post(`{"region":"eu"}`, "Mcp-Param-Region: eu\r\n us\r\n"), false, ""},
		{"obs-fold carrying the value", r5Post(`{"region":"eu us"}`, "Mcp-Param-Region: eu\r\n\tus\r\n"), false, ""},
		{"white space before the colon", r5Post(`{"region":"us"}`, "Mcp-Param-Region : us\r\n"), false, ""},
		{"white space before the colon, beside a good line", r5Post(`{"region":"eu"}`, "Mcp-Param-Region: eu\r\nMcp-Param-Region : us\r\n"), false, ""},
		{"two lines, other case, agreeing", r5Post(`{"region":"eu"}`, "Mcp-Param-Region: eu\r\nMCP-PARAM-REGION: eu\r\n"), false, ""},
		{"two lines, the second empty", r5Post(`{"region":"eu"}`, "Mcp-Param-Region: eu\r\nmcp-param-region:\r\n"), false, ""},
		{"a name with an underscore", r5Post(`{"region":"eu"}`, "Mcp_Param_Region: eu\r\n"), false, ""},
		{"250 unannotated Mcp-Param lines", r5Post(`{"region":"eu"}`, many.String()+"Mcp-Param-Region: eu\r\n"), true, "eu"},
		{"a sentinel of 5 KiB", r5Post(`{"region":"`+big+`"}`, "Mcp-Param-Region: "+b64Sentinel(big)+"\r\n"), true, big},
		{"a trailer does not stand for the header", r5Chunked(`{"region":"eu"}`, "", "Mcp-Param-Region: eu\r\n"), false, ""},
		{"a trailer does not change an agreeing header", r5Chunked(`{"region":"eu"}`, "Mcp-Param-Region: eu\r\n", "Mcp-Param-Region: us\r\n"), true, "eu"},
		{"a trailer does not mend a disagreeing header", r5Chunked(`{"region":"eu"}`, "Mcp-Param-Region: us\r\n", "Mcp-Param-Region: eu\r\n"), false, ""},
	}
	for _, tc := range tests {
		before, _ := seen.get()
		st, body := r5Raw(t, url, tc.request)
		after, last := seen.get()
		ran := after != before
		if tc.ok {
			if st != 200 || !ran || last != tc.saw {
				t.Errorf("%s: %d %.200s, ran %v with %.40q", tc.name, st, body, ran, last)
			}
			continue
		}
		if st != 400 || ran {
			t.Errorf("%s: %d %.200s, ran %v with %.40q, want 400 and no run", tc.name, st, body, ran, last)
		}
	}
}

// TestReview5Registration: an annotation under any keyword other than
// "properties", or a name with a byte outside tchar, is refused; boolean
// schemas and annotations beside a $ref target are handled.
func TestReview5Registration(t *testing.T) {
	const ann = `{"type":"string","x-mcp-header":"A"}`
	const inner = `{"properties":{"a":` + ann + `}}`
	d7 := func(s string) string { return `{"$schema":"http://json-schema.org/draft-07/schema#",` + s[1:] }
	refused := map[string]string{
		"items":                 `{"type":"object","properties":{"l":{"type":"array","items":` + inner + `}}}`,
		"items as array (d7)":   d7(`{"type":"object","properties":{"l":{"type":"array","items":[` + ann + `]}}}`),
		"additionalItems (d7)":  d7(`{"type":"object","properties":{"l":{"type":"array","items":[{}],"additionalItems":` + ann + `}}}`),
		"prefixItems":           `{"type":"object","properties":{"l":{"type":"array","prefixItems":[` + ann + `]}}}`,
		"contains":              `{"type":"object","properties":{"l":{"type":"array","contains":` + ann + `}}}`,
		"additionalProperties":  `{"type":"object","additionalProperties":` + ann + `}`,
		"patternProperties":     `{"type":"object","patternProperties":{"^a$":` + ann + `}}`,
		"propertyNames":         `{"type":"object","propertyNames":` + ann + `}`,
		"dependentSchemas":      `{"type":"object","dependentSchemas":{"a":` + inner + `}}`,
		"dependencies (d7)":     d7(`{"type":"object","dependencies":{"a":` + inner + `}}`),
		"unevaluatedItems":      `{"type":"object","properties":{"l":{"type":"array","unevaluatedItems":` + ann + `}}}`,
		"unevaluatedProperties": `{"type":"object","unevaluatedProperties":` + ann + `}`,
		"if":                    `{"type":"object","if":` + inner + `}`,
		"then":                  `{"type":"object","if":{},"then":` + inner + `}`,
		"else":                  `{"type":"object","if":{},"else":` + inner + `}`,
		"allOf":                 `{"type":"object","allOf":[` + inner + `]}`,
		"anyOf":                 `{"type":"object","anyOf":[` + inner + `]}`,
		"oneOf":                 `{"type":"object","oneOf":[` + inner + `]}`,
		"not":                   `{"type":"object","not":` + inner + `}`,
		"$defs":                 `{"type":"object","$defs":{"d":` + ann + `}}`,
		"definitions (d7)":      d7(`{"type":"object","definitions":{"d":` + ann + `}}`),
		"$ref target":           `{"type":"object","properties":{"a":{"$ref":"#/$defs/d"}},"$defs":{"d":` + ann + `}}`,
		"beside a $ref":         `{"type":"object","properties":{"a":{"$ref":"#/$defs/d","x-mcp-header":"A"}},"$defs":{"d":{"type":"string"}}}`,
		"contentSchema":         `{"type":"object","properties":{"a":{"type":"string","contentMediaType":"application/json","contentSchema":` + inner + `}}}`,
		"escaped keyword":       `{"type":"object","propert\u0069es":{"l":{"type":"array","items":` + inner + `}}}`,
	}
	for b := 0; b < 256; b++ {
		if isTokenChar(byte(b)) {
			continue
		}
		name, _ := json.Marshal(string(rune(b))) // ≥ 0x80: the rune's UTF-8, bytes outside tchar too
		refused[fmt.Sprintf("name with %#02x", b)] = `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A` + string(name[1:len(name)-1]) + `B"}}}`
	}
	for what, schema := range refused {
		s, _ := New(Info{Name: "t", Version: "1"})
		if err := s.AddTool(Tool{Name: "t", InputSchema: schema, Handler: ToolFunc(func(*Call) error { return nil })}); err == nil {
			t.Errorf("%s: accepted, want refused: %s", what, schema)
		}
	}
	accepted := map[string]string{
		"boolean schemas":         `{"type":"object","properties":{"t":true,"f":false,"a":` + ann + `},"additionalProperties":false}`,
		"a $ref to an annotated":  `{"type":"object","properties":{"a":` + ann + `,"b":{"$ref":"#/properties/a"}}}`,
		"escaped keywords":        `{"type":"object","propert\u0069es":{"a":{"typ\u0065":"string","x-mcp-h\u0065ader":"A"}}}`,
		"draft-07 nested chain":   d7(`{"type":"object","properties":{"o":{"type":"object","properties":{"a":` + ann + `}}}}`),
		"integer and boolean, d7": d7(`{"type":"object","properties":{"i":{"type":"integer","x-mcp-header":"I"},"b":{"type":"boolean","x-mcp-header":"B"}}}`),
	}
	for what, schema := range accepted {
		s, _ := New(Info{Name: "t", Version: "1"})
		err := s.AddTool(Tool{Name: "t", InputSchema: schema, Handler: ToolFunc(func(*Call) error { return nil })})
		if err != nil || len(s.toolIndex["t"].headers) == 0 {
			t.Errorf("%s: %v, want accepted with its annotations", what, err)
		}
	}
}

// TestReview5TypedDashNameTag: a typed field whose JSON name is "-" (tag
// `json:"-,"`, as encoding/json and the schema generator read it) keeps
// its mcpheader tag. (Found by review: headerTags took "-" for "skip this
// field" and dropped it.)
func TestReview5TypedDashNameTag(t *testing.T) {
	type in struct {
		//lint:ignore SA5008 the JSON name "-" is what this test is about
		X string `json:"-," mcpheader:"X"`
	}
	s, _ := New(Info{Name: "t", Version: "1"})
	if err := AddTool(s, Tool{Name: "t"}, func(context.Context, *Call, in) (string, error) { return "", nil }); err != nil {
		t.Fatal(err)
	}
	if hs := s.toolIndex["t"].headers; len(hs) != 1 || hs[0].header != "Mcp-Param-X" {
		t.Errorf("annotations %v of %s, want Mcp-Param-X on \"-\"", hs, s.toolIndex["t"].in.json)
	}
}
