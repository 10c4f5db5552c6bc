//go:build !race

package mcp

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/valyala/fasthttp"
)

// maxDecodedFactor is contract §3's bound: the decoded form of a request
// costs at most 8× its body bytes.
const maxDecodedFactor = 8

func shortName(i int) string { return "x" + strconv.FormatInt(int64(i), 36) }

// typedIn is the input of the typed tool of these tests.
type typedIn struct {
	Text string `json:"text"`
}

// amplifyServer is a server with the tools, prompt and resource of
// testServer that these shapes reach, and a typed tool.
func amplifyServer(t *testing.T) *fastserver.Endpoint {
	s, err := New(Info{Name: "test", Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(Tool{
		Name:        "echo",
		InputSchema: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		Handler:     ToolFunc(func(c *Call) error { return c.AddTextJSON(c.Arg("text")) }),
	})
	// minItems and maxItems: in the compiled subset (before 2026-12-06
	// such a schema went to the library, whose instance model of these
	// arrays cost 35-51 times their bytes).
	s.AddTool(Tool{
		Name:        "counted",
		InputSchema: `{"type":"object","properties":{"v":{"type":"array","minItems":0,"maxItems":1000000}}}`,
		Handler:     ToolFunc(func(c *Call) error { c.AddText("ok"); return nil }),
	})
	// Outside the compiled subset: the raw walk judges these
	// (schemaraw.go); before 2026-12-06 the library did, on a model of
	// the arguments that cost 35-51 times their bytes.
	s.AddTool(Tool{
		Name:        "walked",
		InputSchema: walkedSchema,
		Handler:     ToolFunc(func(c *Call) error { c.AddText("ok"); return nil }),
	})
	s.AddPrompt(Prompt{
		Name:      "greet",
		Arguments: []PromptArgument{{Name: "name", Required: true}, {Name: "tone"}},
		Get: func(r *fastserver.Request, args map[string]string) (*PromptResult, error) {
			return &PromptResult{Messages: []PromptMessage{{Text: "Hello " + args["name"]}}}, nil
		},
	})
	s.AddResource(Resource{URI: "test://about", Name: "about", Text: "hello"})
	AddTool(s, Tool{Name: "typed"}, func(_ context.Context, c *Call, in typedIn) (struct{}, error) {
		c.AddText(in.Text)
		return struct{}{}, nil
	})
	addCountingTools(s)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return s.Endpoint()
}

// walkedSchema uses a keyword of each family the raw walk adds to the
// compiled subset's: uniqueItems, const, anyOf and oneOf, $ref and
// $defs, unevaluatedProperties and unevaluatedItems, prefixItems,
// contains, patternProperties, dependentRequired, propertyNames.
const walkedSchema = `{"type":"object","$defs":{"num":{"type":"number"}},"properties":{
	"uniq":{"type":"array","uniqueItems":true},
	"pick":{"anyOf":[{"type":"array","items":{"type":"string"}},{"type":"array","items":{"$ref":"#/$defs/num"}}]},
	"one":{"oneOf":[{"type":"array","items":{"type":"object"}},{"type":"array","items":{"type":"array"}}]},
	"rest":{"type":"object","allOf":[{"properties":{"a":{}}}],"unevaluatedProperties":{"$ref":"#/$defs/num"},"propertyNames":{"maxLength":8}},
	"tail":{"type":"array","prefixItems":[{"const":0}],"unevaluatedItems":{"$ref":"#/$defs/num"},"contains":{"const":0}},
	"pat":{"type":"object","patternProperties":{"^x":{"type":"integer"}},"dependentRequired":{"x1":["x2"]}},
	"deep":{"type":"object"}
}}`

// amplifyShapes are the request shapes that make a large decoded form
// cheapest to send, found for tools, prompts and resources.
func amplifyShapes(r *rand.Rand) []struct {
	name string
	body func(size int) []byte
} {
	id := func() string { return strconv.Itoa(r.IntN(1e6)) }
	call := func(tool, head, tail string, item func(int) string) func(int) []byte {
		return func(size int) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":`+id()+`,"method":"tools/call","params":{"name":"`+tool+`","arguments":{`+head, tail+`}}}`, item)
		}
	}
	return []struct {
		name string
		body func(size int) []byte
	}{
		{"many tiny arguments", call("echo", `"text":"hi",`, ``, func(i int) string { return `"` + shortName(i) + `":0` })},
		{"long array of numbers", call("echo", `"text":"hi","n":[`, `]`, func(int) string { return `0` })},
		{"many short strings with escapes", call("echo", `"text":"hi","s":[`, `]`, func(int) string { return `"\n"` })},
		{"a long text of escapes", call("echo", `"text":"`, `"`, func(int) string { return `\u0001` })},
		{"deep nesting", call("echo", `"text":"hi","d":[`, `]`, func(int) string { return strings.Repeat("[", 900) + strings.Repeat("]", 900) })},
		{"many empty objects", call("echo", `"text":"hi","o":[`, `]`, func(int) string { return `{}` })},
		{"minItems: many empty objects", call("counted", `"v":[`, `]`, func(int) string { return `{}` })},
		{"minItems: many zeros", call("counted", `"v":[`, `]`, func(int) string { return `0` })},
		{"minItems: many empty arrays", call("counted", `"v":[`, `]`, func(int) string { return `[]` })},
		// A typed tool's arguments are decoded into its Go type: a
		// string costs its bytes, and containers are refused before
		// sonic runs when their model passes the bound (typedcost.go;
		// before 2026-12-07 these cost 11-55× their bytes).
		{"walked: uniqueItems, distinct numbers", call("walked", `"uniq":[`, `]`, func(i int) string { return strconv.Itoa(i) })},
		{"walked: uniqueItems, distinct strings", call("walked", `"uniq":[`, `]`, func(i int) string { return `"` + shortName(i) + `"` })},
		{"walked: anyOf, many zeros", call("walked", `"pick":[`, `]`, func(int) string { return `0` })},
		{"walked: oneOf, many empty arrays", call("walked", `"one":[`, `]`, func(int) string { return `[]` })},
		{"walked: unevaluatedProperties, tiny members", call("walked", `"rest":{`, `}`, func(i int) string { return `"` + shortName(i) + `":0` })},
		{"walked: unevaluatedItems, many zeros", call("walked", `"tail":[`, `]`, func(int) string { return `0` })},
		{"walked: patternProperties, tiny members", call("walked", `"pat":{`, `}`, func(i int) string { return `"` + shortName(i) + `":0` })},
		{"walked: a name repeated below the top", call("walked", `"deep":{`, `}`, func(int) string { return `"k":0` })},
		{"typed: a long text of escapes", call("typed", `"text":"`, `"`, func(int) string { return `\u0001` })},
		{"typed: many short strings", call("typed", `"text":"`, `"`, func(int) string { return `\"` })},
		{"typed []int: many zeros", call("typed-ints", `"v":[`, `]`, func(int) string { return `0` })},
		{"typed []int: many 1.0", call("typed-ints", `"v":[`, `]`, func(int) string { return `1.0` })},
		{"typed map: tiny members", call("typed-map", `"v":{`, `}`, func(i int) string { return `"` + shortName(i) + `":0` })},
		{"typed any: many empty objects", call("typed-any", `"v":[`, `]`, func(int) string { return `{}` })},
		{"typed any: tiny members of empty arrays", call("typed-any", `"v":{`, `}`, func(i int) string { return `"` + shortName(i) + `":[]` })},
		{"prompt: many tiny arguments", func(size int) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":`+id()+`,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"Ada",`, `}}}`,
				func(i int) string { return `"` + shortName(i) + `":""` })
		}},
		{"prompt: an escaped name", func(size int) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":`+id()+`,"method":"prompts/get","params":{"name":"greet","arguments":{"name":"`, `"}}}`,
				func(int) string { return `\n` })
		}},
		{"resource: a long unknown URI", func(size int) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":`+id()+`,"method":"resources/read","params":{"uri":"test://`, `"}}`,
				func(int) string { return `\n` })
		}},
		{"params members", func(size int) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":`+id()+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},`, `}}`,
				func(i int) string { return `"` + shortName(i) + `":0` })
		}},
		{"envelope members", func(size int) []byte {
			return memtest.FillBody(size, `{"jsonrpc":"2.0","id":`+id()+`,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}},`, `}`,
				func(i int) string { return `"` + shortName(i) + `":0` })
		}},
	}
}

// decodedCost serves body as the fastserver server does (decode, Check,
// Route, the params rows, the handler) and returns the bytes one request
// allocates once the pools are warm (memtest.Steady: a pool refilled after a
// collection is the next request's too, ~100 KiB of sonic's alone, which
// measured from cold pools made a 64 KiB body look 1.6× dearer), and the
// answer's error, if any.
// The answer buffer is given the capacity of the answer (measured by a
// first run), so the figure is what the request's decoded form and its
// handler cost, not the answer's size.
func decodedCost(t *testing.T, ep *fastserver.Endpoint, body []byte) (uint64, *fastserver.Error) {
	t.Helper()
	var h fasthttp.RequestHeader
	h.SetMethod("POST")
	h.SetRequestURI("/mcp")
	h.Set("MCP-Protocol-Version", "2025-11-25")
	run := func(dst []byte) ([]byte, error) {
		out, err := memtest.Serve(ep, &h, body, dst)
		if errors.Is(err, memtest.ErrNoRoute) {
			t.Fatalf("no route for %.60s…", body)
		}
		return out, err
	}
	out, err := run(nil)
	var fe *fastserver.Error
	if err != nil && !errors.As(err, &fe) {
		t.Fatalf("%.60s…: %v", body, err)
	}
	dst := make([]byte, 0, len(out)+64)
	return memtest.Steady(func() { _, _ = run(dst) }), fe
}

// TestDecodedFormBound sends the worst shapes found for tool arguments,
// prompt arguments and resource URIs, at 64 KiB and 1 MiB, and checks
// that serving each costs at most 8× its body bytes (contract §3).
func TestDecodedFormBound(t *testing.T) {
	ep := amplifyServer(t)
	r := rand.New(rand.NewPCG(rand.Uint64(), 18))
	for _, sh := range amplifyShapes(r) {
		for _, size := range []int{64 << 10, 1<<20 - 1024} {
			body := sh.body(size)
			cost, fe := decodedCost(t, ep, body)
			ratio := float64(cost) / float64(len(body))
			t.Logf("%-34s %8d bytes: %5.2f×", sh.name, len(body), ratio)
			// The unknown resource is refused (-32601) after its URI was
			// read, a typed tool's containers may be refused as too
			// large (-32602); every other shape is served.
			refusable := strings.HasPrefix(sh.name, "resource:") ||
				strings.HasPrefix(sh.name, "typed ") && fe != nil && fe.Code == -32602 && strings.Contains(fe.Message, "would take more than")
			if fe != nil && !refusable {
				t.Errorf("%s: refused %d %s: the shape must be served to be measured", sh.name, fe.Code, fe.Message)
			}
			if cost > maxDecodedFactor*uint64(len(body)) {
				t.Errorf("%s, %d bytes: serving it allocated %d bytes, %.2f× the body (at most %d×)", sh.name, len(body), cost, ratio, maxDecodedFactor)
			}
		}
	}
}
