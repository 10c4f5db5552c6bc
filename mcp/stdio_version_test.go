package mcp

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestStdioNegotiatedVersion: over stdio a request that names no version
// in _meta is served under the version the stream's initialize
// negotiated (2025-xx: it holds for the connection), 2025-03-26 before
// one; a version _meta names wins; another stream starts over. Seen in
// tools/list: a tool's title and outputSchema are sent from 2025-06-18
// on (before, a 2025-11-25 client over stdio never saw them).
func TestStdioNegotiatedVersion(t *testing.T) {
	s, err := New(Info{Name: "v", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	title := fmt.Sprintf("Shown %d", rand.IntN(1e6))
	s.AddTool(Tool{Name: "shaped", Title: title,
		OutputSchema: `{"type":"object","properties":{"n":{"type":"integer"}}}`,
		Handler:      ToolFunc(func(c *Call) error { return c.SetStructuredContent([]byte(`{"n":1}`)) })})
	inW, lines, done := serveStdio(s)
	defer func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeLines: %v", err)
		}
	}()
	id := 0
	list := func(meta string) (schema, titled bool) {
		t.Helper()
		id++
		params := ""
		if meta != "" {
			params = `,"params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + meta + `"}}`
		}
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"%s}`+"\n", id, params)
		l, m := stdioLine(t, lines)
		if string(m["id"]) != fmt.Sprint(id) || m["result"] == nil {
			t.Fatalf("tools/list: %q", l)
		}
		return strings.Contains(l, `"outputSchema"`), strings.Contains(l, title)
	}
	initialize := func(v string) {
		t.Helper()
		id++
		fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`+"\n", id, v)
		if l, m := stdioLine(t, lines); !strings.Contains(string(m["result"]), `"protocolVersion":"`+v+`"`) {
			t.Fatalf("initialize %s: %q", v, l)
		}
	}
	want := func(what string, schema, titled, wantBoth bool) {
		t.Helper()
		if schema != wantBoth || titled != wantBoth {
			t.Errorf("%s: outputSchema %v, title %v; want %v", what, schema, titled, wantBoth)
		}
	}
	s1, t1 := list("")
	want("before initialize (2025-03-26)", s1, t1, false)
	v := []string{"2025-06-18", "2025-11-25"}[rand.IntN(2)]
	initialize(v)
	s1, t1 = list("")
	want("after initialize "+v, s1, t1, true)
	s1, t1 = list("2025-03-26")
	want("naming 2025-03-26 in _meta", s1, t1, false)
	initialize("2025-03-26")
	s1, t1 = list("")
	want("after initialize 2025-03-26", s1, t1, false)
	initialize(v)
	s1, t1 = list("")
	want("after initialize "+v+" again", s1, t1, true)

	// Another stream has its own: it starts at 2025-03-26.
	in2, lines2, done2 := serveStdio(s)
	fmt.Fprintln(in2, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	if l, _ := stdioLine(t, lines2); strings.Contains(l, `"outputSchema"`) {
		t.Errorf("a second stream took the first one's version: %q", l)
	}
	in2.Close()
	if err := <-done2; err != nil {
		t.Errorf("ServeLines: %v", err)
	}
}
