package fastserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

// lineStreamRig serves, over ServeLines on pipes, methods whose answers
// stream:
//
//   - notify: sends params.n notifications "note" (the second with line
//     breaks between its tokens), then answers "done";
//   - ask: asks the client "client/do" (Stream.Call) and answers its
//     result, or {"err": the error's text};
//   - late: answers at once and leaves a goroutine that sends when
//     lateGo is closed, its error on lateErr;
//   - cut: sends one note, cuts the stream, then sends again and answers
//     that Send's error;
//   - misc: answers what Lines, Comment, Start and SendResult say, and
//     params read after ReleaseBody;
//   - stopping: waits for Stopping (at most ioTimeout), answers "stopped";
//   - boom: sends one note and panics;
//   - echo: a plain handler that answers its params.
type lineStreamRig struct {
	ep      *Endpoint
	cfg     Config
	lateGo  chan struct{}
	lateErr chan error
	asked   chan error // ask's Call error, nil on success
	// lag, when set, delays the return of every write to the output
	// after its bytes are on their way to the client.
	lag time.Duration
	cut chan string // what cut saw after Cut
}

func newLineStreamRig() *lineStreamRig {
	rig := &lineStreamRig{lateGo: make(chan struct{}), lateErr: make(chan error, 1), asked: make(chan error, 16), cut: make(chan string, 1)}
	ms := &Methods{}
	stream := func(name string, f func(r *Request, st *Stream, dst []byte) ([]byte, error)) {
		ms.HandleFunc(name, func(r *Request, dst []byte) ([]byte, error) {
			return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) { return f(r, st, dst) }))
		})
	}
	stream("notify", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		v, _ := decode.Lookup(r.Msg.Params, "n")
		n, _ := strconv.Atoi(string(v))
		for i := range n {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","method":"note","params":{"i":%d,"of":%s}}`, i, r.Msg.ID)
			if i == 1 {
				msg = fmt.Sprintf("{\"jsonrpc\":\"2.0\",\r\n\"method\":\"note\",\n \"params\":{\"i\":%d,\r\"of\":%s}}", i, r.Msg.ID)
			}
			if err := st.Send([]byte(msg)); err != nil {
				return dst, err
			}
		}
		return append(dst, `"done"`...), nil
	})
	stream("ask", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		res, err := st.Call("client/do", []byte(`{"q":`+string(r.Msg.ID)+`}`))
		rig.asked <- err
		if err != nil {
			return append(append(append(dst, `{"err":`...), decode.AppendString(nil, err.Error())...), '}'), nil
		}
		return append(dst, res...), nil
	})
	stream("late", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		go func() {
			<-rig.lateGo
			rig.lateErr <- st.Send([]byte(`{"jsonrpc":"2.0","method":"late"}`))
		}()
		return append(dst, `"early"`...), nil
	})
	stream("cut", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		if err := st.Send([]byte(`{"jsonrpc":"2.0","method":"before-cut"}`)); err != nil {
			return dst, err
		}
		st.Cut()
		err := st.Send([]byte(`{"jsonrpc":"2.0","method":"after-cut"}`))
		rig.cut <- fmt.Sprint(errors.Is(err, ErrStreamClosed), errors.Is(context.Cause(r.Context()), ErrStreamClosed))
		return append(dst, `"after the cut"`...), nil
	})
	stream("misc", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		st.ReleaseBody()
		got := fmt.Sprintf("%v %v %v %v %v %v %s", st.Lines(), st.Live(), st.Comment("keep-alive"), st.Start(), errors.Is(st.SendResult([]byte(`1`)), ErrStreamUnavailable), st.Stopping() != nil, string(r.Msg.Params))
		return decode.AppendString(dst, got), nil
	})
	stream("stopping", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		select {
		case <-st.Stopping():
			return append(dst, `"stopped"`...), nil
		case <-time.After(ioTimeout):
			return append(dst, `"not stopped"`...), nil
		}
	})
	stream("boom", func(r *Request, st *Stream, dst []byte) ([]byte, error) {
		st.Send([]byte(`{"jsonrpc":"2.0","method":"before-boom"}`))
		panic("boom")
	})
	ms.HandleFunc("echo", func(r *Request, dst []byte) ([]byte, error) {
		return append(dst, r.Msg.Params...), nil
	})
	rig.ep = testEndpoint(ms)
	rig.ep.Cancel = func(m *decode.Message) []byte {
		if string(m.Method) != "cancel" {
			return nil
		}
		id, _ := decode.Lookup(m.Params, "id")
		return id
	}
	rig.cfg = Config{Logger: slog.New(slog.DiscardHandler)}
	return rig
}

// lineClient is the client's side of a ServeLines run on pipes: it
// writes lines and reads the server's lines one at a time.
type lineClient struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan string
	done  chan error
}

func (rig *lineStreamRig) start(t *testing.T, ctx context.Context, out io.Writer) *lineClient {
	t.Helper()
	return startLines(t, rig, ctx, nil, func(w io.Writer) io.Writer {
		switch {
		case out != nil:
			return out
		case rig.lag > 0:
			return laggingWriter{w, rig.lag}
		}
		return w
	})
}

// startLines runs ServeLines for rig on pipes: the output writer wrapped
// by wrap (nil: none), and, when in is not nil, that reader as the input
// instead of a pipe (lc.in is then nil: send must not be used). The test's
// end closes the input, drains the output and waits for ServeLines.
func startLines(t *testing.T, rig *lineStreamRig, ctx context.Context, in io.Reader, wrap func(io.Writer) io.Writer) *lineClient {
	t.Helper()
	var inW *io.PipeWriter
	if in == nil {
		var inR *io.PipeReader
		inR, inW = io.Pipe()
		in = inR
	}
	outR, outW := io.Pipe()
	lc := &lineClient{t: t, in: inW, lines: make(chan string, 256), done: make(chan error, 1)}
	var w io.Writer = outW
	if wrap != nil {
		w = wrap(outW)
	}
	go func() {
		err := ServeLines(ctx, rig.ep, rig.cfg, in, w)
		outW.Close()
		lc.done <- err
	}()
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			lc.lines <- sc.Text()
		}
		close(lc.lines)
	}()
	t.Cleanup(func() {
		if inW != nil {
			inW.Close()
		}
		go io.Copy(io.Discard, outR) // a writer blocked on the output ends
		select {
		case <-lc.done:
		case <-time.After(ioTimeout):
			t.Error("ServeLines did not return after its input closed")
		}
	})
	return lc
}

// laggingWriter is a writer whose writes return lag after their bytes
// were taken.
type laggingWriter struct {
	w   io.Writer
	lag time.Duration
}

func (l laggingWriter) Write(p []byte) (int, error) {
	n, err := l.w.Write(p)
	time.Sleep(l.lag)
	return n, err
}

func (lc *lineClient) send(lines ...string) {
	lc.t.Helper()
	for _, l := range lines {
		if _, err := io.WriteString(lc.in, l+"\n"); err != nil {
			lc.t.Fatalf("write: %v", err)
		}
	}
}

// next returns the server's next line, decoded as a JSON object.
func (lc *lineClient) next() (string, map[string]json.RawMessage) {
	lc.t.Helper()
	select {
	case l, ok := <-lc.lines:
		if !ok {
			lc.t.Fatal("the output ended")
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			lc.t.Fatalf("line %q: %v", l, err)
		}
		return l, m
	case <-time.After(ioTimeout):
		lc.t.Fatalf("no line within %v", ioTimeout)
		return "", nil
	}
}

// none checks that no line comes within d.
func (lc *lineClient) none(d time.Duration) {
	lc.t.Helper()
	select {
	case l := <-lc.lines:
		lc.t.Fatalf("unexpected line %q", l)
	case <-time.After(d):
	}
}

func randID() string {
	if rand.IntN(2) == 0 {
		return strconv.Itoa(rand.IntN(1e9))
	}
	return strconv.Quote("s-" + strconv.Itoa(rand.IntN(1e9)))
}

// TestServeLinesStreamEvents: a streamed call's events are lines
// written before its answer, each one line (line breaks between tokens
// made spaces), and the calls after it are answered in order.
func TestServeLinesStreamEvents(t *testing.T) {
	rig := newLineStreamRig()
	lc := rig.start(t, context.Background(), nil)
	for range 3 {
		id, id2 := randID(), randID()
		n := 1 + rand.IntN(5)
		lc.send(`{"jsonrpc":"2.0","id":`+id+`,"method":"notify","params":{"n":`+strconv.Itoa(n)+`}}`,
			`{"jsonrpc":"2.0","id":`+id2+`,"method":"echo","params":{"after":`+id+`}}`)
		for i := range n {
			l, m := lc.next()
			if string(m["method"]) != `"note"` || strings.ContainsAny(l, "\r") {
				t.Fatalf("event %d: %q", i, l)
			}
			var p struct {
				I  int             `json:"i"`
				Of json.RawMessage `json:"of"`
			}
			json.Unmarshal(m["params"], &p)
			if p.I != i || string(p.Of) != id {
				t.Fatalf("event %d of %s: %q", i, id, l)
			}
		}
		if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != `"done"` {
			t.Fatalf("answer to %s: %q", id, l)
		}
		if l, m := lc.next(); string(m["id"]) != id2 || !strings.Contains(string(m["result"]), id) {
			t.Fatalf("answer to %s: %q", id2, l)
		}
	}
}

// TestServeLinesStreamCall: a request of the server's own is a line; the
// client's response line goes to the call that waits for it (not
// answered), also behind requests the client wrote before it; an error
// response is the call's *Error; a response nothing awaits is refused
// -32600 as over HTTP.
func TestServeLinesStreamCall(t *testing.T) {
	rig := newLineStreamRig()
	lc := rig.start(t, context.Background(), nil)
	ask := func(id string, answer func(reqID json.RawMessage) string, between ...string) (string, map[string]json.RawMessage) {
		t.Helper()
		lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
		l, m := lc.next()
		if string(m["method"]) != `"client/do"` || !strings.Contains(string(m["params"]), id) || len(m["id"]) < 3 || m["id"][0] != '"' {
			t.Fatalf("the server's request: %q", l)
		}
		lc.send(between...)
		lc.send(answer(m["id"]))
		return lc.next()
	}
	for range 3 {
		id, text := randID(), "t"+strconv.Itoa(rand.IntN(1e6))
		l, m := ask(id, func(rid json.RawMessage) string {
			return `{"jsonrpc":"2.0","id":` + string(rid) + `,"result":{"text":"` + text + `"}}`
		})
		if string(m["id"]) != id || string(m["result"]) != `{"text":"`+text+`"}` {
			t.Fatalf("answer: %q", l)
		}
		if err := <-rig.asked; err != nil {
			t.Fatalf("Call: %v", err)
		}
	}
	// An error response.
	id := randID()
	l, m := ask(id, func(rid json.RawMessage) string {
		return `{"jsonrpc":"2.0","id":` + string(rid) + `,"error":{"code":-32042,"message":"no way"}}`
	})
	if string(m["id"]) != id || !strings.Contains(string(m["result"]), "no way") {
		t.Fatalf("answer: %q", l)
	}
	if err := <-rig.asked; err == nil {
		t.Fatal("Call succeeded")
	}
	// The response behind two requests the client wrote before it: they
	// wait, in order, behind the call.
	id, e1, e2 := randID(), randID(), randID()
	var rid json.RawMessage
	l, m = ask(id, func(r json.RawMessage) string {
		rid = r
		return `{"jsonrpc":"2.0","id":` + string(r) + `,"result":{"ok":true}}`
	}, `{"jsonrpc":"2.0","id":`+e1+`,"method":"echo","params":[1]}`, `{"jsonrpc":"2.0","id":`+e2+`,"method":"echo","params":[2]}`)
	if string(m["id"]) != id || string(m["result"]) != `{"ok":true}` {
		t.Fatalf("answer: %q", l)
	}
	<-rig.asked
	for _, e := range []string{e1, e2} {
		if l, m := lc.next(); string(m["id"]) != e {
			t.Fatalf("want the answer to %s, got %q", e, l)
		}
	}
	// The same response again: nothing awaits it now. Refused with a
	// null id, so that a client cannot take the refusal for the answer
	// to a request of its own with that id.
	lc.send(`{"jsonrpc":"2.0","id":` + string(rid) + `,"result":{"ok":true}}`)
	if l, m := lc.next(); string(m["id"]) != "null" || !strings.Contains(string(m["error"]), `-32600`) {
		t.Fatalf("an unawaited response: %q", l)
	}
	// A bad line that is no response keeps its id in the refusal.
	bad := randID()
	lc.send(`{"jsonrpc":"1.0","id":` + bad + `,"method":"echo"}`)
	if l, m := lc.next(); string(m["id"]) != bad || !strings.Contains(string(m["error"]), `-32600`) {
		t.Fatalf("a refused request: %q", l)
	}
}

// TestServeLinesStreamCallEnds: a Call that gets no response fails
// after ClientResponseTimeout, and one whose request the client cancels
// ends at once with context.Canceled, unanswered.
func TestServeLinesStreamCallEnds(t *testing.T) {
	rig := newLineStreamRig()
	rig.cfg.ClientResponseTimeout = 200 * time.Millisecond
	lc := rig.start(t, context.Background(), nil)
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
	lc.next() // the request to the client
	if err := <-rig.asked; !errors.Is(err, ErrClientTimeout) {
		t.Fatalf("Call: %v, want ErrClientTimeout", err)
	}
	if l, m := lc.next(); string(m["id"]) != id || !strings.Contains(string(m["result"]), "did not answer") {
		t.Fatalf("answer: %q", l)
	}

	id = randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
	lc.next()
	lc.send(`{"jsonrpc":"2.0","method":"cancel","params":{"id":` + id + `}}`)
	select {
	case err := <-rig.asked:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Call: %v, want context.Canceled", err)
		}
	case <-time.After(150 * time.Millisecond):
		t.Fatal("the cancelled Call went on waiting")
	}
	next := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + next + `,"method":"echo","params":{}}`)
	if l, m := lc.next(); string(m["id"]) != next {
		t.Fatalf("the cancelled request was answered, or the next one was not: %q", l)
	}
}

// TestServeLinesStreamAfterReturn: a goroutine the handler left behind
// cannot send once the handler has returned; no line follows the
// answer.
func TestServeLinesStreamAfterReturn(t *testing.T) {
	rig := newLineStreamRig()
	lc := rig.start(t, context.Background(), nil)
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"late"}`)
	if l, m := lc.next(); string(m["id"]) != id {
		t.Fatalf("answer: %q", l)
	}
	close(rig.lateGo)
	if err := <-rig.lateErr; !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("a Send after the handler returned: %v", err)
	}
	lc.none(100 * time.Millisecond)
}

// TestServeLinesStreamCutMiscPanic: Cut ends the events and cancels the
// context (ErrStreamClosed), and the call is answered -32603 as one whose
// context ended (a request is answered on a stream of messages); the stream's other methods
// behave as Lines documents; a handler that panics after an event costs
// its request an internal error and the stream goes on.
func TestServeLinesStreamCutMiscPanic(t *testing.T) {
	rig := newLineStreamRig()
	ctx, cancel := context.WithCancel(context.Background()) // else Stopping is nil: never done
	defer cancel()
	lc := rig.start(t, ctx, nil)
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"cut"}`)
	if l, m := lc.next(); string(m["method"]) != `"before-cut"` {
		t.Fatalf("event: %q", l)
	}
	if l, m := lc.next(); string(m["id"]) != id || !strings.Contains(string(m["error"]), `-32603`) {
		t.Fatalf("answer: %q", l)
	}
	if got := <-rig.cut; got != "true true" {
		t.Fatalf("after Cut: Send failed with ErrStreamClosed, the context's cause ErrStreamClosed: %s", got)
	}

	id = randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"misc","params":{"k":` + id + `}}`)
	if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != strconv.Quote(`true true <nil> <nil> true true {"k":`+id+`}`) {
		t.Fatalf("answer: %q", l)
	}

	id = randID()
	lc.send(`{"jsonrpc":"2.0","id":`+id+`,"method":"boom"}`, `{"jsonrpc":"2.0","id":2,"method":"echo","params":[]}`)
	if l, m := lc.next(); string(m["method"]) != `"before-boom"` {
		t.Fatalf("event: %q", l)
	}
	if l, m := lc.next(); string(m["id"]) != id || !strings.Contains(string(m["error"]), `-32603`) {
		t.Fatalf("answer: %q", l)
	}
	if l, m := lc.next(); string(m["id"]) != "2" {
		t.Fatalf("answer after the panic: %q", l)
	}
}

// TestServeLinesStreamStopping: Stopping is closed when ServeLines'
// context is done; the call's answer is written.
func TestServeLinesStreamStopping(t *testing.T) {
	rig := newLineStreamRig()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lc := rig.start(t, ctx, nil)
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"stopping"}`)
	time.Sleep(50 * time.Millisecond)
	cancel()
	if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != `"stopped"` {
		t.Fatalf("answer: %q", l)
	}
}

// failAfter is a writer that fails every write after the first n.
type failAfter struct {
	n   int
	buf strings.Builder
}

var errBrokenOut = errors.New("broken output")

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errBrokenOut
	}
	f.n--
	return f.buf.Write(p)
}

// TestServeLinesStreamWriteFails: when the output fails, Send fails with
// ErrStreamClosed (and the write's error), and ServeLines returns it.
func TestServeLinesStreamWriteFails(t *testing.T) {
	rig := newLineStreamRig()
	var sent []error
	ms := &Methods{}
	ms.HandleFunc("notify", func(r *Request, dst []byte) ([]byte, error) {
		return r.Stream(dst, StreamHandlerFunc(func(st *Stream, dst []byte) ([]byte, error) {
			for range 3 {
				sent = append(sent, st.Send([]byte(`{"jsonrpc":"2.0","method":"note"}`)))
			}
			sent = append(sent, st.Context().Err())
			return append(dst, `"done"`...), nil
		}))
	})
	rig.ep = testEndpoint(ms)
	out := &failAfter{n: 1}
	err := ServeLines(context.Background(), rig.ep, rig.cfg, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"notify"}`+"\n"), out)
	if !errors.Is(err, errBrokenOut) {
		t.Fatalf("ServeLines: %v, want the output's error", err)
	}
	if len(sent) != 4 || sent[0] != nil || !errors.Is(sent[1], ErrStreamClosed) || !errors.Is(sent[1], errBrokenOut) ||
		!errors.Is(sent[2], ErrStreamClosed) || sent[3] == nil {
		t.Fatalf("Sends and the context: %v", sent)
	}
	if strings.Count(out.buf.String(), "\n") != 1 {
		t.Fatalf("output %q, want the one event", out.buf.String())
	}
}

// TestServeLinesStreamCallThenEOF: a response followed at once by the
// end of the input reaches the call that waits for it (reading ending
// does not win over a response read before it), and the answer is
// written before ServeLines returns. The output lags, so that the
// response and the end of the input are both read before the call
// starts waiting.
func TestServeLinesStreamCallThenEOF(t *testing.T) {
	for range 20 {
		rig := newLineStreamRig()
		rig.lag = 20 * time.Millisecond
		lc := rig.start(t, context.Background(), nil)
		id, text := randID(), "t"+strconv.Itoa(rand.IntN(1e6))
		lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
		_, m := lc.next()
		lc.send(`{"jsonrpc":"2.0","id":` + string(m["id"]) + `,"result":{"text":"` + text + `"}}`)
		lc.in.Close()
		if l, m := lc.next(); string(m["id"]) != id || string(m["result"]) != `{"text":"`+text+`"}` {
			t.Fatalf("answer: %q", l)
		}
		if err := <-lc.done; err != nil {
			t.Fatalf("ServeLines: %v", err)
		}
		lc.done <- nil // for the cleanup
	}
}

// TestServeLinesStreamCallInputEnds: a call waiting for a response when
// the input ends fails at once (no response can come), not after
// ClientResponseTimeout.
func TestServeLinesStreamCallInputEnds(t *testing.T) {
	rig := newLineStreamRig()
	lc := rig.start(t, context.Background(), nil)
	id := randID()
	lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ask"}`)
	lc.next()
	start := time.Now()
	lc.in.Close()
	if l, m := lc.next(); string(m["id"]) != id || !strings.Contains(string(m["result"]), "stopped reading") {
		t.Fatalf("answer: %q", l)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the call failed after %v", d)
	}
}

// TestServeLinesHook: Endpoint.Lines gets a send that writes a message
// of the server's own as one whole line between the answers, from
// another goroutine, while requests are served; its stop runs once
// before ServeLines returns, after which send fails; a panic in Lines
// costs the hook, not the stream.
func TestServeLinesHook(t *testing.T) {
	rig := newLineStreamRig()
	sendc := make(chan func([]byte) error, 1)
	stops := 0
	rig.ep.Lines = func(send func([]byte) error) func() {
		sendc <- send
		return func() { stops++ }
	}
	lc := rig.start(t, context.Background(), nil)
	send := <-sendc
	const n = 40
	sent := make(chan error, 1)
	go func() {
		for i := range n {
			if err := send([]byte(fmt.Sprintf("{\"jsonrpc\":\"2.0\",\r\n\"method\":\"tick\",\"params\":{\"n\":%d}}", i))); err != nil {
				sent <- err
				return
			}
		}
		sent <- nil
	}()
	ids := map[string]bool{}
	for range n {
		id := randID()
		ids[id] = true
		lc.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"echo","params":{"k":` + id + `}}`)
	}
	ticks, answers := 0, 0
	for ticks < n || answers < n {
		l, m := lc.next() // each line whole JSON, or next fails
		switch {
		case string(m["method"]) == `"tick"`:
			if want := fmt.Sprintf(`{"n":%d}`, ticks); string(m["params"]) != want {
				t.Fatalf("tick %d: %q", ticks, l)
			}
			ticks++
		case ids[string(m["id"])]:
			answers++
		default:
			t.Fatalf("line %q", l)
		}
	}
	if err := <-sent; err != nil {
		t.Fatalf("send: %v", err)
	}
	lc.in.Close()
	if err := <-lc.done; err != nil {
		t.Fatalf("ServeLines: %v", err)
	}
	lc.done <- nil // for the cleanup
	if stops != 1 {
		t.Errorf("stop ran %d times before ServeLines returned, want 1", stops)
	}
	if err := send([]byte(`{"jsonrpc":"2.0","method":"late"}`)); !errors.Is(err, ErrStreamClosed) {
		t.Errorf("send after ServeLines returned: %v", err)
	}

	// A panic in Lines: the stream is served without the hook.
	rig2 := newLineStreamRig()
	rig2.ep.Lines = func(func([]byte) error) func() { panic("hook") }
	lc2 := rig2.start(t, context.Background(), nil)
	id := randID()
	lc2.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"echo","params":{}}`)
	if l, m := lc2.next(); string(m["id"]) != id {
		t.Fatalf("after a panic in Lines: %q", l)
	}
}
