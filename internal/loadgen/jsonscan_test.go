package loadgen

import (
	"encoding/json"
	"testing"
)

func TestScanValue(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
		// stdLax: encoding/json accepts it though RFC 8259 does not.
		stdLax bool
	}{
		{`{}`, true, false},
		{`{"a":[1,-2.5e+3,true,false,null,"x\u00e9\n"],"b":{}}`, true, false},
		{`"\ud83d\ude00"`, true, false},
		{`0`, true, false},
		{`-0.0e0`, true, false},
		{`[]`, true, false},
		{`{"a":1,}`, false, false},
		{`[1,]`, false, false},
		{`01`, false, false},
		{`1.`, false, false},
		{`1e`, false, false},
		{`-`, false, false},
		{`"\ud800"`, false, true},
		{`"\udc00\ud800"`, false, true},
		{`"\x"`, false, false},
		{"\"a\x01\"", false, false},
		{"\"\xff\"", false, true},
		{`tru`, false, false},
		{`nul`, false, false},
		{`{"a" 1}`, false, false},
		{`{1:2}`, false, false},
		{`"abc`, false, false},
		{``, false, false},
	} {
		end, ok := scanValue([]byte(tc.in), 0, 0)
		if ok && end != len(tc.in) {
			ok = false
		}
		if ok != tc.ok {
			t.Errorf("scanValue(%q) = %v, want %v", tc.in, ok, tc.ok)
		}
		if !tc.stdLax && ok != json.Valid([]byte(tc.in)) {
			t.Errorf("scanValue(%q) disagrees with encoding/json", tc.in)
		}
	}
}

func TestScanDepth(t *testing.T) {
	deep := make([]byte, 0, 2*maxAnswerDepth+2)
	for i := 0; i <= maxAnswerDepth; i++ {
		deep = append(deep, '[')
	}
	for i := 0; i <= maxAnswerDepth; i++ {
		deep = append(deep, ']')
	}
	if _, ok := scanValue(deep, 0, 0); ok {
		t.Error("nesting past maxAnswerDepth accepted")
	}
}

func TestStrEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		eq   bool
	}{
		{`abc`, `abc`, true},
		{`caf\u00e9`, "café", true},
		{`caf\u00E9`, `caf\u00e9`, true},
		{`\/`, `/`, true},
		{`\"q\" \\`, `\u0022q\u0022 \u005c`, true},
		{`\ud83d\ude00`, "😀", true},
		{`\t`, "\\u0009", true},
		{`abc`, `abd`, false},
		{`abc`, `ab`, false},
		{`ab`, `abc`, false},
		{`\u00e9`, `e`, false},
	} {
		if got := strEqual([]byte(tc.a), []byte(tc.b)); got != tc.eq {
			t.Errorf("strEqual(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
	if !strIs([]byte(`\u0069d`), "id") || strIs([]byte(`Id`), "id") || !strIs([]byte(`id`), "id") {
		t.Error("strIs")
	}
}

func TestObjWalker(t *testing.T) {
	b := []byte(` { "a" : 1 , "b":[2,3], "c":{"d":null} } `)
	var w objWalker
	if !w.start(b, skipWS(b, 0)) {
		t.Fatal("start")
	}
	var got []string
	for {
		k, v, ok := w.next()
		if !ok {
			break
		}
		got = append(got, string(k)+"="+string(v))
	}
	if w.bad || len(got) != 3 || got[0] != "a=1" || got[1] != "b=[2,3]" || got[2] != `c={"d":null}` {
		t.Errorf("members %q bad %v", got, w.bad)
	}
	if skipWS(b, w.i) != len(b) {
		t.Errorf("end at %d of %d", w.i, len(b))
	}
	w.start([]byte(`{"a":1 "b":2}`), 0)
	for {
		if _, _, ok := w.next(); !ok {
			break
		}
	}
	if !w.bad {
		t.Error("missing comma not flagged")
	}
}
