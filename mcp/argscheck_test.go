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
		s, tools, _ := suiteServer(t, draft, false)
		d, err := decode.NewDecoder(decode.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var checked, valid, refused int
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
					var idx argIndex
					ac := argsCheck{tools: s.toolIndex, idx: &idx}
					gn, ga, gx, gd, ge := targetX(&m, "name", &ac)
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
