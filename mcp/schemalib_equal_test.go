package mcp

import (
	"fmt"
	"strings"
	"testing"
)

// A number never equals a string on the library path. jsonschema/v6
// v6.0.2 compared a number with anything through its decimal text, so
// that 1 passed {"const":"1"} and {"enum":["1"]}, and [1,"1"] failed
// uniqueItems; v6.0.3 requires both sides to be numbers. const and
// uniqueItems are outside the compiled subset, so these calls are
// judged by the library; enum is judged by both (the compiled path is
// checked against the library by TestSchemaDifferentialRandom, whose
// strings include numeric ones for this).
func TestLibraryNumberIsNotString(t *testing.T) {
	for _, libOnly := range []bool{false, true} {
		t.Run(fmt.Sprintf("library-only=%v", libOnly), func(t *testing.T) {
			var opts []Option
			if libOnly {
				opts = append(opts, WithLibraryValidation())
			}
			s, err := New(Info{Name: "eq", Version: "1"}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			schemas := map[string]string{
				"const":  `{"type":"object","properties":{"v":{"const":"%s"}},"required":["v"]}`,
				"enum":   `{"type":"object","properties":{"v":{"enum":["%s",true]}},"required":["v"]}`,
				"nested": `{"type":"object","properties":{"v":{"const":{"k":["%s"]}}},"required":["v"]}`,
			}
			// Numbers written several ways: the string is their text.
			nums := []string{"1", "-0", "2.5", "1e2", "12345678901234567890"}
			for kind, sc := range schemas {
				for i, n := range nums {
					err := s.AddTool(Tool{
						Name:        fmt.Sprintf("%s-%d", kind, i),
						InputSchema: fmt.Sprintf(sc, n),
						Handler:     ToolFunc(func(c *Call) error { c.AddText("ok"); return nil }),
					})
					if err != nil {
						t.Fatal(err)
					}
				}
			}
			err = s.AddTool(Tool{
				Name:        "unique",
				InputSchema: `{"type":"object","properties":{"v":{"type":"array","uniqueItems":true}},"required":["v"]}`,
				Handler:     ToolFunc(func(c *Call) error { c.AddText("ok"); return nil }),
			})
			if err != nil {
				t.Fatal(err)
			}
			hc := serveInMemory(t, s)
			id := 0
			call := func(tool, args string, want bool) {
				t.Helper()
				id++
				status, m := postTool(t, hc, id, tool, []byte(args))
				_, ok := m["result"]
				if status != 200 || ok != want {
					t.Errorf("%s %s: status %d, answer %v; want valid=%v", tool, args, status, m, want)
				}
				if !want && !strings.Contains(string(m["error"]), "-32602") {
					t.Errorf("%s %s: error %s, want -32602", tool, args, m["error"])
				}
			}
			for i, n := range nums {
				call(fmt.Sprintf("const-%d", i), `{"v":"`+n+`"}`, true)
				call(fmt.Sprintf("const-%d", i), `{"v":`+n+`}`, false)
				call(fmt.Sprintf("enum-%d", i), `{"v":"`+n+`"}`, true)
				call(fmt.Sprintf("enum-%d", i), `{"v":`+n+`}`, false)
				call(fmt.Sprintf("nested-%d", i), `{"v":{"k":["`+n+`"]}}`, true)
				call(fmt.Sprintf("nested-%d", i), `{"v":{"k":[`+n+`]}}`, false)
			}
			for _, n := range nums {
				call("unique", `{"v":[`+n+`,"`+n+`"]}`, true)
				call("unique", `{"v":["`+n+`",`+n+`,{"a":"`+n+`"},{"a":`+n+`}]}`, true)
				call("unique", `{"v":[`+n+`,"x",`+n+`]}`, false)
				call("unique", `{"v":["`+n+`","`+n+`"]}`, false)
			}
		})
	}
}
