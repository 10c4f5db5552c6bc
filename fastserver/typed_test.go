package fastserver

// Typed handlers (sonic) and the Methods registry.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/decode"
)

type typedParams struct {
	Text  string `json:"text"`
	N     int64  `json:"n"`
	Inner struct {
		A    string `json:"a"`
		List []int  `json:"list"`
	} `json:"inner"`
	Opt *string `json:"opt"`
}

type typedResult struct {
	Text   string `json:"text"`
	N      int64  `json:"n"`
	A      string `json:"a"`
	List   []int  `json:"list"`
	HasOpt bool   `json:"hasOpt"`
}

// validated is typedParams with a Validator.
type validated struct {
	Text string `json:"text"`
	Mode string `json:"mode"`
}

func (v *validated) Validate() error {
	switch {
	case v.Text == "":
		return InvalidParams("text", "text is required")
	case v.Mode == "plain":
		return errors.New("mode plain is not allowed")
	}
	return nil
}

// kept holds strings a typed handler kept past its return.
var kept struct {
	sync.Mutex
	texts []string
}

func typedEndpoint() *Endpoint {
	var ms Methods
	ms.Handle("typed", Typed(func(r *Request, p *typedParams) (typedResult, error) {
		kept.Lock()
		kept.texts = append(kept.texts, p.Text)
		kept.Unlock()
		return typedResult{Text: p.Text, N: p.N, A: p.Inner.A, List: p.Inner.List, HasOpt: p.Opt != nil}, nil
	}))
	ms.Handle("validated", Typed(func(r *Request, p *validated) (string, error) {
		return p.Text + "/" + p.Mode, nil
	}))
	ms.Handle("any", Typed(func(r *Request, p *map[string]any) (map[string]any, error) {
		return *p, nil
	}))
	ms.Handle("fails", Typed(func(r *Request, p *struct {
		Mode string `json:"mode"`
	}) (*struct{}, error) {
		if p.Mode == "plain" {
			return nil, errors.New("plain failure")
		}
		return nil, &Error{Code: codeFail, Message: "typed failure"}
	}))
	ms.Handle("nan", Typed(func(r *Request, p *struct{}) (float64, error) {
		return math.NaN(), nil
	}))
	ms.Handle("html", Typed(func(r *Request, p *struct{}) (string, error) {
		return "<b>&amp;</b>", nil
	}))
	ms.Handle("nil", Typed(func(r *Request, p *struct{}) (*typedResult, error) {
		return nil, nil
	}))
	return ms.Endpoint(pathJR, decode.IDsJSONRPC)
}

func TestTyped(t *testing.T) {
	_, addr := serve(t, Config{}, typedEndpoint())
	call := func(method, params string) string {
		body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `"`
		if params != "" {
			body += `,"params":` + params
		}
		return post(pathJR, body+`}`)
	}
	res := func(s string) want { return want{200, 0, "1", s, ""} }
	bad := func(field string) want {
		w := want{200, -32602, "1", "", ""}
		if field != "" {
			w.data = `{"field":"` + field + `"}`
		}
		return w
	}
	cases := []struct {
		name string
		raw  string
		want want
	}{
		{"all fields", call("typed", `{"text":"hi","n":9007199254740993,"inner":{"a":"x","list":[1,2]},"opt":"o"}`),
			res(`{"text":"hi","n":9007199254740993,"a":"x","list":[1,2],"hasOpt":true}`)},
		{"int64 extremes", call("typed", `{"n":-9223372036854775808}`), res(`{"text":"","n":-9223372036854775808,"a":"","list":null,"hasOpt":false}`)},
		{"names are case-sensitive", call("typed", `{"Text":"hi","N":5,"INNER":{"a":"x"}}`), res(`{"text":"","n":0,"a":"","list":null,"hasOpt":false}`)},
		{"nested names are case-sensitive", call("typed", `{"inner":{"A":"x"}}`), res(`{"text":"","n":0,"a":"","list":null,"hasOpt":false}`)},
		{"params absent", call("typed", ""), res(`{"text":"","n":0,"a":"","list":null,"hasOpt":false}`)},
		{"params empty", call("typed", `{}`), res(`{"text":"","n":0,"a":"","list":null,"hasOpt":false}`)},
		{"unknown members ignored", call("typed", `{"zzz":[1,{"y":2}],"text":"a"}`), res(`{"text":"a","n":0,"a":"","list":null,"hasOpt":false}`)},
		{"null leaves zero", call("typed", `{"text":null,"opt":null}`), res(`{"text":"","n":0,"a":"","list":null,"hasOpt":false}`)},
		{"escapes resolved", call("typed", `{"text":"caf\u00e9 \"q\" \ud83d\ude00"}`), res(`{"text":"café \"q\" 😀","n":0,"a":"","list":null,"hasOpt":false}`)},
		{"n a string", call("typed", `{"text":"a","n":"5"}`), bad("n")},
		{"n a fraction", call("typed", `{"n":1.5}`), bad("n")},
		{"n an exponent", call("typed", `{"n":1e3}`), bad("n")},
		{"n over int64", call("typed", `{"n":9223372036854775808}`), bad("n")},
		{"text a number", call("typed", `{"n":1,"text":5}`), bad("text")},
		{"inner not an object", call("typed", `{"inner":[]}`), bad("inner")},
		{"list not an array", call("typed", `{"inner":{"list":{}}}`), bad("inner")},
		{"escaped member name at fault", call("typed", `{"\u006e":"x"}`), bad("n")},
		{"params not an object", call("typed", `[1]`), bad("")},
		{"duplicate in params (row 17, before the handler)", call("typed", `{"text":"a","text":"b"}`), bad("")},
		{"validator ok", call("validated", `{"text":"t","mode":"m"}`), res(`"t/m"`)},
		{"validator *Error", call("validated", `{"mode":"m"}`), bad("text")},
		{"validator plain error", call("validated", `{"text":"t","mode":"plain"}`), bad("")},
		{"validator runs on absent params", call("validated", ""), bad("text")},
		{"decoding before validating", call("validated", `{"text":1}`), bad("text")},
		{"fn *Error", call("fails", `{}`), want{200, codeFail, "1", "", ""}},
		{"fn plain error", call("fails", `{"mode":"plain"}`), want{500, -32603, "1", "", ""}},
		{"result not encodable", call("nan", ""), want{500, -32603, "1", "", ""}},
		{"HTML not escaped", call("html", ""), res(`"<b>&amp;</b>"`)},
		{"nil result", call("nil", ""), res(`null`)},
		{"big integers stay exact in any", call("any", `{"big":12345678901234567890123,"n":9007199254740993,"f":1.5}`),
			want{200, 0, "1", "", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := roundTrip(t, addr, tc.raw)
			tc.want.check(t, r)
			if tc.name == "big integers stay exact in any" {
				a := parseAnswer(t, r.Body)
				var m map[string]json.RawMessage
				json.Unmarshal(a.Result, &m)
				if string(m["big"]) != "12345678901234567890123" || string(m["n"]) != "9007199254740993" || string(m["f"]) != "1.5" {
					t.Errorf("numbers through map[string]any: %s", a.Result)
				}
			}
			if tc.want.code == -32602 {
				a := parseAnswer(t, r.Body)
				if a.Msg == "" {
					t.Errorf("-32602 without a message")
				}
			}
		})
	}

	// Strings the handler keeps are copies: later requests reusing the
	// server's buffers do not change them.
	kept.Lock()
	kept.texts = nil
	kept.Unlock()
	c := dial(t, addr)
	for _, s := range []string{"first-" + strings.Repeat("a", 100), "second-" + strings.Repeat("b", 100), "third"} {
		c.do(call("typed", `{"text":"`+s+`"}`))
	}
	kept.Lock()
	defer kept.Unlock()
	if len(kept.texts) != 3 || kept.texts[0] != "first-"+strings.Repeat("a", 100) || kept.texts[1] != "second-"+strings.Repeat("b", 100) {
		t.Errorf("kept strings changed after the request: %q", kept.texts)
	}
}

func TestMemberAt(t *testing.T) {
	obj := []byte(`{"a":1,"bb":[1,2],"c\u0064":{"x":"y"}}`)
	for pos, want := range map[int]string{5: "a", 12: "bb", 14: "bb", 30: "cd", 0: "", -1: "", 100: ""} {
		if got := memberAt(obj, pos); got != want {
			t.Errorf("memberAt(%d) = %q, want %q", pos, got, want)
		}
	}
}

func TestInvalidParams(t *testing.T) {
	e := InvalidParams(`a."b"`, "bad")
	if e.Code != -32602 || string(e.Data) != `{"field":"a.\"b\""}` || e.Status != 0 {
		t.Errorf("InvalidParams: %+v %s", e, e.Data)
	}
	if !json.Valid(e.Data) {
		t.Errorf("data not valid JSON: %s", e.Data)
	}
	if got := NewError(-1, "m").Error(); got != "fastserver: -1 m" {
		t.Errorf("Error() = %q", got)
	}
}

// The registry: mistakes are collected and make New fail.
func TestMethodsRegistry(t *testing.T) {
	var ms Methods
	h := HandlerFunc(func(r *Request, dst []byte) ([]byte, error) { return append(dst, "1"...), nil })
	ms.Handle("b", h)
	ms.Handle("a", h)
	ms.HandleFunc("c", func(r *Request, dst []byte) ([]byte, error) { return dst, nil })
	if err := ms.Err(); err != nil {
		t.Fatalf("Err: %v", err)
	}
	if got := strings.Join(ms.Names(), ","); got != "a,b,c" {
		t.Errorf("Names %q, want sorted a,b,c", got)
	}
	if _, ok := ms.Lookup([]byte("a")); !ok {
		t.Errorf("Lookup(a) failed")
	}
	if _, ok := ms.Lookup([]byte("A")); ok {
		t.Errorf("Lookup is case-sensitive")
	}
	if r := ms.Route([]byte("b")); r.Handler == nil || r.Label != "b" || r.OwnParams || r.Refuse != nil {
		t.Errorf("Route(b) = %+v", r)
	}
	if r := ms.Route([]byte("zz")); r.Handler != nil || r.Label != "" {
		t.Errorf("Route(zz) = %+v, want the zero Route", r)
	}
	ep := ms.Endpoint("/x", decode.IDsMCP)
	if ep.Path != "/x" || ep.IDs != decode.IDsMCP || strings.Join(ep.Labels, ",") != "a,b,c" || ep.Err != nil {
		t.Errorf("Endpoint: %+v", ep)
	}
	if _, err := New(Config{}, ep); err != nil {
		t.Errorf("New: %v", err)
	}

	ms.Handle("a", h)
	ms.Handle("", h)
	ms.Handle("d", nil)
	ms.HandleFunc("e", nil)
	var nilFunc HandlerFunc
	ms.Handle("f", nilFunc)
	err := ms.Err()
	for _, want := range []string{`"a" registered twice`, "empty name", `"d"`, `"e"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Err() = %v, want it to mention %s", err, want)
		}
	}
	if _, ok := ms.Lookup([]byte("d")); ok {
		t.Errorf("a nil handler was registered")
	}
	if _, err := New(Config{}, ms.Endpoint("/x", 0)); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("New with registration mistakes: %v", err)
	}
	if err := ServeLines(t.Context(), ms.Endpoint("/x", 0), Config{}, strings.NewReader(""), new(strings.Builder)); err == nil {
		t.Errorf("ServeLines with registration mistakes: want an error")
	}
}

// A typed nil HandlerFunc registered through Handle is a nil handler as
// well: serving it would panic on every call.
func TestMethodsNilHandlerFunc(t *testing.T) {
	var ms Methods
	var f HandlerFunc
	ms.Handle("f", f)
	if ms.Err() == nil {
		t.Errorf("Handle with a nil HandlerFunc: Err() = nil, want an error")
	}
}

func TestNewEndpointErrors(t *testing.T) {
	route := func(r *Request) Route { return Route{} }
	good := &Endpoint{Path: "/a", Route: route}
	cases := []struct {
		name string
		eps  []*Endpoint
		want string
	}{
		{"nil endpoint", []*Endpoint{nil}, "nil endpoint"},
		{"no slash", []*Endpoint{{Path: "a", Route: route}}, "must start with /"},
		{"empty path", []*Endpoint{{Route: route}}, "must start with /"},
		{"no route", []*Endpoint{{Path: "/b"}}, "no Route"},
		{"same path", []*Endpoint{good, {Path: "/a", Route: route}}, "two endpoints at /a"},
		{"endpoint error", []*Endpoint{{Path: "/c", Route: route, Err: errors.New("boom")}}, "boom"},
		{"reserved path", []*Endpoint{{Path: "/healthz", Route: route}}, "/healthz"},
	}
	for _, tc := range cases {
		if _, err := New(Config{}, tc.eps...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New error %v, want one with %q", tc.name, err, tc.want)
		}
	}
}

// TestTypedInvalidUTF8Result: a typed handler's result holding invalid
// UTF-8 (in a string or a map key) is answered as valid JSON, the bad
// bytes replaced by U+FFFD (RFC 8259 §8.1: JSON text is UTF-8). (Found by
// review on 2026-12-05: the bytes went out as they were.)
func TestTypedInvalidUTF8Result(t *testing.T) {
	h := Typed(func(r *Request, p *struct{}) (map[string]string, error) {
		return map[string]string{"k\xfe": "a\xffb"}, nil
	})
	var d decode.Decoder
	var m decode.Message
	if err := d.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`), &m); err != nil {
		t.Fatal(err)
	}
	var r Request
	r.Reset(nil, &m, nil)
	out, err := h.ServeRPC(&r, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if !utf8.Valid(out) || json.Unmarshal(out, &got) != nil || got["k\uFFFD"] != "a\uFFFDb" {
		t.Errorf("result %q: want valid UTF-8 JSON with U+FFFD in place of the bad bytes", out)
	}
}

// TestTypedLastOccurrenceWins: below params' own level a repeated name's
// last occurrence is what a Typed handler gets (contract §2: "the last
// one wins"), not a merge of the occurrences into one struct or map.
func TestTypedLastOccurrenceWins(t *testing.T) {
	type in struct {
		Inner struct {
			A int    `json:"a"`
			B string `json:"b"`
		} `json:"inner"`
		M map[string]int `json:"m"`
	}
	var got in
	h := Typed(func(r *Request, p *in) (int, error) { got = *p; return 1, nil })
	var d decode.Decoder
	var m decode.Message
	if err := d.Decode([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"inner":{"a":1},"inner":{"b":"x"},"m":{"k":1},"m":{"j":2}}}`), &m); err != nil {
		t.Fatal(err)
	}
	var r Request
	r.Reset(nil, &m, nil)
	if _, err := h.ServeRPC(&r, nil); err != nil {
		t.Fatal(err)
	}
	if got.Inner.A != 0 || got.Inner.B != "x" || len(got.M) != 1 || got.M["j"] != 2 {
		t.Errorf("the handler got %+v, want the last occurrences: inner {b:x}, m {j:2}", got)
	}
}

// TestTypedUnboundedParams: a params type whose decoding no bound of its
// JSON bounds (a regexp sonic would compile, a big.Rat it would expand)
// is a registration mistake: Typed panics, naming the type.
func TestTypedUnboundedParams(t *testing.T) {
	for name, mk := range map[string]func(){
		"regexp": func() {
			Typed(func(r *Request, p *struct {
				R *regexp.Regexp `json:"r"`
			}) (int, error) {
				return 0, nil
			})
		},
		"big.Rat": func() {
			Typed(func(r *Request, p *map[string]big.Rat) (int, error) { return 0, nil })
		},
	} {
		func() {
			defer func() {
				if v := recover(); v == nil || !strings.Contains(fmt.Sprint(v), "params type") {
					t.Errorf("%s: Typed did not panic naming the type: %v", name, v)
				}
			}()
			mk()
		}()
	}
}
