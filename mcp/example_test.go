package mcp_test

import (
	"context"
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
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)

	// A header that disagrees with the body.
	call(ep, map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "other"},
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo",`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)

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
			a, err := c.ArgFloat("a")
			if err != nil {
				return err // -32602 naming the argument
			}
			b, err := c.ArgFloat("b")
			if err != nil {
				return err
			}
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

func ExampleServer_AddTool_library() {
	s, _ := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})
	// uniqueItems is outside the compiled subset: the JSON Schema library
	// compiles this schema and the raw walk judges calls against it, a
	// failure answered as the subset's are.
	schema := `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"uniqueItems":true}},"required":["tags"]}`
	err := s.AddTool(mcp.Tool{
		Name:        "tag",
		InputSchema: schema,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
			c.AddText(string(c.Arg("tags")))
			return nil
		}),
	})
	fmt.Println(err, mcp.SchemaFastPath(schema))
	ep := s.Endpoint()
	call(ep, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"tag","arguments":{"tags":["a","b"]}}}`)
	call(ep, nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tag","arguments":{"tags":["a","a"]}}}`)
	// Output:
	// <nil> false
	// {"content":[{"type":"text","text":"[\"a\",\"b\"]"}]}
	// error: fastserver: -32602 invalid arguments: arguments.tags must hold unique items (items 0 and 1 are equal)
}

func ExampleServer_AddSchemaDocument() {
	s, _ := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})
	h := mcp.ToolFunc(func(c *mcp.Call) error { return nil })
	schema := `{"type":"object","properties":{"to":{"$ref":"https://schemas.example.com/address.json"}}}`

	// Nothing is fetched: a $ref to a document not supplied is refused.
	fmt.Println(s.AddTool(mcp.Tool{Name: "send", InputSchema: schema, Handler: h}))

	// Supplied, it resolves.
	s.AddSchemaDocument("https://schemas.example.com/address.json",
		`{"type":"string","format":"email","maxLength":254}`)
	fmt.Println(s.AddTool(mcp.Tool{Name: "mail", InputSchema: schema, Handler: h}))
	// Output:
	// mcp: tool "send": input schema: mcp: a $ref names a document that was not supplied (nothing is fetched): https://schemas.example.com/address.json (supply it with Server.AddSchemaDocument)
	// <nil>
}

func ExampleServer_Endpoint_discover() {
	s, _ := mcp.New(mcp.Info{Name: "example", Title: "Example", Version: "1.0.0"},
		mcp.WithCache(mcp.CacheHint{TTL: 60e9, Scope: mcp.CachePublic}))
	call(s.Endpoint(), map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"},
		`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	// Output:
	// {"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25","2025-06-18","2025-03-26"],"capabilities":{"completions":{},"logging":{},"prompts":{},"resources":{"subscribe":true},"tools":{}},"serverInfo":{"name":"example","title":"Example","version":"1.0.0"},"ttlMs":60000,"cacheScope":"public","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"example","title":"Example","version":"1.0.0"}}}
}

func ExampleAddTool() {
	s, _ := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})

	type AddArgs struct {
		A int64 `json:"a" jsonschema:"the first addend"`
		B int64 `json:"b" jsonschema:"the second addend"`
	}
	// The input schema is inferred from AddArgs; an int64 result is
	// answered as text.
	mcp.AddTool(s, mcp.Tool{Name: "add", Description: "Adds two integers."},
		func(ctx context.Context, c *mcp.Call, in AddArgs) (int64, error) {
			return in.A + in.B, nil
		})
	ep := s.Endpoint()
	call(ep, nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	call(ep, nil, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":40}}}`)
	// JSON Schema's integers: 1e2 is 100.
	call(ep, nil, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":1e2,"b":-1}}}`)
	// Exact or refused: never a wrapped or rounded value.
	call(ep, nil, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"add","arguments":{"a":9223372036854775808,"b":0}}}`)
	call(ep, nil, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"add","arguments":{"a":1.5,"b":0}}}`)
	// Output:
	// {"tools":[{"name":"add","description":"Adds two integers.","inputSchema":{"type":"object","properties":{"a":{"type":"integer","description":"the first addend"},"b":{"type":"integer","description":"the second addend"}},"required":["a","b"],"additionalProperties":false}}]}
	// {"content":[{"type":"text","text":"42"}]}
	// {"content":[{"type":"text","text":"99"}]}
	// error: fastserver: -32602 invalid arguments: arguments.a does not fit the tool's Go type mcp_test.AddArgs (out of range or not exact)
	// error: fastserver: -32602 invalid arguments: arguments.a must be an integer
}

func ExampleAddTool_structured() {
	s, _ := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})

	type LookupArgs struct {
		Key string `json:"key" jsonschema:"lower-case letters"`
	}
	type Entry struct {
		Key   string `json:"key"`
		Value string `json:"value,omitempty"`
		Found bool   `json:"found"`
	}
	table := map[string]string{"go": "gopher"}
	// A schema given is used as it is (here: a pattern the Go type cannot
	// say); the output schema is inferred from Entry, and every result is
	// checked against it before it is sent.
	mcp.AddTool(s, mcp.Tool{
		Name:        "lookup",
		InputSchema: `{"type":"object","properties":{"key":{"type":"string","pattern":"^[a-z]+$"}},"required":["key"],"additionalProperties":false}`,
	}, func(ctx context.Context, c *mcp.Call, in LookupArgs) (Entry, error) {
		v, ok := table[in.Key]
		return Entry{Key: in.Key, Value: v, Found: ok}, nil
	})
	ep := s.Endpoint()
	h := map[string]string{"MCP-Protocol-Version": "2025-06-18"}
	call(ep, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup","arguments":{"key":"go"}}}`)
	call(ep, h, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup","arguments":{"key":"Go"}}}`)
	// Output:
	// {"content":[{"type":"text","text":"{\"key\":\"go\",\"value\":\"gopher\",\"found\":true}"}],"structuredContent":{"key":"go","value":"gopher","found":true}}
	// error: fastserver: -32602 invalid arguments: arguments.key does not match pattern '^[a-z]+$'
}
