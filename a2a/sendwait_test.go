package a2a

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
)

// SendMessage waits for its task to end unless the client asks it not to
// (Config.SendWait; A2A 1.0 returnImmediately, 0.3 blocking). The helper
// review's TestReview3SendMessageWaitsByDefault covers the default; these
// cover the rest: asking not to wait, the interrupted states, a cancel,
// and the bounds.

// laterAgent replies working and, in Then, after a moment, moves its
// task to the state final.
func laterAgent(srv **Server, final TaskState) AgentFunc {
	return func(ctx context.Context, c *Call) (*Reply, error) {
		id := c.TaskID
		return &Reply{State: TaskStateWorking, Then: func() {
			time.Sleep(20 * time.Millisecond)
			(*srv).UpdateTask(context.Background(), id, &Reply{State: final, Status: &Message{Parts: PartsOf(TextPart("later: " + final.String()))}})
		}}, nil
	}
}

func sendBody(v Version, text, conf string) string {
	if conf != "" {
		conf = `,"configuration":` + conf
	}
	if v == Version03 {
		return req("message/send", fmt.Sprintf(`{"message":{"kind":"message","role":"user","messageId":"m-%d","parts":[{"kind":"text","text":%q}]}%s}`, time.Now().UnixNano(), text, conf))
	}
	return req("SendMessage", fmt.Sprintf(`{"message":{"role":"ROLE_USER","messageId":"m-%d","parts":[{"text":%q}]}%s}`, time.Now().UnixNano(), text, conf))
}

// state returns the answered task's status state, in either shape.
func state(t *testing.T, a answer, v Version) any {
	t.Helper()
	if a.code != 0 {
		t.Fatalf("%+v", a)
	}
	res := any(parse(t, a.result))
	if v == Version10 {
		res = get(res, "task")
	}
	return get(res, "status", "state")
}

func TestSendWaitAskedNotTo(t *testing.T) {
	var srv *Server
	srv = newTestServer(t, func(c *Config) { c.Agent = laterAgent(&srv, TaskStateCompleted); c.SendWait = 0 })
	for _, tc := range []struct {
		v          Version
		conf, want string
	}{
		{Version10, `{"returnImmediately":true}`, "TASK_STATE_WORKING"},
		{Version10, `{"returnImmediately":true,"blocking":true}`, "TASK_STATE_WORKING"},
		{Version03, `{"blocking":false}`, "working"},
		// Either name under either version, as the other members.
		{Version10, `{"blocking":false}`, "TASK_STATE_WORKING"},
		// The waits, for contrast.
		{Version03, ``, "completed"},
		{Version03, `{"blocking":true}`, "completed"},
		{Version10, `{"returnImmediately":null}`, "TASK_STATE_COMPLETED"},
	} {
		if got := state(t, call(t, srv, tc.v.String(), sendBody(tc.v, "x", tc.conf)), tc.v); got != tc.want {
			t.Errorf("%s configuration %s: answered %v, want %s", tc.v, tc.conf, got, tc.want)
		}
	}
	// Config.SendWait negative: no wait, whatever the client says.
	var now *Server
	now = newTestServer(t, func(c *Config) { c.Agent = laterAgent(&now, TaskStateCompleted); c.SendWait = -1 })
	if got := state(t, call(t, now, "1.0", sendBody(Version10, "x", "")), Version10); got != "TASK_STATE_WORKING" {
		t.Errorf("SendWait -1: answered %v", got)
	}
}

// An interrupted state ends the wait as a final one does, and the answer
// is the task as stored then (its status message, its history).
func TestSendWaitInterrupted(t *testing.T) {
	for _, st := range []TaskState{TaskStateInputRequired, TaskStateAuthRequired, TaskStateFailed, TaskStateRejected} {
		var srv *Server
		srv = newTestServer(t, func(c *Config) { c.Agent = laterAgent(&srv, st); c.SendWait = 0 })
		a := call(t, srv, "1.0", sendBody(Version10, "x", ""))
		res := parse(t, a.result)
		if got := get(res, "task", "status", "state"); got != st.String() {
			t.Errorf("%s: answered %v", st, got)
		}
		if got := get(res, "task", "status", "message", "parts", 0, "text"); got != "later: "+st.String() {
			t.Errorf("%s: status message %v", st, got)
		}
	}
}

// A CancelTask while SendMessage waits ends the wait: the answer is the
// canceled task.
func TestSendWaitCanceled(t *testing.T) {
	started := make(chan string, 1)
	srv := newTestServer(t, func(c *Config) {
		c.SendWait = 0
		c.Agent = AgentFunc(func(ctx context.Context, c *Call) (*Reply, error) {
			id := c.TaskID
			return &Reply{State: TaskStateWorking, Then: func() { started <- id }}, nil
		})
	})
	go func() {
		id := <-started
		time.Sleep(20 * time.Millisecond)
		call(t, srv, "1.0", req("CancelTask", `{"id":"`+id+`"}`))
	}()
	done := make(chan answer, 1)
	go func() { done <- call(t, srv, "1.0", sendBody(Version10, "x", "")) }()
	select {
	case a := <-done:
		if got := state(t, a, Version10); got != "TASK_STATE_CANCELED" {
			t.Errorf("answered %v, want the canceled task", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SendMessage still waiting 10 s after its task was canceled")
	}
}

// A task that never ends: SendMessage answers it as it stands once
// SendWait has passed, and, over HTTP, before the handler's deadline
// (HandlerTimeout), never with the deadline's 500.
func TestSendWaitBounds(t *testing.T) {
	srv := newTestServer(t, func(c *Config) { c.Agent = streamAgent(new(*Server)); c.SendWait = 150 * time.Millisecond })
	start := time.Now()
	if got := state(t, call(t, srv, "1.0", sendBody(Version10, "hold", "")), Version10); got != "TASK_STATE_WORKING" {
		t.Errorf("after SendWait: answered %v", got)
	}
	if el := time.Since(start); el < 150*time.Millisecond {
		t.Errorf("answered after %v, before SendWait (150 ms)", el)
	}

	_, _, addr := streamServer(t, fastserver.Config{HandlerTimeout: 400 * time.Millisecond}, func(c *Config) { c.SendWait = 0 })
	for i := range 3 {
		start := time.Now()
		c := post(t, addr, "1.0", streamReq(40+i, "SendMessage", text10("hold")), "Accept: application/json")
		el := time.Since(start)
		var env struct {
			ID     int
			Result struct {
				Task struct{ Status struct{ State string } }
			}
			Error *struct{ Code int }
		}
		if err := json.Unmarshal(c.body, &env); err != nil {
			t.Fatalf("%v: %s", err, c.body)
		}
		if c.resp.StatusCode != 200 || env.Error != nil || env.ID != 40+i || env.Result.Task.Status.State != "TASK_STATE_WORKING" {
			t.Errorf("a task still working at the handler's deadline (400 ms): %d %s, want 200 and the working task", c.resp.StatusCode, c.body)
		}
		if el < 200*time.Millisecond {
			t.Errorf("answered after %v: it did not wait", el)
		}
	}
}

// Many SendMessages waiting at once each end with their own task; their
// subscriptions end with them.
func TestSendWaitConcurrent(t *testing.T) {
	var srv *Server
	var n atomic.Int32
	srv = newTestServer(t, func(c *Config) {
		c.SendWait = 0
		c.Agent = AgentFunc(func(ctx context.Context, c *Call) (*Reply, error) {
			id, text := c.TaskID, c.Message.Parts.Slice()[0].Text
			return &Reply{State: TaskStateWorking, Then: func() {
				time.Sleep(time.Duration(n.Add(1)%7) * time.Millisecond)
				srv.UpdateTask(context.Background(), id, &Reply{State: TaskStateCompleted, Artifacts: []Artifact{{Name: "echo", Parts: PartsOf(TextPart(text))}}})
			}}, nil
		})
	})
	const k = 32
	errs := make(chan string, k)
	for i := range k {
		go func() {
			text := fmt.Sprintf("text %d", i)
			a := call(t, srv, "1.0", sendBody(Version10, text, ""))
			res := parse(t, a.result)
			if get(res, "task", "status", "state") != "TASK_STATE_COMPLETED" || get(res, "task", "artifacts", 0, "parts", 0, "text") != text {
				errs <- fmt.Sprintf("%s: %s", text, a.result)
				return
			}
			errs <- ""
		}()
	}
	for range k {
		select {
		case e := <-errs:
			if e != "" {
				t.Error(e)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("waiting SendMessages did not all end within 20 s")
		}
	}
	if subs := srv.events.(*LocalBroker).Subscribers(); subs != 0 {
		t.Errorf("%d subscriptions left after every wait ended", subs)
	}
}

// Shutdown ends the wait at once: the task is answered as it stands, with
// its id, before the grace ends (not the grace's 500, which would leave
// the client a task it cannot name).
func TestSendWaitShutdown(t *testing.T) {
	_, fs, addr := streamServer(t, fastserver.Config{HandlerTimeout: 30 * time.Second, ShutdownGrace: 5 * time.Second}, func(c *Config) { c.SendWait = 0 })
	type result struct {
		c  *sseConn
		el time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		c := post(t, addr, "1.0", streamReq(50, "SendMessage", text10("hold")), "Accept: application/json")
		done <- result{c, time.Since(start)}
	}()
	time.Sleep(200 * time.Millisecond) // the SendMessage is waiting
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- fs.Shutdown(ctx)
	}()
	select {
	case r := <-done:
		var env struct {
			Result struct {
				Task struct {
					ID     string
					Status struct{ State string }
				}
			}
		}
		if err := json.Unmarshal(r.c.body, &env); err != nil || r.c.resp.StatusCode != 200 || env.Result.Task.ID == "" || env.Result.Task.Status.State != "TASK_STATE_WORKING" {
			t.Errorf("SendMessage waiting at shutdown: %d %s (%v), want 200 and the working task with its id", r.c.resp.StatusCode, r.c.body, err)
		}
		if r.el > 3*time.Second {
			t.Errorf("answered %v after it was sent: the wait did not end at shutdown", r.el)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SendMessage not answered within 10 s of the shutdown")
	}
	if err := <-stopped; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
}
