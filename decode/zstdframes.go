package decode

// NOTE: design of the zstd window clamp.
//
// A zstd frame declares the window its matches may reach back over, and
// klauspost's decoder allocates a history ring of that window (plus two
// blocks of room) at the frame's first block, however little the frame
// then holds: the reference CLI declares 2 MiB (8 MiB at level 19) for a
// 40-byte body read from a pipe. Yet a match can reach no further back
// than the start of the frame's output, and a body's output is refused
// past the ceiling: before a block is decoded, the frame's output so far
// is at most the ceiling (the meter above the decoder would have refused
// the byte after it, and the decoder decodes the next block only when the
// previous one has been read), and a block adds at most 128 KiB. So a
// window of the ceiling plus 128 KiB decodes every frame exactly as its
// declared window would, up to the ceiling: a body that is fine is
// decoded the same, a broken one is refused at the same byte.
//
// zstdFrames follows the frames as their bytes pass from the wire to the
// decoder and rewrites each frame's Window_Descriptor byte, in place, to
// the smallest window that is enough:
//
//   - at most the ceiling plus 128 KiB (the clamp);
//   - when the whole frame's block headers are already in the same read
//     (a small body usually is), at most what those blocks can decode to:
//     a raw or RLE block its stated size, a compressed block the block
//     maximum (min(window, 128 KiB)) — a 40-byte frame then needs a 1 KiB
//     window, whatever it declared.
//
// It never raises a window, never reads ahead of what its reader asks for
// (so a failure earlier in byte order is met first), and leaves alone what
// it cannot follow: a window over 8 MiB (RFC 9659's largest; the decoder
// refuses it from the header), a reserved block type or an unknown magic
// number (the decoder refuses those too).
//
// A single-segment frame has no window byte: its window is its content
// size. One whose content size is within the clamp is left as it is (the
// decoder's history follows its size). One that declares more (up to
// 8 MiB, RFC 9659's largest window) is made an ordinary frame with the
// clamp's window: the single-segment flag is cleared and a
// Window_Descriptor byte is inserted after the Frame_Header_Descriptor,
// the content size staying as declared (the decoder still checks it), so
// that it is decoded in byte order up to the ceiling like any other frame
// rather than refused from its header. So is one whose content size is
// not all in the read of its descriptor, whatever that size turns out to
// be (over 8 MiB, it is then refused when read). A read then returns one
// byte more than came from the wire; where a frame header may come,
// zstdFrames reads a tenth less than it is asked for, so that a read
// always has room for its insertions (a frame that needs one is at least
// 12 bytes long), and a one-byte read, with no room, hands the inserted
// byte over in the next. Bytes a block still owes are read in full: no
// header is among them. A single-segment frame declaring more than 8 MiB
// is refused from its header, as the contract allows.
//
// A frame made ordinary before its content size was read may turn out
// small: the clamp's window is then larger than its own (its content
// size, at least 1 KiB), in which the decoder would have refused a block
// whose size on the wire passes it (a raw or RLE block larger than the
// frame, a compressed block larger than what it decodes to). The content
// size is known by the frame's first block header: such a header has
// its size raised past 128 KiB, in its last byte, so that the decoder
// refuses it as it would have (a raw or RLE block over the window, a
// compressed one too big), at the same byte.
//
// Before a frame's header reaches the decoder, the history its
// window will take is reserved through BodyReader.Reserve.

import (
	"errors"
	"io"
)

// zstdBlockMax is zstd's largest block, in decoded bytes.
const zstdBlockMax = 128 << 10

// zstdRing returns what klauspost's decoder allocates for a frame of the
// given window (compress v1.20): its history ring, of the window plus two
// blocks of room (at most the window each) and 32 bytes of overrun each
// (history.ensureBlockRing), and its block buffer, of a block (at most
// the window) and 33 bytes (blockDec.reset, in low-memory mode). Both are
// allocated anew when a frame needs more than the decoder holds.
func zstdRing(window int64) int64 {
	block := min(window, zstdBlockMax)
	return window + 2*(block+32) + block + 33
}

// ZstdHistory returns the most memory the history of one zstd layer of a
// body can hold at once at ceiling limit (0 or negative:
// DefaultMaxBytes): the decoder's ring for a window of the ceiling plus
// 128 KiB (at most 8 MiB) and its block buffer. A small frame takes far
// less (see BodyReader.Reserve); a body whose frames need ever larger
// windows makes the decoder allocate a ring for each, up to three of this
// size in all (past that it is refused, ErrTooLarge).
func ZstdHistory(limit int64) int64 {
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	return zstdRing(zstdWindowAtLeast(zstdClampSize(limit)))
}

// zstdClampSize returns the window a body at ceiling limit needs: the
// ceiling plus a block, at most 8 MiB (limit+128 KiB would overflow for a
// ceiling near math.MaxInt64).
func zstdClampSize(limit int64) int64 {
	return min(min(limit, zstdMaxWindow)+zstdBlockMax, zstdMaxWindow)
}

// zstdWindowSize returns the window a Window_Descriptor byte declares:
// 2^(10+exponent) plus mantissa eighths of it.
func zstdWindowSize(wd byte) int64 {
	base := int64(1) << (10 + wd>>3)
	return base + base/8*int64(wd&7)
}

// zstdDescriptorAtLeast returns the descriptor of the smallest window of
// at least n bytes (n at most 3.75 TiB).
func zstdDescriptorAtLeast(n int64) byte {
	for wd := 0; wd < 0xff; wd++ {
		if zstdWindowSize(byte(wd)) >= n {
			return byte(wd)
		}
	}
	return 0xff
}

func zstdWindowAtLeast(n int64) int64 { return zstdWindowSize(zstdDescriptorAtLeast(n)) }

// errZstdContent is the walker's refusal of a single-segment frame whose
// content size passes the ceiling; errZstdGrowth its refusal of frames
// whose growing windows would make the decoder allocate too many rings.
var (
	errZstdContent = errors.New("decode: internal: zstd content size over the ceiling")
	errZstdGrowth  = errors.New("decode: internal: zstd windows growing past the history allowed")
	// errZstdWindow is the walker's refusal of a frame declaring a window
	// over 8 MiB (RFC 9659), met in byte order like errZstdContent: the
	// bytes before that frame reach the decoder first.
	errZstdWindow = errors.New("decode: internal: zstd window over 8 MiB")
)

// States of zstdFrames: which field the next byte belongs to.
const (
	zsMagic   uint8 = iota // the 4-byte magic number
	zsSkipLen              // the 4-byte size of a skippable frame
	zsFHD                  // Frame_Header_Descriptor
	zsWD                   // Window_Descriptor
	zsFCS                  // Frame_Content_Size, after the dictionary ID is skipped
	zsBlock                // a 3-byte block header
	zsPass                 // not followed any more: bytes pass unchanged
)

// zstdFrames follows the zstd frames passing from r to the decoder and
// lowers their windows (see the NOTE above). The zero value passes bytes
// unchanged until reset.
type zstdFrames struct {
	r       io.Reader
	limit   int64
	clamp   byte                // descriptor of the clamp window
	reserve func(n int64) error // BodyReader.Reserve, or nil
	held    int64               // the ring the decoder holds for this body
	spent   int64               // the rings reserved for this body, in all
	err     error               // sticky: errZstdContent or reserve's error

	state   uint8
	acc     uint64 // the field read so far, little-endian
	got     uint8  // bytes of the field read
	skip    int64  // bytes to pass before the field
	fhd     byte
	fcsSize uint8
	last    bool // the block being passed over is the frame's last
	// widened: the frame was single-segment, made ordinary before its
	// content size was read; that size is still checked against 8 MiB.
	widened bool
	// segWindow: for a widened frame whose content size has been read,
	// the window the decoder would have taken for it as a single segment
	// (its content size, at least 1 KiB); 0 for any other frame.
	segWindow int64

	// pend is an inserted Window_Descriptor that a one-byte read had no
	// room for: the next Read returns it before reading on.
	pend    byte
	hasPend bool
	rerr    error // the source's error, held back while pend waits
}

func (z *zstdFrames) reset(r io.Reader, limit int64, reserve func(int64) error) {
	*z = zstdFrames{
		r: r, limit: limit, reserve: reserve,
		clamp: zstdDescriptorAtLeast(zstdClampSize(limit)),
	}
}

func (z *zstdFrames) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if z.hasPend {
		p[0], z.hasPend = z.pend, false
		err := z.rerr
		z.rerr = nil
		return 1, err
	}
	n, err := z.r.Read(p[:z.readable(len(p))])
	n, werr := z.walk(p, n)
	if werr != nil {
		z.err = werr
		return n, werr
	}
	if z.hasPend {
		z.rerr, err = err, nil // the inserted byte comes before the source's error
	}
	return n, err
}

// readable returns how much of a buffer of size bytes a read may fill,
// leaving room for the Window_Descriptor bytes the read may need inserted
// (see the NOTE). None can be inserted once the walk has stopped
// following frames, nor in the bytes a block, a skippable frame or a
// dictionary ID still owes (skip): only a frame header can need one. In
// the r bytes past those, a frame that needs one is at least 12 bytes
// long, so r - r/10 - 1 bytes hold at most r/10 + 1 of them.
func (z *zstdFrames) readable(size int) int {
	if z.state == zsPass || z.skip >= int64(size) {
		return size
	}
	r := size - int(z.skip)
	return size - min(r/10+1, r-1)
}

// field starts a field of size bytes (after skip bytes), or, for an empty
// one, completes it at once.
func (z *zstdFrames) field(state uint8, skip int64) {
	z.state, z.acc, z.got, z.skip = state, 0, 0, skip
}

// walk follows the n bytes read into p through the frames, rewriting
// window bytes in place and inserting those that single-segment frames
// over the clamp need (see the NOTE), and returns how many bytes p then
// holds. On a refusal it returns how many bytes of p come before the
// field refused.
func (z *zstdFrames) walk(p []byte, n int) (int, error) {
	b := p[:n]
	start := 0 // where the current field began in b
	for i := 0; i < len(b); {
		if z.state == zsPass {
			return len(b), nil
		}
		if z.skip > 0 {
			k := min(int64(len(b)-i), z.skip)
			i += int(k)
			z.skip -= k
			continue
		}
		if z.got == 0 {
			start = i
		}
		c := b[i]
		z.acc |= uint64(c) << (8 * z.got)
		z.got++
		switch z.state {
		case zsMagic:
			if z.got < 4 {
				break
			}
			switch {
			case z.acc == 0xFD2FB528:
				z.field(zsFHD, 0)
			case z.acc&^0xF == 0x184D2A50:
				z.field(zsSkipLen, 0)
			default:
				z.state = zsPass
			}
		case zsSkipLen:
			if z.got == 4 {
				z.field(zsMagic, int64(z.acc))
			}
		case zsFHD:
			z.fhd = c
			z.segWindow = 0
			if c&0x08 != 0 { // reserved bit: the decoder refuses it
				z.state = zsPass
				break
			}
			single := c&0x20 != 0
			z.fcsSize = [4]uint8{0, 2, 4, 8}[c>>6]
			if c>>6 == 0 && single {
				z.fcsSize = 1
			}
			if !single {
				z.field(zsWD, 0)
				break
			}
			if c>>6 != 0 && z.overClamp(b, i) {
				// An ordinary frame with the clamp's window from here on.
				if err := z.hold(zstdWindowSize(z.clamp)); err != nil {
					return start, err
				}
				z.fhd &^= 0x20
				z.widened = true
				b[i] = z.fhd
				b = p[:z.insert(p, i+1, len(b), z.clamp)]
				i++ // past the inserted byte (or the end, when it waits)
			}
			if err := z.enterFCS(); err != nil {
				return start, err
			}
		case zsWD:
			if err := z.window(b, i); err != nil {
				return start, err
			}
			if err := z.enterFCS(); err != nil {
				return start, err
			}
		case zsFCS:
			if z.got < z.fcsSize {
				break
			}
			switch {
			case z.fhd&0x20 != 0:
				if err := z.single(); err != nil {
					return start, err
				}
			case z.widened:
				// The decoder would have refused it from the header
				// as a single segment; it must be refused the same,
				// not decoded in byte order until the frame breaks.
				z.widened = false
				if z.acc > 1<<62 || z.contentSize() > zstdMaxWindow {
					return start, errZstdContent
				}
				z.segWindow = max(z.contentSize(), 1<<10)
			}
			z.field(zsBlock, 0)
		case zsBlock:
			if z.got < 3 {
				break
			}
			z.last = z.acc&1 != 0
			size := int64(z.acc >> 3)
			switch (z.acc >> 1) & 3 {
			case 1: // RLE: one byte on the wire
				size = 1
			case 3: // reserved: the decoder refuses it
				z.state = zsPass
				continue
			}
			if z.segWindow != 0 && int64(z.acc>>3) > z.segWindow {
				// A block the decoder refuses in a single segment of
				// this size (its window), but not in the clamp's window
				// the frame was given: its size is raised past 128 KiB
				// (in the header's last byte, still in b), which the
				// decoder refuses the same way, at the same byte.
				b[i] |= 0x80
				z.state = zsPass
				continue
			}
			if z.last {
				crc := int64(0)
				if z.fhd&0x04 != 0 {
					crc = 4
				}
				z.field(zsMagic, size+crc)
			} else {
				z.field(zsBlock, size)
			}
		}
		i++
	}
	return len(b), nil
}

// overClamp reports whether the single-segment frame whose
// Frame_Header_Descriptor is b[i] declares more content than the clamp
// window: true when its content size field is not all in b yet (the frame
// then takes the clamp's window, and walk refuses its size when read if it
// is over 8 MiB), false when it declares more than 8 MiB (refused by
// single, as before).
func (z *zstdFrames) overClamp(b []byte, i int) bool {
	at := i + 1 + int([4]uint8{0, 1, 2, 4}[z.fhd&3])
	if at+int(z.fcsSize) > len(b) {
		return true
	}
	var fcs uint64
	for k := int(z.fcsSize) - 1; k >= 0; k-- {
		fcs = fcs<<8 | uint64(b[at+k])
	}
	if z.fcsSize == 2 {
		fcs += 256
	}
	return fcs > uint64(zstdWindowSize(z.clamp)) && fcs <= zstdMaxWindow
}

// insert puts c into p at at, moving the n-at bytes from there on by
// one, and returns how many bytes p then holds. Read leaves room for it;
// when there is none (a one-byte read), c waits in pend for the next Read.
func (z *zstdFrames) insert(p []byte, at, n int, c byte) int {
	if n < len(p) {
		copy(p[at+1:n+1], p[at:n])
		p[at] = c
		return n + 1
	}
	if at < n {
		panic("decode: zstdFrames: no room to insert a window byte")
	}
	z.pend, z.hasPend = c, true
	return n
}

// enterFCS skips the dictionary ID and starts the content size; with no
// content size field, it goes on to the blocks (a single-segment frame
// always has one).
func (z *zstdFrames) enterFCS() error {
	dict := int64([4]uint8{0, 1, 2, 4}[z.fhd&3])
	if z.fcsSize == 0 {
		z.field(zsBlock, dict)
		return nil
	}
	z.field(zsFCS, dict)
	return nil
}

// single checks a single-segment frame's content size, which is its
// window, against the clamp and reserves its history. A frame declaring
// a little more than the ceiling is decoded up to it (its first bytes may
// hold an earlier failure); one declaring more than the clamp would take
// more history than the ceiling allows.
func (z *zstdFrames) single() error {
	fcs := z.contentSize()
	if z.acc > 1<<62 || fcs > zstdWindowSize(z.clamp) {
		return errZstdContent
	}
	return z.hold(max(fcs, 1<<10))
}

// contentSize returns the Frame_Content_Size just read (acc), which a
// 2-byte field stores less 256. Callers refuse acc over 2^62 first.
func (z *zstdFrames) contentSize() int64 {
	if z.fcsSize == 2 {
		return int64(z.acc) + 256
	}
	return int64(z.acc)
}

// window rewrites the Window_Descriptor at b[i] to the smallest window
// the frame can need, and reserves its history.
func (z *zstdFrames) window(b []byte, i int) error {
	wd := b[i]
	declared := zstdWindowSize(wd)
	if declared > zstdMaxWindow {
		// Refused here, where the frame is met: as a flag for the
		// decoder's own refusal (ErrWindowSizeExceeded, which it also
		// gives for a block larger than its window, corrupt data) it
		// turned an earlier frame's corruption into this one's 413
		// (found by review on 2026-12-07).
		return errZstdWindow
	}
	if wd > z.clamp {
		wd = z.clamp
	}
	if bound, ok := z.bound(b[i+1:], declared); ok {
		if d := zstdDescriptorAtLeast(max(bound, 1<<10)); d < wd {
			wd = d
		}
	}
	b[i] = wd
	return z.hold(zstdWindowSize(wd))
}

// bound returns what the frame whose header ends with the window byte
// can decode to at most, when the headers of all its blocks are in b
// (which starts after the window byte).
func (z *zstdFrames) bound(b []byte, window int64) (int64, bool) {
	i := int64([4]uint8{0, 1, 2, 4}[z.fhd&3]) + int64(z.fcsSize)
	blockMax := min(window, zstdBlockMax)
	var total int64
	for i+3 <= int64(len(b)) {
		h := uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16
		size := int64(h >> 3)
		wire := size
		switch (h >> 1) & 3 {
		case 0: // raw
			total += size
		case 1: // RLE
			total += size
			wire = 1
		case 2: // compressed
			total += blockMax
		default:
			return 0, false
		}
		if h&1 != 0 {
			return total, true
		}
		i += 3 + wire
	}
	return 0, false
}

// hold reserves the history a frame of the given window makes the
// decoder keep, when it needs more than the frames before it: the decoder
// then allocates a new ring, the old one becoming garbage, so each such
// frame costs its whole ring. Frames whose windows keep growing (an
// attacker's 1.3 KB of empty frames made the decoder allocate ten rings
// of the clamp's size in all) are refused once the rings of the body
// would pass zstdGrowthRings times the largest the ceiling allows.
func (z *zstdFrames) hold(window int64) error {
	need := zstdRing(window)
	if need <= z.held {
		return nil
	}
	if z.spent+need > zstdGrowthRings*zstdRing(zstdWindowSize(z.clamp)) {
		return errZstdGrowth
	}
	if z.reserve != nil {
		if err := z.reserve(need); err != nil {
			return err
		}
	}
	z.held = need
	z.spent += need
	return nil
}

// zstdGrowthRings bounds the history rings one zstd layer of a body may
// make the decoder allocate, in rings of the clamp's window: a body whose
// frames grow their windows one after another is refused past it (a
// body's frames rarely need more than one ring; frames that each hold
// what they decode need, with their two blocks of room, about three times
// the decoded bytes in all, within this bound up to the ceiling).
const zstdGrowthRings = 3
