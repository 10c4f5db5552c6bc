package decode

import (
	"errors"
	"io"
	"math/bits"
)

// Defaults of Options.
const (
	// DefaultMaxBytes is the default body ceiling: 1 MiB.
	DefaultMaxBytes = 1 << 20
	// DefaultMaxDepth is the default nesting limit; the top-level value is
	// level 1.
	DefaultMaxDepth = 1000
)

// Options configures a Decoder. The zero value gives the defaults.
type Options struct {
	// MaxBytes is the body ceiling, applied to wire and to decoded bytes:
	// a body of MaxBytes bytes is accepted, byte MaxBytes+1 is refused
	// with ErrTooLarge. 0 means DefaultMaxBytes (1 MiB). A Decoder holds at
	// most this many body bytes plus one read buffer.
	MaxBytes int64
	// MaxDepth is the nesting limit: the top-level value is level 1, and
	// opening level MaxDepth+1 is refused with ErrDepth. 0 means
	// DefaultMaxDepth (1000). The cost is one bit of memory per level.
	MaxDepth int
	// IDs is the set of id types the endpoint accepts. 0 means IDsJSONRPC
	// (string, number or null); use IDsMCP for MCP.
	IDs IDPolicy
	// Buffers, when not nil, lends the Decoder the body buffers that
	// DecodeReader, DecodeBody and Grow grow into, and takes back those
	// it outgrows and those Trim drops: a server's decoders then share
	// their large buffers instead of allocating, zeroing and collecting
	// them for every large body. nil means the Decoder allocates its own.
	Buffers Buffers
}

// Buffers lends body buffers to Decoders (Options.Buffers). It must be
// safe for concurrent use when the Decoders are used concurrently.
type Buffers interface {
	// Get returns a buffer with a capacity of at least n; its length and
	// contents do not matter.
	Get(n int) []byte
	// Put takes back a buffer the Decoder no longer uses (nor any Message
	// it filled: Put is called by Grow, Trim and the next read's
	// growth, never while slices of a decoded body are in use).
	Put(b []byte)
}

// IdleBuffers is a Buffers that can also lend a buffer only if it holds
// one idle (Decoder.GrowIdle).
type IdleBuffers interface {
	Buffers
	// Idle returns a buffer with a capacity of at least n that it holds
	// idle, or nil when it holds none; it never allocates one.
	Idle(n int) []byte
}

// MaxCeiling is the largest MaxBytes a Decoder takes: 1 TiB.
const MaxCeiling = 1 << 40

// errOptions is returned by SetOptions for an invalid value.
var errOptions = errors.New("decode: invalid options: MaxBytes must be in [0, 1 TiB], MaxDepth must not be negative, IDs must accept at least one id type")

func (o Options) validate() error {
	if o.MaxBytes < 0 || o.MaxBytes > MaxCeiling || o.MaxDepth < 0 || (o.IDs != 0 && o.IDs&IDsJSONRPC&^policySet == 0) {
		return errOptions
	}
	return nil
}

func (o Options) maxBytes() int64 {
	if o.MaxBytes == 0 {
		return DefaultMaxBytes
	}
	return o.MaxBytes
}

func (o Options) maxDepth() int {
	if o.MaxDepth == 0 {
		return DefaultMaxDepth
	}
	return o.MaxDepth
}

// A Decoder decodes one JSON-RPC message at a time, either from a complete
// body (Decode) or from a body that arrives in pieces (Write then Finish,
// DecodeReader, DecodeBody). It validates the whole body strictly and
// reports the first failure in byte order, with the same verdict and
// offset whatever the chunking.
//
// The zero value is ready to use with the default Options. A Decoder keeps
// its buffers between messages, so reusing one (Reset is implied by
// Decode, DecodeReader and DecodeBody, and is needed before a series of
// Writes) decodes without allocating. A Decoder is not safe for
// concurrent use and must not be copied after first use.
type Decoder struct {
	opts Options
	sc   scanner
	env  envelope
	buf  []byte // body bytes received by Write or read by DecodeReader
	err  Error
	bad  bool // a verdict of refusal has been reached
	// writing says the scanner was set up by Reset for a body in
	// pieces: false for the zero Decoder and after a Decode, whose
	// scanner holds the state of the whole body, so that the next Write
	// or Finish starts afresh (a zero Decoder's first Write ran a scanner
	// never set up, refusing every body as too deep: found by review on
	// 2026-12-07).
	writing bool
	br      BodyReader
}

// NewDecoder returns a Decoder with the given options, or an error if they
// are invalid.
func NewDecoder(opts Options) (*Decoder, error) {
	d := new(Decoder)
	if err := d.SetOptions(opts); err != nil {
		return nil, err
	}
	return d, nil
}

// SetOptions changes d's options and resets d. It fails, leaving d
// unchanged, when opts holds a negative limit or an id policy that accepts
// nothing.
func (d *Decoder) SetOptions(opts Options) error {
	if err := opts.validate(); err != nil {
		return err
	}
	d.opts = opts
	d.Reset()
	return nil
}

// Options returns d's options.
func (d *Decoder) Options() Options { return d.opts }

// Reset discards any body in progress so that d can take a new one. The
// slices of a Message filled from the previous body stop being valid.
func (d *Decoder) Reset() {
	d.sc.reset(d.opts.maxDepth(), true)
	d.buf = d.buf[:0]
	d.bad = false
	d.writing = true
}

// Grow makes room in d's body buffer for n bytes (at most the ceiling plus
// one), so that a streamed body of known length is read into one buffer
// of the right size instead of one that doubles. The room lasts until
// Trim; Reset keeps it.
func (d *Decoder) Grow(n int64) {
	n = min(n, d.opts.maxBytes()+1)
	if int64(cap(d.buf)) < n {
		d.regrow(int(n))
	}
}

// GrowIdle is Grow from a buffer Options.Buffers holds idle: when it is
// an IdleBuffers with an idle buffer of at least n bytes (at most the
// ceiling plus one), d takes it; otherwise d is left as it is. It never
// allocates, and reports whether d has room for n bytes. A server that
// charges a body's memory as its bytes arrive, rather than its declared
// length up front, can so read a large body of known length into one
// buffer that an earlier body left idle, without the copies of a buffer
// that doubles, and without allocating what it has not charged.
func (d *Decoder) GrowIdle(n int64) bool {
	n = min(n, d.opts.maxBytes()+1)
	if int64(cap(d.buf)) >= n {
		return true
	}
	ib, ok := d.opts.Buffers.(IdleBuffers)
	if !ok {
		return false
	}
	nb := ib.Idle(int(n))
	if int64(cap(nb)) < n {
		if nb != nil {
			ib.Put(nb[:0]) // not as asked: given back
		}
		return false
	}
	d.adopt(nb)
	return true
}

// regrow moves the body to a buffer of capacity size (at least), taken
// from Options.Buffers when set.
func (d *Decoder) regrow(size int) {
	if b := d.opts.Buffers; b != nil {
		d.adopt(b.Get(size))
	} else {
		d.adopt(make([]byte, 0, size))
	}
}

// adopt moves the body to nb and gives the old buffer back to
// Options.Buffers.
func (d *Decoder) adopt(nb []byte) {
	nb = nb[:len(d.buf)]
	copy(nb, d.buf)
	if b := d.opts.Buffers; b != nil && cap(d.buf) > 0 {
		b.Put(d.buf[:0])
	}
	d.buf = nb
}

// Trim drops d's body buffer (gives it back to Options.Buffers, when set)
// if its capacity is over n bytes, so that a pooled decoder does not keep
// the memory of the largest body it ever read. It resets d.
func (d *Decoder) Trim(n int) {
	if cap(d.buf) > n {
		if b := d.opts.Buffers; b != nil {
			b.Put(d.buf[:0])
		}
		d.buf = nil
	}
	d.Reset()
}

// Body returns the body bytes d holds: those of the last DecodeReader,
// DecodeBody or Write/Finish (decoded, for a compressed body), up to the
// ceiling; nil after Decode, whose body is the caller's. Like a Message's
// slices it is valid until d is reset or reused, and must not be modified.
// A server reads a message the envelope refused through it, such as a
// JSON-RPC response (a result or error member, no method) to a request of
// its own.
func (d *Decoder) Body() []byte {
	if !d.writing {
		return nil
	}
	return d.buf
}

// Decode decodes the complete body into m. It returns nil for a request or
// a notification, and otherwise a *Error (also stored in m.Error) that
// wraps the sentinel of the first failure. A body longer than the ceiling
// is refused with ErrTooLarge unless a failure comes earlier in byte order.
//
// m's slices borrow from body. Decode allocates nothing once d and m have
// grown their buffers, but for an object whose names it must index (the
// message's own, or params' under a duplicate check) of more than 8,192
// members — a table of at most 16 bytes a member, under 3 per body byte,
// for that object only — or with an escaped name over 4 KiB (scratch to
// unescape it): their memory is not kept between messages, so that a
// pool of decoders does not hold the largest objects ever read.
func (d *Decoder) Decode(body []byte, m *Message) error {
	d.Reset()
	d.writing = false
	m.clear()
	max := d.opts.maxBytes()
	if int64(len(body)) > max {
		if d.sc.run(body[:max], false) == scanFail {
			return d.scanError(m)
		}
		return d.tooLarge(m, max)
	}
	if d.sc.run(body, true) == scanFail {
		return d.scanError(m)
	}
	return d.env.fill(body, d.sc.top, d.topOffset(body), d.sc.members, d.sc.more, d.opts.IDs, m)
}

// Write feeds the next piece of a body that arrives in pieces (call Reset
// before the first piece). It returns an error as soon as the bytes so far
// decide a refusal: a leading '[' at once, otherwise the first syntax error,
// depth overflow or ceiling crossing in byte order. Once an error has been
// returned, later calls return it again and Finish reports it. Write copies
// what it keeps of p; it never keeps more than the ceiling.
//
// The error is a *Error owned by d: valid until d is reset.
func (d *Decoder) Write(p []byte) (int, error) {
	if !d.writing {
		d.Reset()
	}
	if d.bad {
		return 0, &d.err
	}
	max := d.opts.maxBytes()
	room := max - int64(len(d.buf))
	over := int64(len(p)) > room
	if over {
		p = p[:room]
	}
	d.buf = append(d.buf, p...)
	if d.sc.run(d.buf, false) == scanFail {
		d.setScanError()
		return len(p), &d.err
	}
	if over {
		d.err.set(ErrTooLarge, CodeInvalidRequest, max, "the body is longer than the ceiling")
		d.bad = true
		return len(p), &d.err
	}
	return len(p), nil
}

// Finish ends a body fed with Write and decodes it into m, as Decode would
// have decoded the same bytes. m's slices borrow from d's buffer.
func (d *Decoder) Finish(m *Message) error {
	if !d.writing {
		d.Reset()
	}
	m.clear()
	if d.bad {
		m.Error = d.err
		return &m.Error
	}
	return d.final(m)
}

// final runs the scanner over the end of the body and checks the
// envelope; m is clear.
func (d *Decoder) final(m *Message) error {
	if d.sc.run(d.buf, true) == scanFail {
		return d.scanError(m)
	}
	return d.env.fill(d.buf, d.sc.top, d.topOffset(d.buf), d.sc.members, d.sc.more, d.opts.IDs, m)
}

// DecodeReader resets d, reads a body from r until io.EOF and decodes it
// into m. It stops reading as soon as the verdict is known (a leading '[',
// a syntax error, depth overflow or a ceiling crossing), so r may hold
// unread bytes after a refusal. It reads straight into d's buffer, which
// grows by doubling (to 4 KiB times a power of two: at least 4 KiB, at
// most twice what it held beyond that) up to the ceiling plus one byte and
// is kept for the next body.
//
// An error from r other than io.EOF is returned as is (not an *Error),
// and m is left invalid; a reader that returns no bytes and no error 100
// times in a row gets io.ErrNoProgress, one that returns a count outside
// 0..len(p) an error saying so. m's slices borrow from d's buffer.
func (d *Decoder) DecodeReader(r io.Reader, m *Message) error {
	d.Reset()
	m.clear()
	max := d.opts.maxBytes()
	empty := 0 // reads in a row that returned nothing
	for {
		if len(d.buf) == cap(d.buf) && int64(cap(d.buf)) <= max {
			d.grow(max)
		}
		// Read at most one byte past the ceiling.
		want := int64(cap(d.buf) - len(d.buf))
		if lim := max + 1 - int64(len(d.buf)); want > lim {
			want = lim
		}
		nr, rerr := r.Read(d.buf[len(d.buf) : len(d.buf)+int(want)])
		if nr < 0 || nr > int(want) {
			// Outside io.Reader's contract: no byte of it can be trusted.
			return errBadCount
		}
		if nr == 0 && rerr == nil {
			if empty++; empty >= 100 {
				return io.ErrNoProgress
			}
			continue
		}
		empty = 0
		if nr > 0 {
			end := len(d.buf) + nr
			if int64(end) > max {
				d.buf = d.buf[:max]
				if d.sc.run(d.buf, false) == scanFail {
					return d.scanError(m)
				}
				return d.tooLarge(m, max)
			}
			d.buf = d.buf[:end]
			if rerr == io.EOF {
				// The last bytes: one final run of the scanner, not a
				// run and then Finish's.
				return d.final(m)
			}
			if d.sc.run(d.buf, false) == scanFail {
				return d.scanError(m)
			}
		}
		if rerr == io.EOF {
			return d.Finish(m)
		}
		if rerr != nil {
			return rerr
		}
	}
}

// DecodeBody resets d and decodes a body whose Content-Encoding was parsed
// into enc: it reads wire bytes from r, undoes the codings, and decodes the
// result as DecodeReader does. The ceiling applies to the wire bytes and to
// the decoded bytes; a corrupt stream is refused with ErrCorrupt where the
// corruption is met, unless a failure in the decoded bytes comes first.
func (d *Decoder) DecodeBody(r io.Reader, enc Encoding, m *Message) error {
	if enc.IsIdentity() {
		return d.DecodeReader(r, m)
	}
	if err := d.br.Reset(r, enc, d.opts.maxBytes()); err != nil {
		m.clear()
		return d.refuse(m, err)
	}
	err := d.DecodeReader(&d.br, m)
	d.br.Close()
	if err != nil {
		if e, ok := err.(*Error); ok && e != &m.Error {
			// A refusal from the BodyReader (wire ceiling, corrupt stream,
			// decoded ceiling): the bytes decoded so far were valid.
			return d.refuse(m, err)
		}
	}
	return err
}

func (d *Decoder) refuse(m *Message, err error) error {
	if e, ok := err.(*Error); ok {
		m.Error = *e
		m.Error.EchoID = false
		return &m.Error
	}
	return err
}

// growStep is the smallest buffer DecodeReader grows into; it grows into
// growStep times a power of two.
const growStep = 4096

// grow moves the body to the next buffer size: growStep times the least
// power of two over the capacity (twice the capacity when it is one of
// those sizes, less when Grow left it between two), at most the ceiling
// plus one. Keeping to those sizes lets Options.Buffers pool them: a
// buffer grown from an exact size Grow asked for would otherwise double
// into sizes no other body asks for.
func (d *Decoder) grow(max int64) {
	size := growStep << bits.Len(uint(cap(d.buf)/growStep))
	if int64(size) > max+1 {
		size = int(max + 1)
	}
	d.regrow(size)
}

func (d *Decoder) setScanError() {
	s := &d.sc
	code := CodeInvalidRequest
	if s.errKind == ErrSyntax {
		code = CodeParseError
	}
	d.err.set(s.errKind, code, int64(s.errOff), s.errReason)
	d.bad = true
}

func (d *Decoder) scanError(m *Message) error {
	d.setScanError()
	m.Error = d.err
	return &m.Error
}

func (d *Decoder) tooLarge(m *Message, max int64) error {
	d.err.set(ErrTooLarge, CodeInvalidRequest, max, "the body is longer than the ceiling")
	d.bad = true
	m.Error = d.err
	return &m.Error
}

// topOffset returns the offset of the first non-whitespace byte.
func (d *Decoder) topOffset(body []byte) int {
	for i, c := range body {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return i
		}
	}
	return len(body)
}
