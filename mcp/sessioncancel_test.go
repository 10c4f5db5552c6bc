package mcp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

// Under 2025-xx with sessions, a notifications/cancelled POSTed in a
// session ends the handler of that session's running request with the
// id it names (context.Canceled); the request's POST is answered
// -32603 "request cancelled". The same id cancelled from another
// session, or with no session, cancels nothing; a cancellation after the
// answer touches neither that request nor a later one with its id.
func TestSessionCancel(t *testing.T) {
	s, err := New(Info{Name: "sc", Version: "1"}, WithSessions(SessionOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan string, 8)
	ended := make(chan error, 8)
	release := make(chan struct{})
	s.AddTool(Tool{Name: "wait", Handler: ToolFunc(func(c *Call) error {
		started <- string(c.r.Msg.ID)
		select {
		case <-c.Context().Done():
			ended <- c.Context().Err()
			return c.Context().Err()
		case <-release:
			ended <- nil
		case <-time.After(10 * time.Second):
			ended <- errors.New("neither cancelled nor released")
		}
		c.AddText("waited")
		return nil
	})})
	_, url := serveLoopback(t, s, fastserver.Config{HandlerTimeout: time.Minute})
	session := func() string {
		resp, body := do(t, "POST", url, "", initialize)
		id := resp.Header.Get(HeaderSession)
		if id == "" {
			t.Fatalf("initialize: %s", body)
		}
		return id
	}
	a, b := session(), session()
	reqID := fmt.Sprintf(`"r-%d"`, rand.IntN(1<<30))
	call := `{"jsonrpc":"2.0","id":` + reqID + `,"method":"tools/call","params":{"name":"wait","arguments":{}}}`
	cancel := func(id string) string {
		return `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + id + `,"reason":"gave up"}}`
	}
	answered := make(chan string, 4)
	post := func(session string) {
		go func() {
			_, body := do(t, "POST", url, session, call)
			answered <- body
		}()
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatal("the tool did not start")
		}
	}
	quiet := func(what string) {
		select {
		case err := <-ended:
			t.Fatalf("%s ended the tool: %v", what, err)
		case <-time.After(200 * time.Millisecond):
		}
	}

	post(a)
	// Another session's, and a stateless, cancellation of the same id:
	// nothing.
	if resp, _ := do(t, "POST", url, b, cancel(reqID)); resp.StatusCode != 202 {
		t.Fatalf("cancel in session b: %d", resp.StatusCode)
	}
	do(t, "POST", url, "", cancel(reqID))
	quiet("a cancellation from another session or none")
	// Its own session's, the id spelled another way: cancelled.
	if resp, _ := do(t, "POST", url, a, cancel(strings.Replace(reqID, "r", `\u0072`, 1))); resp.StatusCode != 202 {
		t.Fatalf("cancel in session a: %d", resp.StatusCode)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the tool's context: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the session's cancellation did not reach the tool")
	}
	select {
	case body := <-answered:
		if !strings.Contains(body, `"id":`+reqID) || !strings.Contains(body, `"code":-32603`) || !strings.Contains(body, "request cancelled") {
			t.Fatalf("the cancelled call's answer: %s", body)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call was not answered")
	}

	// A cancellation after the answer cancels nothing: the next call with
	// the same id in the same session runs to its end.
	do(t, "POST", url, a, cancel(reqID))
	post(a)
	quiet("a cancellation sent before the request")
	close(release)
	if err := <-ended; err != nil {
		t.Fatalf("the second call: %v", err)
	}
	if body := <-answered; !strings.Contains(body, `"waited"`) {
		t.Fatalf("the second call's answer: %s", body)
	}
}
