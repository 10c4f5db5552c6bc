package mcp

import (
	"reflect"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

func TestInitializeNegotiation(t *testing.T) {
	_, ep := testServer(t, WithInstructions("use echo"))
	tests := []struct {
		params string
		want   string
	}{
		{`"protocolVersion":"2025-11-25"`, "2025-11-25"},
		{`"protocolVersion":"2025-06-18"`, "2025-06-18"},
		{`"protocolVersion":"2025-03-26"`, "2025-03-26"},
		{`"protocolVersion":"2025\u002d06-18"`, "2025-06-18"},
		{`"protocolVersion":"2026-07-28"`, "2025-11-25"},
		{`"protocolVersion":"2024-11-05"`, "2025-11-25"},
		{`"protocolVersion":"2099-01-01"`, "2025-11-25"},
		{`"protocolVersion":""`, "2025-11-25"},
		{`"protocolVersion":20250618`, "2025-11-25"},
		{`"protocolVersion":null`, "2025-11-25"},
		{``, "2025-11-25"},
	}
	for _, header := range []string{"", "2025-03-26", "2025-06-18", "2025-11-25"} {
		h := hdr{}
		if header != "" {
			h = hdr{HeaderProtocolVersion, header}
		}
		for _, tt := range tests {
			body := req("initialize", tt.params)
			if tt.params == "" {
				body = `{"jsonrpc":"2.0","id":1,"method":"initialize"}`
			}
			a := exchange(t, ep, h, body)
			if a.Status != 200 || a.Code != 0 {
				t.Fatalf("%s: %+v", tt.params, a)
			}
			m := obj(t, a.Result)
			info := map[string]any{"name": "test", "title": "Test server", "version": "1.2.3"}
			if tt.want == "2025-03-26" {
				delete(info, "title")
			}
			want := map[string]any{
				"protocolVersion": tt.want,
				"capabilities":    map[string]any{"tools": map[string]any{}, "resources": map[string]any{}, "prompts": map[string]any{}, "completions": map[string]any{}, "logging": map[string]any{}},
				"serverInfo":      info,
				"instructions":    "use echo",
			}
			if !reflect.DeepEqual(m, want) {
				t.Errorf("header %q, %s: %s", header, tt.params, a.Result)
			}
		}
	}
	// Under 2026-07-28 initialize is not a method.
	a := exchange(t, ep, v26("initialize"), req("initialize", `"protocolVersion":"2025-11-25",`+meta26))
	if a.Status != 404 {
		t.Errorf("2026-07-28 initialize: %+v", a)
	}
}

func TestPing(t *testing.T) {
	_, ep := testServer(t)
	for _, h := range []hdr{nil, h25} {
		a := exchange(t, ep, h, `{"jsonrpc":"2.0","id":"p","method":"ping"}`)
		if a.Code != 0 || string(a.Result) != "{}" {
			t.Errorf("%v: %+v", h, a)
		}
	}
}

func TestDiscover(t *testing.T) {
	_, ep := testServer(t, WithInstructions("use echo"), WithCache(CacheHint{TTL: 90 * time.Second, Scope: CachePrivate}))
	info := map[string]any{"name": "test", "title": "Test server", "version": "1.2.3"}
	want := map[string]any{
		"resultType":        "complete",
		"supportedVersions": []any{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"},
		"capabilities":      map[string]any{"tools": map[string]any{}, "resources": map[string]any{"subscribe": true}, "prompts": map[string]any{}, "completions": map[string]any{}, "logging": map[string]any{}},
		"serverInfo":        info,
		"instructions":      "use echo",
		"ttlMs":             float64(90000),
		"cacheScope":        "private",
		"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": info},
	}
	for _, v := range Versions() {
		a := exchange(t, ep, headersFor(v, "server/discover"), req("server/discover", meta26))
		if a.Code != 0 {
			t.Fatalf("%v: %+v", v, a)
		}
		if m := obj(t, a.Result); !reflect.DeepEqual(m, want) {
			t.Errorf("%v: %s", v, a.Result)
		}
	}
	// Without the version header too (2025-03-26).
	if a := exchange(t, ep, nil, `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`); a.Code != 0 {
		t.Errorf("no header: %+v", a)
	}
	// The list hint follows WithCache as well.
	a := exchange(t, ep, v26("tools/list"), req("tools/list", meta26))
	if m := obj(t, a.Result); m["ttlMs"] != float64(90000) || m["cacheScope"] != "private" {
		t.Errorf("tools/list hint: %s", a.Result)
	}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		info Info
		opts []Option
	}{
		{Info{Version: "1"}, nil},
		{Info{Name: "n"}, nil},
		{Info{Name: "n\xff", Version: "1"}, nil},
		{Info{Name: "n", Version: "1"}, []Option{WithCache(CacheHint{TTL: -1})}},
		{Info{Name: "n", Version: "1"}, []Option{WithCache(CacheHint{Scope: "everyone"})}},
		{Info{Name: "n", Version: "1"}, []Option{WithInstructions("\xff")}},
	} {
		if _, err := New(tc.info, tc.opts...); err == nil {
			t.Errorf("New(%+v) succeeded", tc.info)
		}
	}
	s, err := New(Info{Name: "n", Version: "1"}, WithCache(CacheHint{}))
	if err != nil {
		t.Fatal(err)
	}
	a := exchange(t, s.Endpoint(), v26("tools/list"), req("tools/list", meta26))
	if m := obj(t, a.Result); m["ttlMs"] != float64(0) || m["cacheScope"] != "public" {
		t.Errorf("zero hint: %s", a.Result)
	}
}

func TestVersions(t *testing.T) {
	for _, v := range Versions() {
		got, ok := ParseVersion(v.String())
		if !ok || got != v {
			t.Errorf("ParseVersion(%q) = %v, %v", v, got, ok)
		}
		if gotb, ok := ParseVersion([]byte(v.String())); !ok || gotb != v {
			t.Errorf("ParseVersion([]byte %q)", v)
		}
		if v.Stateless() != (v == Version20260728) {
			t.Errorf("%v.Stateless()", v)
		}
	}
	for _, s := range []string{"", "2024-11-05", "2026-07-28 ", "DRAFT-2026-v1", "2025-11-25\x00"} {
		if _, ok := ParseVersion(s); ok {
			t.Errorf("ParseVersion(%q) ok", s)
		}
	}
	if Version(200).String() != "unknown" {
		t.Error("unknown version string")
	}
	var r fastserver.Request
	r.Version = 77
	if RequestVersion(&r) != Version20250326 {
		t.Error("out-of-range r.Version")
	}
	if !(Version20250326 < Version20250618 && Version20250618 < Version20251125 && Version20251125 < Version20260728) {
		t.Error("versions out of order")
	}
}
