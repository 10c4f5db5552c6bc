package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram geometry: microseconds from 1 µs to 24 h, 3 significant digits.
const (
	histLowest  = 1
	histHighest = 24 * 3600 * 1_000_000
	histDigits  = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histLowest, histHighest, histDigits) }

// engine moves the bytes: it runs the workers of a run until the runner
// says stop, using the runner's shared helpers to build, check and record.
type engine interface {
	// run drives cfg.Connections connections until the runner stops them.
	run(r *runner) error
}

var engines = map[string]func() engine{}

// registerEngine makes an engine available by name; called from init.
func registerEngine(name string, f func() engine) { engines[name] = f }

func engineByName(name string) func() engine { return engines[name] }

// Engines lists the names of the I/O engines compiled in; the first is the
// default. "epoll" (Linux only) drives all connections of a core from one
// thread with raw non-blocking sockets, as wrk does; "netconn" is one
// goroutine per connection over net.Conn, portable.
func Engines() []string {
	var names []string
	for n := range engines {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if names[i] == defaultEngine || names[j] == defaultEngine {
			return names[i] == defaultEngine
		}
		return names[i] < names[j]
	})
	return names
}

// runner is the state of one run shared by the engine's workers.
type runner struct {
	cfg      Config
	p        *plan
	engine   string
	addr     *net.TCPAddr
	start    time.Time
	open     bool
	perSlot  float64 // open loop: ns between slots
	deadline int64   // ns since start; 0: none
	drainEnd int64   // deadline + Config.Drain: no request outlives it; 0: none

	claimed  atomic.Int64
	stopping atomic.Bool // no new requests
	aborted  atomic.Bool // stop now, drop what is in flight
	abortCh  chan struct{}
	stopNs   atomic.Int64 // when issuing stopped (ns since start); MaxInt64 before

	statsMu sync.Mutex
	stats   []*stats

	// lastAnswer is when an answer last came in (ns since start, to a
	// millisecond), for Config.GiveUp; gaveUp says why the run was given
	// up, "" when it was not (under exMu).
	lastAnswer atomic.Int64
	gaveUp     string

	exMu     sync.Mutex
	exCount  atomic.Int64
	examples []Example
}

// giveUpIfDead ends the run when, at a transport failure at now, no
// answer has come for Config.GiveUp: the server is down or hangs. Not
// once issuing has stopped: the drain and Timeout bound the rest.
func (r *runner) giveUpIfDead(now int64, err error) {
	if r.stopping.Load() || now-r.lastAnswer.Load() < int64(r.cfg.GiveUp) {
		return
	}
	r.exMu.Lock()
	if r.gaveUp == "" {
		r.gaveUp = fmt.Sprintf("loadgen: no answer for %v while requests failed (the last: %v): the server is down or hangs; the run was given up (-give-up)", r.cfg.GiveUp, err)
	}
	r.exMu.Unlock()
	r.abort()
}

func (r *runner) now() int64 { return int64(time.Since(r.start)) }

// claim reserves the next request. In an open loop it returns the
// request's intended send time (ns since start); in a closed loop -1.
//
// Issuing stops at the duration's end, or when Config.Requests have been
// handed out. An open loop's slots are handed out in order, to whichever
// connection is free, so a slot whose time came while every connection
// was busy goes out late, when one comes free; after the duration that
// still holds for the slots due before it, until the drain ends. The
// slots left then are unsent (Report.Unsent).
func (r *runner) claim(now int64) (int64, bool) {
	if r.stopping.Load() {
		return 0, false
	}
	if r.deadline > 0 && now >= r.deadline && (!r.open || now >= r.drainEnd) {
		r.stop(r.deadline)
		return 0, false
	}
	n := r.claimed.Add(1)
	if r.cfg.Requests > 0 && n > r.cfg.Requests {
		r.stop(min(now, r.deadlineOr(now)))
		return 0, false
	}
	if !r.open {
		return -1, true
	}
	at := r.slotAt(n)
	if r.deadline > 0 && at >= r.deadline {
		r.stop(r.deadline)
		return 0, false
	}
	return at, true
}

// deadlineOr returns the run's deadline, or v when it has none.
func (r *runner) deadlineOr(v int64) int64 {
	if r.deadline > 0 {
		return r.deadline
	}
	return v
}

// stop ends issuing at the time given (ns since start); what is in
// flight still completes.
func (r *runner) stop(at int64) {
	if r.stopping.CompareAndSwap(false, true) {
		r.stopNs.Store(at)
	}
}

// issuing reports whether now falls in the issuing window: before the
// deadline and before issuing stopped.
func (r *runner) issuing(now int64) bool {
	return (r.deadline == 0 || now < r.deadline) && now < r.stopNs.Load()
}

// stepDeadline returns when a step begun at now (a connection attempt, a
// request) times out: Config.Timeout later, or at the end of the drain if
// that comes first.
func (r *runner) stepDeadline(now int64) int64 {
	d := now + int64(r.cfg.Timeout)
	if r.drainEnd > 0 && r.drainEnd < d {
		d = r.drainEnd
	}
	return d
}

// errDrain reports a request still unanswered when the drain ended.
var errDrain = errors.New("no complete answer by the end of the drain after the run's duration (-drain; raise it, up to -timeout, for slower answers)")

// timeoutErr is the error of a step whose deadline passed at now: the
// drain's end, or its own timeout.
func (r *runner) timeoutErr(now int64) error {
	if r.drainEnd > 0 && now >= r.drainEnd {
		return errDrain
	}
	return errTimeout
}

// abort ends the run now: in-flight requests are dropped, not counted.
func (r *runner) abort() {
	r.stop(r.now())
	if r.aborted.CompareAndSwap(false, true) {
		close(r.abortCh)
	}
}

// exchange is one connection's request and answer buffers. It is owned by
// one worker at a time.
type exchange struct {
	wire     []byte // the request on the wire
	exp      expectation
	rbuf     []byte // bytes read so far; cap is the buffer
	resp     response
	intended int64 // open loop: ns since start; -1 in a closed loop
	sentAt   int64 // when the request went out; before, when its connection attempt began
	firstAt  int64 // a streamed answer: when its first event was in, 0 before
	late     bool  // sent more than SlotTolerance after intended
	// The last answer on the current connection, for bytes found after it
	// on the idle connection (unasked): whether there was one, its shape,
	// and whether it was judged right.
	haveLast, lastOK bool
	lastShape        Shape
}

// finalLook is how long a closed loop's connection, its last answer in,
// waits for bytes after that answer before it closes (bounded by the
// drain): in a closed loop bytes that follow an answer in a later read
// are taken for the next request's answer, so a server that repeats an
// answer without an id (a 202) shifts the answers by one, each passing for
// the next; the shift leaves the last answer unread, found here.
const finalLook = 50 * time.Millisecond

// finalLookUntil returns when a closed-loop connection stops looking for
// bytes after its last answer, begun at now.
func (r *runner) finalLookUntil(now int64) int64 {
	d := now + int64(finalLook)
	if r.drainEnd > 0 && r.drainEnd < d {
		d = r.drainEnd
	}
	return d
}

// newConn notes that x's connection was replaced: no answer came on it yet.
func (x *exchange) newConn() { x.haveLast = false }

// Read buffer sizes: an exchange reads into initialRead bytes, doubles
// the buffer when it is full, up to maxRead (the largest answer and its
// head), and gives a buffer that grew past maxKeptRead back when the next
// request is prepared, so that one large answer does not hold its memory
// for the rest of the run. maxKeptRead is room for a 1 MiB answer (the
// contract's body ceiling) and its head, so that a run of such answers
// does not grow a buffer anew for each.
const (
	initialRead = 16 << 10
	maxRead     = maxAnswer + maxHead
	maxKeptRead = 2 << 20
)

func newExchange() *exchange {
	return &exchange{wire: make([]byte, 0, 1024), rbuf: make([]byte, 0, initialRead)}
}

// readSpace returns room at the end of rbuf to read into, growing the
// buffer (doubling it, up to maxRead) when it is full.
func (x *exchange) readSpace() ([]byte, error) {
	if len(x.rbuf) == cap(x.rbuf) {
		if cap(x.rbuf) >= maxRead {
			return nil, errTooLarge
		}
		nb := make([]byte, len(x.rbuf), min(2*cap(x.rbuf), maxRead))
		copy(nb, x.rbuf)
		x.rbuf = nb
	}
	return x.rbuf[len(x.rbuf):cap(x.rbuf)], nil
}

// closesAfter reports whether the connection must be replaced after this
// answer: the server said so, or the request was refused before its body
// was judged valid (parse error, batch), after which the contract lets the
// server close.
func (x *exchange) closesAfter() bool {
	return x.resp.close || x.exp.shape == ShapeParse || x.exp.shape == ShapeBatch
}

// stats are one worker's counters and histograms. mu guards them so the
// live line can read them mid-run.
type stats struct {
	mu sync.Mutex
	counts
}

// counts are the numbers a run keeps.
type counts struct {
	sent         uint64 // requests written
	answers      uint64 // complete HTTP answers
	drainAnswers uint64 // of them, those that came after issuing stopped
	events       uint64 // notifications of right streamed answers
	drainEvents  uint64 // of them, those of answers that came after issuing stopped
	ok           uint64
	wrong        [numClasses]uint64
	shapeSent    [numShapes]uint64
	shapeOK      [numShapes]uint64
	late         uint64
	reconnects   uint64
	waits        Waits                   // the epoll engine's, added as each loop ends
	lat          *hdrhistogram.Histogram // corrected in an open loop
	raw          *hdrhistogram.Histogram // from the actual send
	first        *hdrhistogram.Histogram // streamed answers: send to first event
}

func (r *runner) newStats() *stats {
	s := &stats{counts: counts{lat: newHist(), raw: newHist(), first: newHist()}}
	r.statsMu.Lock()
	r.stats = append(r.stats, s)
	r.statsMu.Unlock()
	return s
}

// worker bundles what an engine worker needs: its generator and stats.
type worker struct {
	r   *runner
	gen *generator
	st  *stats
	// lastAnswer is when this worker last told the runner an answer came
	// (ns since start): it does so once a millisecond at most.
	lastAnswer int64
}

func (r *runner) newWorker(i, n int) *worker {
	return &worker{r: r, gen: newGenerator(r.p, i, n, uint64(r.start.UnixNano())), st: r.newStats()}
}

// prepare builds the next request of x.
func (w *worker) prepare(x *exchange, intended int64) {
	x.wire = w.gen.build(x.wire, &x.exp)
	if cap(x.rbuf) > maxKeptRead {
		x.rbuf = make([]byte, 0, initialRead)
	}
	x.rbuf = x.rbuf[:0]
	x.intended = intended
	x.late = false
	x.firstAt = 0
}

// A data field at the start of a line: lines end in LF, CR or CRLF.
var dataAfterLF, dataAfterCR = []byte("\ndata"), []byte("\rdata")

// read notes the bytes just read into x.rbuf: the time the first event of
// a streamed answer came in (Report.FirstEvent), taken as the read that
// brought the first line starting with "data".
func (x *exchange) read(now func() int64) {
	if x.exp.events > 0 && x.firstAt == 0 && (bytes.Contains(x.rbuf, dataAfterLF) || bytes.Contains(x.rbuf, dataAfterCR)) {
		x.firstAt = now()
	}
}

// sent records that x went out at now.
func (w *worker) sent(x *exchange, now int64) {
	x.sentAt = now
	x.late = x.intended >= 0 && now-x.intended > int64(SlotTolerance)
}

// answered checks the complete answer in x and records it.
func (w *worker) answered(x *exchange, now int64) {
	v := check(&x.exp, &x.resp, w.r.p.v2026)
	if v.class == ClassOK && x.resp.end != len(x.rbuf) {
		v = wrong(ClassBody, "bytes after the end of the answer")
	}
	st := w.st
	st.mu.Lock()
	st.sent++
	st.shapeSent[x.exp.shape]++
	if x.late {
		st.late++
	}
	st.answers++
	drain := !w.r.issuing(now)
	if drain {
		st.drainAnswers++
	}
	if v.class == ClassOK {
		st.ok++
		st.shapeOK[x.exp.shape]++
		st.events += uint64(v.events)
		if drain {
			st.drainEvents += uint64(v.events)
		}
		if x.firstAt > 0 {
			_ = st.first.RecordValue(usec(x.firstAt - x.sentAt))
		}
	} else {
		st.wrong[v.class]++
	}
	x.recordLatency(st, now)
	st.mu.Unlock()
	if now-w.lastAnswer >= int64(time.Millisecond) {
		w.lastAnswer = now
		w.r.lastAnswer.Store(now)
	}
	x.haveLast, x.lastOK, x.lastShape = true, v.class == ClassOK, x.exp.shape
	if v.class != ClassOK {
		w.r.keepExample(x, v.class, v.detail(), x.rbuf[:x.resp.end])
	}
}

// unasked records bytes b that came on x's connection while no request
// was in flight on it (an open loop's connection idling until its next
// slot): bytes after the end of the connection's last answer, which the
// same read would have shown as such. That answer is judged wrong now
// (ClassBody), though it was counted right, so that the bytes are not
// taken for the next request's answer; the caller drops the connection.
// Bytes on a connection that carried no answer yet are not counted.
func (w *worker) unasked(x *exchange, b []byte) {
	if !x.haveLast {
		return
	}
	x.haveLast = false
	if x.lastOK {
		st := w.st
		st.mu.Lock()
		st.ok--
		st.shapeOK[x.lastShape]--
		st.wrong[ClassBody]++
		st.mu.Unlock()
	}
	if w.r.exCount.Load() < int64(w.r.cfg.MaxExamples) {
		// The request and answer before them are gone (the buffers hold
		// the next request); the bytes are the example.
		w.r.keep(Example{
			Class: ClassBody.String(), Shape: x.lastShape.String(),
			Detail:    "bytes after the end of the answer, found on the idle connection before the next request (an answer to no request); the answer before them (its request not shown) is judged wrong",
			AtSeconds: float64(w.r.now()) / 1e9,
			Answer:    clip(b),
		})
	}
}

// recordLatency records in st (locked) how long x took until now: from
// its intended time (corrected) and from its send (raw) in an open loop,
// from its send in a closed loop.
func (x *exchange) recordLatency(st *stats, now int64) {
	if x.intended >= 0 {
		_ = st.lat.RecordValue(usec(now - x.intended))
		_ = st.raw.RecordValue(usec(now - x.sentAt))
	} else {
		_ = st.lat.RecordValue(usec(now - x.sentAt))
	}
}

// failed records a transport failure of x (which may not have been sent),
// its latency the time it waited: a timeout shows as the timeout, a
// refused connection as the time the refusal took. Failures after an
// abort are not counted.
func (w *worker) failed(x *exchange, err error, wasSent bool) {
	if w.r.aborted.Load() {
		return
	}
	now := w.r.now()
	st := w.st
	st.mu.Lock()
	st.wrong[ClassTransport]++
	// Counted as sent even if it never left, so that sent = ok + wrong.
	st.sent++
	st.shapeSent[x.exp.shape]++
	if wasSent && x.late {
		st.late++
	}
	x.recordLatency(st, now)
	st.mu.Unlock()
	w.r.keepExample(x, ClassTransport, err.Error(), x.rbuf)
	w.r.giveUpIfDead(now, err)
}

func (w *worker) reconnected() {
	w.st.mu.Lock()
	w.st.reconnects++
	w.st.mu.Unlock()
}

func usec(ns int64) int64 {
	u := (ns + 500) / 1000
	if u < histLowest {
		return histLowest
	}
	if u > histHighest {
		return histHighest
	}
	return u
}

const maxExampleBytes = 2048

func clip(b []byte) string {
	if len(b) > maxExampleBytes {
		return string(b[:maxExampleBytes]) + fmt.Sprintf("… (%d bytes)", len(b))
	}
	return string(b)
}

func (r *runner) keepExample(x *exchange, c Class, detail string, answer []byte) {
	if r.exCount.Load() >= int64(r.cfg.MaxExamples) {
		return
	}
	r.keep(Example{
		Class: c.String(), Shape: x.exp.shape.String(), Detail: detail,
		AtSeconds: float64(r.now()) / 1e9,
		Request:   clip(x.wire), Answer: clip(answer),
	})
}

// keep keeps ex while fewer than Config.MaxExamples are kept.
func (r *runner) keep(ex Example) {
	r.exMu.Lock()
	defer r.exMu.Unlock()
	if len(r.examples) >= r.cfg.MaxExamples {
		return
	}
	r.examples = append(r.examples, ex)
	r.exCount.Store(int64(len(r.examples)))
}

// totals sums the workers' stats; with hists it also merges the histograms.
func (r *runner) totals(hists bool) (t counts) {
	if hists {
		t.lat, t.raw, t.first = newHist(), newHist(), newHist()
	}
	r.statsMu.Lock()
	all := append([]*stats(nil), r.stats...)
	r.statsMu.Unlock()
	for _, s := range all {
		s.mu.Lock()
		t.sent += s.sent
		t.answers += s.answers
		t.drainAnswers += s.drainAnswers
		t.events += s.events
		t.drainEvents += s.drainEvents
		t.ok += s.ok
		for i := range s.wrong {
			t.wrong[i] += s.wrong[i]
		}
		for i := range s.shapeSent {
			t.shapeSent[i] += s.shapeSent[i]
			t.shapeOK[i] += s.shapeOK[i]
		}
		t.late += s.late
		t.reconnects += s.reconnects
		t.waits.Spins += s.waits.Spins
		t.waits.Caught += s.waits.Caught
		t.waits.Blocked += s.waits.Blocked
		if hists {
			t.lat.Merge(s.lat)
			t.raw.Merge(s.raw)
			t.first.Merge(s.first)
		}
		s.mu.Unlock()
	}
	return t
}

// ErrConnect wraps the failure of the first connection attempt, made
// before the run starts: Run returns it instead of a report full of
// transport errors when the target cannot be reached at all.
var ErrConnect = errors.New("loadgen: cannot connect")

// Run sends the load cfg describes and checks every answer. It returns when
// the run ends by duration or count, or early, with the report so far,
// when ctx is canceled (Report.Interrupted is then set) or when the
// server stops answering and requests fail for Config.GiveUp
// (Report.Aborted says so).
//
// When live is not nil, a progress line (elapsed, requests/s over the last
// second, p99 so far, wrong answers) is rewritten on it each second; pass a
// terminal, or nil for silence.
//
// Run returns an error, and no report, when cfg is invalid (see
// Config.Validate) or when the first connection cannot be made
// (ErrConnect).
func Run(ctx context.Context, cfg Config, live io.Writer) (*Report, error) {
	cfg, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	p, err := newPlan(cfg)
	if err != nil {
		return nil, err
	}
	name := cfg.Engine
	if name == "" {
		name = defaultEngine
	}
	eng := engineByName(name)()

	addr, err := net.ResolveTCPAddr("tcp", p.tgt.addr)
	if err != nil {
		return nil, fmt.Errorf("%w to %s: %v", ErrConnect, p.tgt.addr, err)
	}
	// One connection first, so that an unreachable target is one clear
	// error rather than a run of transport errors.
	probe, err := net.DialTimeout("tcp", addr.String(), cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("%w to %s: %v", ErrConnect, addr, err)
	}
	probe.Close()

	r := &runner{cfg: cfg, p: p, engine: name, addr: addr, abortCh: make(chan struct{})}
	if cfg.Rate > 0 {
		r.open = true
		r.perSlot = 1e9 / cfg.Rate
	}
	r.deadline = int64(cfg.Duration)
	if r.deadline > 0 {
		r.drainEnd = r.deadline + int64(cfg.Drain)
	}
	r.stopNs.Store(math.MaxInt64)
	r.start = time.Now()

	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			r.abort()
		case <-done:
		}
	}()
	var liveWG sync.WaitGroup
	if live != nil {
		liveWG.Add(1)
		go func() {
			defer liveWG.Done()
			r.liveLoop(live, done)
		}()
	}
	err = eng.run(r)
	end := r.now()
	close(done)
	liveWG.Wait()
	if err != nil {
		return nil, err
	}
	r.stop(end)
	return r.report(end), nil
}

// liveLoop writes the progress line each second until done.
func (r *runner) liveLoop(w io.Writer, done <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	var prev uint64
	prevAt := time.Now()
	for {
		select {
		case <-done:
			fmt.Fprint(w, "\r\x1b[K")
			return
		case now := <-t.C:
			tot := r.totals(true)
			rps := float64(tot.answers-prev) / now.Sub(prevAt).Seconds()
			prev, prevAt = tot.answers, now
			var wrong uint64
			for _, n := range tot.wrong {
				wrong += n
			}
			fmt.Fprintf(w, "\r\x1b[K%6.1fs  %9.0f req/s  p99 %s  wrong %d",
				time.Since(r.start).Seconds(), rps, fmtUsec(tot.lat.ValueAtQuantile(99)), wrong)
		}
	}
}

// fmtUsec formats microseconds for people.
func fmtUsec(us int64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%dµs", us)
	case us < 1_000_000:
		return fmt.Sprintf("%.2fms", float64(us)/1e3)
	default:
		return fmt.Sprintf("%.2fs", float64(us)/1e6)
	}
}
