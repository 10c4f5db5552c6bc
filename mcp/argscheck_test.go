package mcp

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// TestArgsCheckInWalk: checking a tools/call's arguments inside the walk
// over params (argsCheck) changes nothing but the work done. For every
// schema of JSON-Schema-Test-Suite the compiled subset serves and every
// instance of its group, in params shaped four ways (name first and
// arguments last, arguments followed by more members, whitespace
// everywhere, name after arguments), the walk with the check returns what
// the walk without it returns; arguments it found valid are valid for
// validateArguments with the same index; and arguments it left unchecked
// after meeting them behind a name are invalid, or their schema needs the
// exact object.
func TestArgsCheckInWalk(t *testing.T) {
	for _, draft := range []string{"draft2020-12", "draft7"} {
		s, tools, _ := suiteServer(t, draft, pathsAll)
		d, err := decode.NewDecoder(decode.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var checked, valid, refused int
		call := new(Call)
		for ti, rt := range tools {
			tl := s.toolIndex[rt.name]
			name, _ := json.Marshal(rt.name)
			for ci, tc := range rt.group.Tests {
				inst := []byte(`{"v":` + string(tc.Data) + `}`)
				shapes := []string{
					`{"name":` + string(name) + `,"arguments":` + string(inst) + `}`,
					`{"name":` + string(name) + `,"arguments":` + string(inst) + `,"_meta":{"k":[1,{"a":"}"}]},"x":"{"}`,
					"{ \"name\" :\t" + string(name) + " ,\n \"arguments\" : " + string(inst) + " \r\n}",
					`{"arguments":` + string(inst) + `,"name":` + string(name) + `}`,
				}
				for si, params := range shapes {
					body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(ti*1000+ci*10+si) + `,"method":"tools/call","params":` + params + `}`
					var m decode.Message
					if err := d.Decode([]byte(body), &m); err != nil {
						t.Fatalf("%s: %v", body, err)
					}
					// The same pooled Call for every walk, as the server's
					// would be: its last tool is often this one already.
					call.idx = argIndex{}
					ac := argsCheck{s: s, c: call}
					gn, ga, gx, gd, ge := targetX(&m, "name", &ac)
					idx := call.idx
					wn, wa, wx, wd, we := targetX(&m, "name", nil)
					if !bytes.Equal(gn, wn) || !bytes.Equal(ga, wa) || gd != wd || ge != we || !reflect.DeepEqual(gx, wx) {
						t.Fatalf("%s: with the check %q %q %v %v, without %q %q %v %v", body, gn, ga, gd, ge, wn, wa, wd, we)
					}
					var want argIndex
					verdict := tl.in.validateArguments(wa, &want)
					switch {
					case ac.tool != nil:
						checked++
						if ac.tool != tl {
							t.Fatalf("%s: checked for another tool", body)
						}
						if verdict != nil {
							t.Fatalf("%s: valid in the walk, refused by validateArguments: %s", body, verdict.msg)
						}
						if !reflect.DeepEqual(idx, want) {
							t.Fatalf("%s: index %+v, want %+v", body, idx, want)
						}
						valid++
					case si < 3 && verdict == nil && tl.in.fast != nil:
						fs := tl.in.fast
						if !fs.never && len(fs.enum) == 0 && (fs.types == 0 || fs.types&tObject != 0) {
							t.Fatalf("%s: valid, yet the walk did not check it", body)
						}
					case si < 3 && verdict != nil:
						refused++
						if !reflect.DeepEqual(idx, argIndex{}) {
							t.Fatalf("%s: a refused check left its index filled", body)
						}
					}
				}
			}
		}
		if valid == 0 || refused == 0 {
			t.Fatalf("%s: %d checked in the walk, %d refused: the test exercises nothing", draft, valid, refused)
		}
		t.Logf("%s: %d arguments found valid in the walk, %d invalid ones left to validateArguments", draft, checked, refused)
	}
}

// TestFindTool: a Call's remembered tool answers only for the server it
// came from and only for a name written without escapes; everything else
// goes through the index.
func TestFindTool(t *testing.T) {
	newServer := func(names ...string) *Server {
		s, err := New(Info{Name: "t", Version: "1"})
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := s.AddTool(Tool{Name: n, Handler: ToolFunc(func(*Call) error { return nil })}); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	s1, s2 := newServer("echo", `a\nb`, `q"t`), newServer("echo")
	c := new(Call)
	for i, tc := range []struct {
		s    *Server
		raw  string
		want string // "" for none
	}{
		{s1, `"echo"`, "echo"},
		{s1, `"echo"`, "echo"}, // remembered
		{s2, `"echo"`, "echo"}, // the other server's, not s1's
		{s1, `"ech\u006f"`, "echo"},
		{s1, `"a\nb"`, ""}, // a newline, not the tool's backslash
		{s1, `"a\\nb"`, `a\nb`},
		{s1, `"a\nb"`, ""}, // still not, with a\nb remembered
		{s1, `"q\"t"`, `q"t`},
		{s1, `"nope"`, ""},
		{s1, `"echo"`, "echo"},
	} {
		got, ok := c.findTool(tc.s, []byte(tc.raw))
		if tc.want == "" {
			if ok {
				t.Errorf("%d: %s found %q", i, tc.raw, got.Name)
			}
			continue
		}
		if !ok || got.Name != tc.want || got != tc.s.toolIndex[tc.want] {
			t.Errorf("%d: %s: got %v %v, want %q of its server", i, tc.raw, got, ok, tc.want)
		}
	}
}
