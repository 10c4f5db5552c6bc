package app

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
)

// -max-client-streams parses, refuses a negative bound, and reaches the
// A2A streams: with a bound of 1, a client's second stream is refused
// 503 / -32603 with Retry-After while its first is open, and allowed once
// that one ended.
func TestMaxClientStreamsFlag(t *testing.T) {
	o, err := ParseFlags([]string{"-max-client-streams", "3"}, io.Discard)
	if err != nil || o.Server.MaxClientStreams != 3 {
		t.Errorf("parsed %d (%v)", o.Server.MaxClientStreams, err)
	}
	if o, err := ParseFlags(nil, io.Discard); err != nil || o.Server.MaxClientStreams != 0 {
		t.Errorf("default %d (%v), want 0: no bound per client", o.Server.MaxClientStreams, err)
	}
	if _, err := ParseFlags([]string{"-max-client-streams", "-1"}, io.Discard); err == nil {
		t.Error("-max-client-streams -1 accepted")
	}

	var opts Options
	opts.Server.Addr = "127.0.0.1:0"
	opts.Server.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Server.MaxClientStreams = 1
	u, stop, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	wait := func(id, msg string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"SendStreamingMessage","params":{"metadata":{"skillId":"wait","seconds":60},"message":{"role":"ROLE_USER","messageId":"` + msg + `","parts":[{"text":"x"}]}}}`
	}
	s := openStream(t, u+"/a2a", "", wait("1", "c1"))
	task, _ := dig(s.next(), "task", "id").(string)
	if task == "" {
		t.Fatal("no task in the first event")
	}

	req, _ := http.NewRequest("POST", u+"/a2a", strings.NewReader(wait("2", "c2")))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), "-32603") {
		t.Errorf("a second stream of one client: %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}

	if st, v := postJSON(t, u+"/a2a", `{"jsonrpc":"2.0","id":3,"method":"CancelTask","params":{"id":"`+task+`"}}`); st != 200 || dig(v, "result", "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel: %d %v", st, v)
	}
	s.rest()
	// The client may read the stream's end before the server gives its
	// slot back: wait for the gauge.
	for i := 0; ; i++ {
		resp, err := http.Get(u + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		m, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(m), "\nrpcedge_streams_open 0\n") {
			break
		}
		if i == 250 {
			t.Fatal("the ended stream's slot was not given back in 5 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	s = openStream(t, u+"/a2a", "", wait("4", "c3"))
	if dig(s.next(), "task", "id") == nil {
		t.Error("no stream after the first ended")
	}
}
