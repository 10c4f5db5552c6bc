package fastserver

import (
	"bufio"
	"bytes"
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

// Review 12: hostile clients and careless handlers on ServeLines'
// streamed answers (Stream in lines mode).

// r12Stream registers name on ms as a handler whose answer may stream.
func r12Stream(ms *Methods, name string, f func(r *Request, st *Stream, dst []byte) ([]byte, error)) {
	ms.HandleFunc(name, func(r *Request, dst []byte) ([]byte, error) {
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) { return f(r, st, dst) }))
	})
}

// r12Echo registers "echo": a plain handler that answers its params.
func r12Echo(ms *Methods) {
	ms.HandleFunc("echo", func(r *Request, dst []byte) ([]byte, error) {
		return append(dst, r.Msg.Params...), nil
	})
}

// r12Rig is a lineStreamRig serving ms instead of the rig's methods.
func r12Rig(ms *Methods) *lineStreamRig {
	rig := newLineStreamRig()
	rig.ep = testEndpoint(ms)
	return rig
}

// r12Invalid checks that l is a -32600 answer whose id is want or null.
func r12Invalid(t *testing.T, l string, m map[string]json.RawMessage, want string) {
	t.Helper()
	if !strings.Contains(string(m["error"]), "-32600") || (string(m["id"]) != want && string(m["id"]) != "null") {
		t.Fatalf("want -32600 for id %s, got %q", want, l)
	}
}

// r12Ask registers "ask": one Call "client/do" with params {"q": id},
// answering the result, or {"err": text}; the Call's error goes to asked.
func r12Ask(ms *Methods, asked chan error) {
	r12Stream(ms, "ask", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		res, err := st.Call("client/do", []byte(`{"q":`+string(r.Msg.ID)+`}`))
		asked <- err
		if err != nil {
			return append(append(append(dst, `{"err":`...), decode.AppendString(nil, err.Error())...), '}'), nil
		}
		return append(dst, res...), nil
	})
}

// serverRequest reads the server's request line "client/do" and returns
// its id.
func (lc *lineClient) serverRequest() json.RawMessage {
	lc.t.Helper()
	l, m := lc.next()
	if string(m["method"]) != `"client/do"` || len(m["id"]) < 3 || m["id"][0] != '"' {
		lc.t.Fatalf("want the server's request, got %q", l)
	}
	return m["id"]
}

// TestReview12ForgedResponses: responses that guess the server's ids,
// reuse the client's own request id, carry a number id, both result and
// error, no jsonrpc member, or an error that is not an error object, are
// refused -32600 in their turn and never reach the waiting Call, which
// takes the one proper response.
func TestReview12ForgedResponses(t *testing.T) {
	ms := &Methods{}
	asked := make(chan error, 4)
	r12Ask(ms, asked)
	r12Echo(ms)
	rig := r12Rig(ms)
	lc := rig.start(t, context.Background(), nil)

	// Guesses before any request of the server's own exists.
	guesses := []string{`"rpcedge-AAAAAAAAAAAAAAAAAAAAAA"`, `"rpcedge-` + strconv.Itoa(rand.IntN(1e9)) + `"`, `"rpcedge-"`}
	for _, g := range guesses {
		lc.send(`{"jsonrpc":"2.0","id":` + g + `,"result":{"stolen":true}}`)
	}
	for _, g := range guesses {
		l, m := lc.next()
		r12Invalid(t, l, m, g)
	}

	id := `"c-` + strconv.Itoa(rand.IntN(1e9)) + `"` // a string id, to collide with
	num := strconv.Itoa(1 + rand.IntN(1e6))
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
	rid := string(lc.serverRequest())
	text := "ok-" + strconv.Itoa(rand.IntN(1e6))
	forged := []struct{ line, id string }{
		{`{"jsonrpc":"2.0","id":` + id + `,"result":{"text":"forged-own-id"}}`, id},
		{`{"jsonrpc":"2.0","id":` + num + `,"result":{"text":"forged-number"}}`, num},
		{`{"jsonrpc":"2.0","id":` + rid + `,"result":{"text":"forged-both"},"error":{"code":1,"message":"m"}}`, rid},
		{`{"id":` + rid + `,"result":{"text":"forged-no-jsonrpc"}}`, rid},
		{`{"jsonrpc":"2.0","id":` + rid + `,"error":"forged-not-an-object"}`, rid},
		{`{"jsonrpc":"2.0","id":` + rid + `,"error":{"code":1.5,"message":"forged-fraction"}}`, rid},
		{`{"jsonrpc":"1.0","id":` + rid + `,"result":{"text":"forged-version"}}`, rid},
	}
	for _, f := range forged {
		lc.send(f.line)
	}
	lc.send(`{"jsonrpc":"2.0","id":` + rid + `,"result":{"text":"` + text + `"}}`)
	if err := <-asked; err != nil {
		t.Fatalf("Call: %v", err)
	}
	if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != `{"text":"`+text+`"}` {
		t.Fatalf("answer to %s: %q", id, l)
	}
	for _, f := range forged {
		l, m := lc.next()
		r12Invalid(t, l, m, f.id)
	}
	// The stream goes on.
	e := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + e + `,"method":"echo","params":{"v":` + e + `}}`)
	if l, m := lc.next(); string(m["id"]) != e || string(m["result"]) != `{"v":`+e+`}` {
		t.Fatalf("answer to %s: %q", e, l)
	}
}

// TestReview12OversizedResponse: a response longer than MaxBodyBytes is
// refused -32600 (not delivered), and the proper response behind it
// still reaches the Call.
func TestReview12OversizedResponse(t *testing.T) {
	ms := &Methods{}
	asked := make(chan error, 4)
	r12Ask(ms, asked)
	rig := r12Rig(ms)
	rig.cfg.MaxBodyBytes = 2048
	lc := rig.start(t, context.Background(), nil)
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
	rid := string(lc.serverRequest())
	big := strings.Repeat("x", 3000+rand.IntN(3000))
	lc.send(`{"jsonrpc":"2.0","id":` + rid + `,"result":{"text":"` + big + `"}}`)
	text := "small-" + strconv.Itoa(rand.IntN(1e6))
	lc.send(`{"jsonrpc":"2.0","id":` + rid + `,"result":{"text":"` + text + `"}}`)
	if err := <-asked; err != nil {
		t.Fatalf("Call: %v", err)
	}
	if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != `{"text":"`+text+`"}` {
		t.Fatalf("answer: %.200q", l)
	}
	if l, m := lc.next(); !strings.Contains(string(m["error"]), "-32600") {
		t.Fatalf("the oversized response: %.200q", l)
	}
}

// TestReview12PipelinedAhead: a client that writes 20+ requests before
// its response to a Call: the Call times out (ClientResponseTimeout),
// nothing deadlocks, every request is answered in order, and the late
// response is refused -32600 last.
func TestReview12PipelinedAhead(t *testing.T) {
	ms := &Methods{}
	asked := make(chan error, 4)
	r12Ask(ms, asked)
	r12Echo(ms)
	rig := r12Rig(ms)
	rig.cfg.ClientResponseTimeout = 300 * time.Millisecond
	lc := rig.start(t, context.Background(), nil)
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
	rid := string(lc.serverRequest())
	n := 20 + rand.IntN(6)
	ids := make([]string, n)
	var lines []string
	for i := range ids {
		ids[i] = `"p-` + strconv.Itoa(i) + `-` + strconv.Itoa(rand.IntN(1e6)) + `"`
		lines = append(lines, `{"jsonrpc":"2.0","id":`+ids[i]+`,"method":"echo","params":{"i":`+strconv.Itoa(i)+`}}`)
	}
	lines = append(lines, `{"jsonrpc":"2.0","id":`+rid+`,"result":{"late":true}}`)
	wrote := make(chan struct{})
	go func() { // the pipe blocks while the server reads no further
		defer close(wrote)
		for _, l := range lines {
			if _, err := io.WriteString(lc.in, l+"\n"); err != nil {
				return
			}
		}
	}()
	start := time.Now()
	select {
	case err := <-asked:
		if !errors.Is(err, ErrClientTimeout) {
			t.Fatalf("Call: %v, want ErrClientTimeout", err)
		}
	case <-time.After(ioTimeout):
		t.Fatal("the Call did not end: deadlock")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the Call took %v", d)
	}
	if l, m := lc.next(); string(m["id"]) != id || !strings.Contains(string(m["result"]), "did not answer") {
		t.Fatalf("answer to %s: %q", id, l)
	}
	for i, e := range ids {
		if l, m := lc.next(); string(m["id"]) != e || string(m["result"]) != `{"i":`+strconv.Itoa(i)+`}` {
			t.Fatalf("answer %d: want id %s, got %q", i, e, l)
		}
	}
	l, m := lc.next()
	r12Invalid(t, l, m, rid)
	<-wrote
}

// TestReview12ConcurrentSends: a handler whose goroutines Send at once
// (large and small messages, some with line breaks between tokens):
// every event is one whole line, each goroutine's in its order, all
// before the answer.
func TestReview12ConcurrentSends(t *testing.T) {
	const workers, each = 8, 30
	ms := &Methods{}
	r12Stream(ms, "fan", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for g := range workers {
			wg.Go(func() {
				for i := range each {
					pad := strings.Repeat("p", rand.IntN(9000)) // often past bufio's 4 KiB
					msg := fmt.Sprintf("{\"jsonrpc\":\"2.0\",\n\"method\":\"ev\",\r\n\"params\":{\"g\":%d,\"i\":%d,\"of\":%s,\"pad\":\"%s\"}}", g, i, r.Msg.ID, pad)
					if err := st.Send([]byte(msg)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			return dst, err
		}
		return append(dst, `"fanned"`...), nil
	})
	rig := r12Rig(ms)
	lc := rig.start(t, context.Background(), nil)
	for range 2 {
		id := randID()
		lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"fan"}`)
		next := make([]int, workers)
		for range workers * each {
			l, m := lc.next()
			var p struct {
				G, I int
				Of   json.RawMessage
				Pad  string
			}
			if err := json.Unmarshal(m["params"], &p); err != nil || string(m["method"]) != `"ev"` || string(p.Of) != id || p.G < 0 || p.G >= workers {
				t.Fatalf("event: %.300q (%v)", l, err)
			}
			if p.I != next[p.G] {
				t.Fatalf("goroutine %d: event %d, want %d", p.G, p.I, next[p.G])
			}
			next[p.G]++
		}
		if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != `"fanned"` {
			t.Fatalf("answer: %.300q", l)
		}
	}
}

// TestReview12SendAfterContextEnded: once the call's context has ended
// (HandlerTimeout), Send, Call and Comment fail and write nothing; the
// call is answered -32603.
func TestReview12SendAfterContextEnded(t *testing.T) {
	ms := &Methods{}
	got := make(chan []error, 1)
	r12Stream(ms, "slow", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		<-st.Context().Done()
		_, cerr := st.Call("client/do", nil)
		got <- []error{st.Send([]byte(`{"jsonrpc":"2.0","method":"too-late"}`)), cerr, st.Comment("x"), st.Err()}
		return append(dst, `"late"`...), nil
	})
	r12Echo(ms)
	rig := r12Rig(ms)
	rig.cfg.HandlerTimeout = 150 * time.Millisecond
	lc := rig.start(t, context.Background(), nil)
	id, e := randID(), randID()
	lc.send(`{"jsonrpc":"2.0","id":`+id+`,"method":"slow"}`, `{"jsonrpc":"2.0","id":`+e+`,"method":"echo","params":{}}`)
	if l, m := lc.next(); string(m["id"]) != id || !strings.Contains(string(m["error"]), "-32603") {
		t.Fatalf("answer: %q (an event after the context ended?)", l)
	}
	for i, err := range <-got {
		if err == nil {
			t.Errorf("call %d after the context ended succeeded", i)
		}
	}
	if l, m := lc.next(); string(m["id"]) != e {
		t.Fatalf("answer: %q", l)
	}
}

// TestReview12NestedStream: Request.Stream called from within its own
// StreamHandler, and again after it: the events in order, the outer
// stream still sends after the nested one returns, one answer.
func TestReview12NestedStream(t *testing.T) {
	ms := &Methods{}
	ms.HandleFunc("nest", func(r *Request, dst []byte) ([]byte, error) {
		send := func(st *Stream, name string) error {
			return st.Send([]byte(`{"jsonrpc":"2.0","method":"` + name + `","params":{"of":` + string(r.Msg.ID) + `}}`))
		}
		base := len(dst)
		dst, err := r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			if err := send(st, "outer-1"); err != nil {
				return dst, err
			}
			dst, err := r.Stream(dst, StreamHandlerFunc(func(in *Stream, dst []byte) ([]byte, error) {
				if err := send(in, "inner"); err != nil {
					return dst, err
				}
				return append(dst, `"inner"`...), nil
			}))
			if err != nil {
				return dst, err
			}
			if err := send(st, "outer-2"); err != nil {
				return dst, fmt.Errorf("outer Send after the nested stream: %w", err)
			}
			return dst, nil
		}))
		if err != nil {
			return dst, err
		}
		// A second stream, after the first ended: it runs too.
		dst = dst[:base]
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			if err := send(st, "second"); err != nil {
				return dst, err
			}
			return append(dst, `"second"`...), nil
		}))
	})
	rig := r12Rig(ms)
	lc := rig.start(t, context.Background(), nil)
	for range 2 {
		id := randID()
		lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"nest"}`)
		for _, want := range []string{"outer-1", "inner", "outer-2", "second"} {
			if l, m := lc.next(); string(m["method"]) != `"`+want+`"` || !strings.Contains(string(m["params"]), id) {
				t.Fatalf("want event %s, got %q", want, l)
			}
		}
		if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != `"second"` {
			t.Fatalf("answer: %q", l)
		}
	}
}

// TestReview12HugeAndInvalidSend: a 4 MiB event with line breaks between
// its tokens leaves as one whole line; a message that is not JSON (with a
// raw line break inside a string) still leaves as one line, and the
// answers after it stay framed.
func TestReview12HugeAndInvalidSend(t *testing.T) {
	ms := &Methods{}
	big := strings.Repeat("b", 4<<20)
	r12Stream(ms, "huge", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		msg := "{\"jsonrpc\":\"2.0\",\r\n\"method\":\"big\",\n\"params\":{\"of\":" + string(r.Msg.ID) + ",\n\"s\":\"" + big + "\"}}"
		if err := st.Send([]byte(msg)); err != nil {
			return dst, err
		}
		return append(dst, `"huge"`...), nil
	})
	r12Stream(ms, "bad", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		if err := st.Send([]byte("not json {\"a\":\"x\ny\r\nz\"")); err != nil {
			return append(dst, `"refused"`...), nil
		}
		return append(dst, `"bad"`...), nil
	})
	r12Echo(ms)
	rig := r12Rig(ms)
	id, id2, id3 := randID(), randID(), randID()
	in := `{"jsonrpc":"2.0","id":` + id + `,"method":"huge"}` + "\n" +
		`{"jsonrpc":"2.0","id":` + id2 + `,"method":"bad"}` + "\n" +
		`{"jsonrpc":"2.0","id":` + id3 + `,"method":"echo","params":{"n":3}}` + "\n"
	var out syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), ioTimeout)
	defer cancel()
	if err := ServeLines(ctx, rig.ep, rig.cfg, strings.NewReader(in), &out); err != nil {
		t.Fatalf("ServeLines: %v", err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want 5 (event, answer, bad event, answer, answer)", len(lines))
	}
	var ev struct {
		Method string
		Params struct {
			Of json.RawMessage
			S  string
		}
	}
	if err := json.Unmarshal([]byte(lines[0]), &ev); err != nil || ev.Method != "big" || string(ev.Params.Of) != id || ev.Params.S != big || strings.Contains(lines[0], "\r") {
		t.Fatalf("the huge event (%d bytes): %v", len(lines[0]), err)
	}
	for i, want := range []struct{ id, res string }{{id, `"huge"`}, {"", ""}, {id2, ""}, {id3, `{"n":3}`}} {
		l := lines[i+1]
		if want.id == "" {
			if strings.Contains(l, "\r") {
				t.Fatalf("line %d: %q", i+1, l)
			}
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil || string(m["id"]) != want.id || (want.res != "" && string(m["result"]) != want.res) {
			t.Fatalf("line %d: %q (%v)", i+1, l, err)
		}
	}
}

// TestReview12BufferTrimmedAfterHugeEvent: a stream that sent a 4 MiB
// event does not keep a 4 MiB buffer once its handler has returned (over
// HTTP, release drops event buffers over keepEventBuffer; a stream of
// messages' calls last as long as ServeLines, 18 of them).
func TestReview12BufferTrimmedAfterHugeEvent(t *testing.T) {
	ms := &Methods{}
	var mu sync.Mutex
	var streams []*Stream
	r12Stream(ms, "huge", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		mu.Lock()
		streams = append(streams, st)
		mu.Unlock()
		msg := `{"jsonrpc":"2.0","method":"big","params":{"s":"` + strings.Repeat("b", 4<<20) + `"}}`
		if err := st.Send([]byte(msg)); err != nil {
			return dst, err
		}
		return append(dst, `"huge"`...), nil
	})
	r12Stream(ms, "small", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"small"}`)); err != nil {
			return dst, err
		}
		return append(dst, `"small"`...), nil
	})
	rig := r12Rig(ms)
	var in strings.Builder
	for i := range 3 {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%s,"method":"huge"}`+"\n", randID())
		for j := range 3 {
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"s-%d-%d","method":"small"}`+"\n", i, j)
		}
	}
	if err := ServeLines(context.Background(), rig.ep, rig.cfg, strings.NewReader(in.String()), io.Discard); err != nil {
		t.Fatalf("ServeLines: %v", err)
	}
	if len(streams) != 3 {
		t.Fatalf("%d huge streams ran", len(streams))
	}
	for i, st := range streams {
		if c := cap(st.buf); c > keepEventBuffer {
			t.Errorf("stream %d keeps an event buffer of %d bytes after its handler returned (keepEventBuffer %d)", i, c, keepEventBuffer)
		}
	}
}

// TestReview12CutWhileSendBlocked: a Send blocked on a slow output does
// not block the handler's other goroutines: Err and Cut (which is how a
// handler drops a client too slow to read) return at once, and Cut
// cancels the call's context.
func TestReview12CutWhileSendBlocked(t *testing.T) {
	ms := &Methods{}
	sending := make(chan *Stream, 1)
	sent := make(chan error, 1)
	r12Stream(ms, "slow", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"first"}`)); err != nil {
			return dst, err
		}
		sending <- st
		err := st.Send([]byte(`{"jsonrpc":"2.0","method":"big","params":"` + strings.Repeat("s", 256<<10) + `"}`))
		sent <- err
		return append(dst, `"slow"`...), err
	})
	rig := r12Rig(ms)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	release := make(chan struct{})
	read := make(chan struct{})
	go func() { // a slow reader: the first line, then nothing until release
		defer close(read)
		br := bufio.NewReader(pr)
		br.ReadString('\n')
		select {
		case <-release:
		case <-time.After(3 * time.Second):
		}
		io.Copy(io.Discard, br)
	}()
	lc := rig.start(t, ctx, pw)
	defer func() {
		close(release)
		lc.in.Close()
		<-lc.done // ServeLines returned: the pipe's writer can be closed
		lc.done <- nil
		pw.Close()
		<-read
	}()
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"slow"}`)
	var st *Stream
	select {
	case st = <-sending:
	case <-time.After(ioTimeout):
		t.Fatal("the handler did not send")
	}
	time.Sleep(50 * time.Millisecond) // the second Send is writing now
	select {
	case err := <-sent:
		t.Fatalf("the big Send returned while no one read: %v", err)
	default:
	}
	probe := func(name string, f func()) {
		t.Helper()
		done := make(chan struct{})
		start := time.Now()
		go func() { f(); close(done) }()
		select {
		case <-done:
		case <-time.After(300 * time.Millisecond):
			t.Errorf("%s blocked for over %v while a Send waits on the output", name, time.Since(start).Round(time.Millisecond))
		}
	}
	probe("Stream.Err", func() { st.Err() })
	cutDone := make(chan struct{})
	probe("Stream.Cut", func() { st.Cut(); close(cutDone) })
	select {
	case <-cutDone:
		if cause := context.Cause(st.Context()); !errors.Is(cause, ErrStreamClosed) {
			t.Errorf("after Cut the context's cause is %v", cause)
		}
	default:
	}
}

// TestReview12CancelWhileCallWaits: when ServeLines' context is done
// while a Call waits for the client's response, reading has stopped (no
// response can come): the Call ends at once, the call is answered, and
// ServeLines returns — not a ClientResponseTimeout later (contract §6:
// the message being handled is answered and the process exits within
// the grace period).
func TestReview12CancelWhileCallWaits(t *testing.T) {
	ms := &Methods{}
	asked := make(chan error, 4)
	r12Ask(ms, asked)
	rig := r12Rig(ms)
	rig.cfg.ClientResponseTimeout = 2 * time.Second
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lc := rig.start(t, ctx, nil)
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
	rid := string(lc.serverRequest())
	start := time.Now()
	cancel()
	go io.WriteString(lc.in, `{"jsonrpc":"2.0","id":`+rid+`,"result":{"after":"cancel"}}`+"\n") // may never be read
	var callErr error
	select {
	case callErr = <-asked:
	case <-time.After(ioTimeout):
		t.Fatal("the Call did not end")
	}
	took := time.Since(start)
	l, m := lc.next()
	if string(m["id"]) != id {
		t.Fatalf("answer: %q", l)
	}
	if took > time.Second {
		t.Errorf("the Call went on waiting %v after ServeLines' context was done (ended with %v)", took.Round(time.Millisecond), callErr)
	}
}

// TestReview12ResponseAfterCancel: the response to a Call whose request
// the client cancelled is refused -32600 (or dropped), never taken by the
// next Call.
func TestReview12ResponseAfterCancel(t *testing.T) {
	ms := &Methods{}
	asked := make(chan error, 4)
	r12Ask(ms, asked)
	rig := r12Rig(ms)
	rig.ep.Cancel = func(m *decode.Message) []byte {
		if string(m.Method) != "notifications/cancelled" {
			return nil
		}
		id, _ := decode.Lookup(m.Params, "requestId")
		return id
	}
	lc := rig.start(t, context.Background(), nil)
	for range 3 {
		a, b := randID(), randID()
		for a == b {
			b = randID()
		}
		lc.send(`{"jsonrpc":"2.0","id":` + a + `,"method":"ask"}`)
		ra := string(lc.serverRequest())
		lc.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":` + a + `}}`)
		if err := <-asked; !errors.Is(err, context.Canceled) {
			t.Fatalf("the cancelled Call: %v", err)
		}
		lc.send(`{"jsonrpc":"2.0","id":` + b + `,"method":"ask"}`)
		rb := string(lc.serverRequest())
		if ra == rb {
			t.Fatalf("the server reused its id %s", ra)
		}
		lc.send(`{"jsonrpc":"2.0","id":` + ra + `,"result":{"for":"a"}}`)
		time.Sleep(20 * time.Millisecond)
		lc.send(`{"jsonrpc":"2.0","id":` + rb + `,"result":{"for":"b"}}`)
		if err := <-asked; err != nil {
			t.Fatalf("Call b: %v", err)
		}
		if l, m := lc.next(); string(m["id"]) != b || string(m["result"]) != `{"for":"b"}` {
			t.Fatalf("answer to %s: %q", b, l)
		}
		l, m := lc.next()
		r12Invalid(t, l, m, ra)
	}
}

// TestReview12Metrics: rpcedge_stream_events_total counts the events
// written (a failed Send not), rpcedge_streams_total the streams that
// sent one, whatever their end (a panic, a Cut).
func TestReview12Metrics(t *testing.T) {
	ms := &Methods{}
	var srv *Server
	keep := func(st *Stream) { srv = st.c.s } // the serving goroutine's
	r12Stream(ms, "n", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		keep(st)
		v, _ := decode.Lookup(r.Msg.Params, "n")
		n, _ := strconv.Atoi(string(v))
		for range n {
			if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"note"}`)); err != nil {
				return dst, err
			}
		}
		return append(dst, `"n"`...), nil
	})
	r12Stream(ms, "boom", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		keep(st)
		st.Send([]byte(`{"jsonrpc":"2.0","method":"note"}`))
		panic("review12")
	})
	r12Stream(ms, "cut", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		keep(st)
		st.Send([]byte(`{"jsonrpc":"2.0","method":"note"}`))
		st.Cut()
		st.Send([]byte(`{"jsonrpc":"2.0","method":"not counted"}`))
		return append(dst, `"cut"`...), nil
	})
	rig := r12Rig(ms)
	n1, n2 := 1+rand.IntN(5), rand.IntN(4)
	in := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"n","params":{"n":%d}}`+"\n", randID(), n1) +
		`{"jsonrpc":"2.0","id":` + randID() + `,"method":"n","params":{"n":0}}` + "\n" +
		`{"jsonrpc":"2.0","id":` + randID() + `,"method":"boom"}` + "\n" +
		`{"jsonrpc":"2.0","id":` + randID() + `,"method":"cut"}` + "\n" +
		fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"n","params":{"n":%d}}`+"\n", randID(), n2)
	if err := ServeLines(context.Background(), rig.ep, rig.cfg, strings.NewReader(in), io.Discard); err != nil {
		t.Fatalf("ServeLines: %v", err)
	}
	started := 3
	if n2 > 0 {
		started++
	}
	if got := srv.metrics.streamEvents.Get(); got != uint64(n1+2+n2) {
		t.Errorf("rpcedge_stream_events_total %d, want %d", got, n1+2+n2)
	}
	if got := srv.metrics.streamsStarted.Get(); got != uint64(started) {
		t.Errorf("rpcedge_streams_total %d, want %d", got, started)
	}
	if got := srv.streams.Load(); got != 0 {
		t.Errorf("rpcedge_streams_open %d after the streams ended", got)
	}
}

// TestReview12LeftBehindOnReusedStream: a goroutine a handler left
// behind (Stream's doc forbids it; ServeLines' comment says it fails
// instead) cannot write once its handler has returned, even while the
// Stream, pooled with its call, serves a later request.
func TestReview12LeftBehindOnReusedStream(t *testing.T) {
	ms := &Methods{}
	gate := make(chan struct{})
	var lateMu sync.Mutex
	var late []*Stream
	errs := make(chan error, 64) // 5 rounds of 6 at most
	r12Stream(ms, "leave", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		lateMu.Lock()
		late = append(late, st)
		lateMu.Unlock()
		msg := []byte(`{"jsonrpc":"2.0","method":"left-behind","params":{"of":` + string(r.Msg.ID) + `}}`)
		go func() {
			<-gate
			errs <- st.Send(msg)
		}()
		return append(dst, `"left"`...), nil
	})
	held := make(chan *Stream, 1)
	holdGo := make(chan struct{}, 1)
	r12Stream(ms, "hold", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		held <- st
		<-holdGo
		return append(dst, `"held"`...), nil
	})
	rig := r12Rig(ms)
	lc := rig.start(t, context.Background(), nil)
	// Requests that leave a goroutine behind, then one that holds its
	// stream open while they all try to send. (Before each run got a
	// Stream of its own, the pooled call's Stream served the held request
	// too, and the left-behind Sends wrote into its stream.)
	for range 6 {
		id := randID()
		lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"leave"}`)
		if l, m := lc.next(); string(m["id"]) != id {
			t.Fatalf("answer: %q", l)
		}
	}
	hid := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + hid + `,"method":"hold"}`)
	hst := <-held
	shared := 0
	lateMu.Lock()
	for _, st := range late {
		if st == hst {
			shared++
		}
	}
	lateMu.Unlock()
	lateMu.Lock()
	n := len(late)
	lateMu.Unlock()
	close(gate)
	var ok int
	for range n {
		select {
		case err := <-errs:
			if err == nil {
				ok++
			} else if !errors.Is(err, ErrStreamClosed) {
				t.Errorf("a left-behind Send: %v, want ErrStreamClosed", err)
			}
		case <-time.After(ioTimeout):
			t.Fatal("a left-behind Send blocked")
		}
	}
	holdGo <- struct{}{}
	if ok > 0 {
		t.Errorf("%d of %d Sends left behind by earlier handlers succeeded (%d share the Stream now serving %s)", ok, n, shared, hid)
	}
	for {
		l, m := lc.next()
		if string(m["id"]) == hid {
			break
		}
		t.Errorf("a line written into request %s's stream by an earlier handler's goroutine: %q", hid, l)
	}
}

// TestReview12SendRacingReturn: a goroutine still sending while its
// handler returns (a careless handler; ServeLines' comment says it fails
// instead): no crash, under -race no data race, no event after the
// answer. Each handler first waits for the previous one's sender, so
// that none reaches a later use of a pooled Stream (see
// TestReview12LeftBehindOnReusedStream).
func TestReview12SendRacingReturn(t *testing.T) {
	ms := &Methods{}
	var wg sync.WaitGroup
	var panicked atomic.Value
	r12Stream(ms, "race", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		wg.Wait()
		msg := []byte(`{"jsonrpc":"2.0","method":"spam","params":{"of":` + string(r.Msg.ID) + `}}`)
		started := make(chan struct{})
		once := sync.OnceFunc(func() { close(started) })
		wg.Go(func() {
			defer func() {
				if v := recover(); v != nil {
					panicked.CompareAndSwap(nil, fmt.Sprint(v))
				}
			}()
			defer once()
			for range 2000 {
				if st.Send(msg) != nil {
					return
				}
				once()
			}
		})
		<-started
		for range rand.IntN(64) {
			runtime.Gosched()
		}
		return append(dst, `"raced"`...), nil
	})
	rig := r12Rig(ms)
	end := time.Now().Add(1500 * time.Millisecond)
	for round := 0; time.Now().Before(end) && panicked.Load() == nil; round++ {
		var out syncBuffer
		var in strings.Builder
		const n = 50
		for i := range n {
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"r-%d-%d-%d","method":"race"}`+"\n", round, i, rand.IntN(1e6))
		}
		if err := ServeLines(context.Background(), rig.ep, rig.cfg, strings.NewReader(in.String()), &out); err != nil {
			t.Fatalf("ServeLines: %v", err)
		}
		wg.Wait()
		answered := map[string]bool{}
		for l := range strings.SplitSeq(strings.TrimSuffix(out.String(), "\n"), "\n") {
			var m map[string]json.RawMessage
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			if m["method"] != nil {
				var p struct{ Of json.RawMessage }
				json.Unmarshal(m["params"], &p)
				if answered[string(p.Of)] {
					t.Fatalf("an event of %s after its answer: %q", p.Of, l)
				}
				continue
			}
			answered[string(m["id"])] = true
		}
		if len(answered) != n {
			t.Fatalf("%d answers, want %d", len(answered), n)
		}
	}
	if v := panicked.Load(); v != nil {
		t.Fatalf("a Send racing its handler's return panicked: %v", v)
	}
}

// TestReview12ConcurrentCalls: Calls made at once from several of the
// handler's goroutines, answered by the client in the reverse order, each
// get their own response.
func TestReview12ConcurrentCalls(t *testing.T) {
	const k = 5
	ms := &Methods{}
	r12Stream(ms, "multi", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		res := make([][]byte, k)
		errs := make([]error, k)
		var wg sync.WaitGroup
		for i := range k {
			wg.Go(func() {
				res[i], errs[i] = st.Call("client/do", []byte(`{"k":`+strconv.Itoa(i)+`}`))
			})
		}
		wg.Wait()
		dst = append(dst, '[')
		for i := range k {
			if i > 0 {
				dst = append(dst, ',')
			}
			if errs[i] != nil {
				dst = decode.AppendString(dst, errs[i].Error())
				continue
			}
			dst = append(dst, res[i]...)
		}
		return append(dst, ']'), nil
	})
	rig := r12Rig(ms)
	lc := rig.start(t, context.Background(), nil)
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"multi"}`)
	type req struct{ id, k string }
	var reqs []req
	for range k {
		l, m := lc.next()
		k, _ := decode.Lookup(m["params"], "k")
		if string(m["method"]) != `"client/do"` || k == nil {
			t.Fatalf("the server's request: %q", l)
		}
		reqs = append(reqs, req{string(m["id"]), string(k)})
	}
	salt := strconv.Itoa(rand.IntN(1e6))
	for i := len(reqs) - 1; i >= 0; i-- {
		lc.send(`{"jsonrpc":"2.0","id":` + reqs[i].id + `,"result":{"k":` + reqs[i].k + `,"salt":` + salt + `}}`)
	}
	var want bytes.Buffer
	want.WriteByte('[')
	for i := range k {
		if i > 0 {
			want.WriteByte(',')
		}
		fmt.Fprintf(&want, `{"k":%d,"salt":%s}`, i, salt)
	}
	want.WriteByte(']')
	if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != want.String() {
		t.Fatalf("answer: %q, want result %s", l, want.String())
	}
}
