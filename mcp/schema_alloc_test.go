//go:build !race

package mcp

import (
	"fmt"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// TestSchemaAllocs pins zero allocations, once warm, for what the compiled
// subset serves now that every other schema goes to the library: input
// schemas the official SDK's generator writes for plain structs (typed
// tools' inferred schemas), and a declared output schema checked on every
// structured result. Ids, texts and numbers vary across calls.
func TestSchemaAllocs(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := inferSchema[sizes]()
	if err != nil {
		t.Fatal(err)
	}
	out := `{"type":"object","properties":{"n":{"type":"integer","minimum":0},"text":{"type":"string","maxLength":4096}},"required":["n","text"],"additionalProperties":false}`
	err = s.AddTool(Tool{Name: "structured", InputSchema: string(in), OutputSchema: out, Handler: ToolFunc(func(c *Call) error {
		if err := c.AddTextJSON(c.Arg("note")); err != nil {
			return err
		}
		// Structured content built from the arguments, as a raw handler
		// would, without allocating.
		buf := c.scratch[:0]
		buf = append(buf, `{"n":`...)
		buf = append(buf, c.Arg("small")...)
		buf = append(buf, `,"text":`...)
		buf = append(buf, c.Arg("note")...)
		buf = append(buf, '}')
		c.scratch = buf[:0] // keep the grown buffer for the next call
		return c.SetStructuredContent(buf)
	})})
	if err != nil {
		t.Fatal(err)
	}
	if tl := s.toolIndex["structured"]; tl.in.fast == nil || tl.out.fast == nil {
		t.Fatalf("the generated input schema %s or the output schema is not on the compiled path", in)
	}
	ep := s.Endpoint()
	const n = 8
	var (
		msgs [n]decode.Message
		hdrs [n]fasthttp.RequestHeader
		reqs [n]fastserver.Request
	)
	notes := []string{"hi", `caf\u00e9`, "日本語", `a\"b`}
	for i := range n {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"structured","arguments":{"small":%d,"big":%d,"ratio":%d.5,"items":[{"n":%d}],"note":"%s","nested":{"deep":-%d}}}}`,
			i+1, i%128, i*1000, i, i, notes[i%len(notes)], i)
		msgs[i] = decodeOwn(t, []byte(body))
		hdrs[i].Add(HeaderProtocolVersion, "2025-11-25")
		reqs[i].Reset(&hdrs[i], &msgs[i], nil)
		if a := serve(t, ep, &reqs[i]); a.Code != 0 {
			t.Fatalf("%s: %+v", body, a)
		}
	}
	dst := make([]byte, 0, 16<<10)
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		r := &reqs[i%n]
		r.Reset(&hdrs[i%n], r.Msg, nil)
		i++
		if e := ep.Check(r); e != nil {
			panic(e)
		}
		out, err := ep.Route(r).Handler.ServeRPC(r, dst[:0])
		if err != nil {
			panic(err)
		}
		dst = out
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per call, want 0", allocs)
	}

	// pattern on text without escapes (the lookup tool's key).
	ts, err := compileToolSchema(`{"type":"object","properties":{"key":{"type":"string","pattern":"^[a-z]+$"}},"required":["key"]}`, "lookup", "input", nil, pathsAll)
	if err != nil || ts.fast == nil {
		t.Fatalf("pattern not on the compiled path: %v", err)
	}
	keys := [][]byte{[]byte(`{"key":"go"}`), []byte(`{"key":"gopher"}`), []byte(`{"key":"abcdefghijklmnopqrstuvwxyz"}`)}
	i = 0
	allocs = testing.AllocsPerRun(2000, func() {
		if e := ts.validateArguments(keys[i%len(keys)], nil); e != nil {
			panic(e.msg)
		}
		i++
	})
	if allocs != 0 {
		t.Fatalf("pattern: %v allocations per call, want 0", allocs)
	}
}
