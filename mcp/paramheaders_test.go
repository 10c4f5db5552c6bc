package mcp

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// TestParamHeaderAnnotations: x-mcp-header annotations are found along
// chains of "properties" and checked against every constraint of MCP
// 2026-07-28 at registration; a tool that breaks one is refused, naming
// the tool and the annotation.
func TestParamHeaderAnnotations(t *testing.T) {
	obj := func(props string, more ...string) string {
		return `{"type":"object","properties":{` + props + `}` + strings.Join(more, "") + `}`
	}
	str := func(name string) string { return `{"type":"string","x-mcp-header":` + name + `}` }
	tests := []struct {
		name   string
		schema string
		want   map[string][]string // header → path, for a valid schema
		err    string              // a part of the error, for an invalid one
	}{
		{"none", obj(`"a":{"type":"string"}`), map[string][]string{}, ""},
		{"empty schema", ``, map[string][]string{}, ""},
		{"one string", obj(`"region":` + str(`"Region"`)), map[string][]string{"Mcp-Param-Region": {"region"}}, ""},
		{"all three types", obj(`"s":` + str(`"S"`) + `,"i":{"type":"integer","x-mcp-header":"I"},"b":{"type":"boolean","x-mcp-header":"B"}`),
			map[string][]string{"Mcp-Param-S": {"s"}, "Mcp-Param-I": {"i"}, "Mcp-Param-B": {"b"}}, ""},
		{"nested chain", obj(`"target":{"type":"object","properties":{"zone":` + str(`"Zone"`) + `,"deep":{"properties":{"x":{"type":"integer","x-mcp-header":"X"}}}}}`),
			map[string][]string{"Mcp-Param-Zone": {"target", "zone"}, "Mcp-Param-X": {"target", "deep", "x"}}, ""},
		{"escaped property name", obj(`"re\u0067ion":` + str(`"R\u0065gion"`)), map[string][]string{"Mcp-Param-Region": {"region"}}, ""},
		{"every tchar", obj(`"a":` + str("\"!#$%&'*+-.^_`|~09azAZ\"")), map[string][]string{"Mcp-Param-!#$%&'*+-.^_`|~09azAZ": {"a"}}, ""},
		{"a property named x-mcp-header", obj(`"x-mcp-header":{"type":"string"}`), map[string][]string{}, ""},
		{"an instance holding the name", obj(`"a":{"type":"string","const":{"x-mcp-header":"A"},"default":{"x-mcp-header":"A"},"examples":[{"x-mcp-header":"A"}],"enum":[{"x-mcp-header":"A"}]}`), map[string][]string{}, ""},
		{"a $defs entry named x-mcp-header", obj(`"a":{"type":"string"}`, `,"$defs":{"x-mcp-header":{"type":"string"}}`), map[string][]string{}, ""},

		{"empty name", obj(`"a":` + str(`""`)), nil, "is empty"},
		{"not a string", obj(`"a":{"type":"string","x-mcp-header":7}`), nil, "must be a string"},
		{"space in name", obj(`"a":` + str(`"My Region"`)), nil, "not an HTTP field-name token"},
		{"colon in name", obj(`"a":` + str(`"Re:gion"`)), nil, "not an HTTP field-name token"},
		{"non-ASCII name", obj(`"a":` + str(`"R\u00e9gion"`)), nil, "not an HTTP field-name token"},
		{"control character", obj(`"a":` + str(`"Re\u0001gion"`)), nil, "not an HTTP field-name token"},
		{"CR LF", obj(`"a":` + str(`"Re\r\nX-Injected: 1"`)), nil, "not an HTTP field-name token"},
		{"twice, same case", obj(`"a":` + str(`"Region"`) + `,"b":` + str(`"Region"`)), nil, "given twice"},
		{"twice, other case", obj(`"a":` + str(`"Region"`) + `,"b":{"properties":{"c":` + str(`"REGION"`) + `}}`), nil, "given twice"},
		{"number type", obj(`"a":{"type":"number","x-mcp-header":"A"}`), nil, `"type" "string", "integer" or "boolean"`},
		{"object type", obj(`"a":{"type":"object","x-mcp-header":"A"}`), nil, `"type" "string", "integer" or "boolean"`},
		{"null type", obj(`"a":{"type":"null","x-mcp-header":"A"}`), nil, `"type" "string", "integer" or "boolean"`},
		{"no type", obj(`"a":{"x-mcp-header":"A"}`), nil, `"type" "string", "integer" or "boolean"`},
		{"type list", obj(`"a":{"type":["string","null"],"x-mcp-header":"A"}`), nil, `"type" "string", "integer" or "boolean"`},
		{"on the root", `{"type":"object","x-mcp-header":"A"}`, nil, `"properties" alone`},
		{"under items", obj(`"a":{"type":"array","items":` + str(`"A"`) + `}`), nil, `"properties" alone`},
		{"under prefixItems", obj(`"a":{"type":"array","prefixItems":[` + str(`"A"`) + `]}`), nil, `"properties" alone`},
		{"under anyOf", obj(`"a":{"anyOf":[` + str(`"A"`) + `]}`), nil, `"properties" alone`},
		{"under allOf at the root", obj(``, `,"allOf":[{"properties":{"a":`+str(`"A"`)+`}}]`), nil, `"properties" alone`},
		{"under oneOf", obj(`"a":{"oneOf":[` + str(`"A"`) + `]}`), nil, `"properties" alone`},
		{"under not", obj(`"a":{"type":"string","not":` + str(`"A"`) + `}`), nil, `"properties" alone`},
		{"under then", obj(``, `,"if":{},"then":{"properties":{"a":`+str(`"A"`)+`}}`), nil, `"properties" alone`},
		{"under $defs", obj(`"a":{"$ref":"#/$defs/r"}`, `,"$defs":{"r":`+str(`"A"`)+`}`), nil, `"properties" alone`},
		{"under additionalProperties", obj(``, `,"additionalProperties":`+str(`"A"`)), nil, `"properties" alone`},
		{"under patternProperties", obj(``, `,"patternProperties":{"^a":`+str(`"A"`)+`}`), nil, `"properties" alone`},
		{"under dependentSchemas", obj(``, `,"dependentSchemas":{"a":{"properties":{"b":`+str(`"A"`)+`}}}`), nil, `"properties" alone`},
		{"under an unknown keyword", obj(``, `,"x-wrapper":{"properties":{"a":`+str(`"A"`)+`}}`), nil, `"properties" alone`},
		{"under items below a valid one", obj(`"a":` + str(`"A"`) + `,"b":{"type":"array","items":` + str(`"B"`) + `}`), nil, `"properties" alone`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Info{Name: "t", Version: "1"})
			if err != nil {
				t.Fatal(err)
			}
			err = s.AddTool(Tool{Name: "tool-" + tc.name, InputSchema: tc.schema, Handler: ToolFunc(func(*Call) error { return nil })})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), `"tool-`+tc.name+`"`) {
					t.Fatalf("AddTool: %v, want an error naming the tool and holding %q", err, tc.err)
				}
				if s.Err() == nil {
					t.Error("the refusal is not recorded for Err")
				}
				return
			}
			if err != nil {
				t.Fatalf("AddTool: %v", err)
			}
			got := map[string][]string{}
			for _, h := range s.toolIndex["tool-"+tc.name].headers {
				got[h.header] = h.path
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("headers %v, want %v", got, tc.want)
			}
		})
	}
}

// paramServer registers the tools the rules below are tried on: region
// (a string, required), priority (an integer) and dryRun (a boolean),
// each mirrored, query (not mirrored); and zoned, whose mirrored property
// sits under an object; plain (any object) and bare (route's schema
// without its annotations), which mirror nothing.
func paramServer(t testing.TB) *Server {
	t.Helper()
	s, err := New(Info{Name: "params", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	echoArgs := ToolFunc(func(c *Call) error { c.AddText(string(c.Arguments())); return nil })
	if err := s.AddTool(Tool{Name: "route", Handler: echoArgs, InputSchema: `{"type":"object","properties":{` +
		`"region":{"type":"string","x-mcp-header":"Region"},` +
		`"priority":{"type":"integer","minimum":0,"x-mcp-header":"Priority"},` +
		`"dryRun":{"type":"boolean","x-mcp-header":"DryRun"},` +
		`"query":{"type":"string"}},"required":["region"]}`}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(Tool{Name: "zoned", Handler: echoArgs, InputSchema: `{"type":"object","properties":{` +
		`"target":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}}}}`}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddTool(Tool{Name: "plain", Handler: echoArgs}); err != nil {
		t.Fatal(err)
	}
	// route's schema without its annotations, for comparisons.
	if err := s.AddTool(Tool{Name: "bare", Handler: echoArgs, InputSchema: `{"type":"object","properties":{` +
		`"region":{"type":"string"},"priority":{"type":"integer","minimum":0},"dryRun":{"type":"boolean"},` +
		`"query":{"type":"string"}},"required":["region"]}`}); err != nil {
		t.Fatal(err)
	}
	return s
}

func b64Sentinel(s string) string {
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}

// TestParamHeaderRules: row 12 for the Mcp-Param headers of a tools/call,
// under 2026-07-28 (headers required for values present) and 2025-11-25
// (a present header must agree), before rows 15 to 17.
func TestParamHeaderRules(t *testing.T) {
	ep := paramServer(t).Endpoint()
	const (
		ok       = 0
		mismatch = CodeHeaderMismatch
		params   = decode.CodeInvalidParams
		notFound = decode.CodeMethodNotFound
	)
	type tc struct {
		name    string
		tool    string
		args    string // the arguments member's value; "" for none
		headers hdr    // Mcp-Param headers and any others
		code    int
		at      string // the header the -32020 names
	}
	shared := []tc{
		{"all three mirrored", "route", `{"region":"us-west1","priority":42,"dryRun":true,"query":"q"}`,
			hdr{"Mcp-Param-Region", "us-west1", "Mcp-Param-Priority", "42", "Mcp-Param-DryRun", "true"}, ok, ""},
		{"optional values absent", "route", `{"region":"eu"}`, hdr{"Mcp-Param-Region", "eu"}, ok, ""},
		{"optional values null", "route", `{"region":"eu","priority":null,"dryRun":null}`, hdr{"Mcp-Param-Region", "eu"}, params, ""},
		{"header names in any case", "route", `{"region":"eu","dryRun":false}`, hdr{"mcp-param-region", "eu", "MCP-PARAM-DRYRUN", "false"}, ok, ""},
		{"string differs", "route", `{"region":"us-west1"}`, hdr{"Mcp-Param-Region", "us-east1"}, mismatch, "Mcp-Param-Region"},
		{"string differs in case", "route", `{"region":"us-west1"}`, hdr{"Mcp-Param-Region", "US-WEST1"}, mismatch, "Mcp-Param-Region"},
		{"escaped body string", "route", `{"region":"caf\u00e9 \"q\""}`, hdr{"Mcp-Param-Region", b64Sentinel(`café "q"`)}, ok, ""},
		{"base64 non-ASCII", "route", `{"region":"Zürich 北"}`, hdr{"Mcp-Param-Region", b64Sentinel("Zürich 北")}, ok, ""},
		{"base64 padded value", "route", `{"region":" padded "}`, hdr{"Mcp-Param-Region", b64Sentinel(" padded ")}, ok, ""},
		{"base64 newline", "route", `{"region":"line1\nline2"}`, hdr{"Mcp-Param-Region", b64Sentinel("line1\nline2")}, ok, ""},
		{"base64 of another value", "route", `{"region":"Zürich"}`, hdr{"Mcp-Param-Region", b64Sentinel("Zurich")}, mismatch, "Mcp-Param-Region"},
		{"base64 without padding", "route", `{"region":"Hello"}`, hdr{"Mcp-Param-Region", "=?base64?SGVsbG8?="}, mismatch, "Mcp-Param-Region"},
		{"base64 bad characters", "route", `{"region":"Hello"}`, hdr{"Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="}, mismatch, "Mcp-Param-Region"},
		{"base64 markers in upper case are literal", "route", `{"region":"=?BASE64?SGVsbG8=?="}`, hdr{"Mcp-Param-Region", "=?BASE64?SGVsbG8=?="}, ok, ""},
		{"no prefix: literal", "route", `{"region":"SGVsbG8="}`, hdr{"Mcp-Param-Region", "SGVsbG8="}, ok, ""},
		{"no suffix: literal", "route", `{"region":"=?base64?SGVsbG8="}`, hdr{"Mcp-Param-Region", "=?base64?SGVsbG8="}, ok, ""},
		{"sentinel-shaped value sent encoded", "route", `{"region":"=?base64?abc?="}`, hdr{"Mcp-Param-Region", b64Sentinel("=?base64?abc?=")}, ok, ""},
		{"sentinel-shaped value sent as it is", "route", `{"region":"=?base64?abc?="}`, hdr{"Mcp-Param-Region", "=?base64?abc?="}, mismatch, "Mcp-Param-Region"},
		{"empty string", "route", `{"region":""}`, hdr{"Mcp-Param-Region", ""}, ok, ""},
		{"empty header, value not empty", "route", `{"region":"x"}`, hdr{"Mcp-Param-Region", ""}, mismatch, "Mcp-Param-Region"},
		{"raw non-ASCII header", "route", `{"region":"Zürich"}`, hdr{"Mcp-Param-Region", "Zürich"}, mismatch, "Mcp-Param-Region"},
		{"two lines that agree", "route", `{"region":"eu"}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Region", "eu"}, mismatch, "Mcp-Param-Region"},
		{"two lines, the first matching", "route", `{"region":"eu"}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Region", "us"}, mismatch, "Mcp-Param-Region"},

		{"integer as written", "route", `{"region":"eu","priority":7}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "7"}, ok, ""},
		{"integer compared as a number", "route", `{"region":"eu","priority":42.0}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "42"}, ok, ""},
		{"integer header with a fraction", "route", `{"region":"eu","priority":42}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "4.2e1"}, ok, ""},
		{"integer with an exponent", "route", `{"region":"eu","priority":1e2}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "100"}, ok, ""},
		{"integer differs", "route", `{"region":"eu","priority":42}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "43"}, mismatch, "Mcp-Param-Priority"},
		{"integer header not JSON: leading zero", "route", `{"region":"eu","priority":42}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "042"}, mismatch, "Mcp-Param-Priority"},
		{"integer header not JSON: plus", "route", `{"region":"eu","priority":42}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "+42"}, mismatch, "Mcp-Param-Priority"},
		{"integer header in base64", "route", `{"region":"eu","priority":42}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", b64Sentinel("42")}, ok, ""},
		{"integer past 2^53 mirrored", "route", `{"region":"eu","priority":9007199254740993}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "9007199254740993"}, ok, ""},
		{"integer past 2^53 differs", "route", `{"region":"eu","priority":9007199254740993}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "9007199254740992"}, mismatch, "Mcp-Param-Priority"},
		{"boolean differs", "route", `{"region":"eu","dryRun":true}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-DryRun", "false"}, mismatch, "Mcp-Param-DryRun"},
		{"boolean in another case", "route", `{"region":"eu","dryRun":true}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-DryRun", "True"}, mismatch, "Mcp-Param-DryRun"},
		{"boolean as a digit", "route", `{"region":"eu","dryRun":true}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-DryRun", "1"}, mismatch, "Mcp-Param-DryRun"},

		{"header for an absent value", "route", `{"region":"eu"}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "0"}, mismatch, "Mcp-Param-Priority"},
		{"header for a null value", "route", `{"region":"eu","priority":null}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Priority", "null"}, mismatch, "Mcp-Param-Priority"},
		{"header for an object value", "route", `{"region":{"a":1}}`, hdr{"Mcp-Param-Region", `{"a":1}`}, mismatch, "Mcp-Param-Region"},
		{"header for arguments that are not an object", "route", `["eu"]`, hdr{"Mcp-Param-Region", "eu"}, mismatch, "Mcp-Param-Region"},
		{"header and a value given twice", "route", `{"region":"us","region":"eu"}`, hdr{"Mcp-Param-Region", "eu"}, mismatch, "Mcp-Param-Region"},
		{"a wrong type that the header carries goes on to the schema", "route", `{"region":5}`, hdr{"Mcp-Param-Region", "5"}, params, ""},
		{"arguments failing the schema, header disagreeing: row 12 first", "route", `{"region":"eu","priority":-1}`, hdr{"Mcp-Param-Region", "us"}, mismatch, "Mcp-Param-Region"},
		{"an unannotated Mcp-Param header is ignored", "route", `{"region":"eu","query":"q"}`, hdr{"Mcp-Param-Region", "eu", "Mcp-Param-Query", "other", "Mcp-Param-Nope", "x"}, ok, ""},
		{"an unknown tool: row 16", "nope", `{"region":"eu"}`, hdr{"Mcp-Param-Region", "us"}, notFound, ""},
		{"a tool without annotations ignores them", "plain", `{"region":"eu"}`, hdr{"Mcp-Param-Region", "us"}, ok, ""},

		{"nested value", "zoned", `{"target":{"zone":"b"}}`, hdr{"Mcp-Param-Zone", "b"}, ok, ""},
		{"nested value differs", "zoned", `{"target":{"zone":"b"}}`, hdr{"Mcp-Param-Zone", "c"}, mismatch, "Mcp-Param-Zone"},
		{"nested under a non-object", "zoned", `{"target":"b"}`, nil, params, ""},
		{"nested, header for an absent parent", "zoned", `{}`, hdr{"Mcp-Param-Zone", "b"}, mismatch, "Mcp-Param-Zone"},
		{"nested parent given twice", "zoned", `{"target":{"zone":"a"},"target":{"zone":"b"}}`, hdr{"Mcp-Param-Zone", "b"}, mismatch, "Mcp-Param-Zone"},
	}
	strictOnly := []tc{
		{"required header missing", "route", `{"region":"eu"}`, nil, mismatch, "Mcp-Param-Region"},
		{"optional header missing", "route", `{"region":"eu","priority":3}`, hdr{"Mcp-Param-Region", "eu"}, mismatch, "Mcp-Param-Priority"},
		{"false needs its header too", "route", `{"region":"eu","dryRun":false}`, hdr{"Mcp-Param-Region", "eu"}, mismatch, "Mcp-Param-DryRun"},
		{"empty string needs its header too", "route", `{"region":""}`, nil, mismatch, "Mcp-Param-Region"},
		{"integer past 2^53 needs none", "route", `{"region":"eu","priority":9007199254740993}`, hdr{"Mcp-Param-Region", "eu"}, ok, ""},
		{"negative integer past 2^53 needs none (the schema then refuses it)", "route", `{"region":"eu","priority":-9007199254740993}`, hdr{"Mcp-Param-Region", "eu"}, params, ""},
		{"integer at 2^53-1 needs its header", "route", `{"region":"eu","priority":9007199254740991}`, hdr{"Mcp-Param-Region", "eu"}, mismatch, "Mcp-Param-Priority"},
		{"a wrong type needs its header", "route", `{"region":5}`, nil, mismatch, "Mcp-Param-Region"},
		{"arguments before the name", "route", "", nil, mismatch, "Mcp-Param-Region"}, // body built below
		{"value given twice, no header: row 17", "route", `{"region":"us","region":"eu"}`, nil, params, ""},
		{"nested value without its header", "zoned", `{"target":{"zone":"b"}}`, nil, mismatch, "Mcp-Param-Zone"},
	}
	lax := []tc{
		{"2025: headers are optional", "route", `{"region":"eu","priority":3,"dryRun":true}`, nil, ok, ""},
		{"2025: one present, the others not", "route", `{"region":"eu","priority":3}`, hdr{"Mcp-Param-Priority", "3"}, ok, ""},
		{"2025: a present header must agree", "route", `{"region":"eu","priority":3}`, hdr{"Mcp-Param-Priority", "4"}, mismatch, "Mcp-Param-Priority"},
	}
	run := func(t *testing.T, v string, c tc) {
		t.Helper()
		var h hdr
		body := ""
		name, _ := json.Marshal(c.tool)
		args := ""
		if c.args != "" {
			args = `,"arguments":` + c.args
		}
		members := `"name":` + string(name) + args
		if c.args == "" {
			members = `"arguments":{"region":"eu"},"name":` + string(name)
		}
		if v == "2026-07-28" {
			h = v26("tools/call", HeaderName, c.tool)
			body = call(members + "," + meta26)
		} else {
			h = hdr{HeaderProtocolVersion, v}
			body = call(members)
		}
		h = append(h, c.headers...)
		a := exchange(t, ep, h, body)
		switch {
		case c.code == ok && (a.Status != 200 || a.Code != 0):
			t.Errorf("%s %s: %d %d %s, want a result", v, c.name, a.Status, a.Code, a.Msg)
		case c.code == ok:
			var res struct {
				Content []struct{ Text string }
			}
			if err := json.Unmarshal(a.Result, &res); err != nil || len(res.Content) != 1 || !json.Valid([]byte(res.Content[0].Text)) {
				t.Errorf("%s %s: result %s", v, c.name, a.Result)
			}
		case a.Code != c.code:
			t.Errorf("%s %s: %d %d %s, want code %d", v, c.name, a.Status, a.Code, a.Msg, c.code)
		case c.code == mismatch:
			if a.Status != 400 || string(a.Data) != `{"header":"`+c.at+`"}` || !strings.Contains(a.Msg, c.at) {
				t.Errorf("%s %s: %d %s %s, want 400 naming %s", v, c.name, a.Status, a.Msg, a.Data, c.at)
			}
		}
	}
	for _, c := range shared {
		if c.args == "" {
			continue
		}
		run(t, "2026-07-28", c)
		// Under earlier versions a missing header is never refused: the
		// 2026 header set is sent in full, so every verdict is the same.
		run(t, "2025-11-25", c)
	}
	for _, c := range strictOnly {
		run(t, "2026-07-28", c)
		// The same body without its headers passes row 12 under 2025.
		want := c.code
		if want == mismatch {
			want = ok
			if c.args == `{"region":5}` {
				want = params
			}
		}
		run(t, "2025-11-25", tc{c.name, c.tool, c.args, c.headers, want, ""})
	}
	for _, c := range lax {
		run(t, "2025-11-25", c)
		run(t, "2025-06-18", c)
	}
	// A tools/call notification is judged by its headers alone and never
	// reaches a tool: no Mcp-Param rule applies to it.
	a := exchange(t, ep, v26("tools/call", HeaderName, "route", "Mcp-Param-Region", "us"),
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"route","arguments":{"region":"eu"},`+meta26+`}}`)
	if a.Status != 202 {
		t.Errorf("notification: %+v, want 202", a)
	}
}

// TestParamHeaderWire sends Mcp-Param headers over a socket, as a hostile
// client writes them: bytes no header may carry unencoded, folded and
// repeated lines, and a bad request pipelined before a good one.
func TestParamHeaderWire(t *testing.T) {
	_, url := serveLoopback(t, paramServer(t), fastserver.Config{})
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), Path)
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	id := 0
	post := func(region string, lines ...string) string {
		id++
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"route","arguments":{"region":%s},%s}}`, id, region, meta26)
		return "POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n" +
			"Mcp-Method: tools/call\r\nMcp-Name: route\r\n" + strings.Join(lines, "") +
			fmt.Sprintf("Content-Length: %d\r\n\r\n", len(body)) + body
	}
	read := func(what string) (int, string) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		var status, n int
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		fmt.Sscanf(line, "HTTP/1.1 %d", &status)
		for {
			h, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if h == "\r\n" {
				break
			}
			fmt.Sscanf(strings.ToLower(h), "content-length: %d", &n)
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return status, string(b)
	}
	cases := []struct {
		name   string
		region string
		lines  []string
		status int
		code   string
	}{
		{"matching", `"eu"`, []string{"Mcp-Param-Region: eu\r\n"}, 200, ""},
		{"UTF-8 bytes unencoded", `"Zürich"`, []string{"Mcp-Param-Region: Zürich\r\n"}, 400, "-32020"},
		{"Latin-1 byte", `"Z\u00fcrich"`, []string{"Mcp-Param-Region: Z\xfcrich\r\n"}, 400, "-32020"},
		{"DEL", `"a\u007fb"`, []string{"Mcp-Param-Region: a\x7fb\r\n"}, 400, ""},
		{"tab inside, which a header may carry", "\"a\\tb\"", []string{"Mcp-Param-Region: a\tb\r\n"}, 200, ""},
		{"lower-case name, OWS", `"eu"`, []string{"mcp-param-region: \t eu \t\r\n"}, 200, ""},
		{"two lines", `"eu"`, []string{"Mcp-Param-Region: eu\r\n", "Mcp-Param-Region: eu\r\n"}, 400, "-32020"},
		{"missing", `"eu"`, nil, 400, "-32020"},
		{"after a refusal, the connection still serves", `"eu"`, []string{"Mcp-Param-Region: eu\r\n"}, 200, ""},
	}
	for _, tc := range cases {
		if _, err := c.Write([]byte(post(tc.region, tc.lines...))); err != nil {
			t.Fatal(err)
		}
		st, body := read(tc.name)
		if st != tc.status || !strings.Contains(body, tc.code) {
			t.Errorf("%s: %d %s, want %d %s", tc.name, st, body, tc.status, tc.code)
		}
		if st == 400 && tc.code == "" {
			// Refused by the HTTP layer (a byte no field value may hold):
			// the connection is gone; open another.
			c.Close()
			if c, err = net.DialTimeout("tcp", addr, 5*time.Second); err != nil {
				t.Fatal(err)
			}
			br = bufio.NewReader(c)
		}
	}
	// Pipelined: a refused request, then a good one, in one write.
	if _, err := c.Write([]byte(post(`"eu"`, "Mcp-Param-Region: us\r\n") + post(`"us"`, "Mcp-Param-Region: us\r\n"))); err != nil {
		t.Fatal(err)
	}
	if st, body := read("pipelined, first"); st != 400 || !strings.Contains(body, "-32020") {
		t.Errorf("pipelined, first: %d %s", st, body)
	}
	if st, body := read("pipelined, second"); st != 200 {
		t.Errorf("pipelined, second: %d %s", st, body)
	}
}

// TestHeaderNumber: a header carries a number exactly when it is a JSON
// number, as encoding/json reads one; every string of up to four bytes
// over the characters numbers are made of is tried.
func TestHeaderNumber(t *testing.T) {
	const alphabet = "-+.eE019 x"
	var try func(prefix string, n int)
	count := 0
	try = func(s string, n int) {
		var v any
		want := json.Unmarshal([]byte(s), &v) == nil && kindOf([]byte(s)) == kindNumber && !strings.ContainsAny(s, " ")
		if got := headerNumber([]byte(s)); got != want {
			t.Errorf("headerNumber(%q) = %v, want %v", s, got, want)
		}
		count++
		if n == 0 {
			return
		}
		for i := range len(alphabet) {
			try(s+alphabet[i:i+1], n-1)
		}
	}
	try("", 4)
	for _, s := range []string{"9007199254740993", "-0", "0.5e-7", "1E+400", "12345678901234567890123.25"} {
		if !headerNumber([]byte(s)) {
			t.Errorf("headerNumber(%q) = false", s)
		}
	}
	t.Logf("%d strings", count)
}
