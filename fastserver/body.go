package fastserver

import (
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/valyala/fasthttp"
)

// NOTE: the in-flight body budget, charged as the bytes arrive.
//
// Row 6 bounds the body bytes held across all connections. A body is
// charged for what it holds, when it holds it: never its declared length,
// nor a compressed body's possible size, up front — or a few hundred
// connections that send headers and one byte would spend the whole budget
// and lock every POST out. So:
//
//   - an identity body is charged the decoder's buffer as the bytes
//     arrive: the buffer starts at firstStep and doubles when full, and
//     its next size is charged once the bytes that fill it have arrived,
//     before they are handed over, so the decoder never allocates what
//     the budget has not granted, and reads each step whole; the charge
//     never passes what arrived plus as much again,
//     so a stalled upload holds at most twice what it sent (and at least
//     firstStep);
//   - a larger declared length is read into one buffer when one that
//     takes the whole body is there already: the decoder's own, kept
//     from an earlier body (at most keepBodyBuffer), or one the pool
//     holds idle (bodyBuffers.Idle, decode.Decoder.GrowIdle). No doubling
//     buffer's copies, and no steps: the memory is an earlier body's, so
//     each read takes what has arrived and is charged exactly that once
//     it is in, before the decoder sees it (a body that is all there is
//     read in one system call, not one per step). With none there, the
//     buffer doubles and is charged in steps as above. A stalled upload
//     so keeps from the collector an idle buffer it did not pay for: the
//     buffers lent add up to at most a quarter of the budget
//     (budget.lend), and past that bodies double as before;
//   - a declared length of at most firstStep is reserved whole and read
//     into one buffer (the step is then its length): a longer one is
//     charged as it arrives like any other, or MaxConns stalled uploads
//     declaring budgetStep would hold MaxConns × budgetStep (625 MiB at
//     the defaults, over the whole budget);
//   - a compressed body, whose decoded size is not declared, is read
//     into an idle buffer of the last compressed body's decoded size
//     when the pool holds one (within the same quarter of the budget),
//     else into one that doubles; either way it is charged as below;
//   - a compressed body is charged codingState for each of its (at most
//     two) decompressors up front, and, with a zstd layer, the history
//     ring and block buffer of each frame that needs a larger window than
//     the frames before it, when its header arrives, before the decoder
//     allocates them (decode.BodyReader.Reserve): decode lowers a frame's
//     window to what the ceiling allows, so a frame is charged at most
//     decode.ZstdHistory(ceiling) (1.5 MiB at 1 MiB), a body's frames
//     three times that in all, and a small frame whose blocks arrive with
//     its header only what they can hold (4 KiB for a 41-byte body,
//     whatever window it declared); this
//     state may hold at most a quarter of the budget; and twice its
//     decoded bytes as they are produced (the decoder's buffer and the
//     decompressor's history), in the same steps, which with that state
//     may hold at most half the budget (budget.tryCoded), so that stalled
//     compressed uploads, whose few wire bytes may decode to the ceiling,
//     never lock out bodies without a coding; its wire bytes pass through
//     the decompressor's fixed buffer and are not charged again.
//
// A step that finds no room within BudgetWait fails the read with
// errBudget: 503 / -32603 with Retry-After. Whatever a body holds is
// released when its request ends, however it ends; the request of an
// answer that streams ends with the stream (its handler still reads the
// body's params, in the decoder's buffer), unless the handler gives the
// body back before the stream's first event (Stream.ReleaseBody: a
// subscription that copied what it follows), so that hour-long streams
// do not hold the budget.
//
// The buffers a body outgrew are garbage until the next collection: the
// heap that bodies hold stays within about three times the budget (live
// buffers, outgrown ones, the collector's headroom;
// reliability.TestInflightBudget measures it), and the idle buffers lent
// to bodies a quarter of it more at most (never made for a body). Under
// overload, bodies charged as they arrive share the budget: more of them
// start and fewer finish than when each reserved its whole length, which
// is the price of not letting a stalled one hold what it never sent.
//
// The data rate. A body that arrives slower than Config.MinBodyRate
// (averaged since the request began) once Config.MinBodyRateGrace has
// passed is cut off: the watchdog (deadline.go), which already visits
// every body being read on each tick, sets the connection's read deadline
// to now, and the request is answered 408 / -32600 and closed. This is
// Kestrel's MinRequestBodyDataRate (240 B/s after a 5 s grace by default;
// the contract's default is 1 KiB/s); nginx's client_body_timeout bounds
// only the pause between two reads, which a client sending a byte every
// few seconds never reaches. fasthttp's ReadTimeout still bounds the
// whole request, headers and body. No per-peer bound on concurrent
// uploads is added: with the budget charged as above, even MaxConns
// stalled uploads hold at most MaxConns × firstStep (40 MiB at the
// defaults) of the budget, besides the idle buffers lent (at most a
// quarter of the budget), and a per-peer bound would refuse clients
// behind one NAT or proxy.

const (
	// keepBodyBuffer is the largest body buffer a pooled call keeps:
	// larger ones are dropped after their request, so that the pool does
	// not hold the memory of the largest bodies ever read.
	keepBodyBuffer = 256 << 10
	// keepAnswerBuffer is the largest answer buffer (uncompressed or
	// compressed) a pooled call keeps.
	keepAnswerBuffer = 256 << 10
	// budgetStep is the largest step.
	budgetStep = 64 << 10
	// firstStep is the first step of a body charged as it arrives, and
	// the largest declared length reserved whole.
	firstStep = 4 << 10
	// codingState is what one decompressor is charged for its state.
	codingState = 64 << 10
	// decodedFactor is the budget charged per decoded byte of a
	// compressed body.
	decodedFactor = 2
)

// errBudget says the in-flight body budget had no room within BudgetWait.
var errBudget = errors.New("fastserver: in-flight body budget spent")

// charge reserves the budget for one stream of a body, in steps.
type charge struct {
	s        *Server
	reserved int64 // budget bytes held
	units    int64 // units read (wire or decoded bytes)
	factor   int64 // budget bytes per unit
	limit    int64 // units never reserved past: the ceiling + 1
	coded    bool  // a compressed body's decoded bytes: budget.acquireCoded
}

// acquire reserves n budget bytes for ch, from the share its kind may take.
func (ch *charge) acquire(n int64) bool {
	if ch.coded {
		return ch.s.budget.acquireCoded(n, ch.s.cfg.BudgetWait)
	}
	return ch.s.budget.acquire(n, ch.s.cfg.BudgetWait)
}

// cover reserves until the charge covers need units (need is at most the
// limit), in one acquisition.
func (ch *charge) cover(need int64) error {
	if ch.reserved >= need*ch.factor {
		return nil
	}
	more := need*ch.factor - ch.reserved
	if !ch.acquire(more) {
		return errBudget
	}
	ch.reserved += more
	return nil
}

// room returns how many more units may be read now, reserving the next
// step when none is left.
func (ch *charge) room() (int64, error) {
	if left := ch.reserved/ch.factor - ch.units; left > 0 {
		return left, nil
	}
	step := min(max(firstStep, ch.reserved/ch.factor), budgetStep)
	step = max(min(step, ch.limit-ch.units), 1)
	if !ch.acquire(step * ch.factor) {
		return 0, errBudget
	}
	ch.reserved += step * ch.factor
	return ch.reserved/ch.factor - ch.units, nil
}

// bodyReader reads the request body off the connection for the decoder:
// it notes whether the body was read to its end, counts wire bytes (also
// for the data-rate watchdog), and charges them to the budget when the
// body is charged in steps.
type bodyReader struct {
	r      io.Reader
	eof    bool
	inRead bool  // inside r.Read, for the panic guard
	n      int64 // wire bytes read
	steps  bool  // charge the wire bytes in steps
	// ready says the whole body fits a buffer that was there already
	// (Server.lendIdle), so each read takes what has arrived, up to the
	// whole body, and is charged once it is in. It is set only on a body
	// charged in steps.
	ready bool
	wire  charge
	// length is the declared Content-Length, or -1: a body that ends
	// before it is incomplete (RFC 9112 §8), never a shorter message.
	length int64
	dl     *deadlineCtx // publishes n to the watchdog
}

func (b *bodyReader) Read(p []byte) (int, error) {
	// p is the free end of the decoder's buffer, which doubles when full.
	size := b.n + int64(cap(p))
	if b.steps && !b.ready {
		// Charge the buffer, never more than what arrived plus as much
		// again (and at least firstStep).
		if err := b.wire.cover(min(size, b.n+max(b.n, firstStep), b.wire.limit)); err != nil {
			return 0, err
		}
		if room := b.wire.reserved - b.n; int64(len(p)) > room {
			p = p[:max(room, 1)]
		}
	}
	b.inRead = true
	at(stageBody)
	n, err := b.r.Read(p)
	if n == 1 && err == nil && b.n == 0 && len(p) > 1 && p[0] == '{' {
		// fasthttp hands over first the one byte it prefetched before
		// the handler (Server.MaxRequestBodySize is 1). An opening brace
		// decides nothing, so read on now, as the decoder would at once,
		// rather than have it scan one byte alone.
		var m int
		m, err = b.r.Read(p[1:])
		n += m
	}
	b.inRead = false
	b.n += int64(n)
	b.wire.units += int64(n)
	if b.dl != nil && n > 0 {
		// Before a charge that may wait: the data-rate watchdog counts
		// these bytes as arrived.
		b.dl.bodyBytes.Store(b.n)
	}
	if b.ready && n > 0 && (err == nil || err == io.EOF) {
		// Into a buffer that was there: charge what arrived, before the
		// decoder sees it. A read is not held to the steps here, so a
		// body that arrives at once is read in as few system calls as
		// the floor's. Bytes whose charge fails are not handed over: the
		// decoder must not judge them (row 6 comes before rows 7 to 10).
		// A read that failed is answered for its error, without waiting
		// for budget.
		if cerr := b.wire.cover(min(b.n, b.wire.limit)); cerr != nil {
			n, err = 0, cerr
		}
	}
	if b.steps && b.n == size && size < b.wire.limit && err == nil {
		// The buffer is full and the decoder doubles it next: charge the
		// next size now, before the read hands over the bytes that filled
		// it, so that the decoder never allocates what the budget has
		// not granted. That is twice what arrived. (Stopping one byte
		// short of full instead, to charge before that byte, cost each
		// step a one-byte read and the system call that refills
		// fasthttp's buffer for it.)
		err = b.wire.cover(min(2*size, b.wire.limit))
	}
	if err != nil && err != io.EOF && b.length < 0 && forbiddenTrailer(err) {
		// fasthttp refuses trailer fields RFC 9110 §6.5.1 says a sender
		// must not send (Content-Type, Content-Length, Host,
		// Authorization, ...). It reads the trailer section only after
		// the last chunk, so the body is whole, and the contract has
		// trailers change no answer: the body ends here. fasthttp marks
		// the stream failed, so the connection closes after the answer
		// and the trailer section is never parsed as a request.
		err = io.EOF
	}
	if err == io.EOF {
		if b.length >= 0 && b.n < b.length {
			err = io.ErrUnexpectedEOF // the connection ended inside the body
		} else {
			b.eof = true
		}
	}
	at(stageDecode)
	return n, err
}

// forbiddenTrailer reports whether err is fasthttp's refusal of a
// trailer field by its name (v1.79.0 wraps no exported error for it).
func forbiddenTrailer(err error) bool {
	return strings.Contains(err.Error(), "forbidden trailer key")
}

// decodedReader undoes a body's content codings and charges the decoded
// bytes to the budget as they are produced, and the zstd history as its
// frames ask for it.
type decodedReader struct {
	zr   decode.BodyReader
	ch   charge
	held int64 // zstd history charged as decompressor state
}

// reserveHistory is zr.Reserve: it charges n bytes of zstd history to the
// decompressor state, waiting up to BudgetWait.
func (d *decodedReader) reserveHistory(n int64) error {
	if !d.ch.s.budget.acquireState(n, d.ch.s.cfg.BudgetWait) {
		return errBudget
	}
	d.held += n
	return nil
}

func (d *decodedReader) Read(p []byte) (int, error) {
	room, err := d.ch.room()
	if err != nil {
		return 0, err
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := d.zr.Read(p)
	d.ch.units += int64(n)
	return n, err
}

// firstReservation is what a body reserves before any byte of it is
// read (row 6): a declared length up to firstStep whole (whole reports
// so); a compressed body the state of its decompressors; any other body
// one first step.
func (s *Server) firstReservation(h *fasthttp.RequestHeader, enc decode.Encoding) (reserve int64, whole bool) {
	if !enc.IsIdentity() {
		// A zstd layer's history is charged as its frames arrive
		// (decodedReader.reserveHistory).
		return codingState * int64(layers[enc]), false
	}
	if cl := h.ContentLength(); cl >= 0 && cl <= firstStep {
		return int64(cl), true
	}
	return firstStep, false
}

// readBody decodes the body of the request in c (rows 7 to 10), charging
// the budget as it goes; c.body.wire and c.dz.ch hold what was reserved
// besides the first reservation.
func (s *Server) readBody(c *call, stream io.Reader, enc decode.Encoding, whole bool, length int64) error {
	m := &c.msg
	c.body = bodyReader{
		r: stream, length: length, dl: &c.dl,
		steps: enc.IsIdentity() && !whole,
		wire:  charge{s: s, factor: 1, limit: s.cfg.MaxBodyBytes + 1},
	}
	if c.body.steps {
		// The first reservation is the first step.
		c.body.wire.reserved, c.first = c.first, 0
	}
	if enc.IsIdentity() {
		if whole {
			c.dec.Grow(length + 1) // one buffer: the declared size and the byte that finds EOF
		} else if length >= 0 {
			// A larger declared length is still charged as its bytes
			// arrive, but it is read into one buffer when one is there
			// already (the decoder's own, or one an earlier body left
			// idle in the pool): no doubling buffer's copies, no steps,
			// and no memory taken that was not there.
			c.body.ready = s.lendIdle(c, length)
		}
		return c.dec.DecodeReader(&c.body, m)
	}
	c.dz.ch = charge{s: s, factor: decodedFactor, limit: s.cfg.MaxBodyBytes + 1, coded: true}
	c.dz.held = 0
	if err := c.dz.zr.Reset(&c.body, enc, s.cfg.MaxBodyBytes); err != nil {
		*m = decode.Message{Kind: decode.KindInvalid}
		return refusal(m, err)
	}
	if size := s.decoded.Load(); size > budgetStep {
		// A compressed body does not declare its decoded size: it is
		// read into an idle buffer of the last one's, if the pool holds
		// one (the bodies an endpoint gets are often alike), rather than
		// into one that doubles and copies what it holds each time. The
		// charge is unchanged: the decoded bytes, as they are produced.
		// A wrong guess costs nothing: a smaller body leaves the rest of
		// the buffer idle, a larger one grows it.
		s.lendIdle(c, size)
	}
	err := c.dec.DecodeReader(&c.dz, m)
	c.dz.zr.Close()
	if n := int64(len(c.dec.Body())); err == nil && n != s.decoded.Load() {
		s.decoded.Store(n) // written only when it changes: every request reads it
	}
	if e, ok := err.(*decode.Error); ok && e != &m.Error {
		// A refusal of the decoding layer (wire ceiling, corrupt stream,
		// decoded ceiling): decode.Decoder.DecodeBody's rule.
		return refusal(m, err)
	}
	return err
}

// lendIdle reports whether c's decoder has a buffer for a body of size
// bytes (declared, or guessed for a compressed one) in memory that is
// there already: its own, kept from an earlier body (at most
// keepBodyBuffer), or one the pool holds idle, which it then takes if
// budget.lend allows it (what such buffers hold beyond their bodies'
// charges is bounded, so that stalled uploads cannot keep more of the pool
// from the collector).
func (s *Server) lendIdle(c *call, size int64) bool {
	if int64(cap(c.dec.Body())) > size {
		return true // the decoder's own, kept from an earlier body
	}
	i := s.bufs.atLeast(int(size + 1))
	if i < 0 {
		return false
	}
	n := int64(s.bufs.sizes[i])
	if !s.budget.lend(n) {
		return false
	}
	if c.dec.GrowIdle(size + 1) {
		c.lent = n
		return true
	}
	s.budget.unlend(n)
	return false
}

// refusal records a refusal of the decoding layer in m, as
// decode.Decoder.DecodeBody does: the message was never read as valid, so
// its answer carries "id": null.
func refusal(m *decode.Message, err error) error {
	e, ok := err.(*decode.Error)
	if !ok {
		return err
	}
	m.Error = *e
	m.Error.EchoID = false
	return &m.Error
}

// layers gives, for every Encoding, how many decompressors it stacks.
var layers = func() map[decode.Encoding]int {
	m := make(map[decode.Encoding]int)
	names := []string{"identity", "gzip", "x-gzip", "deflate", "zstd"}
	for _, a := range names {
		for _, b := range names {
			e, err := decode.ParseEncoding([]byte(a + ", " + b))
			if err != nil {
				continue
			}
			n := 0
			for _, x := range []string{a, b} {
				if x != "identity" {
					n++
				}
			}
			m[e] = n
		}
	}
	return m
}()

// bodyBuffers lends the decoders of a server their growing body buffers
// (decode.Options.Buffers): a buffer outgrown at one step of a large body
// serves the same step of the next, and those over keepBodyBuffer go back
// at the end of their request, so that large bodies stop allocating,
// zeroing and collecting a new buffer at every step of every request.
// It pools exactly the sizes a decoder grows into (firstStep
// doubled, and the ceiling plus one): a buffer Get lends is as large as
// the step the budget charged for it, never larger; Idle lends one only
// if it holds it idle, to a body of that declared size (see the NOTE
// above). Other sizes are allocated as before. A sync.Pool per size, so
// the collector empties it when it goes unused.
type bodyBuffers struct {
	sizes []int
	full  []sync.Pool // *[]byte holding a buffer of sizes[i]
	empty sync.Pool   // *[]byte holding nil, for reuse
}

func newBodyBuffers(ceiling int64) *bodyBuffers {
	b := &bodyBuffers{}
	for n := int64(firstStep); n <= ceiling; n *= 2 {
		b.sizes = append(b.sizes, int(n))
	}
	b.sizes = append(b.sizes, int(ceiling+1))
	b.full = make([]sync.Pool, len(b.sizes))
	return b
}

// atLeast returns the index of the smallest of the sizes that holds n
// bytes, or -1.
func (b *bodyBuffers) atLeast(n int) int {
	for i, s := range b.sizes {
		if s >= n {
			return i
		}
	}
	return -1
}

// class returns the index of n among the sizes, or -1.
func (b *bodyBuffers) class(n int) int {
	if i := b.atLeast(n); i >= 0 && b.sizes[i] == n {
		return i
	}
	return -1
}

// Get returns a buffer of capacity n, pooled when n is one of the sizes.
func (b *bodyBuffers) Get(n int) []byte {
	if i := b.class(n); i >= 0 {
		if buf := b.take(i); buf != nil {
			return buf
		}
	}
	return make([]byte, 0, n)
}

// take returns an idle buffer of sizes[i], or nil.
func (b *bodyBuffers) take(i int) []byte {
	h, _ := b.full[i].Get().(*[]byte)
	if h == nil {
		return nil
	}
	buf := *h
	*h = nil
	b.empty.Put(h)
	return buf[:0]
}

// Idle returns a pooled buffer of the smallest of the sizes that holds n
// bytes, or nil when none is idle: it never allocates
// (decode.IdleBuffers).
func (b *bodyBuffers) Idle(n int) []byte {
	if i := b.atLeast(n); i >= 0 {
		return b.take(i)
	}
	return nil
}

// Put takes back a buffer of one of the sizes; others are left to the
// collector.
func (b *bodyBuffers) Put(buf []byte) {
	i := b.class(cap(buf))
	if i < 0 {
		return
	}
	h, _ := b.empty.Get().(*[]byte)
	if h == nil {
		h = new([]byte)
	}
	*h = buf[:0]
	b.full[i].Put(h)
}

var _ decode.IdleBuffers = (*bodyBuffers)(nil)

// releaseBody gives back what c holds of the budget, unless the answer is
// a stream that still runs (call.held): then finishRPC does, when it ends.
func (s *Server) releaseBody(c *call) {
	if c.held {
		return
	}
	if c.state {
		s.budget.releaseState(c.first)
	} else {
		s.budget.release(c.first)
	}
	s.budget.release(c.body.wire.reserved)
	s.budget.releaseCoded(c.dz.ch.reserved)
	s.budget.releaseState(c.dz.held)
	c.dz.held = 0
	s.budget.unlend(c.lent)
	c.lent = 0
}
