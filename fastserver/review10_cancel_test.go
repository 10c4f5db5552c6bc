package fastserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
)

// Review 10: a hostile client and a careless embedder against the
// stream's read-ahead and cancellation (lines.go) and the watchdog's
// look at a long handler's client (deadline.go, ErrClientGone).

// ---------------------------------------------------------------------
// ServeLines
// ---------------------------------------------------------------------

// r10Lines is a stream endpoint whose Cancel takes a notification
// "cancel" naming its target in params.id:
//
//   - block: waits for its context to end (or release, or ioTimeout)
//     and sends its context's error on ended;
//   - hold: waits for release whatever its context, then sends its
//     context's error on ended;
//   - echo: answers its params (counted in ran);
//   - probe: answers its params, counting in probeBad the calls whose
//     context had ended;
//   - boom: panics.
type r10Lines struct {
	ep       *Endpoint
	started  chan string
	ended    chan error
	release  chan struct{}
	relOnce  sync.Once
	hooked   chan string // ids the hook returned (dropped when full)
	hooks    atomic.Int64
	ran      atomic.Int64
	probeBad atomic.Int64
}

func newR10Lines() *r10Lines {
	x := &r10Lines{
		started: make(chan string, 64),
		ended:   make(chan error, 64),
		release: make(chan struct{}),
		hooked:  make(chan string, 256),
	}
	var ms Methods
	ms.HandleFunc("block", func(r *Request, dst []byte) ([]byte, error) {
		x.started <- string(r.Msg.ID)
		select {
		case <-r.Context().Done():
		case <-x.release:
		case <-time.After(ioTimeout):
		}
		x.ended <- r.Context().Err()
		return append(dst, `"blocked"`...), nil
	})
	ms.HandleFunc("hold", func(r *Request, dst []byte) ([]byte, error) {
		x.started <- string(r.Msg.ID)
		select {
		case <-x.release:
		case <-time.After(ioTimeout):
		}
		x.ended <- r.Context().Err()
		return append(dst, `"held"`...), nil
	})
	ms.HandleFunc("echo", func(r *Request, dst []byte) ([]byte, error) {
		x.ran.Add(1)
		return append(dst, r.Msg.Params...), nil
	})
	ms.HandleFunc("probe", func(r *Request, dst []byte) ([]byte, error) {
		runtime.Gosched()
		if r.Context().Err() != nil {
			x.probeBad.Add(1)
		}
		return append(dst, r.Msg.Params...), nil
	})
	ms.HandleFunc("boom", func(r *Request, dst []byte) ([]byte, error) {
		panic("review10: the handler failed")
	})
	ep := ms.Endpoint(pathRPC, decode.IDsJSONRPC)
	ep.Cancel = func(m *decode.Message) []byte {
		if string(m.Method) != "cancel" || m.ParamsType != decode.ParamsObject {
			return nil
		}
		id, n := decode.Lookup(m.Params, "id")
		if n != 1 {
			return nil
		}
		x.hooks.Add(1)
		select {
		case x.hooked <- string(id):
		default:
		}
		return id
	}
	x.ep = ep
	return x
}

func (x *r10Lines) let() { x.relOnce.Do(func() { close(x.release) }) }

// run serves x on a pipe under ctx; the pipe is closed and ServeLines
// awaited when the test ends.
func (x *r10Lines) run(t *testing.T, ctx context.Context, cfg Config) (*io.PipeWriter, *syncBuffer, chan error) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quietLogger
	}
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- ServeLines(ctx, x.ep, cfg, inR, out) }()
	t.Cleanup(func() {
		x.let()
		inW.CloseWithError(io.ErrClosedPipe)
		select {
		case err := <-done:
			done <- err
		case <-time.After(ioTimeout):
			t.Error("ServeLines did not return after its input closed")
		}
	})
	return inW, out, done
}

func r10Wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(ioTimeout):
		t.Fatalf("%s: not within %v", what, ioTimeout)
		var zero T
		return zero
	}
}

// r10Output waits until out holds want exactly (and fails if it holds
// more, or something else).
func r10Output(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	for end := time.Now().Add(ioTimeout); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if len(out.String()) >= len(want) {
			break
		}
	}
	time.Sleep(20 * time.Millisecond) // anything written past want
	if got := out.String(); got != want {
		t.Fatalf("output\n%s\nwant\n%s", got, want)
	}
}

// r10Settle waits until the goroutine count is back to at most base.
func r10Settle(t *testing.T, base int, what string) {
	t.Helper()
	n := 0
	for end := time.Now().Add(ioTimeout); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if n = runtime.NumGoroutine(); n <= base {
			return
		}
	}
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	t.Errorf("%s: %d goroutines, %d before\n%s", what, n, base, buf)
}

func r10Req(id any, method, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"method":%q,"params":%s}`+"\n", id, method, params)
}

func r10Cancel(id string) string {
	return `{"jsonrpc":"2.0","method":"cancel","params":{"id":` + id + `}}` + "\n"
}

// Two live requests with one id: a cancellation naming it cancels both,
// the running one (its context ends) and the queued one (never served),
// and neither is answered; a request with another id is.
func TestReview10LinesDuplicateIDCancelsBoth(t *testing.T) {
	x := newR10Lines()
	in, out, _ := x.run(t, context.Background(), Config{})
	io.WriteString(in, r10Req(1, "block", "{}"))
	r10Wait(t, x.started, "block")
	io.WriteString(in, r10Req(1, "echo", `{"dup":1}`))
	io.WriteString(in, r10Req(2, "echo", `{"other":2}`))
	io.WriteString(in, r10Cancel("1"))
	if err := r10Wait(t, x.ended, "block's end"); !errors.Is(err, context.Canceled) {
		t.Fatalf("block's context: %v, want context.Canceled", err)
	}
	r10Output(t, out, `{"jsonrpc":"2.0","id":2,"result":{"other":2}}`+"\n")
	if n := x.ran.Load(); n != 1 {
		t.Fatalf("echo ran %d times, want 1: the queued request with the cancelled id ran", n)
	}
}

// Lines that look like a cancellation but are no notification — one
// that is not JSON, one over the ceiling, a batch, a request (it has an
// id) — cancel nothing: the running request is answered, then each of
// them in its turn.
func TestReview10LinesCancelLookalikes(t *testing.T) {
	x := newR10Lines()
	in, out, _ := x.run(t, context.Background(), Config{MaxBodyBytes: 256})
	io.WriteString(in, r10Req(5, "block", "{}"))
	r10Wait(t, x.started, "block")
	lines := []string{
		`{"jsonrpc":"2.0","method":"cancel","params":{"id":5}` + "\n",                                           // no closing brace
		`{"jsonrpc":"2.0","method":"cancel","params":{"id":5,"pad":"` + strings.Repeat("p", 300) + `"}}` + "\n", // over the ceiling
		`[{"jsonrpc":"2.0","method":"cancel","params":{"id":5}}]` + "\n",                                        // a batch
		`{"jsonrpc":"2.0","id":9,"method":"cancel","params":{"id":5}}` + "\n",                                   // a request
	}
	for _, l := range lines {
		io.WriteString(in, l)
	}
	// A cancellation of nothing live: once the hook saw it, every line
	// before it was read.
	io.WriteString(in, r10Cancel("777"))
	if id := r10Wait(t, x.hooked, "the sentinel"); id != "777" {
		t.Fatalf("the hook returned %s first: a lookalike reached it", id)
	}
	select {
	case err := <-x.ended:
		t.Fatalf("a lookalike ended the running handler: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	x.let()
	if err := r10Wait(t, x.ended, "block's end"); err != nil {
		t.Fatalf("block's context: %v", err)
	}
	for end := time.Now().Add(ioTimeout); strings.Count(out.String(), "\n") < 5 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != 5 {
		t.Fatalf("%d answers, want 5:\n%s", len(got), out.String())
	}
	if got[0] != `{"jsonrpc":"2.0","id":5,"result":"blocked"}` {
		t.Fatalf("first answer %s, want block's", got[0])
	}
	for i, code := range []string{"-32700", "-32600", "-32600", "-32601"} {
		if !strings.Contains(got[i+1], `"code":`+code) {
			t.Errorf("answer %d: %s, want code %s", i+2, got[i+1], code)
		}
	}
}

// A cancellation reaches only the requests read before it: the next
// request with the same id, which may well be decoded into the very call
// the cancelled one was (calls are recycled), is never cancelled by it.
// As fast as the stream reads (run with -race).
func TestReview10LinesCancelNeverHitsLaterOrRecycled(t *testing.T) {
	x := newR10Lines()
	const n = 600
	var in strings.Builder
	for i := range n {
		in.WriteString(r10Req(i, "echo", fmt.Sprintf(`{"e":%d}`, i)))
		in.WriteString(r10Cancel(strconv.Itoa(i)))
		in.WriteString(r10Req(i, "probe", fmt.Sprintf(`{"p":%d}`, i)))
	}
	var out syncBuffer
	if err := ServeLines(context.Background(), x.ep, Config{Logger: quietLogger}, strings.NewReader(in.String()), &out); err != nil {
		t.Fatal(err)
	}
	next := 0
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var id, v int
		if _, err := fmt.Sscanf(line, `{"jsonrpc":"2.0","id":%d,"result":{"p":%d}}`, &id, &v); err == nil {
			if id != next || v != next {
				t.Fatalf("probe answer %q, want probe %d", line, next)
			}
			next++
			continue
		}
		if _, err := fmt.Sscanf(line, `{"jsonrpc":"2.0","id":%d,"result":{"e":%d}}`, &id, &v); err != nil || id != v || id != next {
			t.Fatalf("answer %q (want echo %d or probe %d)", line, next, next)
		}
	}
	if next != n {
		t.Fatalf("%d probes answered, want %d: a cancellation hit a request read after it", next, n)
	}
	if bad := x.probeBad.Load(); bad != 0 {
		t.Fatalf("%d probes ran under a cancelled context", bad)
	}
	if h := x.hooks.Load(); h != n {
		t.Fatalf("the hook ran %d times, want %d", h, n)
	}
}

// A handler that ignores its context, cancelled: it runs to its end, its
// context says Canceled, its answer is dropped, the next is written.
func TestReview10LinesCancelIgnoredContext(t *testing.T) {
	x := newR10Lines()
	in, out, _ := x.run(t, context.Background(), Config{})
	io.WriteString(in, r10Req(`"h"`, "hold", "{}"))
	r10Wait(t, x.started, "hold")
	io.WriteString(in, r10Cancel(`"\u0068"`))
	r10Wait(t, x.hooked, "the hook")
	x.let()
	if err := r10Wait(t, x.ended, "hold's end"); !errors.Is(err, context.Canceled) {
		t.Fatalf("hold's context at its end: %v, want context.Canceled", err)
	}
	io.WriteString(in, r10Req(3, "echo", `{"n":3}`))
	r10Output(t, out, `{"jsonrpc":"2.0","id":3,"result":{"n":3}}`+"\n")
}

// A handler panics while others wait, one of them cancelled: the panic
// is answered -32603, the others in order, the cancelled one never.
func TestReview10LinesPanicWhileQueued(t *testing.T) {
	x := newR10Lines()
	in, out, _ := x.run(t, context.Background(), Config{})
	io.WriteString(in, r10Req(0, "hold", "{}"))
	r10Wait(t, x.started, "hold")
	io.WriteString(in, r10Req(1, "boom", "{}"))
	io.WriteString(in, r10Req(2, "echo", `{"n":2}`))
	io.WriteString(in, r10Req(3, "echo", `{"n":3}`))
	io.WriteString(in, r10Cancel("3"))
	io.WriteString(in, r10Req(4, "echo", `{"n":4}`))
	r10Wait(t, x.hooked, "the hook")
	x.let()
	r10Output(t, out, `{"jsonrpc":"2.0","id":0,"result":"held"}`+"\n"+
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}`+"\n"+
		`{"jsonrpc":"2.0","id":2,"result":{"n":2}}`+"\n"+
		`{"jsonrpc":"2.0","id":4,"result":{"n":4}}`+"\n")
	if n := x.ran.Load(); n != 2 {
		t.Fatalf("echo ran %d times, want 2", n)
	}
}

// A flood of cancellations behind a running request: the first ends it,
// the rest are read (bounded read-ahead, no answer for any) and the
// request after them is answered.
func TestReview10LinesCancelFlood(t *testing.T) {
	x := newR10Lines()
	in, out, _ := x.run(t, context.Background(), Config{})
	io.WriteString(in, r10Req(`"f"`, "block", "{}"))
	r10Wait(t, x.started, "block")
	const n = 5000
	go func() {
		var b bytes.Buffer
		for range n {
			b.WriteString(r10Cancel(`"f"`))
		}
		b.WriteString(r10Req(1, "echo", `{"after":"flood"}`))
		in.Write(b.Bytes())
	}()
	if err := r10Wait(t, x.ended, "block's end"); !errors.Is(err, context.Canceled) {
		t.Fatalf("block's context: %v", err)
	}
	r10Output(t, out, `{"jsonrpc":"2.0","id":1,"result":{"after":"flood"}}`+"\n")
	if h := x.hooks.Load(); h != n {
		t.Fatalf("the hook ran %d times, want %d", h, n)
	}
}

// ctx ends while the reader waits on a full queue behind a running call:
// the running call's answer is written, nothing read ahead is served,
// ServeLines returns ctx's error promptly and leaves no goroutine behind.
func TestReview10LinesCtxDoneFullQueue(t *testing.T) {
	base := runtime.NumGoroutine()
	x := newR10Lines()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- ServeLines(ctx, x.ep, Config{Logger: quietLogger}, inR, out) }()
	io.WriteString(inW, r10Req(0, "hold", "{}"))
	r10Wait(t, x.started, "hold")
	var written atomic.Int64
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 1; i <= 60; i++ {
			if _, err := io.WriteString(inW, r10Req(i, "echo", "{}")); err != nil {
				return
			}
			written.Add(1)
		}
	}()
	for last, end := int64(-1), time.Now().Add(ioTimeout); time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
		if w := written.Load(); w == last {
			break
		} else {
			last = w
		}
	}
	if w := written.Load(); w >= 60 {
		t.Fatalf("all %d lines were taken: read-ahead is not bounded", w)
	}
	cancel()
	select {
	case err := <-done:
		t.Fatalf("ServeLines returned %v while a call was still being served", err)
	case <-time.After(50 * time.Millisecond):
	}
	x.let()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ServeLines: %v, want context.Canceled", err)
		}
	case <-time.After(ioTimeout):
		t.Fatal("ServeLines did not return after ctx ended and its call did")
	}
	if got, want := out.String(), `{"jsonrpc":"2.0","id":0,"result":"held"}`+"\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
	if n := x.ran.Load(); n != 0 {
		t.Fatalf("%d lines read ahead were served after ctx ended", n)
	}
	inW.CloseWithError(io.ErrClosedPipe)
	r10Wait(t, wrote, "the writer")
	r10Settle(t, base, "after ServeLines returned and its input closed")
}

// ctx ends while ServeLines waits for input that never comes: it
// returns at once; its input's goroutine ends when the input closes.
func TestReview10LinesCtxDoneIdle(t *testing.T) {
	base := runtime.NumGoroutine()
	x := newR10Lines()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- ServeLines(ctx, x.ep, Config{Logger: quietLogger}, inR, out) }()
	io.WriteString(inW, r10Req(1, "echo", "{}"))
	r10Output(t, out, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n")
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ServeLines: %v", err)
		}
		if took := time.Since(start); took > time.Second {
			t.Errorf("ServeLines took %v to return", took)
		}
	case <-time.After(ioTimeout):
		t.Fatal("ServeLines did not return while waiting for input")
	}
	inW.CloseWithError(io.ErrClosedPipe)
	r10Settle(t, base, "after the input closed")
}

// r10ErrReader gives data, then err (telling hit).
type r10ErrReader struct {
	data []byte
	err  error
	hit  chan struct{}
	once sync.Once
}

func (r *r10ErrReader) Read(p []byte) (int, error) {
	if len(r.data) > 0 {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	r.once.Do(func() { close(r.hit) })
	return 0, r.err
}

// A read error met while lines wait behind a running call: every line
// read before it is answered, in order, then the error is returned.
func TestReview10LinesReadErrorMidQueue(t *testing.T) {
	x := newR10Lines()
	errRead := errors.New("review10: read failed")
	var in, want strings.Builder
	in.WriteString(r10Req(0, "hold", "{}"))
	want.WriteString(`{"jsonrpc":"2.0","id":0,"result":"held"}` + "\n")
	for i := 1; i <= 6; i++ {
		in.WriteString(r10Req(i, "echo", fmt.Sprintf(`{"i":%d}`, i)))
		fmt.Fprintf(&want, `{"jsonrpc":"2.0","id":%d,"result":{"i":%d}}`+"\n", i, i)
	}
	r := &r10ErrReader{data: []byte(in.String()), err: errRead, hit: make(chan struct{})}
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- ServeLines(context.Background(), x.ep, Config{Logger: quietLogger}, r, out) }()
	r10Wait(t, x.started, "hold")
	r10Wait(t, r.hit, "the read error")
	time.Sleep(20 * time.Millisecond)
	x.let()
	select {
	case err := <-done:
		if !errors.Is(err, errRead) {
			t.Fatalf("ServeLines: %v, want the read error", err)
		}
	case <-time.After(ioTimeout):
		t.Fatal("ServeLines did not return")
	}
	if got := out.String(); got != want.String() {
		t.Fatalf("output\n%s\nwant\n%s", got, want.String())
	}
}

// r10FailWriter accepts ok writes, then fails.
type r10FailWriter struct {
	n   atomic.Int64
	ok  int64
	err error
}

func (w *r10FailWriter) Write(p []byte) (int, error) {
	if w.n.Add(1) > w.ok {
		return 0, w.err
	}
	return len(p), nil
}

// A write that fails: ServeLines returns its error, serves nothing
// more, and its reading goroutine ends.
func TestReview10LinesWriteError(t *testing.T) {
	base := runtime.NumGoroutine()
	x := newR10Lines()
	errWrite := errors.New("review10: write failed")
	var in strings.Builder
	for i := range 50 {
		in.WriteString(r10Req(i, "echo", "{}"))
	}
	w := &r10FailWriter{ok: 1, err: errWrite}
	done := make(chan error, 1)
	go func() {
		done <- ServeLines(context.Background(), x.ep, Config{Logger: quietLogger}, strings.NewReader(in.String()), w)
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errWrite) {
			t.Fatalf("ServeLines: %v, want the write error", err)
		}
	case <-time.After(ioTimeout):
		t.Fatal("ServeLines did not return after a write failed")
	}
	if n := x.ran.Load(); n != 2 {
		t.Fatalf("echo ran %d times, want 2: served on after the write failed", n)
	}
	r10Settle(t, base, "after a write error")
}

// r10LineCounter counts the lines written to it, keeping none.
type r10LineCounter struct{ n atomic.Int64 }

func (w *r10LineCounter) Write(p []byte) (int, error) {
	w.n.Add(int64(bytes.Count(p, []byte{'\n'})))
	return len(p), nil
}

// Lines near the ceiling, read ahead behind a held call and answered in
// full: once answered, the stream's calls keep neither their line nor
// their answer (Decoder.Trim, trimAnswer) while the stream stays open.
func TestReview10LinesHugeLinesTrimmed(t *testing.T) {
	const ceiling = 4 << 20
	big := strings.Repeat("a", ceiling-1024)
	x := newR10Lines()
	inR, inW := io.Pipe()
	out := &r10LineCounter{}
	done := make(chan error, 1)
	go func() {
		done <- ServeLines(context.Background(), x.ep, Config{Logger: quietLogger, MaxBodyBytes: ceiling}, inR, out)
	}()
	defer func() {
		inW.Close()
		r10Wait(t, done, "ServeLines' end")
	}()
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	io.WriteString(inW, r10Req(0, "hold", "{}"))
	r10Wait(t, x.started, "hold")
	const n = linesAhead + 1
	wrote := make(chan struct{})
	go func() {
		defer close(wrote)
		for i := 1; i <= n; i++ {
			if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,"method":"echo","params":{"s":"%s"}}`+"\n", i, big); err != nil {
				return
			}
		}
	}()
	// Every line is taken before the held call returns: the queue's
	// linesAhead and one more waiting to be queued, each in a call of
	// its own. 68 MiB validated on the way: under -race, beside other
	// packages' tests (CI), that took over ioTimeout, so the waits here
	// are longer (still bounded).
	const slow = 6 * ioTimeout
	select {
	case <-wrote:
	case <-time.After(slow):
		t.Fatalf("the writer: not within %v", slow)
	}
	x.let()
	for end := time.Now().Add(slow); out.n.Load() < n+1 && time.Now().Before(end); {
		time.Sleep(5 * time.Millisecond)
	}
	if got := out.n.Load(); got != n+1 {
		t.Fatalf("%d answers, want %d", got, n+1)
	}
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	held := int64(ms.HeapAlloc) - int64(before)
	t.Logf("held after %d lines of %d KiB: %d KiB", n, len(big)>>10, held>>10)
	if held > 24<<20 {
		t.Fatalf("the stream holds %d MiB after answering every line: its calls keep their buffers", held>>20)
	}
}

// ---------------------------------------------------------------------
// HTTP: a client that goes away while its handler runs
// ---------------------------------------------------------------------

type r10Cause struct {
	id  string
	err error
}

type r10Calls struct {
	started chan string
	causes  chan r10Cause
	release chan struct{}
	once    sync.Once
}

func (x *r10Calls) let() { x.once.Do(func() { close(x.release) }) }

// r10HTTPMethods: "block" waits for its context to end (or release, or
// 30 s) and sends its context's error; "blockdl" is block under a
// context.WithTimeout of its own, as a handler passing its context on
// makes (WithTimeout asks the parent's Deadline); "nap" sleeps params.ms
// whatever its context and sends its context's error.
func r10HTTPMethods(t *testing.T) (*Methods, *r10Calls) {
	x := &r10Calls{started: make(chan string, 64), causes: make(chan r10Cause, 64), release: make(chan struct{})}
	t.Cleanup(x.let)
	var ms Methods
	wait := func(r *Request, ctx context.Context) {
		x.started <- string(r.Msg.ID)
		select {
		case <-ctx.Done():
		case <-x.release:
		case <-time.After(30 * time.Second):
		}
		x.causes <- r10Cause{string(r.Msg.ID), r.Context().Err()}
	}
	ms.HandleFunc("block", func(r *Request, dst []byte) ([]byte, error) {
		wait(r, r.Context())
		return append(dst, `"done"`...), nil
	})
	ms.HandleFunc("blockdl", func(r *Request, dst []byte) ([]byte, error) {
		ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
		defer cancel()
		wait(r, ctx)
		return append(dst, `"done"`...), nil
	})
	ms.HandleFunc("nap", func(r *Request, dst []byte) ([]byte, error) {
		x.started <- string(r.Msg.ID)
		v, _ := decode.Lookup(r.Msg.Params, "ms")
		ms, _ := strconv.Atoi(string(v))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		x.causes <- r10Cause{string(r.Msg.ID), r.Context().Err()}
		return append(dst, r.Msg.Params...), nil
	})
	return &ms, x
}

func r10Call(id, method, params string) string {
	return post(pathRPC, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+`}`)
}

// r10Read reads one answer on c within d.
func r10Read(t *testing.T, c *conn, d time.Duration) (int, string) {
	t.Helper()
	c.c.SetReadDeadline(time.Now().Add(d))
	hr, err := http.ReadResponse(c.br, nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	body, err := io.ReadAll(hr.Body)
	hr.Body.Close()
	if err != nil {
		t.Fatalf("reading the answer's body: %v", err)
	}
	return hr.StatusCode, string(body)
}

// goneWithin bounds how long a handler whose client left may run on:
// the first look comes goneEvery after it started, then one every
// goneEvery (and a tick of slack, and a loaded machine's).
const goneWithin = 2*goneEvery + 3*time.Second

// A handler that asks its context's Deadline as it starts — as
// context.WithTimeout(r.Context(), …) does, and so every handler that
// bounds a call it makes with its own timeout — is told its client left
// like any other.
func TestReview10ClientGoneAfterDeadlineAsked(t *testing.T) {
	t.Parallel()
	ms, x := r10HTTPMethods(t)
	s, addr := serve(t, Config{HandlerTimeout: time.Minute}, goneEndpoint(ms))
	gone0 := s.metrics.clientGone.Get()
	c := dial(t, addr)
	c.send(r10Call("1", "blockdl", "{}"))
	r10Wait(t, x.started, "the handler's start")
	c.c.Close()
	select {
	case cause := <-x.causes:
		if !errors.Is(cause.err, ErrClientGone) {
			t.Fatalf("the handler's context ended with %v, want ErrClientGone", cause.err)
		}
	case <-time.After(goneWithin):
		t.Fatalf("the handler still runs %v after its client left: a handler that asked Deadline is never looked at", goneWithin)
	}
	if n := s.metrics.clientGone.Get() - gone0; n != 1 {
		t.Errorf("rpcedge_handlers_client_gone_total +%d, want +1", n)
	}
}

// A client that stays while its handler runs past the server's
// ReadTimeout is not taken for gone: the answer comes, the handler's
// context never ended. (A read deadline left on the connection while the
// handler runs must not pass for the client's departure.)
func TestReview10ReadTimeoutIsNotClientGone(t *testing.T) {
	t.Parallel()
	ms, x := r10HTTPMethods(t)
	s, addr := serve(t, Config{HandlerTimeout: time.Minute, ReadTimeout: time.Second}, goneEndpoint(ms))
	nap := 2*goneEvery + goneEvery/2
	c := dial(t, addr)
	c.send(r10Call("1", "nap", fmt.Sprintf(`{"ms":%d}`, nap.Milliseconds())))
	r10Wait(t, x.started, "the handler's start")
	status, body := r10Read(t, c, nap+ioTimeout)
	cause := r10Wait(t, x.causes, "the handler's end")
	if cause.err != nil {
		t.Errorf("the handler's context ended with %v while its client stayed", cause.err)
	}
	if status != 200 || !strings.Contains(body, `"result":{"ms":`) {
		t.Errorf("answer %d %s, want the result", status, body)
	}
	if n := s.metrics.clientGone.Get(); n != 0 {
		t.Errorf("rpcedge_handlers_client_gone_total %d for a client that stayed", n)
	}
}

// One keep-alive connection, three long requests in turn: the first two
// (the client stays, each past a look) are answered with their context
// never ended; the third, whose client leaves, is told: no look of a run
// before it (runs) decides for it, or keeps it from being looked at.
func TestReview10KeepAliveLongRequests(t *testing.T) {
	t.Parallel()
	ms, x := r10HTTPMethods(t)
	s, addr := serve(t, Config{HandlerTimeout: time.Minute}, goneEndpoint(ms))
	c := dial(t, addr)
	nap := goneEvery + goneEvery/4
	for i := 1; i <= 2; i++ {
		c.send(r10Call(strconv.Itoa(i), "nap", fmt.Sprintf(`{"ms":%d}`, nap.Milliseconds())))
		status, body := r10Read(t, c, nap+ioTimeout)
		if status != 200 || !strings.Contains(body, `"result":{"ms":`) {
			t.Fatalf("answer %d: %d %s", i, status, body)
		}
		if cause := r10Wait(t, x.causes, "nap's end"); cause.err != nil {
			t.Fatalf("request %d: its context ended with %v", i, cause.err)
		}
		r10Wait(t, x.started, "nap's start")
	}
	c.send(r10Call("3", "block", "{}"))
	r10Wait(t, x.started, "block's start")
	c.c.Close()
	select {
	case cause := <-x.causes:
		if cause.id != "3" || !errors.Is(cause.err, ErrClientGone) {
			t.Fatalf("request %s: its context ended with %v, want ErrClientGone", cause.id, cause.err)
		}
	case <-time.After(goneWithin):
		t.Fatalf("the third request's handler still runs %v after its client left", goneWithin)
	}
	if n := s.metrics.clientGone.Get(); n != 1 {
		t.Errorf("rpcedge_handlers_client_gone_total %d, want 1", n)
	}
}

// Eight long handlers; the clients of half of them leave: exactly those
// are told ErrClientGone, the others run on and are answered when
// released, their context never ended.
func TestReview10ManyLongHalfLeave(t *testing.T) {
	t.Parallel()
	ms, x := r10HTTPMethods(t)
	s, addr := serve(t, Config{HandlerTimeout: time.Minute}, goneEndpoint(ms))
	const n = 8
	conns := make([]*conn, n)
	for i := range n {
		conns[i] = dial(t, addr)
		conns[i].send(r10Call(strconv.Itoa(i), "block", "{}"))
	}
	for range n {
		r10Wait(t, x.started, "a handler's start")
	}
	for i := 0; i < n; i += 2 {
		if i%4 == 0 {
			conns[i].c.SetLinger(0) // a reset for some
		}
		conns[i].c.Close()
	}
	gone := map[string]bool{}
	deadline := time.After(goneWithin)
	for len(gone) < n/2 {
		select {
		case cause := <-x.causes:
			id, _ := strconv.Atoi(cause.id)
			if id%2 != 0 || !errors.Is(cause.err, ErrClientGone) {
				t.Fatalf("request %s ended with %v: only the even ones' clients left", cause.id, cause.err)
			}
			gone[cause.id] = true
		case <-deadline:
			t.Fatalf("after %v only %v were told their client left", goneWithin, gone)
		}
	}
	// One more look for those that stay.
	select {
	case cause := <-x.causes:
		t.Fatalf("request %s ended with %v while its client stayed", cause.id, cause.err)
	case <-time.After(goneEvery + goneEvery/2):
	}
	x.let()
	for i := 1; i < n; i += 2 {
		status, body := r10Read(t, conns[i], ioTimeout)
		if status != 200 || !strings.Contains(body, `"result":"done"`) {
			t.Errorf("request %d: %d %s", i, status, body)
		}
	}
	for range n / 2 {
		if cause := r10Wait(t, x.causes, "a released handler's end"); cause.err != nil {
			t.Errorf("request %s: its context ended with %v", cause.id, cause.err)
		}
	}
	if got := s.metrics.clientGone.Get(); got != n/2 {
		t.Errorf("rpcedge_handlers_client_gone_total %d, want %d", got, n/2)
	}
}

// A client that half-closes (CloseWrite) once its request is sent counts
// as gone (ErrClientGone's documentation), on either transport; if an
// answer still reaches it, it is the -32603 of a departed client, and
// nothing panics.
func TestReview10HalfCloseCountsGone(t *testing.T) {
	t.Parallel()
	ms, x := r10HTTPMethods(t)
	s, addr := serve(t, Config{HandlerTimeout: time.Minute}, goneEndpoint(ms))
	c := dial(t, addr)
	c.send(r10Call("1", "block", "{}"))
	r10Wait(t, x.started, "the handler's start")
	c.c.CloseWrite()
	select {
	case cause := <-x.causes:
		if !errors.Is(cause.err, ErrClientGone) {
			t.Fatalf("the handler's context ended with %v, want ErrClientGone", cause.err)
		}
	case <-time.After(goneWithin):
		t.Fatalf("a half-closed client not taken for gone within %v", goneWithin)
	}
	c.c.SetReadDeadline(time.Now().Add(ioTimeout))
	if hr, err := http.ReadResponse(c.br, nil); err == nil {
		body, _ := io.ReadAll(hr.Body)
		hr.Body.Close()
		if hr.StatusCode != 500 || !strings.Contains(string(body), `"code":-32603`) {
			t.Errorf("answer to a departed client: %d %s", hr.StatusCode, body)
		}
	}
	for st, ctr := range s.metrics.panics {
		if ctr != nil && ctr.Get() != 0 {
			t.Errorf("%d panics at stage %d", ctr.Get(), st)
		}
	}
}

// Over fasthttp: a request pipelined behind a long handler, then the
// client's close. The bytes it left unread do not hide its departure.
func TestReview10PipelinedThenGone(t *testing.T) {
	fasthttpOnly(t, "net/http does not cancel a request's context for a close behind a pipelined request (its documented limit)")
	t.Parallel()
	ms, x := r10HTTPMethods(t)
	_, addr := serve(t, Config{HandlerTimeout: time.Minute}, goneEndpoint(ms))
	c := dial(t, addr)
	c.send(r10Call("1", "block", "{}"))
	r10Wait(t, x.started, "the handler's start")
	c.send(r10Call("2", "nap", `{"ms":0}`))
	time.Sleep(50 * time.Millisecond)
	c.c.Close()
	select {
	case cause := <-x.causes:
		if cause.id != "1" || !errors.Is(cause.err, ErrClientGone) {
			t.Fatalf("request %s: %v, want request 1 told ErrClientGone", cause.id, cause.err)
		}
	case <-time.After(goneWithin):
		t.Fatalf("the handler still runs %v after its client left", goneWithin)
	}
}

// Endpoint.Cancel is a stream's: over HTTP it is never asked, and a
// notification that would cancel cancels nothing.
func TestReview10CancelNotAskedOverHTTP(t *testing.T) {
	ms, _ := r10HTTPMethods(t)
	ep := ms.Endpoint(pathRPC, decode.IDsJSONRPC)
	var asked atomic.Int64
	ep.Cancel = func(*decode.Message) []byte { asked.Add(1); return []byte("1") }
	_, addr := serve(t, Config{}, ep)
	r := roundTrip(t, addr, post(pathRPC, `{"jsonrpc":"2.0","method":"cancel","params":{"id":1}}`))
	if r.Status != 202 && r.Status != 204 {
		t.Errorf("a notification: %s", r.StatusLine)
	}
	r = roundTrip(t, addr, r10Call("1", "nap", `{"ms":1}`))
	if r.Status != 200 || !bytes.Contains(r.Body, []byte(`"result":{"ms":1}`)) {
		t.Errorf("answer %s %s", r.StatusLine, r.Body)
	}
	if n := asked.Load(); n != 0 {
		t.Fatalf("Cancel asked %d times over HTTP", n)
	}
}
