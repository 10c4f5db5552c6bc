package fastserver

// The body budget is charged as bytes arrive, and bodies slower than the
// minimum data rate are cut off (contract §3; issue #18 item 1).

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A stalled upload with a large declared length holds at most what it sent
// plus as much again (at least the first step), never its declared length.
func TestBudgetChargedAsBytesArrive(t *testing.T) {
	const max = 1 << 20
	s, addr := serve(t, Config{MaxBodyBytes: max, DrainTimeout: 100 * time.Millisecond})
	body := `{"jsonrpc":"2.0","id":"big","method":"echo","params":{"s":"` + strings.Repeat("b", max-200) + `"}}`
	raw := post(pathRPC, body)
	head := len(raw) - len(body)
	c := dial(t, addr)
	sent := head + 1
	c.send(raw[:sent])
	waitFor(t, "the upload to be in its handler", func() bool { return s.Stats().Entered == 1 })
	time.Sleep(50 * time.Millisecond)
	if used := s.budget.used.Load(); used > firstStep {
		t.Errorf("declared %d bytes, sent 1: holds %d bytes of the budget, want at most %d", len(body), used, firstStep)
	}
	for _, more := range []int{10 << 10, 100 << 10, 500 << 10} {
		c.send(raw[sent : head+more])
		sent = head + more
		time.Sleep(50 * time.Millisecond)
		got := int64(sent - head)
		if used := s.budget.used.Load(); used > 2*got+firstStep {
			t.Errorf("sent %d body bytes: holds %d, want at most %d", got, used, 2*got+firstStep)
		} else {
			t.Logf("sent %7d body bytes of %d: holds %7d bytes of the budget", got, len(body), used)
		}
	}
	c.send(raw[sent:])
	r := c.read()
	if r.Status != 200 {
		t.Fatalf("the upload, finished: %s", r.StatusLine)
	}
	waitFor(t, "the budget to be released", func() bool { return s.budget.used.Load() == 0 })
}

// A body slower than MinBodyRate once the grace has passed is cut off:
// 408 / -32600, closed, counted. A body that keeps the rate is not.
func TestMinBodyRate(t *testing.T) {
	s, addr := serve(t, Config{MinBodyRate: 2000, MinBodyRateGrace: 300 * time.Millisecond, HandlerTimeout: time.Second, DrainTimeout: 100 * time.Millisecond})
	body := `{"jsonrpc":"2.0","id":"r","method":"echo","params":{"s":"` + strings.Repeat("r", 4000) + `"}}`
	raw := post(pathRPC, body)
	head := len(raw) - len(body)

	// 20 bytes every 100 ms: 200 B/s.
	slow := dial(t, addr)
	slow.send(raw[:head+20])
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := head + 20; i < len(raw); i += 20 {
			time.Sleep(100 * time.Millisecond)
			if slow.c.SetWriteDeadline(time.Now().Add(time.Second)) != nil {
				return
			}
			if _, err := slow.c.Write([]byte(raw[i:min(i+20, len(raw))])); err != nil {
				return
			}
		}
	}()
	r := slow.read()
	took := time.Since(start)
	want{408, -32600, "null", "", ""}.check(t, r)
	if a := parseAnswer(t, r.Body); a.Msg != "the body arrived slower than the minimum data rate" {
		t.Errorf("message %q", a.Msg)
	}
	if took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("cut off after %v, want after the 300 ms grace and within a few watchdog ticks", took)
	}
	slow.expectGone()
	slow.c.Close()
	<-done

	// 400 bytes every 100 ms: 4 KB/s, twice the rate: answered.
	fast := dial(t, addr)
	fast.send(raw[:head+400])
	for i := head + 400; i < len(raw); i += 400 {
		time.Sleep(100 * time.Millisecond)
		fast.send(raw[i:min(i+400, len(raw))])
	}
	want{200, 0, `"r"`, "", ""}.check(t, fast.read())

	m := roundTrip(t, addr, request("GET", "/metrics", ""))
	if v := regexp.MustCompile(`rpcedge_slow_bodies_total (\d+)`).FindSubmatch(m.Body); v == nil || string(v[1]) != "1" {
		t.Errorf("rpcedge_slow_bodies_total: %q, want 1", v)
	}
	waitSettled(t, s)
}

// The rate counts from the request's start: headers that arrive quickly
// and a body that does not are cut off once the grace has passed, even
// when no byte of it came.
func TestMinBodyRateNoBody(t *testing.T) {
	_, addr := serve(t, Config{MinBodyRate: 1000, MinBodyRateGrace: 200 * time.Millisecond, DrainTimeout: 100 * time.Millisecond})
	c := dial(t, addr)
	c.send("POST " + pathRPC + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(50000) + "\r\n\r\n{")
	start := time.Now()
	r := c.read()
	want{408, -32600, "null", "", ""}.check(t, r)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("cut off after %v", d)
	}
}
