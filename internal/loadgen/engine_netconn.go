package loadgen

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"
)

// NOTE: the portable engine: one goroutine per connection over net.Conn,
// blocking writes and reads with a deadline per request. It is the
// default where the epoll engine is not compiled in, and the reference the
// epoll engine's tests compare with.

func init() { registerEngine("netconn", func() engine { return netconnEngine{} }) }

type netconnEngine struct{}

// connBackoff is how long a connection waits after a failed connect.
const connBackoff = 100 * time.Millisecond

var errTimeout = errors.New("no complete answer within the timeout")

// connSlot holds a worker's current connection so that an abort can
// unblock it.
type connSlot struct {
	mu sync.Mutex
	c  net.Conn
}

func (s *connSlot) set(c net.Conn) {
	s.mu.Lock()
	s.c = c
	s.mu.Unlock()
}

func (netconnEngine) run(r *runner) error {
	n := r.cfg.Connections
	slots := make([]*connSlot, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		slots[i] = &connSlot{}
		w := r.newWorker(i, n)
		wg.Add(1)
		go func(s *connSlot) {
			defer wg.Done()
			netconnLoop(ctx, r, w, s)
		}(slots[i])
	}
	finished := make(chan struct{})
	go func() {
		select {
		case <-r.abortCh:
			cancel()
			for _, s := range slots {
				s.mu.Lock()
				if s.c != nil {
					_ = s.c.SetDeadline(time.Unix(1, 0))
				}
				s.mu.Unlock()
			}
		case <-finished:
		}
	}()
	wg.Wait()
	close(finished)
	return nil
}

// sleep waits d, or less if the run is aborted; it reports whether the
// full wait passed.
func (r *runner) sleep(t *time.Timer, d time.Duration) bool {
	t.Reset(d)
	select {
	case <-t.C:
		return true
	case <-r.abortCh:
		t.Stop()
		return false
	}
}

func netconnLoop(ctx context.Context, r *runner, w *worker, slot *connSlot) {
	x := newExchange()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	d := net.Dialer{Timeout: r.cfg.Timeout}
	if r.drainEnd > 0 {
		d.Deadline = r.start.Add(time.Duration(r.drainEnd))
	}
	var conn net.Conn
	dialed := false
	probe := newIdleProbe()
	drop := func() {
		if conn != nil {
			slot.set(nil)
			conn.Close()
			conn = nil
		}
	}
	defer drop()
	for !r.aborted.Load() {
		now := r.now()
		intended, ok := r.claim(now)
		if !ok {
			if conn != nil && !r.open && x.haveLast && !r.aborted.Load() {
				_ = conn.SetReadDeadline(r.start.Add(time.Duration(r.finalLookUntil(now))))
				buf := x.rbuf[:cap(x.rbuf)]
				if n, _ := conn.Read(buf); n > 0 {
					w.unasked(x, buf[:n])
				}
			}
			return
		}
		idle := intended > now
		if idle && !r.sleep(timer, time.Duration(intended-now)) {
			return
		}
		w.prepare(x, intended)
		if conn != nil && idle {
			// The connection sat idle until the slot: what the server
			// sent meanwhile is not the next answer. (The last
			// request's deadline may have passed while it idled.)
			_ = conn.SetReadDeadline(r.start.Add(time.Duration(r.stepDeadline(r.now()))))
			buf := x.rbuf[:cap(x.rbuf)]
			if n, eof := probe.check(buf); n > 0 || eof {
				if n > 0 {
					w.unasked(x, buf[:n])
				}
				drop()
			}
		}
		if conn == nil {
			x.sentAt = r.now() // a failure waited from here
			c, err := d.DialContext(ctx, "tcp", r.addr.String())
			if err != nil {
				if now := r.now(); r.drainEnd > 0 && now >= r.drainEnd {
					err = errDrain
				}
				w.failed(x, err, false)
				if !r.sleep(timer, connBackoff) {
					return
				}
				continue
			}
			if dialed {
				w.reconnected()
			}
			dialed = true
			conn = c
			slot.set(c)
			probe.attach(c)
			x.newConn()
			if r.aborted.Load() {
				return
			}
		}
		sentAt := r.now()
		_ = conn.SetDeadline(r.start.Add(time.Duration(r.stepDeadline(sentAt))))
		w.sent(x, sentAt)
		if _, err := conn.Write(x.wire); err != nil {
			w.failed(x, r.netErr(err), true)
			drop()
			continue
		}
		if err := readAnswer(conn, x, r.now); err != nil {
			w.failed(x, r.netErr(err), true)
			drop()
			continue
		}
		w.answered(x, r.now())
		if x.closesAfter() || x.resp.end != len(x.rbuf) {
			drop()
		}
	}
}

func readAnswer(conn net.Conn, x *exchange, now func() int64) error {
	for {
		sp, err := x.readSpace()
		if err != nil {
			return err
		}
		n, err := conn.Read(sp)
		x.rbuf = x.rbuf[:len(x.rbuf)+n]
		x.read(now)
		eof := false
		if err == io.EOF {
			eof = true
		} else if err != nil {
			return err
		}
		done, perr := x.resp.parse(x.rbuf, eof)
		if perr != nil {
			return perr
		}
		if done {
			return nil
		}
		if eof {
			return errEOF
		}
	}
}

// netErr names a read or write error: a deadline passed is the request's
// timeout or the end of the drain.
func (r *runner) netErr(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return r.timeoutErr(r.now())
	}
	return err
}
