package fastserver

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"
	"github.com/valyala/fasthttp"
)

// NOTE: connection timeouts on the watchdog.
//
// fasthttp enforces ReadTimeout, WriteTimeout and IdleTimeout by setting a
// deadline on the connection three times for every keep-alive request
// (idle, read, write): three clock reads and three updates of the
// runtime's timers, 6–8 % of a small request's server CPU under load
// (floor-stream with and without them; README, "Serving at the floor").
// Serve and ServeConn instead leave fasthttp's timeouts at zero and keep
// every connection in a list with the phase it is in: reading (from the
// connection's acceptance for its first request, from a keep-alive
// request's first byte: fasthttp's connection-state hook), handling (once
// a call's body is read, or as soon as a handler that reads no body is
// entered), writing (when the handler returns), idle (the answer written:
// the hook again). On its tick the watchdog gives a connection that stayed
// in a phase longer than that phase's timeout an expired deadline, so the
// read or write it is blocked in (or its next one) fails as fasthttp's own
// deadline would have made it fail, and fasthttp answers and closes as it
// did. A cut while reading also bounds writes by WriteTimeout from then
// (fasthttp flushes pipelined answers while it reads the next request's
// headers); a connection cut while reading whose request is nevertheless
// answered has its deadlines cleared when it goes idle. A phase is timed
// from the first sweep that saw it, so a timeout is honoured no earlier
// than configured and at most two ticks later. Handling has no connection
// timeout (the handler deadline bounds it); nor do streamed answers
// (Stream gives each write its own deadline) and hijacked connections (an
// early answer sets its own). After Shutdown the watchdog ticks on until
// the connections it watches are closed.

// Connection phases. A phase and the coarse time it began are stored
// together in one word, so that the watchdog never pairs one phase with
// another's start.
const (
	connReading   = iota + 1 // headers and body: ReadTimeout
	connHandling             // the handler runs: no connection timeout
	connWriting              // the answer is written: WriteTimeout
	connIdle                 // between requests: IdleTimeout
	connFree                 // streamed, hijacked or closed: not watched
	connPhaseBits = 3
)

// connClock is the watchdog's coarse clock: milliseconds since the
// package was initialised, advanced by every watchdog's tick. It stamps
// phase words so that two occurrences of a phase differ.
var (
	connEpoch = time.Now()
	connClock atomic.Int64
)

// monoNow is the monotonic clock in nanoseconds since connEpoch: one read
// of the runtime's clock, half of what time.Now costs (which also reads
// the wall clock). Requests, handler deadlines and body rates run on it.
func monoNow() int64 { return int64(time.Since(connEpoch)) }

// connTimeouts are the limits of the watched phases, in milliseconds
// (0: none), and the counters of the connections cut off in each (nil:
// not counted).
type connTimeouts struct {
	read, write, idle int64
	cut               *[connFree]*metrics.Counter
	// draining is set by Shutdown: from then on a connection that has
	// sent no byte of a request within newConnGrace of its acceptance is
	// cut off too.
	draining atomic.Bool
}

// newConnGrace is how long, in milliseconds, a connection that has sent
// no byte of a request yet is waited for once Shutdown has begun: after
// it the connection counts as idle and is closed, as fasthttp and
// net/http close one that sent nothing for 5 s. fasthttp's own rule
// starts after the TLS handshake (its wait for the first byte), so a
// client that opens a TLS connection and never finishes the handshake
// held Shutdown for ReadTimeout, up to the whole grace period (found by
// review on 2026-12-06); the watchdog's covers the handshake.
const newConnGrace = 5000

func (t *connTimeouts) limit(phase uint64) int64 {
	switch phase {
	case connReading:
		return t.read
	case connWriting:
		return t.write
	case connIdle:
		return t.idle
	}
	return 0
}

// connList is the list of watched connections.
type connList struct {
	mu   sync.Mutex
	head *capConn
	// reclaiming counts the connections reclaimIdle closed that are not
	// closed yet; reclaims counts every one (nil: not counted).
	reclaiming int64
	reclaims   *metrics.Counter
	// fruitless is the coarse clock of the last search that found no
	// connection to reclaim: until the clock moves on, connections past
	// the cap are refused without another walk over the list.
	fruitless int64
}

const (
	// maxReclaiming bounds the reclaimed connections still closing: each
	// closes as soon as its serving goroutine sees its expired read
	// deadline.
	maxReclaiming = 64
	// reclaimAfter is how long, in milliseconds, a connection must have
	// been idle to be reclaimed: a busy client's connection is idle only
	// between an answer and its next request, and is not taken from it.
	reclaimAfter = 1000
)

// reclaimIdle makes room for a connection accepted past the cap: open
// connections are open (the new one counted), max the cap. It reports
// whether the new connection may be served: when connections reclaimed
// earlier, still closing, leave room for it, or when it closes the
// connection idle longest (an expired read deadline: fasthttp's wait for
// the next request fails and it closes the connection, as at the idle
// timeout). Idle means between two requests, or silent since it was
// accepted (no byte of a request; a TLS handshake not finished), as nginx
// reuses both kinds when it runs out of connections. A nil list (net/http's
// connections) reclaims nothing.
func (l *connList) reclaimIdle(open, max int64) bool {
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if open-l.reclaiming <= max {
		return true
	}
	now := connClock.Load()
	if l.reclaiming >= maxReclaiming || l.fruitless == now+1 {
		return false
	}
	var victim *capConn
	var skipped [4]*capConn // found with bytes waiting: busy
	for tries := 0; ; tries++ {
		var word uint64
		victim = nil
	walk:
		for c := l.head; c != nil; c = c.next {
			w := c.phase.Load()
			// Idle between requests for reclaimAfter, or silent since its
			// acceptance (its first reading phase, no byte of a request
			// yet: the phase began when it was accepted) for
			// newConnGrace, which leaves a slow TLS handshake its time.
			// ServeConn's connections (open nil) are not counted:
			// closing one would make no room.
			idle := w&(1<<connPhaseBits-1) == connIdle && int64(w>>connPhaseBits) <= now-reclaimAfter
			if !(idle || c.silent(w, now)) ||
				c.open == nil || victim != nil && w>>connPhaseBits >= word>>connPhaseBits {
				continue
			}
			for _, s := range skipped[:min(tries, len(skipped))] {
				if s == c {
					continue walk
				}
			}
			victim, word = c, w
		}
		if victim == nil {
			l.fruitless = now + 1 // +1: the zero value matches no clock
			return false
		}
		if tries > len(skipped) {
			// Each one found turned busy under the search: refused, but
			// the next connection past the cap searches again.
			return false
		}
		// A request may have arrived whole that the goroutine serving the
		// connection has not read yet (under load it runs late): the
		// phase still says idle or silent, and an expired deadline would
		// lose it (a keep-alive's closed unanswered, a first one answered
		// 408). Bytes waiting in the socket say it is busy.
		if pendingBytes(victim.Conn) {
			if tries < len(skipped) {
				skipped[tries] = victim
			}
			continue
		}
		// The phase moves off idle when the next request's first byte
		// is read: then the connection is busy and is left alone, and
		// the search starts again.
		if victim.phase.CompareAndSwap(word, connFree) {
			break
		}
	}
	victim.reclaimed = true
	l.reclaiming++
	victim.Conn.SetReadDeadline(expired)
	if l.reclaims != nil {
		l.reclaims.Inc()
	}
	return true
}

// silent reports whether c, whose phase word is w, has sent no byte of a
// request since it was accepted, newConnGrace or more before now (its
// first reading phase began at its acceptance).
func (c *capConn) silent(w uint64, now int64) bool {
	return w&(1<<connPhaseBits-1) == connReading && int64(w>>connPhaseBits) <= now-newConnGrace && !c.served.Load()
}

func (l *connList) add(c *capConn) {
	c.setPhase(connReading)
	l.mu.Lock()
	c.prev, c.next = nil, l.head
	if l.head != nil {
		l.head.prev = c
	}
	l.head = c
	l.mu.Unlock()
}

func (l *connList) remove(c *capConn) {
	l.mu.Lock()
	if c.prev != nil || l.head == c { // listed
		if c.prev != nil {
			c.prev.next = c.next
		} else {
			l.head = c.next
		}
		if c.next != nil {
			c.next.prev = c.prev
		}
		c.prev, c.next = nil, nil
	}
	if c.reclaimed {
		c.reclaimed = false
		l.reclaiming--
	}
	l.mu.Unlock()
}

// expired is a deadline that has passed.
var expired = time.Unix(1, 0)

// sweep gives every connection that overstayed its phase an expired
// deadline: the read deadline for reading and idle (fasthttp then answers
// a request cut off in its headers as its own ReadTimeout would have had
// it), both for writing. A phase is timed from the first sweep that saw
// it, which is after it began, so a watchdog kept off the CPU can only
// make a cut later, never earlier. A phase word is told from an earlier
// occurrence of the same phase by its coarse start, which each tick
// advances before it sweeps; a word stamped with this tick's own time may
// still recur within it, so it is first counted on the next tick.
func (l *connList) sweep(now int64, t *connTimeouts) {
	l.mu.Lock()
	defer l.mu.Unlock()
	draining := t.draining.Load()
	for c := l.head; c != nil; c = c.next {
		w := c.phase.Load()
		if draining && c.silent(w, now) {
			// Shutdown has begun and the connection, accepted at least
			// newConnGrace ago, has sent no byte of a request (its first
			// reading phase began at its acceptance): closed like an
			// idle one, not counted as a timeout.
			if c.phase.CompareAndSwap(w, connFree) {
				c.Conn.SetDeadline(expired)
			}
			continue
		}
		if w != c.seenWord {
			if int64(w>>connPhaseBits) < now {
				c.seenWord, c.seenAt = w, now
			}
			continue
		}
		phase := w & (1<<connPhaseBits - 1)
		lim := t.limit(phase)
		if lim == 0 || now-c.seenAt <= lim {
			continue
		}
		if !c.phase.CompareAndSwap(w, connFree) {
			continue // it moved on just now
		}
		if phase == connWriting {
			c.Conn.SetDeadline(expired)
		} else {
			// The read fails now. fasthttp may still write: a 408, or
			// pipelined answers it flushes while it reads the next
			// request's headers (its own write deadline would have
			// bounded that flush): WriteTimeout from now bounds it.
			c.Conn.SetReadDeadline(expired)
			if t.write > 0 {
				c.Conn.SetWriteDeadline(time.Now().Add(time.Duration(t.write) * time.Millisecond))
			}
			// A request read before the cut (its handler overstayed
			// ReadTimeout without reading) is still answered; if the
			// connection then goes idle, the deadlines are cleared
			// (connState), as fasthttp's next idle deadline would have.
			c.cutReading.Store(true)
		}
		if t.cut != nil {
			t.cut[phase].Inc()
		}
	}
}

// empty reports whether no connection is listed.
func (l *connList) empty() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.head == nil
}

// advanceClock moves the coarse clock forward to ms.
func advanceClock(ms int64) {
	for {
		old := connClock.Load()
		if ms <= old || connClock.CompareAndSwap(old, ms) {
			return
		}
	}
}

// setPhase moves c to phase, begun now by the coarse clock.
func (c *capConn) setPhase(phase uint64) {
	c.phase.Store(uint64(connClock.Load())<<connPhaseBits | phase)
}

// watchedConn returns the capConn under nc (a TLS connection's included),
// or nil for a connection Serve did not accept.
func watchedConn(nc net.Conn) *capConn {
	switch c := nc.(type) {
	case *capConn:
		return c
	case *tls.Conn:
		cc, _ := c.NetConn().(*capConn)
		return cc
	}
	return nil
}

// connState is fasthttp's connection-state hook: a request's first byte
// starts its reading phase, a written answer the idle phase.
func connState(nc net.Conn, st fasthttp.ConnState) {
	c := watchedConn(nc)
	if c == nil {
		return
	}
	switch st {
	case fasthttp.StateActive:
		if !c.served.Load() { // a plain load after the first request
			c.served.Store(true)
		}
		if c.hold == holdArmed {
			// Armed, yet the last answer made no write: nothing to hold
			// now (conns.go). Held bytes wait for fasthttp's next
			// flush, which sends them.
			c.hold = holdNone
		}
		// A connection's first request is timed from its acceptance
		// (the phase add began), as fasthttp times it; a keep-alive
		// request from its first byte.
		if c.phase.Load()&(1<<connPhaseBits-1) != connReading {
			c.setPhase(connReading)
		}
	case fasthttp.StateIdle:
		if c.drainFor.Load() != 0 { // a plain load on the common path
			// The connection serves on: no drain when it closes later
			// (drainAtClose).
			c.drainFor.Store(0)
		}
		if c.cutReading.Load() && c.cutReading.Swap(false) { // a plain load on the common path
			// Cut while reading, yet answered: the connection lives on.
			c.Conn.SetDeadline(time.Time{})
		}
		c.setPhase(connIdle)
	case fasthttp.StateHijacked:
		c.hijacked.Store(true)
		c.setPhase(connFree)
	case fasthttp.StateClosed:
		c.setPhase(connFree)
	}
}

// markConn moves the request's connection to phase (connHandling once
// the body is read, connWriting or connFree when the handler returns).
func markConn(ctx *fasthttp.RequestCtx, phase uint64) {
	if c := watchedConn(ctx.Conn()); c != nil {
		c.setPhase(phase)
	}
}
