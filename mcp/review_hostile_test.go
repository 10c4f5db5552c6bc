package mcp

import (
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// TestReviewStateBoundToTokenHolder: under WithAuth a requestState is
// good only for the holder of the token it was issued to. It carries the
// answers of earlier rounds (a user's elicited consent), which the next
// round trusts, so another user who obtains it (a shared log, a proxy)
// must not replay it as theirs (found by review on 2026-12-06: the state
// was bound to the method and tool name only).
func TestReviewStateBoundToTokenHolder(t *testing.T) {
	_, ep := inputServer(t)
	alice := &auth.Token{Issuer: "https://as", Subject: "alice", ClientID: "app"}
	bob := &auth.Token{Issuer: "https://as", Subject: "bob", ClientID: "app"}
	call := func(tok *auth.Token, extra string) answer {
		meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":` + allCaps + `}`
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"two","arguments":{},` + meta + extra + `}}`
		return exchangeAs(t, ep, tok, v26("tools/call", HeaderName, "two"), body)
	}
	r1 := parseIR(t, call(alice, ""))
	if r1.ResultType != "input_required" || r1.RequestState == "" {
		t.Fatalf("round 1: %+v", r1)
	}
	next := `,"inputResponses":{"first":{"action":"accept","content":{"name":"Ada"}}},"requestState":` + string(decode.AppendString(nil, r1.RequestState))
	for name, tok := range map[string]*auth.Token{
		"another subject":       bob,
		"another client":        {Issuer: "https://as", Subject: "alice", ClientID: "other"},
		"another issuer":        {Issuer: "https://evil", Subject: "alice", ClientID: "app"},
		"no token":              nil,
		"fields run together":   {Issuer: "https://as", Subject: "aliceapp"},
		"fields shifted across": {Issuer: "https://asalice", Subject: "", ClientID: "app"},
	} {
		if a := call(tok, next); a.Code != decode.CodeInvalidParams || fieldOf(t, a) != "requestState" {
			t.Errorf("alice's state used with %s: %+v, want -32602 on requestState", name, a)
		}
	}
	if r2 := parseIR(t, call(alice, next)); r2.ResultType != "input_required" || r2.InputRequests["second"] == nil {
		t.Errorf("alice's own next round: %+v", r2)
	}
	// The holder is not written into the readable state.
	body, _ := b64url.DecodeString(strings.Split(r1.RequestState, ".")[0])
	if strings.Contains(string(body), "alice") {
		t.Errorf("the state shows the subject: %s", body)
	}
}

// TestReviewTemplateTrailingLiteral: a variable followed by the literal
// that ends the template runs to the end of the URI, even when its value
// holds that literal; the match took the first occurrence and missed URIs
// that follow the template (found by review on 2026-12-06).
func TestReviewTemplateTrailingLiteral(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	read := func(_ *fastserver.Request, _ string, vars map[string]string) ([]ResourceContents, error) {
		got = vars
		return []ResourceContents{{Text: "x"}}, nil
	}
	for _, tp := range []string{"log://{day}/{level}s", "u://{a}ab{b}b", "v://{+a}/{b}.gz"} {
		if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: tp, Read: read}); err != nil {
			t.Fatal(err)
		}
	}
	ep := s.Endpoint()
	for _, tc := range []struct {
		uri  string
		want map[string]string
	}{
		{"log://1/errors", map[string]string{"day": "1", "level": "error"}},
		{"log://1/successes", map[string]string{"day": "1", "level": "successe"}},
		{"u://1ab2ab3b", map[string]string{"a": "1", "b": "2ab3"}},
		{"v://x/y/z.gz.gz", map[string]string{"a": "x/y", "b": "z.gz"}},
		{"log://1/s", nil},       // the variable would be empty
		{"log://1/a/bs", nil},    // "/" in a {name} variable
		{"log://1/errorsx", nil}, // the literal does not end the URI
	} {
		got = nil
		a := exchange(t, ep, h25, req("resources/read", `"uri":"`+tc.uri+`"`))
		switch {
		case tc.want == nil && a.Code != decode.CodeMethodNotFound:
			t.Errorf("%s: %+v, want -32601", tc.uri, a)
		case tc.want != nil && (a.Code != 0 || len(got) != len(tc.want)):
			t.Errorf("%s: %+v, vars %q, want %q", tc.uri, a, got, tc.want)
		case tc.want != nil:
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s: vars %q, want %q", tc.uri, got, tc.want)
				}
			}
		}
	}
}

// TestReviewTemplateInvalidUTF8: a {name} variable whose percent-decoded
// bytes are not UTF-8 does not match, as a malformed escape does not: the
// handler got a string no JSON answer can carry (found by review on
// 2026-12-06).
func TestReviewTemplateInvalidUTF8(t *testing.T) {
	s, err := New(Info{Name: "t", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	called := 0
	if err := s.AddResourceTemplate(ResourceTemplate{URITemplate: "t://{a}", Read: func(_ *fastserver.Request, _ string, vars map[string]string) ([]ResourceContents, error) {
		called++
		return []ResourceContents{{Text: vars["a"]}}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	for _, uri := range []string{"t://%FF", "t://a%C3", "t://%ED%A0%80", "t://%C0%AF"} {
		if a := exchange(t, ep, h25, req("resources/read", `"uri":"`+uri+`"`)); a.Code != decode.CodeMethodNotFound {
			t.Errorf("%s: %+v, want -32601", uri, a)
		}
	}
	if called != 0 {
		t.Errorf("Read called %d times", called)
	}
	if a := exchange(t, ep, h25, req("resources/read", `"uri":"t://caf%C3%A9"`)); a.Code != 0 || called != 1 || !strings.Contains(string(a.Result), `"text":"café"`) {
		t.Errorf("valid UTF-8: %+v", a)
	}
}
