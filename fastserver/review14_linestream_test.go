package fastserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

// Review 14: a second hostile pass over ServeLines' streamed answers —
// cancellation, deadlines, Cut and SetDeadline around Stream.Call,
// streams kept past their handler, panics beside blocked writes, odd
// writers and readers, and response lines at the size ceiling.

// r14Cancel gives rig's endpoint the Cancel hook of newLineStreamRig
// (r12Rig's endpoint has none): a notification "cancel" names params.id.
func r14Cancel(rig *lineStreamRig) {
	rig.ep.Cancel = func(m *decode.Message) []byte {
		if string(m.Method) != "cancel" {
			return nil
		}
		id, _ := decode.Lookup(m.Params, "id")
		return id
	}
}

// r14Distinct returns n distinct ids of randID's kinds.
func r14Distinct(n int) []string {
	seen := map[string]bool{}
	var ids []string
	for len(ids) < n {
		if id := randID(); !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids
}

// r14StrID is a random string id with the given prefix.
func r14StrID(prefix string) string {
	return strconv.Quote(prefix + "-" + strconv.Itoa(rand.IntN(1e9)))
}

// r14CallResult is the outcome of a Stream.Call made by a test handler.
type r14CallResult struct {
	res  []byte
	err  error
	took time.Duration
}

// r14Asker registers "ask": one Call "client/do" with params {"q": id},
// its outcome on out, the answer its result or {"err": text}.
func r14Asker(ms *Methods, out chan r14CallResult) {
	r12Stream(ms, "ask", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		start := time.Now()
		res, err := st.Call("client/do", []byte(`{"q":`+string(r.Msg.ID)+`}`))
		out <- r14CallResult{res, err, time.Since(start)}
		if err != nil {
			return append(append(append(dst, `{"err":`...), decode.AppendString(nil, err.Error())...), '}'), nil
		}
		return append(dst, res...), nil
	})
}

// r14Result waits for a Call's outcome.
func r14Result(t *testing.T, ch chan r14CallResult, within time.Duration) r14CallResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(within):
		t.Fatalf("the Call did not end within %v", within)
		return r14CallResult{}
	}
}

// r14Until reads lines until one has id want and returns it, with the
// lines before it.
func (lc *lineClient) r14Until(want string) (map[string]json.RawMessage, []string) {
	lc.t.Helper()
	var before []string
	for {
		l, m := lc.next()
		if string(m["id"]) == want && m["method"] == nil {
			return m, before
		}
		before = append(before, l)
	}
}

// TestReview14CancelDuringCallThenLateResponse: the client cancels the
// request whose handler waits in Stream.Call: the Call ends at once with
// context.Canceled (not after ClientResponseTimeout), the request gets
// no answer; the response written after the cancel is refused -32600
// (nothing awaits it) and never reaches the next Call, which takes its
// own response.
func TestReview14CancelDuringCallThenLateResponse(t *testing.T) {
	ms := &Methods{}
	asked := make(chan r14CallResult, 4)
	r14Asker(ms, asked)
	r12Echo(ms)
	rig := r12Rig(ms)
	r14Cancel(rig)
	rig.cfg.ClientResponseTimeout = 4 * time.Second
	lc := startLines(t, rig, context.Background(), nil, nil)
	for round := range 3 {
		ids := r14Distinct(3)
		a, b, e := ids[0], ids[1], ids[2]
		lc.send(`{"jsonrpc":"2.0","id":` + a + `,"method":"ask"}`)
		ra := string(lc.serverRequest())
		lc.send(`{"jsonrpc":"2.0","method":"cancel","params":{"id":` + a + `}}`)
		r := r14Result(t, asked, 2*time.Second)
		if !errors.Is(r.err, context.Canceled) || r.took > time.Second {
			t.Fatalf("round %d: the cancelled Call: %v after %v, want context.Canceled at once", round, r.err, r.took)
		}
		lc.send(`{"jsonrpc":"2.0","id":` + ra + `,"result":{"for":"a","round":` + strconv.Itoa(round) + `}}`)
		l, m := lc.next()
		r12Invalid(t, l, m, ra)
		lc.send(`{"jsonrpc":"2.0","id":` + b + `,"method":"ask"}`)
		rb := string(lc.serverRequest())
		lc.send(`{"jsonrpc":"2.0","id":` + rb + `,"result":{"for":"b"}}`)
		if r := r14Result(t, asked, 2*time.Second); r.err != nil || string(r.res) != `{"for":"b"}` {
			t.Fatalf("round %d: Call b: %s %v", round, r.res, r.err)
		}
		if l, m := lc.next(); string(m["id"]) != b || string(m["result"]) != `{"for":"b"}` {
			t.Fatalf("round %d: answer to %s: %q", round, b, l)
		}
		lc.send(`{"jsonrpc":"2.0","id":` + e + `,"method":"echo","params":{"r":` + strconv.Itoa(round) + `}}`)
		if l, m := lc.next(); string(m["id"]) != e {
			t.Fatalf("round %d: want the answer to %s (the cancelled %s must get none), got %q", round, e, a, l)
		}
	}
}

// TestReview14CancelNamingServerID: a cancellation naming the id of the
// server's own request (not a request of the client's) cancels nothing:
// the Call goes on waiting and takes the response.
func TestReview14CancelNamingServerID(t *testing.T) {
	ms := &Methods{}
	asked := make(chan r14CallResult, 4)
	r14Asker(ms, asked)
	rig := r12Rig(ms)
	r14Cancel(rig)
	lc := startLines(t, rig, context.Background(), nil, nil)
	for range 3 {
		a := randID()
		lc.send(`{"jsonrpc":"2.0","id":` + a + `,"method":"ask"}`)
		ra := string(lc.serverRequest())
		lc.send(`{"jsonrpc":"2.0","method":"cancel","params":{"id":` + ra + `}}`)
		select {
		case r := <-asked:
			t.Fatalf("a cancel naming the server's id %s ended the Call: %v", ra, r.err)
		case <-time.After(100 * time.Millisecond):
		}
		text := "k" + strconv.Itoa(rand.IntN(1e6))
		lc.send(`{"jsonrpc":"2.0","id":` + ra + `,"result":{"t":"` + text + `"}}`)
		if r := r14Result(t, asked, 2*time.Second); r.err != nil {
			t.Fatalf("Call: %v", r.err)
		}
		if l, m := lc.next(); string(m["id"]) != a || string(m["result"]) != `{"t":"`+text+`"}` {
			t.Fatalf("answer to %s: %q", a, l)
		}
	}
}

// TestReview14CancelAndResponseInOneRead: a cancellation and the
// response to the Call its request waits in, written in one write (so
// read together), in either order: nothing blocks, the cancelled request
// gets at most one answer (none when the cancel came first), a response
// read before the cancel is never refused, and the stream goes on.
func TestReview14CancelAndResponseInOneRead(t *testing.T) {
	ms := &Methods{}
	asked := make(chan r14CallResult, 4)
	r14Asker(ms, asked)
	r12Echo(ms)
	rig := r12Rig(ms)
	r14Cancel(rig)
	rig.cfg.ClientResponseTimeout = 4 * time.Second
	lc := startLines(t, rig, context.Background(), nil, nil)
	for round := range 16 {
		cancelFirst := round%2 == 0
		ids := r14Distinct(2)
		a, e := ids[0], ids[1]
		lc.send(`{"jsonrpc":"2.0","id":` + a + `,"method":"ask"}`)
		ra := string(lc.serverRequest())
		cancel := `{"jsonrpc":"2.0","method":"cancel","params":{"id":` + a + `}}` + "\n"
		resp := `{"jsonrpc":"2.0","id":` + ra + `,"result":{"r":` + strconv.Itoa(round) + `}}` + "\n"
		echo := `{"jsonrpc":"2.0","id":` + e + `,"method":"echo","params":{"r":` + strconv.Itoa(round) + `}}` + "\n"
		both := resp + cancel
		if cancelFirst {
			both = cancel + resp
		}
		if _, err := io.WriteString(lc.in, both+echo); err != nil {
			t.Fatal(err)
		}
		r := r14Result(t, asked, 2*time.Second)
		if r.err != nil && !errors.Is(r.err, context.Canceled) {
			t.Fatalf("round %d: Call: %v", round, r.err)
		}
		_, before := lc.r14Until(e)
		for _, l := range before {
			var m map[string]json.RawMessage
			json.Unmarshal([]byte(l), &m)
			switch {
			case string(m["id"]) == a:
				if cancelFirst {
					t.Fatalf("round %d: the request cancelled before its response was read was answered: %q", round, l)
				}
				if string(m["result"]) != `{"r":`+strconv.Itoa(round)+`}` {
					t.Fatalf("round %d: answer to %s: %q", round, a, l)
				}
			case string(m["id"]) == ra || string(m["id"]) == "null":
				if !cancelFirst {
					t.Fatalf("round %d: a response read while its Call waited was refused: %q", round, l)
				}
				r12Invalid(t, l, m, ra)
			default:
				t.Fatalf("round %d: unexpected line %q", round, l)
			}
		}
		if len(before) > 1 {
			t.Fatalf("round %d: %d lines before the echo's answer: %q", round, len(before), before)
		}
	}
}

// TestReview14ResponseWithQueuedRequestID: while a Call waits, the client
// writes a request and then a "response" bearing that request's own id
// (a string id, so it looks like a client's response): the request must
// get exactly one answer — its own — since a client matches answers to
// its requests by id; the Call still takes the proper response.
func TestReview14ResponseWithQueuedRequestID(t *testing.T) {
	ms := &Methods{}
	asked := make(chan r14CallResult, 4)
	r14Asker(ms, asked)
	r12Echo(ms)
	rig := r12Rig(ms)
	lc := startLines(t, rig, context.Background(), nil, nil)
	for round := range 2 {
		a, q := randID(), r14StrID("q")
		lc.send(`{"jsonrpc":"2.0","id":` + a + `,"method":"ask"}`)
		ra := string(lc.serverRequest())
		lc.send(`{"jsonrpc":"2.0","id":`+q+`,"method":"echo","params":{"mine":`+strconv.Itoa(round)+`}}`,
			`{"jsonrpc":"2.0","id":`+q+`,"result":{"stray":true}}`,
			`{"jsonrpc":"2.0","id":`+ra+`,"result":{"ok":`+strconv.Itoa(round)+`}}`)
		if r := r14Result(t, asked, 2*time.Second); r.err != nil {
			t.Fatalf("Call: %v", r.err)
		}
		if l, m := lc.next(); string(m["id"]) != a {
			t.Fatalf("answer to %s: %q", a, l)
		}
		var forQ []string
		for range 2 {
			l, m := lc.next()
			if string(m["id"]) == q {
				forQ = append(forQ, l)
			} else if !strings.Contains(string(m["error"]), "-32600") {
				t.Fatalf("unexpected line %q", l)
			}
		}
		if len(forQ) != 1 || !strings.Contains(forQ[0], `"result":{"mine":`+strconv.Itoa(round)+`}`) {
			t.Errorf("round %d: request %s got %d answers, want its own one only: %q", round, q, len(forQ), forQ)
		}
	}
}

// TestReview14HandlerTimeoutDuringCall: a handler waiting in Call when
// HandlerTimeout passes: the Call ends then (context.DeadlineExceeded),
// not after ClientResponseTimeout; the call is answered -32603; the late
// response is refused; the call's next use (its context reused) runs a
// Call that succeeds.
func TestReview14HandlerTimeoutDuringCall(t *testing.T) {
	ms := &Methods{}
	asked := make(chan r14CallResult, 4)
	r14Asker(ms, asked)
	r12Echo(ms)
	rig := r12Rig(ms)
	rig.cfg.HandlerTimeout = 200 * time.Millisecond
	rig.cfg.ClientResponseTimeout = 5 * time.Second
	lc := startLines(t, rig, context.Background(), nil, nil)
	for round := range 3 {
		ids := r14Distinct(2)
		a, b := ids[0], ids[1]
		lc.send(`{"jsonrpc":"2.0","id":` + a + `,"method":"ask"}`)
		ra := string(lc.serverRequest())
		r := r14Result(t, asked, 3*time.Second)
		if !errors.Is(r.err, context.DeadlineExceeded) || r.took < 150*time.Millisecond || r.took > 1500*time.Millisecond {
			t.Fatalf("round %d: Call: %v after %v, want DeadlineExceeded after about 200ms", round, r.err, r.took)
		}
		if l, m := lc.next(); string(m["id"]) != a || !strings.Contains(string(m["error"]), "-32603") {
			t.Fatalf("round %d: answer to %s: %q", round, a, l)
		}
		lc.send(`{"jsonrpc":"2.0","id":` + ra + `,"result":{"late":true}}`)
		l, m := lc.next()
		r12Invalid(t, l, m, ra)
		// Answered within the deadline this time.
		lc.send(`{"jsonrpc":"2.0","id":` + b + `,"method":"ask"}`)
		rb := string(lc.serverRequest())
		lc.send(`{"jsonrpc":"2.0","id":` + rb + `,"result":{"round":` + strconv.Itoa(round) + `}}`)
		if r := r14Result(t, asked, 2*time.Second); r.err != nil {
			t.Fatalf("round %d: prompt Call: %v", round, r.err)
		}
		if l, m := lc.next(); string(m["id"]) != b || string(m["result"]) != `{"round":`+strconv.Itoa(round)+`}` {
			t.Fatalf("round %d: answer to %s: %q", round, b, l)
		}
	}
}

// TestReview14TinyClientResponseTimeout: ClientResponseTimeout 1ms and a
// client that answers at once: each Call either takes the response or
// times out, and then the response is refused -32600 — one way or the
// other, every request gets exactly one answer and nothing blocks.
func TestReview14TinyClientResponseTimeout(t *testing.T) {
	ms := &Methods{}
	asked := make(chan r14CallResult, 4)
	r14Asker(ms, asked)
	r12Echo(ms)
	rig := r12Rig(ms)
	rig.cfg.ClientResponseTimeout = time.Millisecond
	lc := startLines(t, rig, context.Background(), nil, nil)
	timeouts := 0
	for round := range 8 {
		ids := r14Distinct(2)
		a, e := ids[0], ids[1]
		lc.send(`{"jsonrpc":"2.0","id":` + a + `,"method":"ask"}`)
		ra := string(lc.serverRequest())
		if round%2 == 1 {
			time.Sleep(20 * time.Millisecond) // past the timeout
		}
		lc.send(`{"jsonrpc":"2.0","id":`+ra+`,"result":{"r":`+strconv.Itoa(round)+`}}`,
			`{"jsonrpc":"2.0","id":`+e+`,"method":"echo","params":{}}`)
		r := r14Result(t, asked, 2*time.Second)
		if r.err != nil && !errors.Is(r.err, ErrClientTimeout) {
			t.Fatalf("round %d: Call: %v", round, r.err)
		}
		m, before := lc.r14Until(e)
		_ = m
		var gotA, refused int
		for _, l := range before {
			var m map[string]json.RawMessage
			json.Unmarshal([]byte(l), &m)
			switch {
			case string(m["id"]) == a:
				gotA++
			case strings.Contains(string(m["error"]), "-32600"):
				refused++
			default:
				t.Fatalf("round %d: unexpected line %q", round, l)
			}
		}
		if gotA != 1 {
			t.Fatalf("round %d: %d answers to %s: %q", round, gotA, a, before)
		}
		if r.err != nil {
			timeouts++
			if refused != 1 {
				t.Fatalf("round %d: the Call timed out, and its response was refused %d times: %q", round, refused, before)
			}
		} else if refused != 0 {
			t.Fatalf("round %d: the Call took the response, which was also refused: %q", round, before)
		}
	}
	t.Logf("%d of 8 Calls timed out", timeouts)
}

// TestReview14CallFromGoroutineWhileSending: a Call made from a goroutine
// the handler started, while the handler itself sends notifications: the
// notifications arrive whole and in order, the server's request once,
// the Call takes its response, everything before the answer (-race).
func TestReview14CallFromGoroutineWhileSending(t *testing.T) {
	ms := &Methods{}
	r12Stream(ms, "mixed", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		v, _ := decode.Lookup(r.Msg.Params, "n")
		n, _ := strconv.Atoi(string(v))
		res := make(chan r14CallResult, 1)
		go func() {
			b, err := st.Call("client/do", []byte(`{"q":`+string(r.Msg.ID)+`}`))
			res <- r14CallResult{res: b, err: err}
		}()
		for i := range n {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"i":%d,"of":%s,"pad":"%s"}}`, i, r.Msg.ID, strings.Repeat("p", rand.IntN(6000)))
			if err := st.Send([]byte(msg)); err != nil {
				return dst, err
			}
			if i%7 == 0 {
				runtime.Gosched()
			}
		}
		cr := <-res
		if cr.err != nil {
			return dst, cr.err
		}
		return append(dst, cr.res...), nil
	})
	rig := r12Rig(ms)
	lc := startLines(t, rig, context.Background(), nil, nil)
	for round := range 4 {
		id, n := randID(), 20+rand.IntN(30)
		lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"mixed","params":{"n":` + strconv.Itoa(n) + `}}`)
		next, asks := 0, 0
		salt := strconv.Itoa(rand.IntN(1e6))
		for {
			l, m := lc.next()
			if m["method"] == nil {
				if string(m["id"]) != id || string(m["result"]) != `{"salt":`+salt+`}` {
					t.Fatalf("round %d: answer: %.200q", round, l)
				}
				break
			}
			switch string(m["method"]) {
			case `"note"`:
				var p struct {
					I  int
					Of json.RawMessage
				}
				if err := json.Unmarshal(m["params"], &p); err != nil || p.I != next || string(p.Of) != id {
					t.Fatalf("round %d: note %d: %.200q", round, next, l)
				}
				next++
			case `"client/do"`:
				asks++
				lc.send(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"salt":` + salt + `}}`)
			default:
				t.Fatalf("round %d: %.200q", round, l)
			}
		}
		if next != n || asks != 1 {
			t.Fatalf("round %d: %d notes of %d, %d requests", round, next, n, asks)
		}
	}
}

// TestReview14StartedWhileGoroutineSends: Started asked on the handler's
// goroutine while a goroutine it started sends (Err and Live are safe
// there; Started reports what Send sets): no data race under -race.
func TestReview14StartedWhileGoroutineSends(t *testing.T) {
	ms := &Methods{}
	r12Stream(ms, "poll", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		done := make(chan error, 1)
		go func() {
			done <- st.Send([]byte(`{"jsonrpc":"2.0","method":"note","params":{"of":` + string(r.Msg.ID) + `}}`))
		}()
		started := false
		for deadline := time.Now().Add(2 * time.Second); !started && time.Now().Before(deadline); {
			started = st.Started()
			runtime.Gosched()
		}
		if err := <-done; err != nil {
			return dst, err
		}
		return append(dst, strconv.FormatBool(started)...), nil
	})
	rig := r12Rig(ms)
	lc := startLines(t, rig, context.Background(), nil, nil)
	for range 3 {
		id := randID()
		lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"poll"}`)
		if l, m := lc.next(); string(m["method"]) != `"note"` {
			t.Fatalf("event: %q", l)
		}
		if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != "true" {
			t.Fatalf("answer: %q", l)
		}
	}
}

// TestReview14CallAfterCut: a Call after Cut fails at once with
// ErrStreamClosed and writes no request; a Cut from another goroutine
// while a Call waits ends it at once (ErrStreamClosed); the response
// that comes after is refused, and the call is answered -32603.
func TestReview14CallAfterCut(t *testing.T) {
	ms := &Methods{}
	got := make(chan r14CallResult, 2)
	r12Stream(ms, "cutcall", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		st.Send([]byte(`{"jsonrpc":"2.0","method":"before"}`))
		st.Cut()
		start := time.Now()
		_, err := st.Call("client/do", nil)
		got <- r14CallResult{err: err, took: time.Since(start)}
		return append(dst, `"cut"`...), nil
	})
	r12Stream(ms, "cutwhile", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		go func() {
			time.Sleep(100 * time.Millisecond)
			st.Cut()
		}()
		start := time.Now()
		_, err := st.Call("client/do", nil)
		got <- r14CallResult{err: err, took: time.Since(start)}
		return append(dst, `"cut"`...), nil
	})
	r12Echo(ms)
	rig := r12Rig(ms)
	rig.cfg.ClientResponseTimeout = 4 * time.Second
	lc := startLines(t, rig, context.Background(), nil, nil)

	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"cutcall"}`)
	if l, m := lc.next(); string(m["method"]) != `"before"` {
		t.Fatalf("event: %q", l)
	}
	r := r14Result(t, got, 2*time.Second)
	if !errors.Is(r.err, ErrStreamClosed) || r.took > 500*time.Millisecond {
		t.Fatalf("a Call after Cut: %v after %v", r.err, r.took)
	}
	if l, m := lc.next(); string(m["id"]) != id || !strings.Contains(string(m["error"]), "-32603") {
		t.Fatalf("answer (a request written after Cut?): %q", l)
	}

	id = randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"cutwhile"}`)
	rid := string(lc.serverRequest())
	r = r14Result(t, got, 3*time.Second)
	if !errors.Is(r.err, ErrStreamClosed) || r.took > time.Second {
		t.Fatalf("a Call cut while it waits: %v after %v", r.err, r.took)
	}
	if l, m := lc.next(); string(m["id"]) != id || !strings.Contains(string(m["error"]), "-32603") {
		t.Fatalf("answer: %q", l)
	}
	lc.send(`{"jsonrpc":"2.0","id":` + rid + `,"result":{}}`)
	l, m := lc.next()
	r12Invalid(t, l, m, rid)
	e := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + e + `,"method":"echo","params":{}}`)
	if l, m := lc.next(); string(m["id"]) != e {
		t.Fatalf("answer: %q", l)
	}
}

// TestReview14SetDeadlineLines: SetDeadline on a stream of messages moves
// the call's deadline: later than HandlerTimeout, a Call answered after
// HandlerTimeout succeeds; earlier, the Call ends at the new deadline.
func TestReview14SetDeadlineLines(t *testing.T) {
	ms := &Methods{}
	asked := make(chan r14CallResult, 4)
	var move atomic.Int64 // nanoseconds from the handler's start
	r12Stream(ms, "ask", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		st.SetDeadline(time.Now().Add(time.Duration(move.Load())))
		start := time.Now()
		res, err := st.Call("client/do", nil)
		asked <- r14CallResult{res, err, time.Since(start)}
		if err != nil {
			return dst, err
		}
		return append(dst, res...), nil
	})
	rig := r12Rig(ms)
	rig.cfg.HandlerTimeout = 200 * time.Millisecond
	rig.cfg.ClientResponseTimeout = 5 * time.Second
	lc := startLines(t, rig, context.Background(), nil, nil)

	move.Store(int64(900 * time.Millisecond))
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
	rid := string(lc.serverRequest())
	time.Sleep(400 * time.Millisecond) // past HandlerTimeout
	lc.send(`{"jsonrpc":"2.0","id":` + rid + `,"result":{"moved":true}}`)
	if r := r14Result(t, asked, 2*time.Second); r.err != nil {
		t.Fatalf("a Call within the moved deadline: %v after %v", r.err, r.took)
	}
	if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != `{"moved":true}` {
		t.Fatalf("answer: %q", l)
	}

	rig2 := r12Rig(ms)
	rig2.cfg.HandlerTimeout = 3 * time.Second
	rig2.cfg.ClientResponseTimeout = 5 * time.Second
	lc2 := startLines(t, rig2, context.Background(), nil, nil)
	move.Store(int64(60 * time.Millisecond))
	id = randID()
	lc2.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
	lc2.serverRequest()
	r := r14Result(t, asked, 3*time.Second)
	if !errors.Is(r.err, context.DeadlineExceeded) || r.took > time.Second {
		t.Fatalf("a Call past a deadline moved earlier: %v after %v", r.err, r.took)
	}
	if l, m := lc2.next(); string(m["id"]) != id || !strings.Contains(string(m["error"]), "-32603") {
		t.Fatalf("answer: %q", l)
	}
}

// TestReview14KeptStreamAfterReturn: a Stream kept past its handler's
// return: Err is ErrStreamClosed, Live false, Started true, Request non-nil,
// and its Context reports the call ended; SetDeadline and Cut through it
// do nothing to the requests the call serves next.
func TestReview14KeptStreamAfterReturn(t *testing.T) {
	ms := &Methods{}
	kept := make(chan *Stream, 1)
	r12Stream(ms, "keep", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"note"}`)); err != nil {
			return dst, err
		}
		kept <- st
		return append(dst, `"kept"`...), nil
	})
	type holding struct {
		st  *Stream
		ctx context.Context
	}
	held := make(chan holding, 1)
	holdGo := make(chan struct{})
	r12Stream(ms, "hold", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		held <- holding{st, st.Context()}
		<-holdGo
		select {
		case <-time.After(150 * time.Millisecond):
		case <-st.Context().Done():
			return dst, context.Cause(st.Context())
		}
		return append(dst, `"held"`...), nil
	})
	rig := r12Rig(ms)
	lc := startLines(t, rig, context.Background(), nil, nil)
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"keep"}`)
	lc.next()
	if l, m := lc.next(); string(m["id"]) != id {
		t.Fatalf("answer: %q", l)
	}
	st := <-kept
	if err := st.Err(); !errors.Is(err, ErrStreamClosed) {
		t.Errorf("Err after the handler returned: %v", err)
	}
	if st.Live() {
		t.Error("Live after the handler returned")
	}
	if !st.Started() {
		t.Error("Started is false though an event was sent")
	}
	if st.Request() == nil {
		t.Error("Request is nil")
	}
	if err := st.Context().Err(); err == nil {
		t.Errorf("the kept stream's Context reports no end after its handler returned (%T)", st.Context())
	}
	// The requests the same call serves next.
	same := false
	for i := 0; i < 6 && !same; i++ {
		hid := randID()
		lc.send(`{"jsonrpc":"2.0","id":` + hid + `,"method":"hold"}`)
		h := <-held
		same = h.st.c == st.c
		if same {
			if st.Context() == h.ctx {
				t.Errorf("the kept stream's Context is the context of request %s, which its call serves now", hid)
			}
			// (Request is the call's, which serves later requests: its
			// doc says so; only what the stream itself says is checked.)
			st.SetDeadline(time.Now().Add(-time.Second))
			st.Cut()
		}
		close(holdGo)
		if l, m := lc.next(); string(m["id"]) != hid || string(m["result"]) != `"held"` {
			t.Fatalf("request %s (on the kept stream's call: %v): %q", hid, same, l)
		}
		holdGo = make(chan struct{})
	}
	if !same {
		t.Fatal("no later request ran on the kept stream's call")
	}
}

// TestReview14LeftBehindReadsContext: a goroutine a handler left behind
// asks its Stream's Err and Context while later requests run on the same
// calls (Err is under the stream's lock; Context?): no data race under
// -race, and the Context never looks live.
func TestReview14LeftBehindReadsContext(t *testing.T) {
	ms := &Methods{}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var liveSeen, errLive atomic.Int64
	r12Stream(ms, "leave", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		returned := make(chan struct{})
		wg.Go(func() {
			<-returned
			for !stop.Load() {
				if st.Err() == nil {
					errLive.Add(1)
				}
				if st.Context().Err() == nil {
					liveSeen.Add(1)
				}
				runtime.Gosched()
			}
		})
		defer close(returned)
		return append(dst, `"left"`...), nil
	})
	r12Echo(ms)
	rig := r12Rig(ms)
	lc := startLines(t, rig, context.Background(), nil, nil)
	defer func() { stop.Store(true); wg.Wait() }()
	for range 2 {
		id := randID()
		lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"leave"}`)
		if l, m := lc.next(); string(m["id"]) != id {
			t.Fatalf("answer: %q", l)
		}
	}
	for i := range 30 {
		e := randID()
		lc.send(`{"jsonrpc":"2.0","id":` + e + `,"method":"echo","params":{"i":` + strconv.Itoa(i) + `}}`)
		if l, m := lc.next(); string(m["id"]) != e {
			t.Fatalf("answer: %q", l)
		}
	}
	stop.Store(true)
	wg.Wait()
	if n := errLive.Load(); n > 0 {
		t.Errorf("a goroutine left behind saw its stream live (Err nil) %d times after its handler returned", n)
	}
	if n := liveSeen.Load(); n > 0 {
		t.Errorf("a goroutine left behind saw its stream's Context live (Err nil) %d times after its handler returned", n)
	}
}

// r14GateWriter passes the first free writes; each later one waits for
// gate (blocked is told once, when the first waits).
type r14GateWriter struct {
	w       io.Writer
	free    int64
	n       atomic.Int64
	gate    chan struct{}
	blocked chan struct{}
	once    sync.Once
}

func (g *r14GateWriter) Write(p []byte) (int, error) {
	if g.n.Add(1) > g.free {
		select {
		case <-g.gate:
		default:
			g.once.Do(func() { close(g.blocked) })
			<-g.gate
		}
	}
	return g.w.Write(p)
}

// TestReview14PanicWhileSendBlocked: a handler panics while a goroutine
// it started is blocked in Send on a slow output: the panic's answer
// (-32603) waits for that event and follows it, the blocked Send
// completes, a Send after it fails, nothing deadlocks, and the stream
// goes on.
func TestReview14PanicWhileSendBlocked(t *testing.T) {
	ms := &Methods{}
	sent := make(chan error, 2)
	r12Stream(ms, "boom", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"first"}`)); err != nil {
			return dst, err
		}
		inSend := make(chan struct{})
		go func() {
			close(inSend)
			sent <- st.Send([]byte(`{"jsonrpc":"2.0","method":"big","params":{"of":` + string(r.Msg.ID) + `,"s":"` + strings.Repeat("z", 64<<10) + `"}}`))
			sent <- st.Send([]byte(`{"jsonrpc":"2.0","method":"after-panic"}`))
		}()
		<-inSend
		time.Sleep(50 * time.Millisecond) // the goroutine's Send is writing (blocked)
		panic("review14: boom beside a blocked Send")
	})
	r12Echo(ms)
	rig := r12Rig(ms)
	g := &r14GateWriter{free: 1, gate: make(chan struct{}), blocked: make(chan struct{})}
	lc := startLines(t, rig, context.Background(), nil, func(w io.Writer) io.Writer { g.w = w; return g })
	ids := r14Distinct(2)
	id, e := ids[0], ids[1]
	lc.send(`{"jsonrpc":"2.0","id":`+id+`,"method":"boom"}`, `{"jsonrpc":"2.0","id":`+e+`,"method":"echo","params":{}}`)
	if l, m := lc.next(); string(m["method"]) != `"first"` {
		t.Fatalf("event: %q", l)
	}
	select {
	case <-g.blocked:
	case <-time.After(ioTimeout):
		t.Fatal("no write blocked")
	}
	time.Sleep(150 * time.Millisecond) // the handler has panicked by now
	select {
	case err := <-sent:
		t.Fatalf("the blocked Send returned: %v", err)
	default:
	}
	close(g.gate)
	if l, m := lc.next(); string(m["method"]) != `"big"` || !strings.Contains(string(m["params"]), id) {
		t.Fatalf("want the blocked event, got %.200q", l)
	}
	if l, m := lc.next(); string(m["id"]) != id || !strings.Contains(string(m["error"]), "-32603") {
		t.Fatalf("the panic's answer: %.200q", l)
	}
	if l, m := lc.next(); string(m["id"]) != e {
		t.Fatalf("answer after the panic: %.200q", l)
	}
	for i, want := range []bool{true, false} {
		select {
		case err := <-sent:
			if (err == nil) != want || (!want && !errors.Is(err, ErrStreamClosed)) {
				t.Errorf("Send %d of the goroutine: %v", i, err)
			}
		case <-time.After(ioTimeout):
			t.Fatal("the goroutine's Send blocked")
		}
	}
	lc.none(50 * time.Millisecond)
}

// r14PanicWriter panics on the first write holding marker.
type r14PanicWriter struct {
	w      io.Writer
	marker string
	done   atomic.Bool
}

func (p *r14PanicWriter) Write(b []byte) (int, error) {
	if strings.Contains(string(b), p.marker) && p.done.CompareAndSwap(false, true) {
		panic("review14: the output panicked")
	}
	return p.w.Write(b)
}

// TestReview14WriterPanicsInSend: an output writer that panics while a
// handler's Send writes an event: the panic, which reaches the handler
// through Send, must not leave ServeLines hung (it may be answered as the
// handler's panic, or leave ServeLines as a panic): ServeLines ends, one
// way or another, within a few seconds.
func TestReview14WriterPanicsInSend(t *testing.T) {
	ms := &Methods{}
	r12Stream(ms, "send", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"note","params":{"m":"panic-here"}}`)); err != nil {
			return dst, err
		}
		return append(dst, `"sent"`...), nil
	})
	rig := r12Rig(ms)
	id := randID()
	in := `{"jsonrpc":"2.0","id":` + id + `,"method":"send"}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"send"}` + "\n"
	var out syncBuffer
	w := &r14PanicWriter{w: &out, marker: "panic-here"}
	ended := make(chan string, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				ended <- fmt.Sprint("panicked: ", v)
			}
		}()
		err := ServeLines(context.Background(), rig.ep, rig.cfg, strings.NewReader(in), w)
		ended <- fmt.Sprint("returned: ", err)
	}()
	select {
	case how := <-ended:
		t.Logf("ServeLines %s; output %q", how, out.String())
	case <-time.After(3 * time.Second):
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		where := "elsewhere"
		if strings.Contains(string(buf), "(*Stream).serveLines.func1") {
			where = "in serveLines' deferred wait for the events being sent"
		}
		t.Fatalf("ServeLines hung after its output panicked in a Send (blocked %s; output so far %q)", where, out.String())
	}
}

// r14ShortWriter writes only half of every third write, without an
// error (outside io.Writer's contract: bufio reports io.ErrShortWrite).
type r14ShortWriter struct {
	mu  sync.Mutex
	n   int
	buf strings.Builder
}

func (s *r14ShortWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.n%3 == 0 && len(p) > 1 {
		p = p[:len(p)/2]
	}
	return s.buf.Write(p)
}

// TestReview14ShortWrites: an output whose writes are sometimes short
// without an error: ServeLines ends with io.ErrShortWrite or serves
// everything; either way every line it completed is whole JSON, nothing
// follows a torn line, and nothing blocks.
func TestReview14ShortWrites(t *testing.T) {
	ms := &Methods{}
	r12Stream(ms, "notify", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		for i := range 6 {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"i":%d,"pad":"%s"}}`, i, strings.Repeat("q", rand.IntN(9000)))
			if err := st.Send([]byte(msg)); err != nil {
				return dst, err
			}
		}
		return append(dst, `"done"`...), nil
	})
	r12Echo(ms)
	rig := r12Rig(ms)
	for round := range 4 {
		var in strings.Builder
		for i := range 4 {
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%s,"method":"notify"}`+"\n", randID())
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"e-%d-%d","method":"echo","params":{}}`+"\n", round, i)
		}
		out := &r14ShortWriter{}
		done := make(chan error, 1)
		go func() { done <- ServeLines(context.Background(), rig.ep, rig.cfg, strings.NewReader(in.String()), out) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(ioTimeout):
			t.Fatal("ServeLines blocked on a short-writing output")
		}
		text := out.buf.String()
		whole := strings.Split(text, "\n")
		torn := whole[len(whole)-1]
		whole = whole[:len(whole)-1]
		for i, l := range whole {
			if !json.Valid([]byte(l)) {
				t.Fatalf("round %d: line %d of %d is not whole JSON (%v): %.120q", round, i, len(whole), err, l)
			}
		}
		if err == nil && (torn != "" || len(whole) != 4*(6+1)+4) {
			t.Fatalf("round %d: ServeLines returned nil with %d whole lines and a torn one %.80q", round, len(whole), torn)
		}
		if err != nil && !errors.Is(err, io.ErrShortWrite) {
			t.Fatalf("round %d: ServeLines: %v", round, err)
		}
	}
}

// r14FlakyWriter fails its failAt'th write (after writing half of it),
// passes the others.
type r14FlakyWriter struct {
	w      io.Writer
	n      atomic.Int64
	failAt int64
}

var errR14Flaky = errors.New("review14: flaky output")

func (f *r14FlakyWriter) Write(p []byte) (int, error) {
	if f.n.Add(1) == f.failAt {
		k, _ := f.w.Write(p[:len(p)/2])
		return k, errR14Flaky
	}
	return f.w.Write(p)
}

// TestReview14WriteFailsWhileCallWaits: the output fails once, on a
// handler's Send, while a goroutine of the handler waits in Call: the
// Call ends at once (ErrStreamClosed), not after ClientResponseTimeout,
// and ServeLines returns the write's error promptly.
func TestReview14WriteFailsWhileCallWaits(t *testing.T) {
	ms := &Methods{}
	calls := make(chan r14CallResult, 1)
	r12Stream(ms, "both", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		callDone := make(chan struct{})
		go func() {
			defer close(callDone)
			start := time.Now()
			b, err := st.Call("client/do", nil)
			calls <- r14CallResult{b, err, time.Since(start)}
		}()
		time.Sleep(50 * time.Millisecond) // the Call's request is written, the Call waits
		for i := range 3 {
			if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"note","params":{"i":` + strconv.Itoa(i) + `}}`)); err != nil {
				break
			}
		}
		<-callDone // the handler waits for its goroutine, as it should
		return append(dst, `"both"`...), nil
	})
	rig := r12Rig(ms)
	rig.cfg.ClientResponseTimeout = 4 * time.Second
	rig.cfg.HandlerTimeout = 4 * time.Second
	inR, inW := io.Pipe()
	defer inW.Close()
	var out syncBuffer
	w := &r14FlakyWriter{w: &out, failAt: 2 + int64(rand.IntN(2))} // the request is write 1; a note fails
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- ServeLines(context.Background(), rig.ep, rig.cfg, inR, w) }()
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":`+randID()+`,"method":"both"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	r := r14Result(t, calls, 3*time.Second)
	if !errors.Is(r.err, ErrStreamClosed) || r.took > 2*time.Second {
		t.Fatalf("the waiting Call: %v after %v", r.err, r.took)
	}
	select {
	case err := <-done:
		if !errors.Is(err, errR14Flaky) {
			t.Fatalf("ServeLines: %v", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("ServeLines did not return after its output failed")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
}

// r14ChunkReader returns the chunks sent on ch, each chunk's data with
// its error in the same Read (data and io.EOF together).
type r14ChunkReader struct {
	ch  chan r14Chunk
	cur []byte
	err error
}

type r14Chunk struct {
	data string
	err  error
}

func (r *r14ChunkReader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 && r.err == nil {
		c, ok := <-r.ch
		if !ok {
			return 0, io.EOF
		}
		r.cur, r.err = []byte(c.data), c.err
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	if len(r.cur) == 0 && r.err != nil {
		return n, r.err
	}
	return n, nil
}

// TestReview14ResponseWithEOF: the client's response is the last line of
// the input, returned by the same Read as io.EOF (with and without a
// final '\n', a request after it or not): the Call takes it, every
// request is answered, ServeLines returns nil.
func TestReview14ResponseWithEOF(t *testing.T) {
	ms := &Methods{}
	asked := make(chan r14CallResult, 4)
	r14Asker(ms, asked)
	r12Echo(ms)
	rig := r12Rig(ms)
	rig.cfg.ClientResponseTimeout = 4 * time.Second
	for round := range 8 {
		rd := &r14ChunkReader{ch: make(chan r14Chunk, 2)}
		lc := startLines(t, rig, context.Background(), rd, nil)
		ids := r14Distinct(2)
		a, e := ids[0], ids[1]
		rd.ch <- r14Chunk{data: `{"jsonrpc":"2.0","id":` + a + `,"method":"ask"}` + "\n"}
		ra := string(lc.serverRequest())
		text := "eof-" + strconv.Itoa(rand.IntN(1e6))
		last := `{"jsonrpc":"2.0","id":` + ra + `,"result":{"t":"` + text + `"}}`
		echo := round&2 != 0
		if echo {
			last += "\n" + `{"jsonrpc":"2.0","id":` + e + `,"method":"echo","params":{}}`
		}
		if round&1 == 0 {
			last += "\n"
		}
		rd.ch <- r14Chunk{data: last, err: io.EOF}
		r := r14Result(t, asked, 3*time.Second)
		if r.err != nil {
			t.Fatalf("round %d: Call: %v", round, r.err)
		}
		if l, m := lc.next(); string(m["id"]) != a || string(m["result"]) != `{"t":"`+text+`"}` {
			t.Fatalf("round %d: answer: %q", round, l)
		}
		if echo {
			if l, m := lc.next(); string(m["id"]) != e {
				t.Fatalf("round %d: answer: %q", round, l)
			}
		}
		select {
		case err := <-lc.done:
			if err != nil {
				t.Fatalf("round %d: ServeLines: %v", round, err)
			}
			lc.done <- nil
		case <-time.After(ioTimeout):
			t.Fatalf("round %d: ServeLines did not return", round)
		}
	}
}

// TestReview14ResponseAtTheCeiling: while a Call waits, a response line
// one byte over MaxBodyBytes (spanning the Framer's 32 KiB reads) is
// refused -32600 and not delivered; one of exactly MaxBodyBytes (with LF,
// or CRLF whose '\r' does not count) is delivered whole.
func TestReview14ResponseAtTheCeiling(t *testing.T) {
	ms := &Methods{}
	asked := make(chan r14CallResult, 4)
	r14Asker(ms, asked)
	rig := r12Rig(ms)
	ceil := 40000 + rand.IntN(3000)
	rig.cfg.MaxBodyBytes = int64(ceil)
	rig.cfg.ClientResponseTimeout = 4 * time.Second
	lc := startLines(t, rig, context.Background(), nil, nil)
	line := func(rid string, size int, tag string) string {
		head := `{"jsonrpc":"2.0","id":` + rid + `,"result":{"tag":"` + tag + `","pad":"`
		tail := `"}}`
		return head + strings.Repeat("x", size-len(head)-len(tail)) + tail
	}
	for round, crlf := range []bool{false, true} {
		a := randID()
		lc.send(`{"jsonrpc":"2.0","id":` + a + `,"method":"ask"}`)
		rid := string(lc.serverRequest())
		over := line(rid, ceil+1, "over")
		exact := line(rid, ceil, "exact")
		if len(over) != ceil+1 || len(exact) != ceil {
			t.Fatalf("test lines of %d and %d bytes", len(over), len(exact))
		}
		if crlf {
			over += "\r"
			exact += "\r"
		}
		lc.send(over)
		select {
		case r := <-asked:
			t.Fatalf("round %d: the Call ended on an over-long response: %.80s %v", round, r.res, r.err)
		case <-time.After(100 * time.Millisecond):
		}
		lc.send(exact)
		r := r14Result(t, asked, 2*time.Second)
		if r.err != nil {
			t.Fatalf("round %d: Call: %v", round, r.err)
		}
		want := strings.TrimSuffix(exact, "\r")
		want = want[strings.Index(want, `,"result":`)+len(`,"result":`) : len(want)-1]
		if string(r.res) != want {
			t.Fatalf("round %d: the Call's result (%d bytes, want %d): %.80s", round, len(r.res), len(want), r.res)
		}
		if l, m := lc.next(); string(m["id"]) != a || !strings.Contains(string(m["result"]), `"tag":"exact"`) {
			t.Fatalf("round %d: answer: %.120q", round, l)
		}
		l, m := lc.next()
		r12Invalid(t, l, m, rid)
	}
}

// TestReview14CallOutlivesHandler: a Call made from a goroutine of the
// handler's, waiting when the call's context ends (Cut, here) and the
// handler returns at once without waiting for it: the Call must fail
// (ErrStreamClosed) — never return a nil result with a nil error, which
// its caller takes for the client's answer.
func TestReview14CallOutlivesHandler(t *testing.T) {
	ms := &Methods{}
	calls := make(chan r14CallResult, 64)
	r12Stream(ms, "outlive", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		go func() {
			b, err := st.Call("client/do", nil)
			calls <- r14CallResult{res: b, err: err}
		}()
		time.Sleep(5 * time.Millisecond) // the Call's request is written, the Call waits
		st.Cut()
		return append(dst, `"cut"`...), nil
	})
	r12Echo(ms)
	rig := r12Rig(ms)
	rig.cfg.ClientResponseTimeout = 3 * time.Second
	lc := startLines(t, rig, context.Background(), nil, nil)
	var bad []string
	for round := range 20 {
		id := randID()
		lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"outlive"}`)
		lc.r14Until(id)
		r := r14Result(t, calls, 2*time.Second)
		if r.err == nil {
			bad = append(bad, fmt.Sprintf("round %d: result %q, error nil", round, r.res))
		} else if !errors.Is(r.err, ErrStreamClosed) {
			t.Errorf("round %d: Call: %v", round, r.err)
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of 20 Calls whose context was cut returned no error: %v", len(bad), bad)
	}
}
