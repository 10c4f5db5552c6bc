package mcp

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// The compiled subset and the library must give the same verdict on every
// instance, for every schema the subset compiles: the suite's own
// schemas and instances, and random schemas of the subset's grammar
// against random instances (member names repeated deeper down, escapes,
// numbers written every way JSON allows). FuzzSchemaDifferential in the
// fuzz module searches further.

// diffVerdict compares the two paths on one schema and instance; it
// returns a description of the disagreement, or "".
func diffVerdict(ts *toolSchema, instance []byte) string {
	if ts.fast == nil {
		return ""
	}
	if !decode.Valid(instance) || kindOf(trimWS(instance)) != kindObject {
		return ""
	}
	instance = trimWS(instance)
	if _, ferr := instanceOf(instance); ferr != nil {
		return "" // beyond the library path's number bound
	}
	fe := ts.fast.validateArguments(instance, nil)
	var le *fieldError
	if decode.DuplicateName(instance) {
		le = dupMember
	} else {
		le = validateLibrary(ts.lib, instance)
	}
	if (fe == nil) != (le == nil) {
		describe := func(e *fieldError) string {
			if e == nil {
				return "valid"
			}
			return e.field("arguments") + " " + e.msg
		}
		return "compiled: " + describe(fe) + "; library: " + describe(le)
	}
	return ""
}

func TestSchemaDifferentialSuite(t *testing.T) {
	for _, draft := range []string{"draft2020-12", "draft7"} {
		s, tools, _ := suiteServer(t, draft, pathsAll)
		n := 0
		for _, rt := range tools {
			if !rt.fast {
				continue
			}
			ts := s.toolIndex[rt.name].in
			for _, tc := range rt.group.Tests {
				inst := []byte(`{"v":` + string(tc.Data) + `}`)
				if d := diffVerdict(ts, inst); d != "" {
					t.Errorf("%s %s: %s", ts.json, inst, d)
				}
				n++
			}
		}
		t.Logf("%s: %d suite cases compared", draft, n)
	}
}

// schemaGen writes random schemas of the compiled subset's grammar.
type schemaGen struct{ r *rand.Rand }

var (
	genNames   = []string{"a", "b", "é", `\u0061`, "a b", "c"}
	genNumbers = []string{"0", "-0", "1", "1.0", "1e2", "-1", "2.5", "0.1", "1E-1", "12345678901234567890", "-12345678901234567890", "9007199254740993", "1e300", "-1.5e2", "100", "99.999"}
	genStrings = []string{`""`, `"a"`, `"1"`, `"1.0"`, `"-0"`, `"100"`, `"ab"`, `"abc"`, `"é"`, `"\u00e9"`, `"😀"`, `"\ud83d\ude00"`, `"a\"b"`, `"日本語"`, `"\n"`, `"abcd"`}
	genTypes   = []string{"object", "array", "string", "number", "integer", "boolean", "null"}
)

func (g *schemaGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *schemaGen) schema(depth int) string {
	if g.r.IntN(8) == 0 {
		return g.pick([]string{"true", "false"})
	}
	var kw []string
	if g.r.IntN(2) == 0 {
		if g.r.IntN(3) == 0 {
			a, b := g.pick(genTypes), g.pick(genTypes)
			if a == b {
				kw = append(kw, `"type":["`+a+`"]`)
			} else {
				kw = append(kw, `"type":["`+a+`","`+b+`"]`)
			}
		} else {
			kw = append(kw, `"type":"`+g.pick(genTypes)+`"`)
		}
	}
	if depth > 0 && g.r.IntN(2) == 0 {
		var props []string
		used := map[string]bool{}
		for range g.r.IntN(3) + 1 {
			n := g.pick(genNames)
			if used[n] || n == `\u0061` && used["a"] || n == "a" && used[`\u0061`] {
				continue
			}
			used[n] = true
			props = append(props, `"`+n+`":`+g.schema(depth-1))
		}
		kw = append(kw, `"properties":{`+strings.Join(props, ",")+`}`)
	}
	if g.r.IntN(3) == 0 {
		kw = append(kw, `"required":["`+g.pick([]string{"a", "b", "é"})+`"]`)
	}
	if depth > 0 && g.r.IntN(4) == 0 {
		kw = append(kw, `"additionalProperties":`+g.schema(depth-1))
	}
	if depth > 0 && g.r.IntN(3) == 0 {
		kw = append(kw, `"items":`+g.schema(depth-1))
	}
	if g.r.IntN(5) == 0 {
		var vals []string
		for range g.r.IntN(3) + 1 {
			vals = append(vals, g.value(1))
		}
		kw = append(kw, `"enum":[`+strings.Join(vals, ",")+`]`)
	}
	if g.r.IntN(4) == 0 {
		kw = append(kw, `"minimum":`+g.pick(genNumbers))
	}
	if g.r.IntN(4) == 0 {
		kw = append(kw, `"maximum":`+g.pick(genNumbers))
	}
	if g.r.IntN(4) == 0 {
		kw = append(kw, `"minLength":`+strconv.Itoa(g.r.IntN(4)))
	}
	if g.r.IntN(4) == 0 {
		kw = append(kw, `"maxLength":`+g.pick([]string{"0", "1", "2", "3", "1.0"}))
	}
	if g.r.IntN(5) == 0 {
		kw = append(kw, `"minItems":`+strconv.Itoa(g.r.IntN(3)))
	}
	if g.r.IntN(5) == 0 {
		kw = append(kw, `"maxItems":`+g.pick([]string{"0", "1", "2", "2.0"}))
	}
	if g.r.IntN(6) == 0 {
		kw = append(kw, `"format":"email"`, `"description":"d"`)
	}
	if g.r.IntN(5) == 0 {
		kw = append(kw, `"pattern":`+g.pick([]string{`"^a"`, `"b$"`, `"^[a-z]*$"`, `"é"`, `"\u00e9|😀"`, `"^.{2}$"`, `"\\d"`}))
	}
	g.r.Shuffle(len(kw), func(i, j int) { kw[i], kw[j] = kw[j], kw[i] })
	return "{" + strings.Join(kw, ",") + "}"
}

func (g *schemaGen) value(depth int) string {
	switch k := g.r.IntN(7); {
	case k == 0 && depth > 0:
		var ms []string
		for range g.r.IntN(4) {
			ms = append(ms, `"`+g.pick(genNames)+`":`+g.value(depth-1)) // names may repeat
		}
		return "{" + strings.Join(ms, ",") + "}"
	case k == 1 && depth > 0:
		var es []string
		for range g.r.IntN(4) {
			es = append(es, g.value(depth-1))
		}
		return "[" + strings.Join(es, ",") + "]"
	case k == 2:
		return g.pick(genStrings)
	case k == 3:
		return g.pick([]string{"true", "false", "null"})
	default:
		return g.pick(genNumbers)
	}
}

// object writes an arguments object: unique top-level names (repeats
// there are -32602 on both paths before any schema), repeats allowed
// deeper.
func (g *schemaGen) object(depth int) string {
	var ms []string
	used := map[string]bool{}
	for range g.r.IntN(4) {
		n := g.pick([]string{"a", "b", "é", "c"})
		if used[n] {
			continue
		}
		used[n] = true
		ms = append(ms, `"`+n+`":`+g.value(depth))
	}
	return "{" + strings.Join(ms, ",") + "}"
}

func TestSchemaDifferentialRandom(t *testing.T) {
	g := &schemaGen{r: rand.New(rand.NewPCG(1, 2))}
	schemas, cases := 0, 0
	n := 3000
	if testing.Short() {
		n = 500
	}
	for range n {
		// The root of a tool schema is an object schema.
		root := `{"type":"object","properties":{"v":` + g.schema(3) + `,"w":` + g.schema(2) + `}`
		if g.r.IntN(3) == 0 {
			root += `,"required":["v"]`
		}
		if g.r.IntN(4) == 0 {
			root += `,"additionalProperties":` + g.schema(1)
		}
		root += "}"
		ts, err := compileToolSchema(root, "diff", "input", nil, pathsAll)
		if err != nil || ts.fast == nil {
			continue
		}
		schemas++
		for range 20 {
			inst := g.object(3)
			if g.r.IntN(2) == 0 {
				inst = `{"v":` + g.value(3) + `,"w":` + g.value(2) + `}`
			}
			if d := diffVerdict(ts, []byte(inst)); d != "" {
				t.Errorf("schema %s\ninstance %s\n%s", root, inst, d)
			}
			cases++
		}
	}
	t.Logf("%d schemas, %d instances compared", schemas, cases)
	if schemas < n/2 {
		t.Errorf("only %d of %d generated schemas compiled on the fast path", schemas, n)
	}
}

// TestLibraryConcurrent calls tools served by the library from many
// goroutines at once (run it with -race): compiled schemas are shared,
// read-only, by every call.
func TestLibraryConcurrent(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	s.AddTool(Tool{Name: "u", InputSchema: `{"type":"object","properties":{"tags":{"type":"array","uniqueItems":true,"items":{"$ref":"#/$defs/tag"}}},"$defs":{"tag":{"type":"string","minLength":1}}}`,
		Handler: ToolFunc(func(c *Call) error { c.AddText("ok"); return nil })})
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	done := make(chan string, 8)
	for g := range 8 {
		go func() {
			for i := range 200 {
				args := fmt.Sprintf(`{"tags":["a%d","b%d"]}`, g, i)
				want := 0
				if i%3 == 0 {
					args, want = fmt.Sprintf(`{"tags":["a%d","a%d"]}`, i, i), decode.CodeInvalidParams
				}
				if a := exchange(t, ep, h25, req("tools/call", `"name":"u","arguments":`+args)); a.Code != want {
					done <- fmt.Sprintf("%s: %+v", args, a)
					return
				}
			}
			done <- ""
		}()
	}
	for range 8 {
		if msg := <-done; msg != "" {
			t.Error(msg)
		}
	}
}
