package fleet

import (
	"bufio"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/services"
	"github.com/rpcedge/rpcedge/mcp"
)

// relayServer is an instance's MCP server with the fleet's relay and the
// given resources, served on loopback.
func relayServer(t *testing.T, f *Fleet, uris ...string) (*mcp.Server, *ResourceUpdates, string) {
	t.Helper()
	u := f.ResourceUpdates()
	t.Cleanup(u.Close)
	s, err := mcp.New(mcp.Info{Name: "relay", Version: "1"}, mcp.WithRelay(u))
	if err != nil {
		t.Fatal(err)
	}
	for _, uri := range uris {
		s.AddResource(mcp.Resource{URI: uri, Text: uri})
	}
	return s, u, r4Serve(t, s)
}

// listenUpdates opens a subscriptions/listen stream following uris and
// returns the URIs of the updates it carries, on a channel.
func listenUpdates(t *testing.T, s *mcp.Server, url string, uris ...string) <-chan string {
	t.Helper()
	list, _ := json.Marshal(uris)
	body := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":` + string(list) +
		`},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	before := s.Listeners()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("listen: %d", resp.StatusCode)
	}
	out := make(chan string, 1024)
	go func() {
		defer close(out)
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			data, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Method string `json:"method"`
				Params struct {
					URI string `json:"uri"`
				} `json:"params"`
			}
			if json.Unmarshal([]byte(data), &ev) == nil && ev.Method == "notifications/resources/updated" {
				out <- ev.Params.URI
			}
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for s.Listeners() <= before {
		if time.Now().After(deadline) {
			t.Fatal("the listen stream did not open")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return out
}

// expectUpdates reads want from ch (in any order), then checks that
// nothing more comes within quiet.
func expectUpdates(t *testing.T, who string, ch <-chan string, want []string, quiet time.Duration) {
	t.Helper()
	left := map[string]int{}
	for _, w := range want {
		left[w]++
	}
	for n := len(want); n > 0; n-- {
		select {
		case u := <-ch:
			if left[u] == 0 {
				t.Errorf("%s: an update of %s, not expected (still waiting for %v)", who, u, left)
			}
			left[u]--
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: updates %v did not arrive", who, left)
		}
	}
	select {
	case u := <-ch:
		t.Errorf("%s: an extra update of %s", who, u)
	case <-time.After(quiet):
	}
}

// An update noticed on one instance reaches the listen streams of every
// instance that follow its URI, once each (an instance does not hear its
// own back); while Redis is down it reaches the noticing instance's own
// streams, and after Redis is back the fleet's again.
func TestResourceUpdatesAcrossInstances(t *testing.T) {
	r := services.StartRedis(t)
	prefix := "ru" + strconv.Itoa(rand.IntN(1e6)) + ":"
	fa, fb := newFleet(t, r, "a", prefix), newFleet(t, r, "b", prefix)
	doc, other := "test://doc/"+strconv.Itoa(rand.IntN(1e6)), "test://other"
	sa, ua, urlA := relayServer(t, fa, doc, other)
	sb, ub, urlB := relayServer(t, fb, doc, other)
	onA := listenUpdates(t, sa, urlA, doc)
	onB := listenUpdates(t, sb, urlB, doc)
	onBOther := listenUpdates(t, sb, urlB, other)
	time.Sleep(200 * time.Millisecond) // both relays subscribed

	if n := sa.NotifyResourceUpdated(doc); n != 1 {
		t.Errorf("A told %d of its streams, want 1", n)
	}
	expectUpdates(t, "A", onA, []string{doc}, 300*time.Millisecond)
	expectUpdates(t, "B", onB, []string{doc}, 0)
	expectUpdates(t, "B's other stream", onBOther, nil, 0)
	sb.NotifyResourceUpdated(other)
	expectUpdates(t, "B's other stream", onBOther, []string{other}, 300*time.Millisecond)
	expectUpdates(t, "A", onA, nil, 0)
	expectUpdates(t, "B", onB, nil, 0)

	// A burst merges while it waits: B hears doc at least once, and
	// never more often than A told it.
	for range 1000 {
		sa.NotifyResourceUpdated(doc)
	}
	heard := 0
	for done := false; !done; {
		select {
		case <-onB:
			heard++
		case <-time.After(500 * time.Millisecond):
			done = true
		}
	}
	if heard < 1 || heard > 1000 {
		t.Errorf("B heard %d updates of a burst of 1,000", heard)
	}
	for len(onA) > 0 {
		<-onA
	}

	// Redis down: A's own streams still hear A; B does not, and A counts
	// what it could not publish.
	r.Kill()
	deadline := time.Now().Add(10 * time.Second)
	for fa.Up() {
		if time.Now().After(deadline) {
			t.Fatal("A did not notice Redis was down")
		}
		time.Sleep(10 * time.Millisecond)
	}
	dropped := ua.dropped.Get()
	sa.NotifyResourceUpdated(doc)
	expectUpdates(t, "A while Redis is down", onA, []string{doc}, 300*time.Millisecond)
	expectUpdates(t, "B while Redis is down", onB, nil, 0)
	if ua.dropped.Get() <= dropped {
		t.Error("an update not published was not counted")
	}
	r.Restart()
	waitUp(t, fa)
	waitUp(t, fb)
	deadline = time.Now().Add(10 * time.Second)
	for got := false; !got; {
		if time.Now().After(deadline) {
			t.Fatal("no update from A reached B after Redis came back")
		}
		sa.NotifyResourceUpdated(doc)
		select {
		case <-onB:
			got = true
		case <-time.After(200 * time.Millisecond):
		}
	}
	if ub.received.Get() == 0 || ua.published.Get() == 0 {
		t.Errorf("metrics: B received %d, A published %d", ub.received.Get(), ua.published.Get())
	}
}
