package mcp

// Review 15 (hostile review) of MCP 2026-07-28 support: the tasks
// extension (SEP-2663), subscriptions/listen and cancellation. Tests
// named TestReview15Fault… fail on the reviewed commit, each naming the
// fault it proves; the others pin a property found holding that no
// earlier review pinned.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// r15Lines serves s's StreamEndpoint over a pipe: send writes one line,
// await returns the answer with the given numeric id (5 s at most).
type r15Lines struct {
	t    *testing.T
	pw   *io.PipeWriter
	out  *syncBuffer
	done chan error
}

func r15Serve(t *testing.T, s *Server) *r15Lines {
	t.Helper()
	pr, pw := io.Pipe()
	l := &r15Lines{t: t, pw: pw, out: new(syncBuffer), done: make(chan error, 1)}
	go func() {
		l.done <- fastserver.ServeLines(context.Background(), s.StreamEndpoint(), fastserver.Config{Logger: slog.New(slog.DiscardHandler)}, pr, l.out)
	}()
	t.Cleanup(func() {
		pw.Close()
		select {
		case <-l.done:
		case <-time.After(5 * time.Second):
			t.Error("ServeLines did not return")
		}
	})
	return l
}

func (l *r15Lines) send(line string) {
	l.t.Helper()
	if _, err := io.WriteString(l.pw, line+"\n"); err != nil {
		l.t.Fatal(err)
	}
}

func (l *r15Lines) await(id int) map[string]any {
	l.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, s := range strings.Split(l.out.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(s), &m) == nil && m["id"] == float64(id) {
				return m
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	l.t.Fatalf("no answer %d in %q", id, l.out.String())
	return nil
}

// r15Tasks counts the tasks s's store holds.
func r15Tasks(s *Server) int {
	st := s.tasks
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.byID)
}

// TestReview15FaultTaskStartedByCancelledRequest attacks the moment a
// call becomes a task: the client cancels the tools/call (over stdio,
// notifications/cancelled naming its id; over HTTP under 2026-07-28, its
// disconnect) while the handler's part before StartTask runs, and that
// part ends without looking at its Context. StartTask still answers
// ErrRunAsTask and runTool stores a task and starts its goroutine, whose
// CreateTaskResult nobody receives (a cancelled request gets no answer):
// an orphan task that runs its handler again, holds a slot of MaxTasks
// and of its holder's share, for its whole TTL (an hour by default).
//
// Decided by MCP 2026-07-28, cancellation: "Receivers of cancellation
// notifications SHOULD: Stop processing the cancelled request - Free
// associated resources - Not send a response for the cancelled request",
// and for HTTP "The server MUST treat a client disconnect as cancellation
// of that request"; a task the client never learns of can be neither
// polled nor cancelled (SEP-2663: "The client uses task.taskId for all
// subsequent tasks/get, tasks/update, and tasks/cancel calls").
func TestReview15FaultTaskStartedByCancelledRequest(t *testing.T) {
	tt := newTasksTest(t)
	started := make(chan struct{}, 4)
	var taskRuns atomic.Int32
	tt.add(Tool{Name: "slowstart", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if !c.InTask() {
			// The part before StartTask: a check that takes a while and
			// does not watch the Context (it finishes after the cancel).
			started <- struct{}{}
			select {
			case <-c.Context().Done():
			case <-time.After(3 * time.Second):
			}
		} else {
			taskRuns.Add(1)
		}
		if err := c.StartTask(); err != nil {
			return err
		}
		c.AddText("done")
		return nil
	})})
	l := r15Serve(t, tt.s)
	l.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slowstart","arguments":{},` + metaTasks + `}}`)
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler did not start")
	}
	l.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`)
	// Calls are served one at a time, in order: once request 2 is
	// answered, request 1 is over.
	l.send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{` + metaTasks + `}}`)
	l.await(2)
	if strings.Contains(l.out.String(), `"id":1,`) {
		t.Errorf("the cancelled request was answered: %s", l.out.String())
	}
	if n := r15Tasks(tt.s); n != 0 {
		t.Errorf("a cancelled tools/call left %d task(s) in the store, unknown to the client (its handler ran again in it: %d run(s))", n, taskRuns.Load())
	}
}

// TestReview15FaultCancelledRunningTaskFreesItsSlot attacks the store's
// bound on running handlers with tasks/cancel. A cancelled task is
// terminal, so roomLocked may drop it to make room, and sweepLocked drops
// one whose TTL passed, while its handler is still running: tasks/cancel
// is cooperative, and a handler notices its Context when it next looks
// (here: not before it is released). Each create-then-cancel therefore
// frees a slot of MaxTasks (and of MaxOwnerTasks, MaxBytes) while the
// goroutine, its Call and its copied arguments live on: a client cycling
// create/cancel runs any number of handlers at once on a store bounded
// to two.
//
// Decided by TaskOptions.MaxTasks: "MaxTasks bounds the tasks kept at
// once, running or finished. When the store is full, the oldest finished
// task is dropped before its TTL; when none has finished, a call that
// would start a task is refused with 503" (a cancelled task whose handler
// runs has not finished), and by SEP-2663: "Cancellation is cooperative
// … A server is not obligated to actually stop the work" — the work goes
// on after the ack, so the bound must count it until its handler returns.
func TestReview15FaultCancelledRunningTaskFreesItsSlot(t *testing.T) {
	tt := newTasksTest(t, WithTasks(TaskOptions{MaxTasks: 2}))
	release := make(chan struct{})
	var running, peak atomic.Int32
	tt.add(Tool{Name: "stubborn", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		n := running.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		defer running.Add(-1)
		// Long work that looks at its Context only between steps: here,
		// once released (4 s at most).
		select {
		case <-release:
		case <-time.After(4 * time.Second):
		}
		c.AddText("late")
		return c.Context().Err()
	})})
	defer close(release)
	awaitRunning := func(n int32) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Second)
		for running.Load() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d handlers running, want %d", running.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	var ids []string
	for i := 0; i < 2; i++ {
		ids = append(ids, viewOf(t, tt.call("stubborn", `{}`, metaTasks)).TaskID)
	}
	awaitRunning(2)
	for _, id := range ids {
		if a := tt.method("tasks/cancel", id, ""); a.Status != 200 || a.Code != 0 {
			t.Fatalf("tasks/cancel: %+v", a)
		}
	}
	// Both handlers still run. Try two more tasks, as the attacker would
	// keep doing.
	for i := 0; i < 2; i++ {
		a := tt.call("stubborn", `{}`, metaTasks)
		if a.Status == 200 && a.Code == 0 {
			awaitRunning(int32(3 + i))
		}
	}
	if p := peak.Load(); p > 2 {
		t.Errorf("%d task handlers ran at once on a store with MaxTasks 2: cancelled tasks whose handlers still ran were dropped to make room", p)
	}
}

// TestReview15FaultStdioMetaWithoutCapabilities attacks the _meta rules
// over the newline-delimited transport. Over HTTP a 2026-07-28 request
// whose _meta lacks io.modelcontextprotocol/clientCapabilities, or holds
// one that is not an object, is refused -32602 (judgeParams); over stdio
// checkStreamVersion reads only the protocol version, and the same
// request is served (a tools/call too, its capabilities then read as
// "none declared").
//
// Decided by MCP 2026-07-28's schema (RequestMetaObject):
// "io.modelcontextprotocol/clientCapabilities": ClientCapabilities — "The
// client's capabilities for this specific request. Required.", and the
// contract §4: "Its params._meta must hold
// io.modelcontextprotocol/protocolVersion and
// io.modelcontextprotocol/clientCapabilities (an object …): missing
// params, missing _meta or a missing key is … -32602 (SEP-2575, as the
// official MCP conformance suite checks it)"; §6 serves "the MCP method
// set" the same way over stdio.
func TestReview15FaultStdioMetaWithoutCapabilities(t *testing.T) {
	s, _ := testServer(t)
	l := r15Serve(t, s)
	for i, meta := range []string{
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":"all"}`,
		`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}`,
	} {
		id := i + 1
		l.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":` + meta + `}}`)
		m := l.await(id)
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != float64(decode.CodeInvalidParams) {
			t.Errorf("stdio 2026-07-28 tools/call with _meta %s: %v, want -32602 as over HTTP", meta, m)
		}
	}
}

// TestReview15MetaCapabilitiesReadOnce: a hostile _meta spells its keys
// with escapes or gives clientCapabilities twice, hoping that the header
// check (judgeParams) and the task decision (clientTakesTasks) read
// different members. Both resolve escapes and both take the last
// occurrence, so the call becomes a task exactly when the last
// clientCapabilities declares the extension. Guard: contract §2 "Escapes
// are resolved before any comparison, in names and values alike", §4 "a
// _meta member or a protocol-version key inside it that appears twice
// disagrees with the header" (and nothing else deeper is refused).
func TestReview15MetaCapabilitiesReadOnce(t *testing.T) {
	tt := newTasksTest(t)
	tt.add(Tool{Name: "job", Task: TaskOptional, Handler: ToolFunc(func(c *Call) error {
		if err := c.StartTask(); err != nil {
			return err
		}
		c.AddText("done")
		return nil
	})})
	const (
		pv   = `"io.modelcontextprotocol/protocolVersion":"2026-07-28"`
		with = `"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol\/tasks":{}}}`
		none = `"io.modelcontextprotocol/clientCapabilities":{}`
	)
	for _, c := range []struct {
		meta, want string
	}{
		{`"\u005fmeta":{` + pv + `,` + with + `}`, "task"},
		{`"_meta":{` + pv + `,` + with + `,` + none + `}`, "complete"},
		{`"_meta":{` + pv + `,` + none + `,` + with + `}`, "task"},
		{`"_meta":{"io.modelcontextprotocol\/protocolVersion":"2026\u002d07-28",` + with + `}`, "task"},
	} {
		a := tt.call("job", `{}`, c.meta)
		if a.Status != 200 || a.Code != 0 || obj(t, a.Result)["resultType"] != c.want {
			t.Errorf("%s: %d %d %s, want resultType %q", c.meta, a.Status, a.Code, a.Result, c.want)
		}
	}
}
