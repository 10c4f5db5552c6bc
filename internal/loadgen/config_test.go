package loadgen

import (
	"strings"
	"testing"
	"time"
)

func TestParseMix(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Mix
		wantErr string
	}{
		{"call=100", Mix{ShapeCall: 100}, ""},
		{"call=90,notify=5,unknown=2,badparams=1,parse=1,batch=1", Mix{90, 5, 2, 1, 1, 1}, ""},
		{" call = 1 , batch=0 ", Mix{ShapeCall: 1}, ""},
		{"parse=3", Mix{ShapeParse: 3}, ""},
		{"", Mix{}, "-mix is empty"},
		{"call", Mix{}, `"call" is not shape=weight`},
		{"call=1,call=2", Mix{}, `shape "call" given twice`},
		{"calls=1", Mix{}, `unknown shape "calls" (shapes: call, notify, unknown, badparams, parse, batch)`},
		{"custom=1", Mix{}, `unknown shape "custom"`},
		{"call=-1", Mix{}, `weight of call is "-1"; want an integer from 0 to 1000000`},
		{"call=x", Mix{}, `weight of call is "x"`},
		{"call=1.5", Mix{}, `weight of call is "1.5"`},
		{"call=1000001", Mix{}, `want an integer from 0 to 1000000`},
		{"call=0,notify=0", Mix{}, "every weight is 0"},
		{"call=1,", Mix{}, `"" is not shape=weight`},
	} {
		got, err := ParseMix(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), "loadgen: ") {
				t.Errorf("ParseMix(%q) error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseMix(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, err := ParseMix(got.String()); err != nil || back != got {
			t.Errorf("round trip of %q: %q %v", tc.in, got.String(), err)
		}
	}
}

func TestParseHeader(t *testing.T) {
	for _, tc := range []struct {
		in, name, value, err string
	}{
		{"X-A: b", "X-A", "b", ""},
		{"X-A:b c ", "X-A", "b c", ""},
		{"Authorization: Bearer x:y", "Authorization", "Bearer x:y", ""},
		{"X-Empty:", "X-Empty", "", ""},
		{"nocolon", "", "", "want Name:Value"},
		{": v", "", "", "empty name"},
		{"Bad Name: v", "", "", "not allowed in a header name"},
		{"Content-Length: 5", "", "", "Content-Length is written by loadgen"},
		{"connection: close", "", "", "Connection is written by loadgen"},
		{"X: a\nb", "", "", "control character"},
		{"Accept-Encoding: gzip", "", "", "Accept-Encoding: loadgen does not decompress answers"},
		{"accept-encoding: identity", "", "", "Accept-Encoding"},
	} {
		h, err := ParseHeader(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseHeader(%q) error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || h.Name != tc.name || h.Value != tc.value {
			t.Errorf("ParseHeader(%q) = %+v, %v", tc.in, h, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		err  string
	}{
		{"zero value", Config{}, ""},
		{"negative c", Config{Connections: -1}, "-c -1"},
		{"too many c", Config{Connections: MaxConnections + 1}, "-c 10001"},
		{"negative n", Config{Requests: -1}, "-n -1"},
		{"negative d", Config{Duration: -time.Second}, "-d -1s"},
		{"negative rate", Config{Rate: -1}, "-rate -1"},
		{"negative drain", Config{Drain: -time.Second}, "-drain -1s"},
		{"negative give-up", Config{GiveUp: -time.Second}, "-give-up -1s"},
		{"give-up too long", Config{GiveUp: 25 * time.Hour}, "-give-up 25h0m0s: want a positive duration up to 24h0m0s"},
		{"https", Config{URL: "https://127.0.0.1/mcp"}, "only http:// URLs"},
		{"no host", Config{URL: "http:///mcp"}, "no host"},
		{"bad url", Config{URL: "http://[::1"}, "-url"},
		{"version", Config{MCPVersion: "2024-01-01"}, "want one of 2026-07-28, 2025-11-25"},
		{"engine", Config{Engine: "io_uring"}, `-engine "io_uring"`},
		{"bad mix weight", Config{Mix: Mix{ShapeCall: -3}}, "weight of call is -3"},
		{"body not json", Config{Body: []byte(`{"a":`)}, "not valid JSON"},
		{"body array", Config{Body: []byte(`[{"jsonrpc":"2.0"}]`)}, "want one JSON-RPC request object"},
		{"body no method", Config{Body: []byte(`{"jsonrpc":"2.0","id":1}`)}, "string method"},
		{"body duplicate id", Config{Body: []byte(`{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}`)}, "id appears twice"},
		{"body 2026 without meta", Config{MCPVersion: "2026-07-28", Body: []byte(`{"jsonrpc":"2.0","method":"tools/list","params":{}}`)}, "params._meta"},
		{"body 2026 with meta", Config{MCPVersion: "2026-07-28", Body: []byte(`{"jsonrpc":"2.0","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)}, ""},
		{"header", Config{Headers: []Header{{"Content-Length", "1"}}}, "Content-Length is written by loadgen"},
	} {
		err := tc.cfg.Validate()
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: Validate() = %v, want %q", tc.name, err, tc.err)
		}
	}
}
