package mcp

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

func TestResourcesReadRows(t *testing.T) {
	_, ep := testServer(t)
	read := func(p string) string { return req("resources/read", p) }
	const (
		params   = decode.CodeInvalidParams
		notFound = decode.CodeMethodNotFound
	)
	tests := []struct {
		name  string
		body  string
		code  int
		field string
	}{
		{"params absent", `{"jsonrpc":"2.0","id":1,"method":"resources/read"}`, params, "uri"},
		{"params a string", `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":"test://about"}`, params, "params"},
		{"uri missing", read(`"name":"about"`), params, "uri"},
		{"uri a number", read(`"uri":1`), params, "uri"},
		{"uri twice", read(`"uri":"test://about","uri":"test://about"`), params, "uri"},
		{"uri twice, unknown", read(`"uri":"x","u\u0072i":"y"`), params, "uri"},
		{"unknown uri", read(`"uri":"test://nope"`), notFound, ""},
		{"uri compared exactly", read(`"uri":"TEST://about"`), notFound, ""},
		{"unknown uri before duplicates", read(`"uri":"test://nope","x":1,"x":2`), notFound, ""},
		{"duplicate member", read(`"uri":"test://about","x":1,"x":2`), params, "x"},
		{"static", read(`"uri":"test://about"`), 0, ""},
		{"escaped uri", read(`"uri":"test:\/\/about"`), 0, ""},
		{"dynamic", read(`"uri":"test://dyn"`), 0, ""},
	}
	for _, tt := range tests {
		a := exchange(t, ep, h25, tt.body)
		if a.Status != 200 || a.Code != tt.code || fieldOf(t, a) != tt.field {
			t.Errorf("%s: %d / %d field %q (%s), want 200 / %d field %q", tt.name, a.Status, a.Code, fieldOf(t, a), a.Msg, tt.code, tt.field)
		}
	}
	if a := exchange(t, ep, h25, read(`"uri":"test://broken"`)); a.Status != 500 {
		t.Errorf("failing Read: %+v", a)
	}
}

type readResult struct {
	ResultType *string          `json:"resultType"`
	Contents   []map[string]any `json:"contents"`
	TTLMs      *float64         `json:"ttlMs"`
	CacheScope *string          `json:"cacheScope"`
	Meta       map[string]any   `json:"_meta"`
}

func TestResourcesReadResults(t *testing.T) {
	_, ep := testServer(t)
	for _, v := range Versions() {
		get := func(uri string) readResult {
			t.Helper()
			h := hdr{HeaderProtocolVersion, v.String(), HeaderMethod, "resources/read", HeaderName, uri}
			a := exchange(t, ep, h, req("resources/read", `"uri":"`+uri+`",`+meta26))
			var r readResult
			if err := json.Unmarshal(a.Result, &r); err != nil {
				t.Fatalf("%v %s: %+v", v, uri, a)
			}
			if v.Stateless() != (r.ResultType != nil && r.Meta != nil && r.TTLMs != nil && r.CacheScope != nil) {
				t.Errorf("%v: members %s", v, a.Result)
			}
			return r
		}
		r := get("test://about")
		if !reflect.DeepEqual(r.Contents, []map[string]any{{"uri": "test://about", "mimeType": "text/plain", "text": "hello"}}) {
			t.Errorf("%v static: %v", v, r.Contents)
		}
		if v.Stateless() && (*r.TTLMs != 300000 || *r.CacheScope != "public") {
			t.Errorf("%v static hint: %v %v", v, *r.TTLMs, *r.CacheScope)
		}
		r = get("test://dyn")
		want := []map[string]any{
			{"uri": "test://dyn", "text": "dynamic"},
			{"uri": "test://dyn/bin", "mimeType": "application/octet-stream", "blob": "AAEC"},
		}
		if !reflect.DeepEqual(r.Contents, want) {
			t.Errorf("%v dynamic: %v", v, r.Contents)
		}
		if v.Stateless() && (*r.TTLMs != 0 || *r.CacheScope != "private") {
			t.Errorf("%v dynamic hint: %v %v", v, *r.TTLMs, *r.CacheScope)
		}
	}
}

func TestResourcesList(t *testing.T) {
	_, ep := testServer(t)
	for _, v := range Versions() {
		a := exchange(t, ep, headersFor(v, "resources/list"), req("resources/list", meta26))
		var r listResult
		if err := json.Unmarshal(a.Result, &r); err != nil {
			t.Fatal(err)
		}
		checkCommon(t, v, r, true)
		want := []map[string]any{
			{"uri": "test://about", "name": "about", "title": "About", "mimeType": "text/plain"},
			{"uri": "test://dyn", "name": "test://dyn"},
			{"uri": "test://broken", "name": "test://broken"},
		}
		if v < Version20250618 {
			delete(want[0], "title")
		}
		if !reflect.DeepEqual(r.Resources, want) {
			t.Errorf("%v: %v", v, r.Resources)
		}
	}
}

func TestAddResourceErrors(t *testing.T) {
	s, _ := New(Info{Name: "t", Version: "1"})
	for _, r := range []Resource{
		{},
		{URI: "x", Text: "\xff"},
		{URI: "y", Cache: &CacheHint{TTL: -time.Second}},
		{URI: "z", Cache: &CacheHint{Scope: "shared"}},
	} {
		if err := s.AddResource(r); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
	if err := s.AddResource(Resource{URI: "ok"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResource(Resource{URI: "ok"}); err == nil {
		t.Error("duplicate accepted")
	}
}

func TestPromptsGetRows(t *testing.T) {
	_, ep := testServer(t)
	get := func(p string) string { return req("prompts/get", p) }
	const (
		params   = decode.CodeInvalidParams
		notFound = decode.CodeMethodNotFound
	)
	tests := []struct {
		name  string
		body  string
		code  int
		field string
	}{
		{"params absent", `{"jsonrpc":"2.0","id":1,"method":"prompts/get"}`, params, "name"},
		{"params an array", `{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":[]}`, params, "params"},
		{"name missing", get(`"arguments":{"name":"x"}`), params, "name"},
		{"name false", get(`"name":false`), params, "name"},
		{"name twice", get(`"name":"greet","name":"greet"`), params, "name"},
		{"unknown prompt", get(`"name":"nope"`), notFound, ""},
		{"unknown prompt before bad arguments", get(`"name":"nope","arguments":1`), notFound, ""},
		{"duplicate member", get(`"name":"greet","arguments":{"name":"a"},"arguments":{"name":"b"}`), params, "arguments"},
		{"arguments not an object", get(`"name":"greet","arguments":["a"]`), params, "arguments"},
		{"arguments null", get(`"name":"greet","arguments":null`), params, "arguments"},
		{"argument twice", get(`"name":"greet","arguments":{"name":"a","name":"b"}`), params, "arguments.name"},
		{"argument not a string", get(`"name":"greet","arguments":{"name":1}`), params, "arguments.name"},
		{"optional argument not a string", get(`"name":"greet","arguments":{"name":"a","tone":null}`), params, "arguments.tone"},
		{"required argument missing", get(`"name":"greet","arguments":{"tone":"warm"}`), params, "arguments.name"},
		{"arguments absent, one required", get(`"name":"greet"`), params, "arguments.name"},
		{"ok", get(`"name":"greet","arguments":{"name":"Ada"}`), 0, ""},
		{"ok with unknown argument", get(`"name":"greet","arguments":{"name":"Ada","x":"y"}`), 0, ""},
	}
	for _, tt := range tests {
		a := exchange(t, ep, h25, tt.body)
		if a.Status != 200 || a.Code != tt.code || fieldOf(t, a) != tt.field {
			t.Errorf("%s: %d / %d field %q (%s), want 200 / %d field %q", tt.name, a.Status, a.Code, fieldOf(t, a), a.Msg, tt.code, tt.field)
		}
	}
}

func TestPromptsGetResult(t *testing.T) {
	_, ep := testServer(t)
	for _, v := range Versions() {
		h := hdr{HeaderProtocolVersion, v.String(), HeaderMethod, "prompts/get", HeaderName, "greet"}
		a := exchange(t, ep, h, req("prompts/get", `"name":"greet","arguments":{"name":"Ada \u00e9","tone":"warm"},`+meta26))
		m := obj(t, a.Result)
		want := map[string]any{
			"description": "a greeting",
			"messages":    []any{map[string]any{"role": "user", "content": map[string]any{"type": "text", "text": "Hello Ada é (warm)"}}},
		}
		if v.Stateless() {
			want["resultType"] = "complete"
			want["_meta"] = map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "test", "title": "Test server", "version": "1.2.3"}}
		}
		if !reflect.DeepEqual(m, want) {
			t.Errorf("%v: %s", v, a.Result)
		}
	}
}

func TestPromptsList(t *testing.T) {
	_, ep := testServer(t)
	for _, v := range Versions() {
		a := exchange(t, ep, headersFor(v, "prompts/list"), req("prompts/list", meta26))
		var r listResult
		if err := json.Unmarshal(a.Result, &r); err != nil {
			t.Fatal(err)
		}
		checkCommon(t, v, r, true)
		want := []map[string]any{{
			"name": "greet", "title": "Greet", "description": "greets",
			"arguments": []any{map[string]any{"name": "name", "required": true}, map[string]any{"name": "tone"}},
		}}
		if v < Version20250618 {
			delete(want[0], "title")
		}
		if !reflect.DeepEqual(r.Prompts, want) {
			t.Errorf("%v: %v", v, r.Prompts)
		}
	}
}

func TestPromptErrors(t *testing.T) {
	s, _ := New(Info{Name: "t", Version: "1"})
	get := func(*fastserver.Request, map[string]string) (*PromptResult, error) { return nil, nil }
	for _, p := range []Prompt{
		{Get: get},
		{Name: "noget"},
		{Name: "unnamed arg", Get: get, Arguments: []PromptArgument{{}}},
		{Name: "twice", Get: get, Arguments: []PromptArgument{{Name: "a"}, {Name: "a"}}},
	} {
		if err := s.AddPrompt(p); err == nil {
			t.Errorf("%q accepted", p.Name)
		}
	}
	s.AddPrompt(Prompt{Name: "empty", Get: get})
	s.AddPrompt(Prompt{Name: "role", Get: func(*fastserver.Request, map[string]string) (*PromptResult, error) {
		return &PromptResult{Messages: []PromptMessage{{Role: "system", Text: "x"}}}, nil
	}})
	s.AddPrompt(Prompt{Name: "refuse", Get: func(*fastserver.Request, map[string]string) (*PromptResult, error) {
		return nil, &fastserver.Error{Code: -32002, Message: "not now"}
	}})
	ep := s.Endpoint()
	if a := exchange(t, ep, h25, req("prompts/get", `"name":"empty"`)); a.Code != 0 || string(a.Result) != `{"messages":[]}` {
		t.Errorf("empty: %+v %s", a, a.Result)
	}
	if a := exchange(t, ep, h25, req("prompts/get", `"name":"role"`)); a.Status != 500 || !strings.Contains(a.Msg, "system") {
		t.Errorf("role: %+v", a)
	}
	if a := exchange(t, ep, h25, req("prompts/get", `"name":"refuse"`)); a.Status != 200 || a.Code != -32002 {
		t.Errorf("refuse: %+v", a)
	}
}
