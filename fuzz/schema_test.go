package fuzz

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
	"github.com/valyala/fasthttp"
)

// FuzzSchemaDifferential: for every input schema, a tools/call with any
// arguments object gets the same verdict from a server that validates as
// mcp does by default — the compiled, allocation-free subset for the
// schemas it covers (mcp.SchemaFastPath), the raw walk over the
// library's compiled schema for most others — and from one that
// validates with the JSON Schema library's own Validate alone
// (mcp.WithLibraryValidation): both 200 with a result, or both 200 /
// -32602 naming a field. Registration must also agree: a schema one
// server takes, the other takes.
//
// Arguments holding a number with more than 400 significant digits or an
// exponent beyond ±400 are skipped: the library path refuses those on
// purpose (big.Rat's cost), while the subset and the raw walk compare
// them exactly.
func FuzzSchemaDifferential(f *testing.F) {
	seeds := []struct{ schema, args string }{
		{`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`, `{"text":"hi"}`},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":10}}}`, `{"n":1.0}`},
		{`{"type":"object","properties":{"n":{"type":["integer","null"],"minimum":-1e400}}}`, `{"n":12345678901234567890123}`},
		{`{"type":"object","properties":{"s":{"minLength":2,"maxLength":3}}}`, `{"s":"\ud83d\ude00\u00e9"}`},
		{`{"type":"object","properties":{"e":{"enum":[1,"a",null,[1],{"x":1}]}}}`, `{"e":{"x":1.0}}`},
		{`{"type":"object","properties":{"o":{"properties":{"k":{"type":"string"}}}}}`, `{"o":{"k":1,"k":"a"}}`},
		{`{"type":"object","additionalProperties":false,"properties":{"a":true,"b":false}}`, `{"a":1,"\u0062":2}`},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","required":["k"],"additionalProperties":{"type":"integer"}}}}}`, `{"a":[{"k":1,"x":2.5}]}`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"number","maximum":1e2}}}`, `{"a":100.0000000000000000001}`},
	}
	for _, s := range seeds {
		f.Add(s.schema, s.args)
	}
	// The suite's schemas that the subset serves, with their instances.
	suiteSeeds(f)

	f.Fuzz(func(t *testing.T, schema, args string) {
		if len(schema) > 4096 || len(args) > 4096 {
			return
		}
		if !decode.Valid([]byte(args)) || bigNumber([]byte(args)) {
			return
		}
		fast, errFast := schemaServer(schema)
		lib, errLib := schemaServer(schema, mcp.WithLibraryValidation())
		if (errFast == nil) != (errLib == nil) {
			t.Fatalf("registration disagrees: compiled %v, library %v", errFast, errLib)
		}
		if errFast != nil {
			return
		}
		a, b := schemaCall(t, fast, args), schemaCall(t, lib, args)
		if a != b {
			t.Fatalf("schema %s\narguments %s\ndefault: %s\nlibrary: %s", schema, args, a, b)
		}
	})
}

// bigNumber reports whether a JSON text holds a number the library path
// refuses by design: more than 400 digits, or an exponent of 3 digits or
// more (a cheap over-approximation of "beyond ±400").
func bigNumber(v []byte) bool {
	digits, inNum, inStr, esc, expDigits, inExp := 0, false, false, false, 0, false
	for _, c := range v {
		switch {
		case inStr:
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
			continue
		case c == '"':
			inStr = true
		case c >= '0' && c <= '9':
			if !inNum {
				inNum, digits, expDigits, inExp = true, 0, 0, false
			}
			if inExp {
				expDigits++
			} else {
				digits++
			}
			if digits > 300 || expDigits > 2 {
				return true
			}
			continue
		case inNum && (c == 'e' || c == 'E'):
			inExp = true
			continue
		case inNum && (c == '.' || c == '+' || c == '-'):
			continue
		}
		inNum = false
	}
	return false
}

func schemaServer(schema string, opts ...mcp.Option) (*fastserver.Endpoint, error) {
	s, err := mcp.New(mcp.Info{Name: "fuzz", Version: "1"}, opts...)
	if err != nil {
		return nil, err
	}
	err = s.AddTool(mcp.Tool{
		Name:        "t",
		InputSchema: schema,
		Handler:     mcp.ToolFunc(func(c *mcp.Call) error { c.AddText("ok"); return nil }),
	})
	if err != nil {
		return nil, err
	}
	return s.Endpoint(), nil
}

// schemaCall answers one tools/call and returns its verdict: "ok", or the
// error code.
func schemaCall(t *testing.T, ep *fastserver.Endpoint, args string) string {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":` + args + `}}`)
	var d decode.Decoder
	if err := d.SetOptions(decode.Options{IDs: ep.IDs}); err != nil {
		t.Fatal(err)
	}
	var m decode.Message
	if d.Decode(body, &m) != nil {
		return "undecodable"
	}
	var h fasthttp.RequestHeader
	h.Set(mcp.HeaderProtocolVersion, "2025-11-25")
	var r fastserver.Request
	r.Reset(&h, &m, nil)
	if e := ep.Check(&r); e != nil {
		return "check " + e.Message
	}
	out, err := ep.Route(&r).Handler.ServeRPC(&r, nil)
	if err != nil {
		if fe, ok := err.(*fastserver.Error); ok {
			if fe.Code == decode.CodeInvalidParams {
				var data struct{ Field string }
				if json.Unmarshal(fe.Data, &data) != nil || data.Field == "" {
					t.Fatalf("-32602 without a field: %s", fe.Data)
				}
			}
			return fmt.Sprintf("error %d", fe.Code)
		}
		return "error " + err.Error()
	}
	if !json.Valid(out) {
		t.Fatalf("invalid result %q", out)
	}
	return "ok"
}

// suiteSeeds adds the JSON-Schema-Test-Suite's groups, each instance
// wrapped as arguments {"v": …} (a group whose schema refers to its own
// root or identifiers means something else there: still a schema both
// servers must judge alike).
func suiteSeeds(f *testing.F) {
	dir := filepath.Join("..", "..", "shared", "testdata", "json-schema-test-suite", "tests")
	files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if len(files) == 0 {
		f.Logf("no JSON-Schema-Test-Suite in %s: seeding without it", dir)
		return
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		var groups []struct {
			Schema json.RawMessage
			Tests  []struct{ Data json.RawMessage }
		}
		if json.Unmarshal(b, &groups) != nil {
			continue
		}
		for _, g := range groups {
			schema := `{"type":"object","properties":{"v":` + string(bytes.TrimSpace(g.Schema)) + `}}`
			// One case a group: each input compiles two servers, and the
			// smoke run's 10 s must go to fuzzing, not to measuring the
			// seeds' coverage (all 2,200 cases took ~25 s of it).
			if len(g.Tests) > 0 {
				tc := g.Tests[len(schema)%len(g.Tests)]
				f.Add(schema, `{"v":`+string(tc.Data)+`}`)
			}
		}
	}
}
