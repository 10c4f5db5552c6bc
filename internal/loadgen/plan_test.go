package loadgen

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// testPlan returns the plan of cfg, normalized.
func testPlan(t testing.TB, cfg Config) *plan {
	t.Helper()
	cfg, err := cfg.normalized()
	if err != nil {
		t.Fatal(err)
	}
	p, err := newPlan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// buildN builds n requests of one shape and parses them with net/http.
func buildN(t *testing.T, cfg Config, n int) ([]*http.Request, [][]byte, []expectation) {
	t.Helper()
	g := newGenerator(testPlan(t, cfg), 0, 1, 1)
	var reqs []*http.Request
	var bodies [][]byte
	var exps []expectation
	var wire []byte
	for i := 0; i < n; i++ {
		var e expectation
		wire = g.build(wire, &e)
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(wire)))
		if err != nil {
			t.Fatalf("request %q: %v", wire, err)
		}
		body, _ := io.ReadAll(req.Body)
		reqs, bodies, exps = append(reqs, req), append(bodies, body), append(exps, e)
	}
	return reqs, bodies, exps
}

func TestBuildShapes(t *testing.T) {
	type msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	for _, version := range []string{"", "2025-03-26", "2026-07-28"} {
		for s := ShapeCall; s < ShapeCustom; s++ {
			var mix Mix
			mix[s] = 1
			reqs, bodies, exps := buildN(t, Config{URL: "http://h:1/p?q=1", Mix: mix, MCPVersion: version, Headers: []Header{{"X-A", "b"}}}, 50)
			ids := map[string]bool{}
			for i, req := range reqs {
				body, e := bodies[i], exps[i]
				name := version + "/" + s.String() + ": " + string(body)
				if req.Method != "POST" || req.URL.String() != "/p?q=1" || req.Host != "h:1" || req.Header.Get("X-A") != "b" ||
					req.Header.Get("Content-Type") != "application/json" {
					t.Fatalf("%s: head %v %v %v", name, req.Method, req.URL, req.Header)
				}
				if e.shape != s {
					t.Fatalf("%s: shape %v", name, e.shape)
				}
				if got := req.Header.Get("MCP-Protocol-Version"); got != version {
					t.Errorf("%s: MCP-Protocol-Version %q", name, got)
				}
				switch s {
				case ShapeParse:
					if json.Valid(body) {
						t.Errorf("%s: parse shape is valid JSON", name)
					}
					continue
				case ShapeBatch:
					var batch []msg
					if err := json.Unmarshal(body, &batch); err != nil || len(batch) != 1 {
						t.Errorf("%s: not a batch of one: %v", name, err)
					}
					continue
				}
				var m msg
				if err := json.Unmarshal(body, &m); err != nil || m.JSONRPC != "2.0" {
					t.Fatalf("%s: %v", name, err)
				}
				if s == ShapeNotify {
					if m.ID != nil {
						t.Errorf("%s: notification with an id", name)
					}
					continue
				}
				if string(m.ID) != string(e.idBytes()) || ids[string(m.ID)] {
					t.Errorf("%s: id %s, expectation %s, seen %v", name, m.ID, e.idBytes(), ids[string(m.ID)])
				}
				ids[string(m.ID)] = true
				if version != "" {
					if got := req.Header.Get("Mcp-Method"); got != m.Method {
						t.Errorf("%s: Mcp-Method %q", name, got)
					}
				}
				var params struct {
					Name      *string        `json:"name"`
					Arguments map[string]any `json:"arguments"`
					Meta      map[string]any `json:"_meta"`
				}
				paramsObject := json.Unmarshal(m.Params, &params) == nil
				if version == "2026-07-28" && (!paramsObject || params.Meta[metaKey] != version) {
					t.Errorf("%s: no _meta", name)
				}
				if version != "" && paramsObject && params.Name != nil && req.Header.Get("Mcp-Name") != *params.Name {
					t.Errorf("%s: Mcp-Name %q", name, req.Header.Get("Mcp-Name"))
				}
				if s == ShapeBadParams && version != "2026-07-28" && (paramsObject || req.Header.Get("Mcp-Name") != "") {
					t.Errorf("%s: badparams params is an object, or Mcp-Name is set", name)
				}
				if s == ShapeCall {
					text, _ := params.Arguments["text"].(string)
					if !decode.StringIs(e.textBytes(), text) {
						t.Errorf("%s: text %q vs expectation %q", name, text, e.textBytes())
					}
				}
			}
		}
	}
}

// TestBuildVaries: no two calls carry the same text or id.
func TestBuildVaries(t *testing.T) {
	_, bodies, _ := buildN(t, Config{}, 200)
	seen := map[string]bool{}
	for _, b := range bodies {
		if seen[string(b)] {
			t.Fatalf("body repeated: %s", b)
		}
		seen[string(b)] = true
	}
}

func TestBuildCustom(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"jsonrpc":"2.0","id":"x","method":"ping"}`, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{` {"method":"ping","id" : 17 , "jsonrpc":"2.0"} `, ` {"method":"ping","id" : 1 , "jsonrpc":"2.0"} `},
		{`{"jsonrpc":"2.0","method":"ping"}`, `{"id":1,"jsonrpc":"2.0","method":"ping"}`},
	} {
		_, bodies, _ := buildN(t, Config{Body: []byte(tc.in)}, 2)
		want2 := strings.Replace(tc.want, "1", `"lg-1"`, 1)
		if string(bodies[0]) != want2 {
			t.Errorf("custom %s: got %s, want %s", tc.in, bodies[0], want2)
		}
	}
	reqs, _, _ := buildN(t, Config{MCPVersion: "2025-06-18", Body: []byte(`{"jsonrpc":"2.0","method":"resources/read","params":{"uri":"rpcedge://about"}}`)}, 1)
	if reqs[0].Header.Get("Mcp-Method") != "resources/read" || reqs[0].Header.Get("Mcp-Name") != "rpcedge://about" {
		t.Errorf("headers %v", reqs[0].Header)
	}
	reqs, _, _ = buildN(t, Config{MCPVersion: "2025-06-18", Body: []byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"café"}}`)}, 1)
	if got := reqs[0].Header.Get("Mcp-Name"); got != "=?base64?Y2Fmw6k=?=" {
		t.Errorf("Mcp-Name %q", got)
	}
}

// TestBuildGzip: with BodyGzip every custom request carries
// Content-Encoding: gzip and a body that gunzips (CRC-32 and size checked)
// to the identity body with that request's id, for bodies whose parts
// around the id are empty, short and long, and ids of both kinds.
func TestBuildGzip(t *testing.T) {
	long := strings.Repeat("a fairly long text, compressible ", 4000)
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"ping"}`,
		`{"id":7,"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo","arguments":{"text":"` + long + `"}}}`,
	} {
		plain, plainBodies, _ := buildN(t, Config{Body: []byte(in)}, 5)
		reqs, bodies, exps := buildN(t, Config{Body: []byte(in), BodyGzip: true}, 5)
		for i, req := range reqs {
			if got := req.Header.Get("Content-Encoding"); got != "gzip" {
				t.Fatalf("Content-Encoding %q", got)
			}
			if plain[i].Header.Get("Content-Encoding") != "" {
				t.Fatalf("an identity body with Content-Encoding %q", plain[i].Header.Get("Content-Encoding"))
			}
			zr, err := gzip.NewReader(bytes.NewReader(bodies[i]))
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			got, err := io.ReadAll(zr) // checks the CRC-32 and the size
			if err != nil {
				t.Fatalf("request %d (%d bytes): %v", i, len(bodies[i]), err)
			}
			// The same counters, so the same ids: the identity body.
			if want := plainBodies[i]; !bytes.Equal(got, want) {
				t.Errorf("request %d: gunzips to %.80q, want %.80q", i, got, want)
			}
			if !bytes.Contains(got, exps[i].idBytes()) {
				t.Errorf("request %d: id %s not in %.80q", i, exps[i].idBytes(), got)
			}
			if len(in) > 1000 && len(bodies[i]) > len(in)/10 {
				t.Errorf("request %d: %d bytes compressed of %d", i, len(bodies[i]), len(in))
			}
		}
	}
}
