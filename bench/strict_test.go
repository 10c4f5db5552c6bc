package bench

import (
	"fmt"
	"strings"
	"testing"
)

// A candidate accepts a body when it returns method "tools/call" without
// an error: it would dispatch the call.
const wantMethod = "tools/call"

// withText is a tools/call of echo whose text is the JSON string literal
// lit (quotes included), written as raw bytes.
func withText(lit string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":` + lit + `}}}`
}

var valid = withText(`"hello"`)

// strictCases are bodies that RFC 8259 (or JSON-RPC's envelope) refuses,
// plus one valid control.
var strictCases = []struct {
	name  string
	body  string
	valid bool // the control: every candidate must accept it
}{
	{name: "valid (control)", body: valid, valid: true},
	{name: "invalid UTF-8 in a string (`\\xff`)", body: withText("\"a\xffb\"")},
	{name: "overlong UTF-8 (`\\xc0\\xaf` for `/`)", body: withText("\"a\xc0\xafb\"")},
	{name: "UTF-8-encoded surrogate (`\\xed\\xa0\\x80`)", body: withText("\"a\xed\xa0\x80b\"")},
	{name: "lone surrogate escape `\\ud800`", body: withText(`"a\ud800b"`)},
	{name: "control character in a string (`\\x01`)", body: withText("\"a\x01b\"")},
	{name: "bad escape `\\x`", body: withText(`"a\x41b"`)},
	{name: "leading-zero number `01`", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi","n":01}}}`},
	{name: "trailing garbage after the object", body: valid + ` x`},
	{name: "byte order mark", body: "\xef\xbb\xbf" + valid},
	{name: "duplicate `method`, tools/call first", body: `{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{}}`},
	{name: "duplicate `method`, tools/call last", body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","method":"tools/call","params":{}}`},
	{name: "case-folded name `\"Method\"`", body: `{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{}}`},
	{name: "top-level batch `[{…}]`", body: "[" + valid + "]"},
}

// verdict runs fn on body and describes the outcome; accepted is true when
// fn returned method tools/call without an error.
func verdict(fn decodeFunc, body []byte) (cell string, accepted bool) {
	defer func() {
		if p := recover(); p != nil {
			cell, accepted = "panics", false
		}
	}()
	var r result
	if err := fn(body, &r); err != nil {
		return "refuses", false
	}
	if m := r.methodString(); m != wantMethod {
		return fmt.Sprintf("no error, method %q", m), false
	}
	return "**accepts**", true
}

// TestStrictness runs every bad body through every candidate, logs a
// markdown table of who accepts what, and fails if rpcedge accepts any bad
// body or if any candidate refuses the valid control.
func TestStrictness(t *testing.T) {
	var tb strings.Builder
	tb.WriteString("| body |")
	sep := "|---|"
	for _, c := range candidates {
		if !c.floor {
			fmt.Fprintf(&tb, " %s |", c.name)
			sep += "---|"
		}
	}
	tb.WriteString("\n" + sep + "\n")
	accepts := map[string]int{}
	for _, tc := range strictCases {
		fmt.Fprintf(&tb, "| %s |", tc.name)
		for _, c := range candidates {
			if c.floor {
				continue
			}
			cell, ok := verdict(c.new(), []byte(tc.body))
			fmt.Fprintf(&tb, " %s |", cell)
			switch {
			case tc.valid && !ok:
				t.Errorf("%s refuses the valid control: %s", c.name, cell)
			case !tc.valid && ok:
				accepts[c.name]++
				if c.name == "rpcedge" {
					t.Errorf("rpcedge accepts %s", tc.name)
				}
			}
		}
		tb.WriteString("\n")
	}
	tb.WriteString("| **bad bodies accepted** |")
	for _, c := range candidates {
		if !c.floor {
			fmt.Fprintf(&tb, " %d of %d |", accepts[c.name], len(strictCases)-1)
		}
	}
	t.Log("\n" + tb.String())
}
