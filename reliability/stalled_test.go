package reliability

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// stalledUpload keeps one stalled upload open from local until stop is
// closed: headers declaring a large body (or a compressed one), then one
// body byte, then nothing; reopened as soon as the server closes it.
// Every closed connection is counted in closed, and the status it was
// answered in statuses.
func stalledUpload(addr string, local net.Addr, head []byte, stop <-chan struct{}, closed *atomic.Int64, statuses *sync.Map) {
	d := net.Dialer{Timeout: ioTimeout, LocalAddr: local}
	for {
		select {
		case <-stop:
			return
		default:
		}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		c.SetDeadline(time.Now().Add(30 * time.Second))
		c.Write(head)
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 512)
			n, _ := c.Read(buf)
			st := "closed"
			if n > 12 && strings.HasPrefix(string(buf), "HTTP/1.1 ") {
				st = string(buf[9:12])
			}
			v, _ := statuses.LoadOrStore(st, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
		}()
		select {
		case <-done:
		case <-stop:
		}
		c.Close()
		<-done
		closed.Add(1)
	}
}

// TestStalledUploads holds 400 uploads (150 under -short), each from its
// own 127.0.0.x address, that send headers declaring a 1 MiB body (one
// in four a gzip body of 20 bytes) and then one body byte, and reopen as soon as the
// server closes them, while a normal client on 127.0.0.1 sends echo calls.
// Before, ~130 such uploads spent the 256 MiB budget and every other POST
// waited a second and got 503 (issue #18). Now each holds what it sent
// plus a first step of the budget, the data rate cuts them off after the
// grace, and the normal client's latency stays where it was: no 503, p99
// within 50 ms or 3× its p99 without the attack.
func TestStalledUploads(t *testing.T) {
	n, requests := 400, 600
	if testing.Short() {
		n, requests = 150, 200
	}
	needFiles(t, uint64(2*n+200))
	cfg := testConfig()
	cfg.ReadTimeout = 10 * time.Second // the rate, not the read timeout, cuts them off
	cfg.MinBodyRateGrace = time.Second
	srv := startApp(t, cfg)
	want{200, 0, "1"}.check(t, roundTrip(t, srv.addr, post("/mcp", echoCall(1, "warm"))))
	control := normalClient(t, srv.addr, requests)

	identity := post("/mcp", nil, "Content-Length: 1048576")
	identity = append(identity, '{')
	gz := post("/mcp", nil, "Content-Encoding: gzip", "Content-Length: 20")
	gz = append(gz, 0x1f)
	stop := make(chan struct{})
	var closed atomic.Int64
	var statuses sync.Map
	var wg sync.WaitGroup
	for i := range n {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, byte(1+i/250), byte(2+i%250))}
		head := identity
		if i%4 == 3 {
			head = gz
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			stalledUpload(srv.addr, local, head, stop, &closed, &statuses)
		}()
	}
	time.Sleep(500 * time.Millisecond) // every upload open and stalled
	held := metricValue(t, string(roundTrip(t, srv.addr, request("GET", "/metrics", nil)).body), `rpcedge_inflight_body_bytes`)

	limit := max(normalP99, 3*control)
	probe := startStallProbe(t)
	lat, errs := normalWindow(t, srv.addr, requests, 15*time.Second)
	stall := probe.stop()
	close(stop)
	wg.Wait()

	for _, e := range errs[:min(len(errs), 10)] {
		t.Errorf("normal client: %s", e)
	}
	var seen []string
	statuses.Range(func(k, v any) bool {
		seen = append(seen, fmt.Sprintf("%s×%d", k, v.(*atomic.Int64).Load()))
		return true
	})
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	t.Logf("%d stalled uploads (1 MiB declared, or gzip): the budget held %d KiB (%.1f KiB each); normal client %d requests: p50 %v, p99 %v (without the attack p99 %v), %d errors; stalled connections ended %d times (%s); the machine stalled at most %v",
		n, held>>10, float64(held)/1024/float64(n), len(lat), p50.Round(time.Microsecond), p99.Round(time.Microsecond), control.Round(time.Microsecond), len(errs), closed.Load(), strings.Join(seen, ", "), stall.Round(time.Millisecond))
	// A stalled identity upload holds its first step (4 KiB); a gzip one
	// its decompressor's state (64 KiB) and the first step of its decoded
	// bytes (twice 4 KiB): 21 KiB on average, three of the first to one of
	// the second.
	if per := int64(held) / int64(n); per > 22<<10 {
		t.Errorf("each stalled upload holds %d bytes of the budget on average: more than a first reservation", per)
	}
	switch {
	case raceEnabled || p99 <= limit:
	case stall >= limit:
		t.Logf("NOT JUDGED: the machine stalled %v (stall probe); p99 %v, bound %v", stall, p99, limit)
	default:
		t.Errorf("normal client p99 %v under %d stalled uploads, over %v (50 ms, or 3× the p99 without the attack)", p99, n, limit)
	}
}
