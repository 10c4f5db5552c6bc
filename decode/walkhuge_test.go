package decode

import (
	"bytes"
	"fmt"
	"testing"
)

// TestEnvelopeWalkHuge: a message body past what a nameSet indexes (over
// 4 GiB) with more top-level members than the scanner records is walked
// whole, with its unknown names kept in a map: the same envelope and the
// same first repeated name as the nameSet's walk. Until 2026-12-07 such a
// body was read from its first 32 members only, so a method, an id or a
// repeated name after them was missed. (Run on small bodies: the walk's
// path is chosen by its huge argument, which fill sets from the size.)
func TestEnvelopeWalkHuge(t *testing.T) {
	obj := func(members ...string) []byte {
		var b bytes.Buffer
		b.WriteByte('{')
		for i := range 40 {
			fmt.Fprintf(&b, `"pad%d":%d,`, i, i)
		}
		for i, m := range members {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(m)
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	cases := map[string][]byte{
		"envelope last":                   obj(`"jsonrpc":"2.0"`, `"method":"tools/call"`, `"id":17`, `"params":{"a":1}`),
		"an unknown name repeated":        obj(`"jsonrpc":"2.0"`, `"x":1`, `"method":"m"`, `"x":2`),
		"repeated through an escape":      obj(`"method":"m"`, `"\u0078y":1`, `"xy":2`, `"id":"a"`),
		"an escaped envelope name":        obj(`"\u006dethod":"m"`, `"id":null`, `"jsonrpc":"2.0"`),
		"a known name repeated":           obj(`"method":"m"`, `"id":1`, `"method":"n"`),
		"unknown, then known repeated":    obj(`"q":1`, `"q":2`, `"id":1`, `"id":2`),
		"a pad repeated after the others": obj(`"jsonrpc":"2.0"`, `"pad3":9`),
		"no repeat":                       obj(`"jsonrpc":"2.0"`, `"method":"m"`),
	}
	for name, body := range cases {
		var e1, e2 envelope
		var f1, f2 envFields
		d1 := e1.walk(body, &f1, false)
		d2 := e2.walk(body, &f2, true)
		if d1 != d2 {
			t.Errorf("%s: the repeated name at %d with a map, %d with a nameSet", name, d2, d1)
		}
		if f1.seen != f2.seen || !bytes.Equal(f1.jsonrpc, f2.jsonrpc) || !bytes.Equal(f1.id, f2.id) ||
			!bytes.Equal(f1.method, f2.method) || !bytes.Equal(f1.params, f2.params) {
			t.Errorf("%s: envelope %+v with a map, %+v with a nameSet", name, f2, f1)
		}
		if name == "envelope last" && (string(f2.method) != `"tools/call"` || string(f2.id) != "17") {
			t.Errorf("%s: method %s, id %s, want the members after the first 32", name, f2.method, f2.id)
		}
	}
}
