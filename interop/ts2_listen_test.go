package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestMCPTS2Listen drives subscriptions/listen (MCP 2026-07-28, SEP-2575)
// with the official MCP TypeScript SDK v2 client (@modelcontextprotocol/client
// 2.4.0, node/ts2_listen_client.mjs) over streamable HTTP, against the
// rpcedge mcp.Server of listenServerSource (TestMCPGoSDKListen's): the
// client negotiates 2026-07-28 and Client.listen opens one stream for a
// plain resource and a URI its template matches (both random per run);
// the acknowledgement is the first thing the script sees, honoring both
// URIs; each NotifyResourceUpdated of a followed URI reaches the SDK's
// notifications/resources/updated handler tagged with the stream's
// subscriptionId, and one of a URI the stream does not follow is sent
// nowhere; McpSubscription.close ends the stream (the script stays
// connected) and Server.Listeners drops to 0.
//
// The script reads its commands on standard input, so it runs from
// --input-type=module -e SOURCE in the install directory (where the
// client resolves) rather than from standard input as runNodeClient runs
// the others.
func TestMCPTS2Listen(t *testing.T) {
	dir, node := nodeTools(t)
	plain := "interop://plain/" + randomSegment()
	item := "interop://items/" + randomSegment()
	other := "interop://items/" + randomSegment() // the template matches it; never followed
	s := startListenServer(t, plain)

	src, err := os.ReadFile(filepath.Join("node", "ts2_listen_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--input-type=module", "-e", string(src), s.url+"/mcp", plain, item)
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	exited := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	stopped := false
	defer func() {
		if stopped {
			return
		}
		in.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	}()

	type event struct {
		Event           string              `json:"event"`
		ProtocolVersion string              `json:"protocolVersion"`
		Era             string              `json:"era"`
		HonoredFilter   map[string][]string `json:"honoredFilter"`
		URI             string              `json:"uri"`
		SubscriptionID  any                 `json:"subscriptionId"`
		Cause           string              `json:"cause"`
		Message         string              `json:"message"`
	}
	var seen []event
	next := func(what string, within time.Duration) event {
		t.Helper()
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("waiting for %s: the script exited; events %+v; stderr:\n%s", what, seen, stderr)
			}
			var e event
			if err := json.Unmarshal([]byte(l), &e); err != nil {
				t.Fatalf("waiting for %s: the script printed %q; stderr:\n%s", what, l, stderr)
			}
			seen = append(seen, e)
			if e.Event == "error" || e.Event == "timeout" {
				t.Fatalf("waiting for %s: %+v; stderr:\n%s", what, e, stderr)
			}
			return e
		case <-time.After(within):
			t.Fatalf("waiting for %s: nothing within %v; events %+v; stderr:\n%s", what, within, seen, stderr)
		}
		return event{}
	}
	send := func(c string) {
		t.Helper()
		if _, err := io.WriteString(in, c+"\n"); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}

	// (1) The acknowledgement first, under 2026-07-28, honoring both URIs.
	ack := next("the acknowledgement", 20*time.Second)
	if ack.Event != "ack" {
		t.Fatalf("first event %+v, want the acknowledgement", ack)
	}
	if ack.ProtocolVersion != "2026-07-28" || ack.Era != "modern" {
		t.Errorf("negotiated %q (era %q), want 2026-07-28 (modern)", ack.ProtocolVersion, ack.Era)
	}
	honored := slices.Clone(ack.HonoredFilter["resourceSubscriptions"])
	slices.Sort(honored)
	want := []string{plain, item}
	slices.Sort(want)
	if !slices.Equal(honored, want) || len(ack.HonoredFilter) != 1 {
		t.Errorf("honoredFilter %v, want resourceSubscriptions %v only", ack.HonoredFilter, want)
	}
	s.waitListeners(t, 1, "after the acknowledgement")

	// (2) Updates: the followed URIs reach the handler, the other does not.
	if n := s.do(t, "notify "+other); n != 0 {
		t.Errorf("NotifyResourceUpdated(%s), which no stream follows: queued for %d, want 0", other, n)
	}
	for _, uri := range []string{plain, item} {
		if n := s.do(t, "notify "+uri); n != 1 {
			t.Errorf("NotifyResourceUpdated(%s): queued for %d, want 1", uri, n)
		}
	}
	var got []string
	var subIDs []any
	for range 2 {
		e := next("an update", 5*time.Second)
		got, subIDs = append(got, e.URI), append(subIDs, e.SubscriptionID)
	}
	// Once more, with the plain resource's second update as the marker
	// that the unfollowed URI's had every chance to arrive.
	s.do(t, "notify "+other)
	s.do(t, "notify "+plain)
	e := next("the second update of "+plain, 5*time.Second)
	got, subIDs = append(got, e.URI), append(subIDs, e.SubscriptionID)
	for i, e := range seen[1:] {
		if e.Event != "updated" {
			t.Errorf("event %d: %+v, want an update", i+1, e)
		}
	}
	if slices.Sort(got); !slices.Equal(got, sortedCopy(plain, plain, item)) {
		t.Errorf("updates of %v, want %s twice and %s once (never %s)", got, plain, item, other)
	}
	for _, id := range subIDs {
		if id == nil || !jsonEqual(id, subIDs[0]) {
			t.Errorf("updates tagged with subscriptionIds %v, want the one listen request's id on each", subIDs)
			break
		}
	}

	// (3) McpSubscription.close ends the stream while the client stays
	// connected: the server's Listeners drops to 0, and an update is
	// queued for no one.
	send("close")
	if e := next("the subscription's end", 5*time.Second); e.Event != "closed" || e.Cause != "local" {
		t.Errorf("after close: %+v, want closed with cause local", e)
	}
	s.waitListeners(t, 0, "after McpSubscription.close")
	if n := s.do(t, "notify "+plain); n != 0 {
		t.Errorf("NotifyResourceUpdated(%s) after close: queued for %d, want 0", plain, n)
	}

	// (4) The script exits 0 having seen nothing more.
	send("exit")
	stopped = true
	in.Close()
	deadline := time.After(10 * time.Second)
	for lines != nil {
		select {
		case l, ok := <-lines:
			if !ok {
				lines = nil
				break
			}
			t.Errorf("after close the script printed %s", l)
		case <-deadline:
			cmd.Process.Kill()
			<-exited
			t.Fatalf("the script had not exited 10 s after exit; stderr:\n%s", stderr)
		}
	}
	if err := <-exited; err != nil {
		t.Errorf("the script exited with %v; stderr:\n%s", err, stderr)
	}
	t.Logf("events: %+v", seen)
}

func sortedCopy(s ...string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
