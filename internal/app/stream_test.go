package app

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseStream is an A2A stream read by a test: each event's result.
type sseStream struct {
	t    *testing.T
	resp *http.Response
	br   *bufio.Reader
	id   string
}

// openStream POSTs body to url with Accept: text/event-stream and checks
// that the answer is a stream.
func openStream(t *testing.T, url, version, body string) *sseStream {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("not a stream: %d %s", resp.StatusCode, b)
	}
	var m struct{ ID json.RawMessage }
	json.Unmarshal([]byte(body), &m)
	return &sseStream{t: t, resp: resp, br: bufio.NewReader(resp.Body), id: string(m.ID)}
}

// next returns the next event's result, nil at the end of the stream.
func (s *sseStream) next() map[string]any {
	s.t.Helper()
	var data string
	for {
		line, err := s.br.ReadString('\n')
		if err == io.EOF && line == "" && data == "" {
			return nil
		}
		if err != nil {
			s.t.Fatalf("reading the stream: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		if line == "" && data != "" {
			break
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data += d
		}
	}
	var ev struct {
		JSONRPC string
		ID      json.RawMessage
		Result  map[string]any
		Error   any
	}
	if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.JSONRPC != "2.0" || string(ev.ID) != s.id || ev.Result == nil || ev.Error != nil {
		s.t.Fatalf("event is not a result for id %s: %s (%v)", s.id, data, err)
	}
	return ev.Result
}

func (s *sseStream) rest() []map[string]any {
	var out []map[string]any
	for ev := s.next(); ev != nil; ev = s.next() {
		out = append(out, ev)
	}
	return out
}

func dig(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

func startQuiet(t *testing.T) string {
	t.Helper()
	var opts Options
	opts.Server.Addr = "127.0.0.1:0"
	opts.Server.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	u, stop, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop() })
	return u
}

// The demo's stream skill, streamed: the task, then its chunks with a
// status between each, then completed; in both shapes.
func TestDemoStreamSkill(t *testing.T) {
	u := startQuiet(t)
	text := "the quick brown fox jumps"
	for _, v := range []string{"1.0", "0.3"} {
		msg := fmt.Sprintf(`{"role":"ROLE_USER","messageId":"m-%s","parts":[{"text":%q}]}`, v, text)
		method := "SendStreamingMessage"
		if v == "0.3" {
			msg = fmt.Sprintf(`{"kind":"message","role":"user","messageId":"m-%s","parts":[{"kind":"text","text":%q}]}`, v, text)
			method = "message/stream"
		}
		s := openStream(t, u+"/a2a", v, fmt.Sprintf(`{"jsonrpc":"2.0","id":"s-%s","method":%q,"params":{"metadata":{"skillId":"stream","chunks":5,"delayMs":0},"message":%s}}`, v, method, msg))
		evs := s.rest()
		if len(evs) != 1+5+4+1 {
			t.Fatalf("%s: %d events: %v", v, len(evs), evs)
		}
		var got string
		for i, ev := range evs[1:] {
			art, st := dig(ev, "artifactUpdate"), dig(ev, "statusUpdate")
			if v == "0.3" {
				switch ev["kind"] {
				case "artifact-update":
					art = ev
				case "status-update":
					st = ev
				}
			}
			switch {
			case i%2 == 0 && art != nil:
				parts, _ := dig(art, "artifact", "parts").([]any)
				if len(parts) != 1 || dig(art, "append") != (i > 0) || dig(art, "lastChunk") != (i == 8) {
					t.Errorf("%s: chunk event %d: %v", v, i, ev)
				}
				got += fmt.Sprint(dig(parts[0], "text"))
			case i%2 == 1 && st != nil:
			default:
				t.Errorf("%s: event %d out of order: %v", v, i+1, ev)
			}
		}
		if got != text {
			t.Errorf("%s: chunks put together: %q", v, got)
		}
		last := evs[len(evs)-1]
		if v == "1.0" && dig(last, "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" ||
			v == "0.3" && (dig(last, "status", "state") != "completed" || last["final"] != true) {
			t.Errorf("%s: last event %v", v, last)
		}
	}
}

// The wait skill over a stream: working first; a CancelTask from another
// connection ends the stream with canceled; one that reaches its deadline
// ends with the artifact and completed.
func TestDemoWaitStream(t *testing.T) {
	u := startQuiet(t)
	s := openStream(t, u+"/a2a", "", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"metadata":{"skillId":"wait","seconds":60},"message":{"role":"ROLE_USER","messageId":"w1","parts":[{"text":"x"}]}}}`)
	first := s.next()
	id, _ := dig(first, "task", "id").(string)
	if id == "" || dig(first, "task", "status", "state") != "TASK_STATE_WORKING" {
		t.Fatalf("first event %v", first)
	}
	// Another stream subscribes to it, in 0.3.
	sub := openStream(t, u+"/a2a", "", `{"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id":"`+id+`"}}`)
	if ev := sub.next(); ev["kind"] != "task" || ev["id"] != id {
		t.Fatalf("resubscribe: %v", ev)
	}
	time.Sleep(50 * time.Millisecond)
	if st, v := postJSON(t, u+"/a2a", `{"jsonrpc":"2.0","id":3,"method":"CancelTask","params":{"id":"`+id+`"}}`); st != 200 || dig(v, "result", "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %d %v", st, v)
	}
	if evs := s.rest(); len(evs) != 1 || dig(evs[0], "statusUpdate", "status", "state") != "TASK_STATE_CANCELED" {
		t.Errorf("streamer after cancel: %v", evs)
	}
	if evs := sub.rest(); len(evs) != 1 || dig(evs[0], "status", "state") != "canceled" || evs[0]["final"] != true {
		t.Errorf("subscriber after cancel: %v", evs)
	}

	s = openStream(t, u+"/a2a", "", `{"jsonrpc":"2.0","id":4,"method":"SendStreamingMessage","params":{"metadata":{"skillId":"wait","seconds":0.3},"message":{"role":"ROLE_USER","messageId":"w2","parts":[{"text":"x"}]}}}`)
	evs := s.rest()
	if len(evs) != 3 || dig(evs[1], "artifactUpdate", "artifact", "name") != "wait" || dig(evs[2], "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("wait to its deadline: %v", evs)
	}
}
