package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/services"
)

func TestParseFleetFlags(t *testing.T) {
	o, err := ParseFlags([]string{"-redis", "redis://127.0.0.1:6379/0", "-instance", "edge-1", "-rate", "100"}, io.Discard)
	if err != nil || o.Redis != "redis://127.0.0.1:6379/0" || o.Instance != "edge-1" {
		t.Errorf("%+v %v", o, err)
	}
	if _, err := ParseFlags([]string{"-redis", "redis://x:1/0", "-stdio"}, io.Discard); err == nil {
		t.Error("-redis with -stdio accepted")
	}
	if o, err := ParseFlags([]string{"-redis", "redis://x:1/0", "-instances", "4"}, io.Discard); err != nil || o.Instances != 4 {
		t.Errorf("-instances 4: %d, %v", o.Instances, err)
	}
	for _, bad := range [][]string{{"-instances", "3"}, {"-redis", "redis://x:1/0", "-instances", "-1"}} {
		if _, err := ParseFlags(bad, io.Discard); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := New(Options{Redis: "http://not-redis"}); err == nil {
		t.Error("a malformed Redis URL accepted")
	}
}

func postJSON(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	json.NewDecoder(resp.Body).Decode(&v)
	return resp.StatusCode, v
}

// Two instances on one Redis: a task created through one is read and
// canceled through the other; the rate limit is shared; the fleet's
// metrics carry the instance.
func TestFleetInstances(t *testing.T) {
	r := services.StartRedis(t)
	var urls []string
	for _, name := range []string{"a", "b"} {
		var opts Options
		opts.Server.Addr = "127.0.0.1:0"
		opts.Server.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		opts.Server.RateLimit, opts.Server.RateBurst = 1, 6
		opts.Redis, opts.Instance = r.URL(), name
		u, stop, err := Start(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stop() })
		urls = append(urls, u)
	}
	st, v := postJSON(t, urls[0]+"/a2a", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"metadata":{"skillId":"wait","seconds":60},"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"x"}]}}}`)
	task, _ := v["result"].(map[string]any)["task"].(map[string]any)
	if st != 200 || task["id"] == nil {
		t.Fatalf("send: %d %v", st, v)
	}
	id := task["id"].(string)
	st, v = postJSON(t, urls[1]+"/a2a", `{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"`+id+`"}}`)
	if st != 200 || v["result"].(map[string]any)["id"] != id {
		t.Fatalf("get through b: %d %v", st, v)
	}
	st, v = postJSON(t, urls[1]+"/a2a", `{"jsonrpc":"2.0","id":3,"method":"CancelTask","params":{"id":"`+id+`"}}`)
	if st != 200 || v["result"] == nil {
		t.Fatalf("cancel through b: %d %v", st, v)
	}
	_, v = postJSON(t, urls[0]+"/a2a", `{"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":"`+id+`"}}`)
	if e, _ := v["error"].(map[string]any); e == nil || e["code"] != -32002.0 {
		t.Fatalf("second cancel through a: %v", v)
	}
	// 4 requests so far of a burst of 6 fleet-wide: a few more pass, then
	// both refuse.
	limited := 0
	for i := range 6 {
		st, _ := postJSON(t, urls[i%2]+"/a2a", `{"jsonrpc":"2.0","id":5,"method":"GetTask","params":{"id":"`+id+`"}}`)
		if st == 429 {
			limited++
		}
	}
	if limited < 3 {
		t.Errorf("%d of 6 limited after 4 of a fleet-wide burst of 6", limited)
	}
	resp, err := http.Get(urls[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	resp.Body.Close()
	if !strings.Contains(b.String(), `rpcedge_fleet_redis_up{instance="b"} 1`) || !strings.Contains(b.String(), "rpcedge_requests_total") {
		t.Errorf("metrics:\n%s", b.String())
	}
}

// Two instances on one Redis: a stream of a task on one, a subscription
// to it through the other; the chunks and statuses the task's instance
// stores reach both, and a CancelTask through the second ends both with
// the canceled state.
func TestFleetStreams(t *testing.T) {
	r := services.StartRedis(t)
	var urls []string
	for _, name := range []string{"a", "b"} {
		var opts Options
		opts.Server.Addr = "127.0.0.1:0"
		opts.Server.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		opts.Redis, opts.Instance = r.URL(), name
		u, stop, err := Start(opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stop() })
		urls = append(urls, u)
	}
	// The stream skill on a, followed through b.
	s := openStream(t, urls[0]+"/a2a", "", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"metadata":{"skillId":"stream","chunks":4,"delayMs":150},"message":{"role":"ROLE_USER","messageId":"f1","parts":[{"text":"abcdefgh"}]}}}`)
	id, _ := dig(s.next(), "task", "id").(string)
	sub := openStream(t, urls[1]+"/a2a", "1.0", `{"jsonrpc":"2.0","id":2,"method":"SubscribeToTask","params":{"id":"`+id+`"}}`)
	if first := sub.next(); dig(first, "task", "id") != id {
		t.Fatalf("subscribe through b: %v", first)
	}
	evs, subEvs := s.rest(), sub.rest()
	chunks := func(evs []map[string]any) (out string) {
		for _, ev := range evs {
			if p, ok := dig(ev, "artifactUpdate", "artifact").(map[string]any); ok {
				out += dig(p["parts"].([]any)[0], "text").(string)
			}
		}
		return out
	}
	if chunks(evs) != "abcdefgh" || dig(evs[len(evs)-1], "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("on a: %v", evs)
	}
	// b subscribed after the first chunk at the earliest: it has a tail of
	// the chunks, in order, and the end.
	if c := chunks(subEvs); len(c) == 0 || !strings.HasSuffix("abcdefgh", c) || dig(subEvs[len(subEvs)-1], "statusUpdate", "status", "state") != "TASK_STATE_COMPLETED" {
		t.Errorf("through b: %q %v", c, subEvs)
	}

	// A wait task on a, subscribed through b, canceled through b.
	s = openStream(t, urls[0]+"/a2a", "", `{"jsonrpc":"2.0","id":3,"method":"SendStreamingMessage","params":{"metadata":{"skillId":"wait","seconds":60},"message":{"role":"ROLE_USER","messageId":"f2","parts":[{"text":"x"}]}}}`)
	id, _ = dig(s.next(), "task", "id").(string)
	sub = openStream(t, urls[1]+"/a2a", "", `{"jsonrpc":"2.0","id":4,"method":"tasks/resubscribe","params":{"id":"`+id+`"}}`)
	sub.next()
	if st, v := postJSON(t, urls[1]+"/a2a", `{"jsonrpc":"2.0","id":5,"method":"CancelTask","params":{"id":"`+id+`"}}`); st != 200 || dig(v, "result", "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("cancel through b: %d %v", st, v)
	}
	if evs := s.rest(); len(evs) != 1 || dig(evs[0], "statusUpdate", "status", "state") != "TASK_STATE_CANCELED" {
		t.Errorf("stream on a after a cancel through b: %v", evs)
	}
	if evs := sub.rest(); len(evs) != 1 || dig(evs[0], "status", "state") != "canceled" || evs[0]["final"] != true {
		t.Errorf("subscription on b: %v", evs)
	}
}

// With -redis an update noticed on one instance reaches the MCP listen
// streams of another (fleet.ResourceUpdates, mcp.WithRelay).
func TestFleetResourceUpdates(t *testing.T) {
	r := services.StartRedis(t)
	var apps []*App
	var urls []string
	for _, name := range []string{"a", "b"} {
		var opts Options
		opts.Server.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		opts.Redis, opts.Instance = r.URL(), name
		a, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go a.Serve(ln)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			a.Shutdown(ctx)
		})
		apps, urls = append(apps, a), append(urls, "http://"+ln.Addr().String())
	}
	body := `{"jsonrpc":"2.0","id":"l-` + strconv.Itoa(rand.IntN(1e6)) + `","method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":["rpcedge://about"]},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", urls[1]+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 64)
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- line
		}
	}()
	deadline := time.After(10 * time.Second)
	for {
		apps[0].mcp.NotifyResourceUpdated("rpcedge://about")
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("the listen stream ended")
			}
			if strings.Contains(line, `"method":"notifications/resources/updated"`) && strings.Contains(line, `"uri":"rpcedge://about"`) {
				return
			}
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("no update noticed on a reached b's listen stream")
		}
	}
}
