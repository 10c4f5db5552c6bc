package mcp_test

import (
	"fmt"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
	"github.com/valyala/fasthttp"
)

// call runs one message through an endpoint the way the server does
// (Check, Route, ServeRPC) and prints the outcome.
func call(ep *fastserver.Endpoint, headers map[string]string, body string) {
	var d decode.Decoder
	d.SetOptions(decode.Options{IDs: ep.IDs})
	var m decode.Message
	if err := d.Decode([]byte(body), &m); err != nil {
		fmt.Println("decode:", err)
		return
	}
	var h fasthttp.RequestHeader
	for k, v := range headers {
		h.Set(k, v)
	}
	var r fastserver.Request
	r.Reset(&h, &m, nil)
	if e := ep.Check(&r); e != nil {
		fmt.Println(e.Status, e.Code, e.Message)
		return
	}
	out, err := ep.Route(&r).Handler.ServeRPC(&r, nil)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(string(out))
}

func Example() {
	s, err := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})
	if err != nil {
		panic(err)
	}
	s.AddTool(mcp.Tool{
		Name:        "echo",
		InputSchema: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
			return c.AddTextJSON(c.Arg("text"))
		}),
	})
	ep := s.Endpoint()

	// 2025-11-25, no Mcp-* headers: optional under earlier versions.
	call(ep, map[string]string{"MCP-Protocol-Version": "2025-11-25"},
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)

	// 2026-07-28: headers and _meta required; the result says so.
	call(ep, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"},
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)

	// A header that disagrees with the body.
	call(ep, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "other"},
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo",`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)

	// Arguments that fail the schema: -32602 naming the field.
	call(ep, map[string]string{"MCP-Protocol-Version": "2025-06-18"},
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"text":7}}}`)
	// Output:
	// {"content":[{"type":"text","text":"hi"}]}
	// {"resultType":"complete","content":[{"type":"text","text":"hi"}],"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","version":"1.0.0"}}}
	// 400 -32020 header mismatch: Mcp-Name does not match params.name
	// error: fastserver: -32602 invalid arguments: arguments.text must be a string
}

func ExampleCall_SetError() {
	s, _ := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})
	s.AddTool(mcp.Tool{
		Name:        "divide",
		InputSchema: `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
			a, _ := c.ArgFloat("a")
			b, _ := c.ArgFloat("b")
			if b == 0 {
				// The call happened and failed: the model reads why.
				c.SetError()
				c.AddText("cannot divide by zero")
				return nil
			}
			c.AddText(fmt.Sprint(a / b))
			return nil
		}),
	})
	ep := s.Endpoint()
	call(ep, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"divide","arguments":{"a":1,"b":4}}}`)
	call(ep, nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"divide","arguments":{"a":1,"b":0}}}`)
	// Output:
	// {"content":[{"type":"text","text":"0.25"}]}
	// {"content":[{"type":"text","text":"cannot divide by zero"}],"isError":true}
}

func ExampleServer_AddTool_unsupportedKeyword() {
	s, _ := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})
	err := s.AddTool(mcp.Tool{
		Name:        "search",
		InputSchema: `{"type":"object","properties":{"q":{"type":"string","pattern":"^[a-z]+$"}}}`,
		Handler:     mcp.ToolFunc(func(c *mcp.Call) error { return nil }),
	})
	fmt.Println(err)
	// Output:
	// mcp: tool "search": input schema at /properties/q/pattern: keyword "pattern" is not supported (supported: type, properties, required, enum, items, minimum, maximum, minLength, maxLength, additionalProperties)
}

func ExampleServer_Endpoint_discover() {
	s, _ := mcp.New(mcp.Info{Name: "example", Title: "Example", Version: "1.0.0"},
		mcp.WithCache(mcp.CacheHint{TTL: 60e9, Scope: mcp.CachePublic}))
	call(s.Endpoint(), map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	// Output:
	// {"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"],"capabilities":{"prompts":{},"resources":{},"tools":{}},"serverInfo":{"name":"example","title":"Example","version":"1.0.0"},"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","title":"Example","version":"1.0.0"}}}
}
