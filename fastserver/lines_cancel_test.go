package fastserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

// cancelRig is a stream endpoint with a Cancel hook (a notification
// "cancel" names its target in params.id) and methods that wait:
//
//   - block: waits for its context to end (at most ioTimeout) and sends
//     the error it saw on ended;
//   - hold: waits for release, whatever its context;
//   - echo: answers its params, counting the calls per id in ran.
type cancelRig struct {
	ep        *Endpoint
	started   chan string // the id of each block or hold call as it starts
	ended     chan error  // block's context error
	release   chan struct{}
	hookRuns  chan []byte // every id the hook returned
	ran       atomic.Int64
	checkGate chan struct{} // when not nil, Check of "gated" waits on it
	logs      syncBuffer    // the server's log
}

func newCancelRig() *cancelRig {
	rig := &cancelRig{
		started:  make(chan string, 64),
		ended:    make(chan error, 64),
		release:  make(chan struct{}),
		hookRuns: make(chan []byte, 4096),
	}
	ms := &Methods{}
	ms.HandleFunc("block", func(r *Request, dst []byte) ([]byte, error) {
		rig.started <- string(r.Msg.ID)
		select {
		case <-r.Context().Done():
			rig.ended <- r.Context().Err()
		case <-time.After(ioTimeout):
			rig.ended <- errors.New("the context did not end")
		}
		return append(dst, `"unblocked"`...), nil
	})
	ms.HandleFunc("gated", func(r *Request, dst []byte) ([]byte, error) {
		rig.ended <- r.Context().Err() // at once: nil unless already cancelled
		return append(dst, `"gated"`...), nil
	})
	ms.HandleFunc("hold", func(r *Request, dst []byte) ([]byte, error) {
		rig.started <- string(r.Msg.ID)
		<-rig.release
		return append(dst, `"held"`...), nil
	})
	ms.HandleFunc("echo", func(r *Request, dst []byte) ([]byte, error) {
		rig.ran.Add(1)
		return append(dst, r.Msg.Params...), nil
	})
	ep := testEndpoint(ms)
	check := ep.Check
	ep.Check = func(r *Request) *Error {
		if string(r.Msg.Method) == "gated" && rig.checkGate != nil {
			rig.started <- string(r.Msg.ID)
			<-rig.checkGate
		}
		return check(r)
	}
	ep.Cancel = func(m *decode.Message) []byte {
		if string(m.Method) != "cancel" {
			return nil
		}
		id, n := decode.Lookup(m.Params, "id")
		if n != 1 {
			return nil
		}
		rig.hookRuns <- id
		return id
	}
	rig.ep = ep
	return rig
}

// serve runs ServeLines on a pipe; it returns the pipe's writing end,
// the output, and a channel with ServeLines' result.
func (rig *cancelRig) serve(t *testing.T) (io.WriteCloser, *syncBuffer, chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	logger := slog.New(slog.NewTextHandler(&rig.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	go func() { done <- ServeLines(context.Background(), rig.ep, Config{Logger: logger}, inR, out) }()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-done:
		case <-time.After(ioTimeout):
			t.Error("ServeLines did not return after its input closed")
		}
	})
	return inW, out, done
}

func (rig *cancelRig) wait(t *testing.T, ch chan string, what string) string {
	t.Helper()
	select {
	case s := <-ch:
		return s
	case <-time.After(ioTimeout):
		t.Fatalf("%s: not within %v", what, ioTimeout)
		return ""
	}
}

// ids spells the same id the way the request and the cancellation do.
var cancelIDs = []struct{ req, cancel string }{
	{"7", "7"},
	{"-31", "-31"},
	{`"seven"`, `"seven"`},
	{`"s\u0065ven/é"`, `"seven\/\u00e9"`}, // one text, two spellings
	{`""`, `""`},
}

// A notification naming a running request ends its handler's context
// with context.Canceled, the request gets no answer, and the stream goes
// on: the next request is answered.
func TestServeLinesCancelRunning(t *testing.T) {
	for _, tc := range cancelIDs {
		t.Run(tc.req, func(t *testing.T) {
			rig := newCancelRig()
			in, out, _ := rig.serve(t)
			next := rand.IntN(1 << 30)
			fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%s,"method":"block"}`+"\n", tc.req)
			if got := rig.wait(t, rig.started, "block"); got != tc.req {
				t.Fatalf("started %s", got)
			}
			fmt.Fprintf(in, `{"jsonrpc":"2.0","method":"cancel","params":{"id":%s,"reason":"user"}}`+"\n", tc.cancel)
			select {
			case err := <-rig.ended:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("the handler's context: %v, want context.Canceled", err)
				}
			case <-time.After(ioTimeout):
				t.Fatal("the handler's context did not end")
			}
			fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"n":%d}}`+"\n", next, next)
			want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"n":%d}}`+"\n", next, next)
			waitOutput(t, out, want)
			if got := out.String(); got != want {
				t.Fatalf("output %q, want only %q: a cancelled request is not answered", got, want)
			}
			// Told as a cancellation, not as a handler that ran out of time.
			if logs := rig.logs.String(); !strings.Contains(logs, "request cancelled by the client") || strings.Contains(logs, "WARN") {
				t.Fatalf("logs:\n%s", logs)
			}
		})
	}
}

// A notification naming a request still waiting behind another: that
// request is never served nor answered; the others are, in order.
func TestServeLinesCancelQueued(t *testing.T) {
	rig := newCancelRig()
	in, out, _ := rig.serve(t)
	a, b, c := rand.IntN(1000), 1000+rand.IntN(1000), 2000+rand.IntN(1000)
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"hold"}`+"\n", a)
	rig.wait(t, rig.started, "hold")
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"v":"b"}}`+"\n", b)
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"v":"c"}}`+"\n", c)
	fmt.Fprintf(in, `{"jsonrpc":"2.0","method":"cancel","params":{"id":%d}}`+"\n", b)
	select {
	case <-rig.hookRuns:
	case <-time.After(ioTimeout):
		t.Fatal("the cancellation was not read while a call was being served")
	}
	close(rig.release)
	want := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":"held"}`+"\n"+`{"jsonrpc":"2.0","id":%d,"result":{"v":"c"}}`+"\n", a, c)
	waitOutput(t, out, want)
	if got := out.String(); got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	if n := rig.ran.Load(); n != 1 {
		t.Errorf("echo ran %d times, want 1: the cancelled request was served", n)
	}
}

// A cancellation that reaches a request between its dispatch and its
// handler (here: while its Check runs) still ends the handler's context,
// at once (invoke sees the flag once it has armed the context).
func TestServeLinesCancelBeforeHandler(t *testing.T) {
	rig := newCancelRig()
	rig.checkGate = make(chan struct{})
	in, out, _ := rig.serve(t)
	id := fmt.Sprintf(`"g%d"`, rand.IntN(1<<20))
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%s,"method":"gated"}`+"\n", id)
	rig.wait(t, rig.started, "gated's Check")
	fmt.Fprintf(in, `{"jsonrpc":"2.0","method":"cancel","params":{"id":%s}}`+"\n", id)
	select {
	case <-rig.hookRuns:
	case <-time.After(ioTimeout):
		t.Fatal("the cancellation was not read")
	}
	close(rig.checkGate)
	select {
	case err := <-rig.ended:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the handler started with its context %v, want context.Canceled", err)
		}
	case <-time.After(ioTimeout):
		t.Fatal("the handler did not run")
	}
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":1,"method":"echo","params":{}}`+"\n")
	want := `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"
	waitOutput(t, out, want)
	if got := out.String(); got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

// Cancellations that name nothing live cancel nothing: an id spelled
// otherwise (1.0 for 1, a number for a string), an id already answered,
// an id no request had, a notification the hook does not take, and one
// whose hook panics.
func TestServeLinesCancelNoMatch(t *testing.T) {
	rig := newCancelRig()
	cancel := rig.ep.Cancel
	rig.ep.Cancel = func(m *decode.Message) []byte {
		if string(m.Method) == "boom" {
			panic("the hook failed")
		}
		return cancel(m)
	}
	in, out, _ := rig.serve(t)
	var want strings.Builder
	for i, note := range []string{
		`{"jsonrpc":"2.0","method":"cancel","params":{"id":1.0}}`,
		`{"jsonrpc":"2.0","method":"cancel","params":{"id":"1"}}`,
		`{"jsonrpc":"2.0","method":"cancel","params":{"id":99}}`,
		`{"jsonrpc":"2.0","method":"cancel","params":{"id":1,"id":1}}`,
		`{"jsonrpc":"2.0","method":"other","params":{"id":1}}`,
		`{"jsonrpc":"2.0","method":"boom","params":{"id":1}}`,
	} {
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":1,"method":"block"}`+"\n")
		rig.wait(t, rig.started, "block")
		fmt.Fprintln(in, note)
		if note == `{"jsonrpc":"2.0","method":"cancel","params":{"id":1,"id":1}}` || strings.Contains(note, `"other"`) || strings.Contains(note, "boom") {
			time.Sleep(20 * time.Millisecond) // the hook saw it (no signal: it returns nil)
		} else {
			select {
			case <-rig.hookRuns:
			case <-time.After(ioTimeout):
				t.Fatalf("note %d not read", i)
			}
		}
		// Still running: a real cancellation ends it, the answer is dropped.
		select {
		case err := <-rig.ended:
			t.Fatalf("note %d %s ended the handler: %v", i, note, err)
		default:
		}
		fmt.Fprintf(in, `{"jsonrpc":"2.0","method":"cancel","params":{"id":1}}`+"\n")
		<-rig.ended
		fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"i":%d}}`+"\n", 100+i, i)
		fmt.Fprintf(&want, `{"jsonrpc":"2.0","id":%d,"result":{"i":%d}}`+"\n", 100+i, i)
		waitOutput(t, out, want.String())
	}
	// An answered request is not cancelled after the fact, and the next
	// request with its id is not either.
	fmt.Fprintf(in, `{"jsonrpc":"2.0","method":"cancel","params":{"id":100}}`+"\n")
	<-rig.hookRuns
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":100,"method":"echo","params":{"again":true}}`+"\n")
	want.WriteString(`{"jsonrpc":"2.0","id":100,"result":{"again":true}}` + "\n")
	waitOutput(t, out, want.String())
	if got := out.String(); got != want.String() {
		t.Fatalf("output %q, want %q", got, want.String())
	}
}

// Read-ahead is bounded: while a call is held, a client that keeps
// writing is read only so far (linesAhead waiting, one being read), then
// every line is answered, in order, once the call returns.
func TestServeLinesReadAheadBound(t *testing.T) {
	rig := newCancelRig()
	in, out, _ := rig.serve(t)
	fmt.Fprintf(in, `{"jsonrpc":"2.0","id":0,"method":"hold"}`+"\n")
	rig.wait(t, rig.started, "hold")
	const n = 200
	var written atomic.Int64
	go func() {
		for i := 1; i <= n; i++ {
			if _, err := fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"i":%d}}`+"\n", i, i); err != nil {
				return
			}
			written.Add(1)
		}
	}()
	// Wait until the writer stalls: the count stops moving.
	last := int64(-1)
	for end := time.Now().Add(ioTimeout); time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		w := written.Load()
		if w == last {
			break
		}
		last = w
	}
	// One pipe write per line, one Read per write: the lines taken are
	// the queue, the one being decoded, and at most one the Framer's
	// buffer holds (a pipe write completes when it is read).
	if w := written.Load(); w > linesAhead+2 || w < linesAhead {
		t.Errorf("%d lines taken while a call was held, want %d to %d", w, linesAhead, linesAhead+2)
	}
	close(rig.release)
	var want strings.Builder
	want.WriteString(`{"jsonrpc":"2.0","id":0,"result":"held"}` + "\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, `{"jsonrpc":"2.0","id":%d,"result":{"i":%d}}`+"\n", i, i)
	}
	waitOutput(t, out, want.String())
	if got := out.String(); got != want.String() {
		t.Fatalf("after the release: %d bytes, want %d", len(got), want.Len())
	}
}

// Requests and their cancellations interleaved as fast as the stream
// reads them (run with -race): every request is answered at most once,
// in order, and the stream ends cleanly; those cancelled before their
// turn never run.
func TestServeLinesCancelInterleaved(t *testing.T) {
	rig := newCancelRig()
	var in strings.Builder
	const n = 2000
	for i := range n {
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"i":%d}}`+"\n", i, i)
		if i%2 == 0 {
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","method":"cancel","params":{"id":%d}}`+"\n", i)
		}
	}
	var out syncBuffer
	if err := ServeLines(context.Background(), rig.ep, Config{Logger: quietLogger}, strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	prev := -1
	answered := 0
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		var id, i int
		if _, err := fmt.Sscanf(line, `{"jsonrpc":"2.0","id":%d,"result":{"i":%d}}`, &id, &i); err != nil || id != i {
			t.Fatalf("answer %q", line)
		}
		if id <= prev {
			t.Fatalf("answer %d after %d: out of order or twice", id, prev)
		}
		prev = id
		answered++
	}
	if ran := int(rig.ran.Load()); ran < answered || answered < n/2 {
		t.Fatalf("%d answered, %d ran, of %d (%d never cancelled)", answered, ran, n, n/2)
	}
	t.Logf("%d of %d answered, %d ran", answered, n, rig.ran.Load())
}

// waitOutput waits until out holds at least len(want) bytes.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	for end := time.Now().Add(ioTimeout); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if len(out.String()) >= len(want) {
			return
		}
	}
	t.Fatalf("output %q, want %q", out.String(), want)
}
