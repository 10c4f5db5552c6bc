package decode

// NOTE: design of the Content-Encoding layer.
//
// A request body goes through a chain of readers, each counting what passes
// through it:
//
//	src ─▶ wire meter ─▶ stage 0 ─▶ [mid meter ─▶ stage 1] ─▶ out meter ─▶ Read
//
// A meter refuses the byte after its limit: once limit bytes have passed, the
// next read asks its source for one more byte (the probe) and, if one comes,
// reports the crossing. It asks only when its reader wants more, so a failure
// earlier in byte order (a corrupt block, a bad checksum) is met first. Each
// stage is a pooled decompressor behind a pooled bufio.Reader: the flate
// decoders then consume exactly the bytes of their stream (they never read
// ahead of the bufio buffer), so bytes left after the end of a stream are
// seen and refused as trailing garbage.
//
// Identity skips all of this: Read is the wire meter.
//
// zstd: the decoder is single-threaded (no goroutines). Frames may declare
// any window up to 8 MiB (RFC 9659's largest for HTTP); zstdFrames
// (zstdframes.go) lowers each frame's window, as its header passes, to
// what decoding it within the ceiling can need, so that a zstd body's
// memory follows the ceiling (and, for a small frame, its size), never
// the declared window. A window over 8 MiB is refused from the frame
// header, before any window is allocated (ErrTooLarge), and so is a
// single-segment frame declaring more than 8 MiB of content (one that
// declares less is decoded up to the ceiling, see zstdframes.go). The
// decoder checks a frame's checksum and declared size after its last
// block and reports a failure there before that block's bytes; the stage
// reads those bytes first, so that a failure in them comes first.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

// zstdMaxWindow is the largest zstd window ever accepted: RFC 9659 forbids
// encoders of HTTP's "zstd" coding larger ones.
const zstdMaxWindow = 8 << 20

// coding is one content coding. The zero value is identity.
type coding uint8

const (
	codingIdentity coding = iota
	codingGzip            // gzip and x-gzip
	codingDeflate         // the zlib format (RFC 1950)
	codingZstd
	numCodings
)

var codingNames = [numCodings]string{"identity", "gzip", "deflate", "zstd"}

// encodingStrings holds Encoding.String for every value, so that String
// allocates nothing: [first][0] for one coding, [first][second] for two.
var encodingStrings = func() (t [numCodings][numCodings]string) {
	t[0][0] = codingNames[0]
	for a := codingGzip; a < numCodings; a++ {
		t[a][0] = codingNames[a]
		for b := codingGzip; b < numCodings; b++ {
			t[a][b] = codingNames[a] + ", " + codingNames[b]
		}
	}
	return t
}()

// Encoding is a parsed Content-Encoding header value: at most two codings,
// in the order the header lists them (the order the sender applied them).
// The zero value is identity. It is a small comparable value type, safe to
// copy and to use from several goroutines.
type Encoding struct {
	list [2]coding
	n    uint8
}

// Refusals of ParseEncoding. They are shared by every caller and must not
// be modified.
var (
	errCodingUnsupported = &Error{Err: ErrEncoding, Code: CodeInvalidRequest, Reason: "unsupported content coding"}
	errCodingTooMany     = &Error{Err: ErrEncoding, Code: CodeInvalidRequest, Reason: "more than two content codings"}
)

// ParseEncoding parses a Content-Encoding header value: a comma-separated
// list of content codings, optional whitespace (space, tab) around each,
// matched case-insensitively. Accepted codings are identity, gzip, x-gzip
// (read as gzip), deflate (the zlib format of RFC 1950, as HTTP defines it)
// and zstd. identity and empty list elements (RFC 9110 section 5.6.1: "gzip,,
// zstd" is "gzip, zstd") do not count; an empty value is identity. At most
// two codings may be stacked.
//
// A coding outside that set, or a third coding, is refused with an *Error
// wrapping ErrEncoding (Code CodeInvalidRequest, HTTPStatus 415, Offset 0).
// That *Error is a package-level value shared by all callers: it must not be
// modified. A field set twice in a request should be joined with ", " before
// the call, as RFC 9110 allows.
//
// ParseEncoding allocates nothing and does not retain header.
func ParseEncoding(header []byte) (Encoding, error) {
	var e Encoding
	for i := 0; i <= len(header); {
		j := i
		for j < len(header) && header[j] != ',' {
			j++
		}
		tok := trimOWS(header[i:j])
		i = j + 1
		if len(tok) == 0 {
			continue
		}
		c, ok := lookupCoding(tok)
		if !ok {
			return Encoding{}, errCodingUnsupported
		}
		if c == codingIdentity {
			continue
		}
		if e.n == uint8(len(e.list)) {
			return Encoding{}, errCodingTooMany
		}
		e.list[e.n] = c
		e.n++
	}
	return e, nil
}

func trimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func lookupCoding(tok []byte) (coding, bool) {
	switch {
	case asciiEqualFold(tok, "gzip"), asciiEqualFold(tok, "x-gzip"):
		return codingGzip, true
	case asciiEqualFold(tok, "zstd"):
		return codingZstd, true
	case asciiEqualFold(tok, "deflate"):
		return codingDeflate, true
	case asciiEqualFold(tok, "identity"):
		return codingIdentity, true
	}
	return 0, false
}

// asciiEqualFold reports whether b equals the lower-case ASCII string s,
// ignoring ASCII case only (tokens are ASCII; no Unicode folding).
func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// IsIdentity reports whether no decoding is needed.
func (e Encoding) IsIdentity() bool { return e.n == 0 }

// String returns the canonical list in header order, lower case, joined by
// ", ": "gzip", "gzip, zstd"; x-gzip reads "gzip"; the zero value reads
// "identity". It allocates nothing.
func (e Encoding) String() string {
	switch e.n {
	case 0:
		return encodingStrings[0][0]
	case 1:
		return encodingStrings[e.list[0]][0]
	}
	return encodingStrings[e.list[0]][e.list[1]]
}

// Pools of decompressors, each with the bufio.Reader it reads through. A
// flate-based decoder keeps a pointer to that bufio.Reader, so the two stay
// together.
var (
	gzipPool = sync.Pool{New: func() any { return &gzipDec{zr: newGzipReader()} }}
	zlibPool = sync.Pool{New: newZlibDec}
	zstdPool = sync.Pool{New: func() any { return newZstdDec() }}
)

type gzipDec struct {
	br bufio.Reader
	zr gzipReader
}

type zlibDec struct {
	br bufio.Reader
	zr io.Reader
	rs zlib.Resetter
}

type zstdDec struct {
	br bufio.Reader
	zd *zstd.Decoder
}

// emptyZlib is a complete zlib stream of no bytes: zlib.NewReader reads a
// header at once, so a pooled reader is made from it.
var emptyZlib = []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}

func newZlibDec() any {
	zr, err := zlib.NewReader(bytes.NewReader(emptyZlib))
	if err != nil {
		panic("decode: zlib reader: " + err.Error())
	}
	return &zlibDec{zr: zr, rs: zr.(zlib.Resetter)}
}

// newZstdDec returns a decoder that refuses windows over 8 MiB. Windows
// reach it through zstdFrames, already lowered to what the ceiling needs;
// a pooled decoder keeps the largest history ring it allocated.
func newZstdDec() *zstdDec {
	zd, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1), // synchronous: no goroutines
		zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(zstdMaxWindow),
		zstd.WithDecoderMaxMemory(zstdMaxWindow),
		zstd.WithDecodeBuffersBelow(0), // never buffer a whole input
	)
	if err != nil {
		panic("decode: zstd reader: " + err.Error())
	}
	return &zstdDec{zd: zd}
}

// Internal signals between the links of the chain. They never reach the
// caller: Read turns them into the BodyReader's own *Error.
var (
	errOver     = errors.New("decode: internal: over the ceiling")
	errTrailing = errors.New("decode: internal: trailing bytes")
)

// meter reads from r, counts the bytes and refuses the byte after limit.
//
// The wire meter (src set) also stands between the source and the
// decompressors' own loops: an error that comes with bytes is held back
// until the bytes have been through the stages (a failure in them comes
// first in byte order, as it does for an identity body), and a source
// that returns nothing 100 times in a row gets io.ErrNoProgress (the
// decompressors read with io.ReadFull, which would loop on it for ever).
type meter struct {
	r     io.Reader
	n     int64 // bytes read from r, the probe byte included
	limit int64
	over  bool  // a byte past limit came from r
	eof   bool  // r reported io.EOF
	err   error // the first other error from r
	src   bool  // r is the body's source
	empty int   // reads in a row that returned nothing (src)
	held  error // an error that came with bytes, for the next Read (src)
	probe [1]byte
}

func (m *meter) Read(p []byte) (int, error) {
	switch {
	case m.over:
		return 0, errOver
	case m.eof:
		return 0, io.EOF
	case m.err != nil:
		return 0, m.err
	case m.held != nil:
		err := m.held
		m.held = nil
		return 0, m.note(err)
	case len(p) == 0:
		return 0, nil
	}
	rem := m.limit - m.n
	if rem <= 0 {
		n, err := m.r.Read(m.probe[:])
		if n > 0 {
			m.n++
			m.over = true
			return 0, errOver
		}
		return 0, m.noted(0, err)
	}
	if int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := m.r.Read(p)
	if n < 0 || n > len(p) {
		return 0, m.note(errBadCount)
	}
	m.n += int64(n)
	return n, m.noted(n, err)
}

// noted is note for a read of the source that returned n bytes and err.
func (m *meter) noted(n int, err error) error {
	if !m.src {
		return m.note(err)
	}
	if n == 0 && err == nil {
		if m.empty++; m.empty >= 100 {
			return m.note(io.ErrNoProgress)
		}
		return nil
	}
	m.empty = 0
	if n > 0 && err != nil && err != io.EOF {
		m.held = err
		return nil
	}
	return m.note(err)
}

func (m *meter) note(err error) error {
	switch {
	case err == nil:
	case err == io.EOF:
		m.eof = true
	case m.err == nil:
		m.err = err
	}
	return err
}

// stage undoes one coding. It starts its decompressor on the first Read
// (gzip and zlib read a header when they start) and, at the end of the
// stream, checks that its input ends there too.
type stage struct {
	c       coding
	br      *bufio.Reader // the decompressor's input, reading the previous link
	dec     io.Reader
	gz      *gzipDec
	zl      *zlibDec
	zs      *zstdDec
	zf      zstdFrames // between the previous link and br, for zstd
	started bool
	done    bool  // the stream and its input ended cleanly
	err     error // the first error other than io.EOF
}

func (s *stage) acquire(c coding, in io.Reader, limit int64, reserve func(int64) error) {
	s.c = c
	switch c {
	case codingGzip:
		s.gz = gzipPool.Get().(*gzipDec)
		s.br = &s.gz.br
	case codingDeflate:
		s.zl = zlibPool.Get().(*zlibDec)
		s.br = &s.zl.br
	case codingZstd:
		s.zs = zstdPool.Get().(*zstdDec)
		s.br = &s.zs.br
		s.zf.reset(in, limit, reserve)
		in = &s.zf
	}
	s.br.Reset(in)
}

// release returns the decompressor to its pool, dropping every reference to
// the request.
func (s *stage) release() {
	if s.br != nil {
		s.br.Reset(nil)
	}
	switch s.c {
	case codingGzip:
		gzipPool.Put(s.gz)
	case codingDeflate:
		zlibPool.Put(s.zl)
	case codingZstd:
		_ = s.zs.zd.Reset(nil) // drops the input; cannot fail on an open decoder
		zstdPool.Put(s.zs)
	}
	*s = stage{}
}

func (s *stage) start() error {
	s.started = true
	switch s.c {
	case codingGzip:
		// An empty input is a gzip stream of zero members (RFC 1952
		// allows it, and Reset reports io.EOF).
		if err := s.gz.zr.reset(s.br); err != nil {
			return err
		}
		s.dec = &s.gz.zr
	case codingDeflate:
		// An empty input decodes to an empty body, as for gzip and
		// zstd; zlib itself would call it truncated.
		if _, err := s.br.Peek(1); err != nil {
			return err
		}
		if err := s.zl.rs.Reset(s.br, nil); err != nil {
			return err
		}
		s.dec = s.zl.zr
	case codingZstd:
		if err := s.zs.zd.Reset(s.br); err != nil {
			return err
		}
		s.dec = s.zs.zd
	}
	return nil
}

func (s *stage) Read(p []byte) (int, error) {
	if s.done {
		return 0, io.EOF
	}
	if s.err != nil {
		return 0, s.err
	}
	var n int
	var err error
	if !s.started {
		err = s.start()
	}
	if err == nil {
		n, err = s.dec.Read(p)
		if n == 0 && err != nil && err != io.EOF && s.c == codingZstd {
			// klauspost's decoder checks a frame's checksum and content
			// size after decoding its last block, and reports a failure
			// there before it hands out that block's bytes (they come on
			// the next Read, with the failure again). Those bytes come
			// first in byte order: they go to the scanner first, so that
			// a failure in them decides (contract, "Streaming verdicts").
			n, err = s.dec.Read(p)
		}
	}
	if err == io.EOF {
		if terr := s.trailing(); terr != nil {
			err = terr
		} else {
			s.done = true
		}
	}
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// trailing reports errTrailing when the input goes on after the end of the
// compressed stream (gzip and zstd look for a next member or frame
// themselves; zlib does not).
func (s *stage) trailing() error {
	if s.br.Buffered() > 0 {
		return errTrailing
	}
	switch _, err := s.br.ReadByte(); err {
	case nil:
		return errTrailing
	case io.EOF:
		return nil
	default:
		return err
	}
}

// BodyReader decodes a request body: it reads wire bytes from a source,
// undoes the content codings and yields the decoded bytes, refusing a body
// whose wire bytes, decoded bytes, or (for two stacked codings) the bytes
// between the two codings pass the ceiling, and a compressed stream that is
// broken.
//
// The zero value is ready for Reset (Read before any Reset reads an empty
// body). A BodyReader may be reused: Reset it for the next body; Close it to
// give back the decompressors between bodies. It is not safe for concurrent
// use and must not be copied after first use.
//
// Cost: identity is a pass-through that allocates nothing. A compressed body
// borrows one pooled decompressor per coding (unexported pools), each with a
// 4 KiB input buffer: gzip and deflate about 43 KiB each (a 32 KiB window
// plus tables); zstd about 50 KiB plus a history ring of its frame's window
// and two blocks of room, which the decompressor keeps while it waits in
// the pool. A frame may declare any window up to 8 MiB; the window decoded
// with is lowered, as the frame header passes, to what the ceiling allows
// (the ceiling plus 128 KiB: ZstdHistory gives the ring) and, for a frame
// whose block headers all arrive in one read, to what its blocks can hold
// (a 40-byte frame takes a 1 KiB window, a ring of 3 KiB, whatever it
// declared). Reserve is told of each ring before it is allocated; frames
// whose windows keep growing make the decoder allocate a new ring each
// time, and are refused (ErrTooLarge) once the rings would pass three of
// ZstdHistory(limit). gzip members are read by the package's own header
// reader, which skips a member's extra field, name and comment without
// keeping them (klauspost's gzip.Reader allocates them). With warm pools
// decoding allocates nothing per body (pinned in compress_alloc_test.go).
// Decoding work is bounded by the ceiling: at most limit+1 bytes leave
// each layer.
type BodyReader struct {
	// Reserve, when not nil, is called before a zstd layer takes memory
	// for its history (a ring of the frame's window and two blocks of
	// room, and a block buffer; at most ZstdHistory(limit) at once per
	// layer), with the bytes it takes: once per frame that needs more
	// than the frames before it, whose whole history is then allocated
	// anew (the smaller one becoming garbage). An error from Reserve
	// ends the body: Read returns it, unwrapped and sticky, and the
	// history is not allocated. It is called from Read, on the goroutine
	// that reads; Reset keeps it. Reserving is the caller's accounting:
	// the BodyReader never gives memory back through it (what a body
	// reserved is released when the caller is done with the body).
	Reserve func(n int64) error

	enc     Encoding
	active  bool  // between Reset and Close
	n       int64 // decoded bytes returned by Read
	final   error // the sticky end: io.EOF, &r.e, or a source error
	wire    meter
	mid     meter // between stage 0 and stage 1, for two codings
	out     meter // decoded bytes, for compressed bodies
	st      [2]stage
	nstages int
	e       Error
}

// Reset prepares r to read src decoded by enc, with limit the ceiling for
// wire bytes AND decoded bytes (and, for two stacked codings, the bytes
// between them); limit 0 (or negative) means DefaultMaxBytes. It releases
// whatever r held from a previous body and takes decompressors from
// unexported pools; Close gives them back. It reads nothing from src: gzip
// and zlib headers are read by the first Read.
//
// src must not be nil; r keeps it until Close or the next Reset and never
// closes it. Reset cannot fail today; the error is reserved and is always
// nil.
func (r *BodyReader) Reset(src io.Reader, enc Encoding, limit int64) error {
	r.Close()
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	r.enc = enc
	r.active = true
	r.n = 0
	r.final = nil
	r.e = Error{}
	r.wire = meter{r: src, limit: limit, src: true}
	r.mid = meter{}
	r.out = meter{}
	r.nstages = int(enc.n)
	if enc.n == 0 {
		return nil
	}
	// The header lists codings in the order they were applied: undo the
	// last one first.
	in := io.Reader(&r.wire)
	for i := range r.nstages {
		r.st[i].acquire(enc.list[r.nstages-1-i], in, limit, r.Reserve)
		if i == 0 && r.nstages == 2 {
			r.mid = meter{r: &r.st[0], limit: limit}
			in = &r.mid
		}
	}
	r.out = meter{r: &r.st[r.nstages-1], limit: limit}
	return nil
}

// Read reads up to len(p) decoded bytes into p. It never returns more than
// limit bytes in all; it reads at most limit+1 wire bytes and decodes at most
// limit+1 bytes (the byte past the ceiling is consumed to see it, never
// returned). Errors, sticky once met:
//
//   - io.EOF at the end of a complete body;
//   - an *Error wrapping ErrTooLarge when the wire bytes, the decoded bytes
//     or the bytes between two stacked codings pass the ceiling, or when a
//     zstd frame declares a window over 8 MiB (RFC 9659) or a single
//     segment of more than 8 MiB, or when a body's zstd frames need
//     ever larger windows, past three times ZstdHistory(limit) in all;
//   - an *Error wrapping ErrCorrupt when a compressed stream is broken: a
//     bad header, a corrupt block, a checksum mismatch, a stream cut short
//     at the end of src, bytes after the end of the stream, a preset
//     dictionary;
//   - an error from src other than io.EOF, or from Reserve, unwrapped, as
//     it was returned (after the bytes that came with it: a failure in
//     them comes first); io.ErrNoProgress when src returns no bytes and
//     no error 100 times in a row.
//
// An *Error has Offset = the decoded bytes returned so far (for a decoded
// crossing that is the ceiling) and a short static Reason. It is owned by r:
// it stays valid until the next Reset; copy the struct to keep it longer.
// Refusing allocates nothing.
//
// Read before any Reset returns io.EOF (an empty body). After Close it
// returns the sticky result if the body had one, else io.ErrClosedPipe.
func (r *BodyReader) Read(p []byte) (int, error) {
	if r.final != nil {
		return 0, r.final
	}
	if !r.active {
		return 0, io.EOF
	}
	var n int
	var err error
	if r.nstages == 0 {
		n, err = r.wire.Read(p)
	} else {
		n, err = r.out.Read(p)
	}
	r.n += int64(n)
	if err != nil {
		err = r.settle(err)
	}
	return n, err
}

// Reasons for the refusals a BodyReader reports.
const (
	reasonWireOver    = "wire bytes over the ceiling"
	reasonDecodedOver = "decoded bytes over the ceiling"
	reasonMidOver     = "bytes between the two codings over the ceiling"
	reasonZstdSize    = "zstd: frame content size over the ceiling"
	reasonZstdWindow  = "zstd: frame window over 8 MiB (RFC 9659)"
	reasonZstdGrowth  = "zstd: frames' windows grow past the history the ceiling allows"
)

type failure uint8

const (
	failData failure = iota
	failHeader
	failChecksum
	failTruncated
	failTrailing
	failDict
	failWindow
	numFailures
)

var corruptReasons = [numCodings][numFailures]string{
	codingGzip: {
		failData:      "gzip: corrupt deflate data",
		failHeader:    "gzip: invalid header",
		failChecksum:  "gzip: checksum mismatch",
		failTruncated: "gzip: truncated stream",
		failTrailing:  "gzip: bytes after the end of the stream",
		failDict:      "gzip: corrupt deflate data",
		failWindow:    "gzip: corrupt deflate data",
	},
	codingDeflate: {
		failData:      "deflate: corrupt data",
		failHeader:    "deflate: invalid zlib header",
		failChecksum:  "deflate: checksum mismatch",
		failTruncated: "deflate: truncated stream",
		failTrailing:  "deflate: bytes after the end of the stream",
		failDict:      "deflate: preset dictionary not supported",
		failWindow:    "deflate: corrupt data",
	},
	codingZstd: {
		failData:      "zstd: corrupt data",
		failHeader:    "zstd: invalid frame header",
		failChecksum:  "zstd: checksum mismatch",
		failTruncated: "zstd: truncated stream",
		failTrailing:  "zstd: bytes after the end of the stream",
		failDict:      "zstd: dictionaries not supported",
		failWindow:    "zstd: block over the window",
	},
}

// settle turns the error the chain returned into Read's sticky result. The
// links are checked from the wire up: a failure below explains the ones it
// causes above.
func (r *BodyReader) settle(err error) error {
	switch {
	case r.wire.over:
		return r.fail(ErrTooLarge, CodeInvalidRequest, reasonWireOver)
	case r.wire.err != nil:
		r.final = r.wire.err
		return r.final
	}
	if r.nstages > 0 {
		if s := &r.st[0]; s.err != nil {
			return r.stageFailed(s)
		}
		if r.mid.over {
			return r.fail(ErrTooLarge, CodeInvalidRequest, reasonMidOver)
		}
		if s := &r.st[1]; r.nstages == 2 && s.err != nil {
			return r.stageFailed(s)
		}
		if r.out.over {
			return r.fail(ErrTooLarge, CodeInvalidRequest, reasonDecodedOver)
		}
	}
	if err == io.EOF {
		r.final = io.EOF
		return io.EOF
	}
	// Not reached with the decoders in use; refuse rather than pass an
	// unknown error on.
	return r.fail(ErrCorrupt, CodeParseError, "broken compressed stream")
}

// stageFailed settles the error of a stage: a refusal or a Reserve error
// of the zstd frame walker when that is what stopped the decoder, else
// the decompressor's own verdict.
func (r *BodyReader) stageFailed(s *stage) error {
	if s.c == codingZstd && s.zf.err != nil && s.err == s.zf.err {
		switch s.err {
		case errZstdContent:
			return r.fail(ErrTooLarge, CodeInvalidRequest, reasonZstdSize)
		case errZstdWindow:
			return r.fail(ErrTooLarge, CodeInvalidRequest, reasonZstdWindow)
		case errZstdGrowth:
			return r.fail(ErrTooLarge, CodeInvalidRequest, reasonZstdGrowth)
		}
		r.final = s.err // Reserve's error
		return r.final
	}
	return r.corrupt(s)
}

func (r *BodyReader) corrupt(s *stage) error {
	if s.c == codingZstd && s.err == zstd.ErrDecoderSizeExceeded {
		return r.fail(ErrTooLarge, CodeInvalidRequest, reasonZstdSize)
	}
	return r.fail(ErrCorrupt, CodeParseError, corruptReasons[s.c][classify(s.err)])
}

func classify(err error) failure {
	switch {
	case err == errTrailing:
		return failTrailing
	case err == io.ErrUnexpectedEOF:
		return failTruncated
	case err == gzip.ErrHeader, err == zlib.ErrHeader, err == zstd.ErrMagicMismatch,
		err == zstd.ErrWindowSizeTooSmall:
		return failHeader
	case err == gzip.ErrChecksum, err == zlib.ErrChecksum, err == zstd.ErrCRCMismatch:
		return failChecksum
	case err == zlib.ErrDictionary, err == zstd.ErrUnknownDictionary:
		return failDict
	case err == zstd.ErrWindowSizeExceeded:
		return failWindow
	}
	// flate.CorruptInputError and the rest of zstd's block errors.
	return failData
}

func (r *BodyReader) fail(sentinel error, code int, reason string) error {
	r.e.set(sentinel, code, r.n, reason)
	r.final = &r.e
	return r.final
}

// Close gives the pooled decompressors back and drops the reference to the
// source; r can be Reset again. It does not close the source. Close is safe
// to call twice, and on a zero BodyReader; it always returns nil. A refusal
// returned by Read stays valid after Close, until the next Reset.
func (r *BodyReader) Close() error {
	if !r.active {
		return nil
	}
	for i := range r.nstages {
		r.st[i].release()
	}
	r.nstages = 0
	r.active = false
	r.wire.r, r.mid.r, r.out.r = nil, nil, nil
	if r.final == nil {
		r.final = io.ErrClosedPipe
	}
	return nil
}

// Wire returns the number of wire bytes read from the source since the last
// Reset. It counts bytes read ahead into the decompressor's buffer, and the
// byte past the ceiling once that byte was read (at most limit+1).
func (r *BodyReader) Wire() int64 { return r.wire.n }
