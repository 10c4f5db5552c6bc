package main

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/app"
)

// TestSelfAgainstRPCEdge runs loadgen -self against the real demo server
// with every request shape, under the default MCP version and under
// 2026-07-28 (headers and _meta): every answer must be right.
func TestSelfAgainstRPCEdge(t *testing.T) {
	for _, version := range []string{"", "2026-07-28"} {
		t.Run("version="+version, func(t *testing.T) {
			args := []string{"-self", "-n", "2000", "-c", "4", "-json",
				"-mix", "call=90,notify=5,unknown=2,badparams=1,parse=1,batch=1"}
			if version != "" {
				args = append(args, "-mcp-version", version)
			}
			selfAllRight(t, 2000, args...)
		})
	}
}

// selfAllRight runs loadgen with args (-json among them) against the
// in-process demo server and wants n answers, all right.
func selfAllRight(t *testing.T, n int64, args ...string) {
	t.Helper()
	r := runCmd(t, env{self: startSelf}, args...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var rep struct {
		Sent  int64 `json:"sent"`
		OK    int64 `json:"ok"`
		Wrong int64 `json:"wrong"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, r.stdout)
	}
	if rep.OK != n || rep.Wrong != 0 {
		t.Errorf("right %d wrong %d of %d\n%s", rep.OK, rep.Wrong, rep.Sent, r.stdout)
	}
}

// TestSelfTextSize runs loadgen -self with texts padded to the small
// fixture's size and to 5,000 bytes against the real demo server, with
// the shapes that carry a text: every answer must be right (the echo
// compared in full).
func TestSelfTextSize(t *testing.T) {
	for _, tc := range []struct{ version, size string }{{"", "176"}, {"2026-07-28", "176"}, {"", "5000"}} {
		t.Run("version="+tc.version+"/size="+tc.size, func(t *testing.T) {
			args := []string{"-self", "-n", "1500", "-c", "4", "-json", "-text-size", tc.size,
				"-mix", "call=90,badparams=5,parse=5"}
			if tc.version != "" {
				args = append(args, "-mcp-version", tc.version)
			}
			selfAllRight(t, 1500, args...)
		})
	}
}

// TestSelfGzipBody runs loadgen -body -gzip against the real demo server:
// bodies of a few hundred bytes to 200 KB (a tools/call echo whose text
// grows), each request's id spliced into the compressed body, every answer
// checked, also under 2026-07-28 (its _meta compressed with the rest).
func TestSelfGzipBody(t *testing.T) {
	dir := t.TempDir()
	for i, size := range []int{40, 5000, 200_000} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			meta := ""
			if version == "2026-07-28" {
				meta = `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
			}
			text := strings.Repeat(fmt.Sprintf("gzip %d of %s ", i, version), size/20+1)[:size]
			body := filepath.Join(dir, fmt.Sprintf("b%d-%s.json", i, version))
			req := `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + text + `"}` + meta + `}}`
			if err := os.WriteFile(body, []byte(req), 0o644); err != nil {
				t.Fatal(err)
			}
			r := runCmd(t, env{self: startSelf}, "-self", "-n", "300", "-c", "4", "-json", "-mcp-version", version, "-body", body, "-gzip")
			if r.code != 0 {
				t.Fatalf("size %d, %s: exit %d\n%s\n%s", size, version, r.code, r.stdout, r.stderr)
			}
			var rep struct {
				OK, Wrong int64
				Config    struct{ Gzip bool }
			}
			if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
				t.Fatalf("report: %v\n%s", err, r.stdout)
			}
			if rep.OK != 300 || rep.Wrong != 0 || !rep.Config.Gzip {
				t.Errorf("size %d, %s: right %d, wrong %d, gzip %v\n%s", size, version, rep.OK, rep.Wrong, rep.Config.Gzip, r.stdout)
			}
		}
	}
}

// TestSelfStreamed runs loadgen against the conformance fixtures'
// streamed tool (stream_events) under 2025-11-25 and 2026-07-28: every
// answer must be a stream of exactly the events asked for, then the
// result, and a wrong count must be caught.
func TestSelfStreamed(t *testing.T) {
	startConformance := func() (string, func(), error) {
		url, stop, err := app.Start(app.Options{Demo: "conformance", Server: fastserver.Config{
			Addr:   "127.0.0.1:0",
			Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		}})
		if err != nil {
			return "", nil, err
		}
		return url, func() { stop() }, nil
	}
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		meta := `{"progressToken":"lg"}`
		if version == "2026-07-28" {
			meta = `{"progressToken":"lg","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		}
		body := filepath.Join(t.TempDir(), "stream.json")
		os.WriteFile(body, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"stream_events","arguments":{"count":12},"_meta":`+meta+`}}`), 0o600)
		for _, events := range []string{"12", "11"} {
			t.Run(version+"/events="+events, func(t *testing.T) {
				r := runCmd(t, env{self: startConformance}, "-self", "-n", "500", "-c", "4", "-json", "-mcp-version", version, "-body", body, "-events", events)
				var rep struct {
					OK     int64 `json:"ok"`
					Wrong  int64 `json:"wrong"`
					Events int64 `json:"events"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
					t.Fatalf("report: %v\n%s\n%s", err, r.stdout, r.stderr)
				}
				if events == "12" && (r.code != 0 || rep.OK != 500 || rep.Events != 500*12) {
					t.Errorf("exit %d, right %d, events %d\n%s", r.code, rep.OK, rep.Events, r.stdout)
				}
				if events == "11" && (r.code != 1 || rep.Wrong != 500) {
					t.Errorf("a wrong event count passed: exit %d, wrong %d", r.code, rep.Wrong)
				}
			})
		}
	}
}

// TestSelfA2AStreams runs loadgen -a2a against the demo's stream skill in
// both wire versions: 500 streams of 1 + 2·chunks events, each event
// checked and the first one timed; with a wrong count every stream is
// wrong.
func TestSelfA2AStreams(t *testing.T) {
	const chunks = 6
	for _, tc := range []struct{ method, msg string }{
		{"SendStreamingMessage", `{"role":"ROLE_USER","messageId":"m","parts":[{"text":"streamed by loadgen"}]}`},
		{"message/stream", `{"kind":"message","role":"user","messageId":"m","parts":[{"kind":"text","text":"streamed by loadgen"}]}`},
	} {
		body := filepath.Join(t.TempDir(), "a2a.json")
		os.WriteFile(body, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":%q,"params":{"metadata":{"skillId":"stream","chunks":%d,"delayMs":0},"message":%s}}`, tc.method, chunks, tc.msg)), 0o600)
		for _, events := range []int{2*chunks + 1, 2 * chunks} {
			t.Run(fmt.Sprintf("%s/events=%d", tc.method, events), func(t *testing.T) {
				r := runCmd(t, env{self: startSelf}, "-self", "-url", "http://127.0.0.1:8080/a2a", "-n", "500", "-c", "4", "-json", "-body", body, "-events", fmt.Sprint(events), "-a2a")
				var rep struct {
					OK         int64 `json:"ok"`
					Wrong      int64 `json:"wrong"`
					Events     int64 `json:"events"`
					FirstEvent struct {
						Count int64 `json:"count"`
						P50   int64 `json:"p50"`
					} `json:"first_event_us"`
				}
				if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
					t.Fatalf("report: %v\n%s\n%s", err, r.stdout, r.stderr)
				}
				if events == 2*chunks+1 && (r.code != 0 || rep.OK != 500 || rep.Events != 500*int64(events) || rep.FirstEvent.Count != 500 || rep.FirstEvent.P50 <= 0) {
					t.Errorf("exit %d, right %d, events %d, first event %+v\n%s", r.code, rep.OK, rep.Events, rep.FirstEvent, r.stdout)
				}
				if events == 2*chunks && (r.code != 1 || rep.Wrong != 500) {
					t.Errorf("a wrong event count passed: exit %d, wrong %d", r.code, rep.Wrong)
				}
			})
		}
	}
}
