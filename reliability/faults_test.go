package reliability

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// faultMethods are handlers that fail in every way a handler can, and one
// that works.
func faultMethods() *fastserver.Methods {
	var ms fastserver.Methods
	ms.HandleFunc("ok", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		return append(dst, `"ok"`...), nil
	})
	ms.HandleFunc("panic", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		panic("handler blew up")
	})
	ms.HandleFunc("panic-error", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		panic(errors.New("an error value"))
	})
	ms.HandleFunc("panic-nil", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		panic(nil) // a *runtime.PanicNilError since Go 1.21
	})
	ms.HandleFunc("panic-runtime", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		var m map[string]int
		//lint:ignore SA5000 the fault under test: a nil-map write panics
		m["x"]++ // assignment to entry in nil map
		return dst, nil
	})
	ms.HandleFunc("panic-partial", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		//lint:ignore SA4006 the fault under test: half a result, then a panic
		dst = append(dst, `{"half":`...)
		panic("after writing half a result")
	})
	// slow ignores its context and returns long after the deadline.
	ms.HandleFunc("slow", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		time.Sleep(3 * faultDeadline)
		return append(dst, `"late"`...), nil
	})
	// slow-ctx waits on its context, as a handler should.
	ms.HandleFunc("slow-ctx", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		select {
		case <-r.Context().Done():
			return dst, r.Context().Err()
		case <-time.After(10 * time.Second):
			return append(dst, `"context never done"`...), nil
		}
	})
	return &ms
}

// faultDeadline is the handler deadline of TestHandlerFaults.
const faultDeadline = 100 * time.Millisecond

// TestHandlerFaults drives handlers that panic and that pass the handler
// deadline, from 8 keep-alive connections, between calls that work. Each
// fault is answered 500 / -32603 with the request's id, logged (captured
// slog output: one "handler panicked" with a stack per panic, one
// "handler passed its deadline" per late handler), and counted (GET
// /metrics); the working calls keep getting 200, and the goroutines go
// back to their baseline.
func TestHandlerFaults(t *testing.T) {
	var logs syncBuffer
	cfg := testConfig()
	cfg.HandlerTimeout = faultDeadline
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	baseG := numGoroutines()
	srv := startServer(t, cfg, faultMethods().Endpoint("/rpc", decode.IDsJSONRPC))
	addr := srv.addr

	faults := []string{"panic", "panic-error", "panic-nil", "panic-runtime", "panic-partial", "slow", "slow-ctx"}
	const conns, rounds = 8, 3
	var mu sync.Mutex
	var errs []string
	var ctxLate time.Duration // the longest slow-ctx call
	okLate := 0               // "ok" calls answered "handler deadline exceeded"
	var wg sync.WaitGroup
	probe := startStallProbe(t)
	start := time.Now()
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fail := func(format string, args ...any) {
				mu.Lock()
				errs = append(errs, fmt.Sprintf("conn %d: ", w)+fmt.Sprintf(format, args...))
				mu.Unlock()
			}
			c, err := netDial(addr)
			if err != nil {
				fail("%v", err)
				return
			}
			defer c.Close()
			br := bufio.NewReader(c)
			id := w * 1000
			for range rounds {
				for _, m := range faults {
					for _, method := range []string{m, "ok"} {
						id++
						sent := time.Now()
						c.SetDeadline(sent.Add(ioTimeout))
						body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"` + method + `"}`
						if _, err := c.Write(post("/rpc", []byte(body))); err != nil {
							fail("%s: write: %v", method, err)
							return
						}
						r, err := readResp(br)
						if err != nil {
							fail("%s: %v", method, err)
							return
						}
						if method == "slow-ctx" {
							mu.Lock()
							ctxLate = max(ctxLate, time.Since(sent))
							mu.Unlock()
						}
						a, err := parseRPC(r)
						switch {
						case err != nil:
							fail("%s: %v", method, err)
						case string(a.ID) != strconv.Itoa(id):
							fail("%s: id %s, want %d", method, a.ID, id)
						case method == "ok" && r.status == 500 && a.Error != nil && a.Error.Message == "handler deadline exceeded":
							// Judged below, against the machine's stalls.
							mu.Lock()
							okLate++
							mu.Unlock()
						case method == "ok" && (r.status != 200 || string(a.Result) != `"ok"`):
							fail("ok answered %d %q", r.status, r.body)
						case method != "ok" && (r.status != 500 || a.Error == nil || a.Error.Code != -32603):
							fail("%s answered %d %q, want 500 / -32603", method, r.status, r.body)
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	stall := probe.stop()
	for _, e := range errs {
		t.Error(e)
	}
	t.Logf("a handler that waits on its context is answered at most %v after the call (deadline %v; the machine stalled at most %v meanwhile)",
		ctxLate.Round(time.Millisecond), faultDeadline, stall.Round(time.Millisecond))
	if ctxLate > faultDeadline+time.Second && stall < time.Second {
		t.Errorf("a handler waiting on its context was answered %v after the call, deadline %v", ctxLate, faultDeadline)
	}
	panics := conns * rounds * 5
	late := conns * rounds * 2
	// An instant handler can pass a 100 ms deadline only if the process
	// was held off the CPU that long (or the deadline is read off a lagging
	// clock: TestHandlerDeadlineClock).
	if okLate > 0 {
		t.Logf("%d instant \"ok\" calls were answered \"handler deadline exceeded\" (the machine stalled up to %v)", okLate, stall.Round(time.Millisecond))
		if stall < faultDeadline {
			t.Errorf("%d instant calls answered \"handler deadline exceeded\" while the machine stalled at most %v", okLate, stall)
		}
	}
	late += okLate

	// Logged.
	out := logs.String()
	if n := strings.Count(out, `msg="panic serving a request" where=handler`); n != panics {
		t.Errorf("%d \"panic serving a request\" where=handler log lines, want %d", n, panics)
	}
	if n := strings.Count(out, `msg="handler passed its deadline"`); n != late {
		t.Errorf("%d \"handler passed its deadline\" log lines, want %d", n, late)
	}
	for _, want := range []string{`panic="handler blew up"`, `panic="an error value"`, "panic called with nil argument",
		"assignment to entry in nil map", "stack=", "faults_test.go"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %q", want)
		}
	}

	// Counted.
	metrics := roundTrip(t, addr, request("GET", "/metrics", nil))
	if metrics.status != 200 {
		t.Fatalf("GET /metrics: %d", metrics.status)
	}
	m := string(metrics.body)
	if got := metricValue(t, m, regexp.QuoteMeta(`rpcedge_panics_total{where="handler"}`)); got != panics {
		t.Errorf(`rpcedge_panics_total{where="handler"} %d, want %d`, got, panics)
	}
	per := conns * rounds
	for _, f := range faults {
		series := `rpcedge_requests_total{endpoint="/rpc",method="` + f + `",status="500",code="-32603"}`
		if got := metricValue(t, m, regexp.QuoteMeta(series)); got != per {
			t.Errorf("%s %d, want %d", series, got, per)
		}
	}
	okSeries := `rpcedge_requests_total{endpoint="/rpc",method="ok",status="200",code="none"}`
	if got := metricValue(t, m, regexp.QuoteMeta(okSeries)); got != per*len(faults)-okLate {
		t.Errorf("%s %d, want %d", okSeries, got, per*len(faults)-okLate)
	}
	t.Logf("%d panics and %d late handlers from %d connections in %v: all answered 500 / -32603, logged and counted; %d working calls between them answered 200",
		panics, late, conns, took.Round(time.Millisecond), per*len(faults)-okLate)

	// Still serving; no goroutine left behind by the faults once the
	// server is stopped (its idle workers stop with it).
	want{200, 0, "1"}.check(t, roundTrip(t, addr, post("/rpc", []byte(`{"jsonrpc":"2.0","id":1,"method":"ok"}`))))
	srv.stop()
	if n, d := waitGoroutines(baseG+goroutineSlack, 5*time.Second); n > baseG+goroutineSlack {
		t.Errorf("goroutines %d after %v, baseline %d", n, d, baseG)
	}
}

// metricValue returns the value of the series matching the regular
// expression name at the start of a line of Prometheus text.
func metricValue(t *testing.T, text, name string) int {
	t.Helper()
	re := regexp.MustCompile(`(?m)^` + name + ` (\d+)$`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		t.Errorf("no series %s in /metrics", name)
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestHandlerDeadlineClock measures the deadline a handler is given while
// the machine is busy (CPU-bound goroutines on every P, as under a burst
// of work): a handler that does nothing reports its context's deadline,
// and the client compares it with the time it sent the request. The
// server reads the start of the deadline off a coarse clock that its
// watchdog goroutine advances every tick (5 ms here), so a deadline may
// begin up to a tick before the request arrived, and more when the
// watchdog waits to be scheduled: how much is logged. What is judged: no
// call is answered "handler deadline exceeded" sooner than HandlerTimeout
// after it was sent (the deadline would have begun before the request
// existed). An instant handler held off the CPU past its deadline may be
// answered so later: that is logged, not judged.
func TestHandlerDeadlineClock(t *testing.T) {
	const timeout, tick = 50 * time.Millisecond, 5 * time.Millisecond
	var ms fastserver.Methods
	ms.HandleFunc("deadline", func(r *fastserver.Request, dst []byte) ([]byte, error) {
		dl, _ := r.Context().Deadline()
		return strconv.AppendInt(dst, dl.UnixNano(), 10), nil
	})
	cfg := testConfig()
	cfg.HandlerTimeout = timeout
	srv := startServer(t, cfg, ms.Endpoint("/rpc", decode.IDsJSONRPC))

	// Keep every P busy for at most 5 s; the calls start once every
	// spinner runs.
	stop := make(chan struct{})
	var spin, spinning sync.WaitGroup
	for range 2 * runtime.GOMAXPROCS(0) {
		spin.Add(1)
		spinning.Add(1)
		go func() {
			defer spin.Done()
			spinning.Done()
			end := time.Now().Add(5 * time.Second)
			for x := 0; time.Now().Before(end); x++ {
				select {
				case <-stop:
					return
				default:
				}
				for i := range 100000 {
					x += i
				}
			}
		}()
	}
	spinning.Wait()
	time.Sleep(50 * time.Millisecond)
	const conns, requests = 8, 200
	var mu sync.Mutex
	var calls, late, lateFast, short int
	var worst time.Duration
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := netDial(srv.addr)
			if err != nil {
				return
			}
			defer c.Close()
			br := bufio.NewReader(c)
			end := time.Now().Add(time.Second)
			for i := 0; i < requests && time.Now().Before(end); i++ {
				id := w*1000 + i
				c.SetDeadline(time.Now().Add(ioTimeout))
				sent := time.Now()
				if _, err := c.Write(post("/rpc", []byte(`{"jsonrpc":"2.0","id":`+strconv.Itoa(id)+`,"method":"deadline"}`))); err != nil {
					return
				}
				r, err := readResp(br)
				rtt := time.Since(sent)
				if err != nil {
					return
				}
				a, err := parseRPC(r)
				mu.Lock()
				calls++
				switch {
				case err != nil:
				case r.status == 500:
					late++
					// Answered "deadline exceeded" sooner than the
					// deadline after the send: the deadline began
					// before the request was sent.
					if rtt < timeout-tick {
						lateFast++
					}
				default:
					dl, _ := strconv.ParseInt(string(a.Result), 10, 64)
					if d := sent.Add(timeout).Sub(time.Unix(0, dl)); d > tick {
						short++
						worst = max(worst, d)
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(stop)
	spin.Wait()
	t.Logf("%d instant calls with every P busy: %d answered 500 \"handler deadline exceeded\", %d of them within %v of being sent; %d given a deadline more than one tick (%v) short of %v after the request was sent, the worst by %v",
		calls, late, lateFast, timeout-tick, short, tick, timeout, worst.Round(time.Millisecond))
	if lateFast > 0 {
		t.Errorf("%d of %d instant calls were answered \"handler deadline exceeded\" sooner than HandlerTimeout (%v) after they were sent: the deadline began before the request (the watchdog's coarse clock lagged)",
			lateFast, calls, timeout)
	}
}
