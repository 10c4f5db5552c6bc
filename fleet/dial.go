package fleet

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// NOTE: why the fleet dials Redis through probeDial.
//
// rueidis (v1.0.80) honours a call's context on a connection it has, and
// while it dials one, but not all the way through a new connection whose
// handshake (HELLO) gets no answer: Redis accepted the TCP connection and
// then said nothing (a stopped, swapping or wedged process). rueidis then
// closes that connection with a PING that, when its cleanup worker has
// already exited, waits for a one-second escape timer (pipe.Close), past
// the call's context. The connection is dialed by whichever call comes
// first after the old one broke, on a request's goroutine: a Take on a
// busy machine took 1.1–1.4 s, where the promise is twice Options.Timeout.
//
// probeDial sends an inline PING on each new connection and hands the
// connection to rueidis only once a line comes back (+PONG, or an error
// such as -NOAUTH: either way Redis is alive and answering), within the
// dial's context. A silent Redis fails the dial, and a failed dial is
// returned at once, with no connection to close. A Redis that answers the
// PING and freezes before the HELLO a moment later can still hold a call;
// only a goroutine per call bounds that too, and that was measured at
// about twice the cost of a serial call (a PING to a loopback Redis,
// 33–46 → 55–96 µs). The probe costs a round trip per new connection,
// nothing per call.

// errSilent is the dial's error when Redis accepted the connection and
// did not answer the probe in time.
var errSilent = errors.New("fleet: redis accepted the connection but did not answer PING in time")

// dialFunc is rueidis's ClientOption.DialCtxFn.
type dialFunc = func(ctx context.Context, dst string, d *net.Dialer, cfg *tls.Config) (net.Conn, error)

// probeDial returns a dial function that dials as inner does (as rueidis
// does when inner is nil: TCP, and TLS when cfg is set) and then probes
// the connection (see the NOTE).
func probeDial(inner dialFunc) dialFunc {
	return func(ctx context.Context, dst string, d *net.Dialer, cfg *tls.Config) (net.Conn, error) {
		var c net.Conn
		var err error
		switch {
		case inner != nil:
			c, err = inner(ctx, dst, d, cfg)
		case cfg != nil:
			c, err = (&tls.Dialer{NetDialer: d, Config: cfg}).DialContext(ctx, "tcp", dst)
		default:
			c, err = d.DialContext(ctx, "tcp", dst)
		}
		if err != nil {
			return nil, err
		}
		if err := probe(ctx, c, d.Timeout); err != nil {
			c.Close()
			return nil, err
		}
		return c, nil
	}
}

// probePing is an inline PING: a connection before HELLO speaks RESP2,
// which answers it with one simple-string or error line.
var probePing = []byte("PING\r\n")

// probe writes an inline PING on c and reads one line back before the
// context's end (or timeout, when that comes first or the context has no
// deadline), then clears c's deadline for rueidis.
func probe(ctx context.Context, c net.Conn, timeout time.Duration) error {
	var dl time.Time
	if timeout > 0 {
		dl = time.Now().Add(timeout)
	}
	if d, ok := ctx.Deadline(); ok && (dl.IsZero() || d.Before(dl)) {
		dl = d
	}
	if err := c.SetDeadline(dl); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.Write(probePing); err != nil {
		return probeErr(ctx, err)
	}
	var buf [256]byte // -NOPERM's line names the user and the command
	n := 0
	for {
		k, err := c.Read(buf[n:])
		n += k
		if i := bytes.Index(buf[:n], []byte("\r\n")); i >= 0 {
			if i+2 != n || (buf[0] != '+' && buf[0] != '-') {
				return fmt.Errorf("fleet: the server answered PING with %q, not one RESP line", buf[:n])
			}
			if !stop() { // the context ended as the answer came
				return probeErr(ctx, os.ErrDeadlineExceeded)
			}
			return c.SetDeadline(time.Time{})
		}
		if err != nil {
			return probeErr(ctx, err)
		}
		if n == len(buf) {
			return fmt.Errorf("fleet: the server answered PING with a line over %d bytes", len(buf))
		}
	}
}

// probeErr names a probe that ran out of time as errSilent, with the
// context's error when it was the context's end (the connection's
// deadline may pass a moment before the context's own timer fires).
func probeErr(ctx context.Context, err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w: %w", errSilent, cerr)
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return fmt.Errorf("%w: %w", errSilent, context.DeadlineExceeded)
	}
	return errSilent
}
