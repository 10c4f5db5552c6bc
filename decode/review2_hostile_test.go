package decode_test

// Hostile review, round 2: the Content-Encoding layer, the zstd frame
// walker, the Framer and DecodeReader/DecodeBody against attackers and
// misbehaving readers. Each test asserts the behaviour the package's
// documentation (or the contract) promises.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/rpcedge/rpcedge/decode"
)

// review2EmptyCompressedBlock is a compressed block (type 2) of 2 bytes
// that decodes to nothing: raw literals of size 0, no sequences. The
// walker counts it as a full block (min(window, 128 KiB)) when it bounds
// a frame's window, whatever it decodes to.
func review2EmptyCompressedBlock(last bool) []byte {
	h := uint32(2)<<1 | uint32(2)<<3
	if last {
		h |= 1
	}
	return []byte{byte(h), byte(h >> 8), byte(h >> 16), 0x00, 0x00}
}

// review2AscendingWindows returns a zstd body of empty frames whose
// windows, as zstdFrames lowers them, climb through every descriptor from
// 1 KiB up to the clamp of the default ceiling (1 MiB + 128 KiB): frames
// up to 128 KiB declare their window and hold one empty compressed block;
// larger ones declare 8 MiB and hold as many empty compressed blocks as
// their window has 128 KiB blocks. The body decodes to nothing, in
// about 1.3 KB of wire.
func review2AscendingWindows() []byte {
	var wire []byte
	for wd := 0; wd < 0x100; wd++ {
		base := int64(1) << (10 + wd>>3)
		w := base + base/8*int64(wd&7)
		if w > 1<<20+128<<10 {
			break
		}
		blocks := int((w + 128<<10 - 1) / (128 << 10))
		decl := byte(wd)
		if blocks > 1 {
			decl = 13 << 3 // 8 MiB, RFC 9659's largest
		}
		wire = append(wire, 0x28, 0xb5, 0x2f, 0xfd, 0x00, decl)
		for i := range blocks {
			wire = append(wire, review2EmptyCompressedBlock(i == blocks-1)...)
		}
	}
	return wire
}

// TestReview2ZstdAscendingWindowsAllocation: a body of frames whose
// lowered windows climb one descriptor at a time made klauspost's
// decoder allocate a new ring for every frame (ensureBlockRing allocates
// the full window+2 blocks whenever the ring it has is too small), while
// zstdFrames.hold reserved only the growth: ~1.3 KB of wire that decodes
// to nothing allocated ~10x ZstdHistory(1 MiB) with new decoders, and
// Reserve heard of a tenth of it. Now each new ring is reserved whole,
// and the body is refused (413) once its rings would pass three of the
// largest: what it allocates stays within that, and Reserve hears of all
// of it. A body whose frames each need the same or a smaller window, and
// frames whose windows grow as their contents do, are decoded as before.
func TestReview2ZstdAscendingWindowsAllocation(t *testing.T) {
	wire := review2AscendingWindows()
	enc, _ := decode.ParseEncoding([]byte("zstd"))
	var br decode.BodyReader
	var reserved int64
	br.Reserve = func(n int64) error { reserved += n; return nil }
	var got []byte
	var err error
	alloc := coldAlloc(func() {
		br.Reset(bytes.NewReader(wire), enc, 0)
		got, err = readBody(&br, 4096)
		br.Close()
	})
	var de *decode.Error
	if !errors.As(err, &de) || !errors.Is(err, decode.ErrTooLarge) || de.HTTPStatus() != 413 || len(got) != 0 {
		t.Fatalf("%d bytes, %v; want a 413 refusal", len(got), err)
	}
	hist := uint64(decode.ZstdHistory(0))
	t.Logf("%d B of wire: %d B allocated with new decoders, %d B reserved, ZstdHistory(1 MiB) = %d B", len(wire), alloc, reserved, hist)
	if limit := 3*hist + 512<<10; alloc > limit {
		t.Errorf("%d B of empty zstd frames allocated %d B (%.1fx ZstdHistory), want at most %d B", len(wire), alloc, float64(alloc)/float64(hist), limit)
	}
	if uint64(reserved)+512<<10 < alloc {
		t.Errorf("Reserve was told of %d B, but %d B were allocated", reserved, alloc)
	}

	// Frames whose windows grow with their contents (each holds raw
	// bytes of its window's size, up to the ceiling in all): decoded.
	var body []byte
	var want []byte
	total := 0
	for wd := byte(0); ; wd += 8 { // 1, 2, 4, ... KiB windows
		w := 1 << (10 + wd>>3)
		if total+w > 1<<20 {
			break
		}
		body = append(body, 0x28, 0xb5, 0x2f, 0xfd, 0x00, wd)
		for off := 0; off < w; {
			n := min(w-off, 128<<10)
			h := uint32(n) << 3 // a raw block
			if off+n == w {
				h |= 1
			}
			body = append(body, byte(h), byte(h>>8), byte(h>>16))
			for i := range n {
				c := byte('a' + (total+off+i)%26)
				body = append(body, c)
				want = append(want, c)
			}
			off += n
		}
		total += w
	}
	reserved = 0
	br.Reset(bytes.NewReader(body), enc, 0)
	got, err = readBody(&br, 4096)
	br.Close()
	if err != io.EOF || !bytes.Equal(got, want) {
		t.Fatalf("frames growing with their contents (%d B): %d B, %v; want them decoded", len(want), len(got), err)
	}
}

// review2Stall returns data, then (0, nil) on every read; past limit
// calls it gives up with errReview2GaveUp, so that a loop that never
// stops ends the test rather than hanging it.
type review2Stall struct {
	data  []byte
	calls int
	limit int
}

func (r *review2Stall) Read(p []byte) (int, error) {
	if len(r.data) > 0 {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	if r.calls++; r.calls > r.limit {
		return 0, errReview2GaveUp
	}
	return 0, nil
}

var errReview2GaveUp = errors.New("review2: the reader gave up: its caller loops for ever")

// TestReview2DecodeBodyStalledSource: DecodeReader promises "a reader
// that returns no bytes and no error 100 times in a row gets
// io.ErrNoProgress", and DecodeBody decodes "as DecodeReader does"; a
// source error is returned "as it was returned" (BodyReader.Read). With a
// coding, a source that stalls (0, nil for ever):
//   - zstd anywhere, and gzip in its header, spin for ever: the
//     decompressors read through io.ReadFull on a bufio.Reader, whose Read
//     passes (0, nil) on, and ReadFull loops on it (a hang at 100% CPU);
//   - gzip and deflate in the deflate data get bufio's io.ErrNoProgress
//     and BodyReader calls it a corrupt stream (400/-32700).
func TestReview2DecodeBodyStalledSource(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"t":"` + strings.Repeat("abc", 3000) + `"}}`)
	for _, list := range []string{"", "gzip", "deflate", "zstd", "gzip, zstd"} {
		wire := compressWith(t, list, body)
		for _, cut := range []int{0, 5, len(wire) / 2} {
			src := &review2Stall{data: wire[:cut], limit: 100000}
			enc, _ := decode.ParseEncoding([]byte(list))
			var d decode.Decoder
			var m decode.Message
			err := d.DecodeBody(src, enc, &m)
			if err != io.ErrNoProgress || src.calls > 1000 {
				t.Errorf("%q, stalled after %d of %d wire bytes: %v after %d empty reads; want io.ErrNoProgress after about 100",
					list, cut, len(wire), err, src.calls)
			}
		}
	}
}

// review2DataErr returns its data in one read, with err on that read.
type review2DataErr struct {
	data []byte
	err  error
}

func (r *review2DataErr) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	if len(r.data) == 0 {
		return n, r.err
	}
	return n, nil
}

// TestReview2DecodeBodyCorruptionBeforeSourceError: a reader may return
// n > 0 bytes with an error. When those bytes hold the first failure, the
// failure decides ("the first failure in byte order"), as it does for an
// identity body (DecodeReader scans them before returning the error). A
// compressed body whose checksum is wrong, its last bytes coming with a
// connection error, is answered with the source error: the wire meter
// records the error as the bytes pass it (meter.note), and settle checks
// r.wire.err before the stages' own failures.
func TestReview2DecodeBodyCorruptionBeforeSourceError(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"t":"` + strings.Repeat("abc", 30) + `"}}`)
	boom := errors.New("connection reset")
	for _, list := range []string{"gzip", "deflate", "zstd"} {
		wire := compressWith(t, list, body)
		bad := bytes.Clone(wire)
		bad[len(bad)-3] ^= 0x55 // in the trailing checksum
		enc, _ := decode.ParseEncoding([]byte(list))
		var d decode.Decoder
		var m decode.Message
		if err := d.DecodeBody(bytes.NewReader(bad), enc, &m); !errors.Is(err, decode.ErrCorrupt) {
			t.Fatalf("%q: the corrupt body alone gives %v, want ErrCorrupt", list, err)
		}
		for _, src := range []io.Reader{
			&review2DataErr{data: bad, err: boom},
			iotest.OneByteReader(&review2DataErr{data: bad, err: boom}),
		} {
			err := d.DecodeBody(src, enc, &m)
			if !errors.Is(err, decode.ErrCorrupt) {
				t.Errorf("%q (%T): checksum mismatch in bytes that came with the source's error: %v, want ErrCorrupt", list, src, err)
			}
		}
	}
	// The identity twin, for reference: the syntax error in the bytes
	// that came with the error decides.
	var d decode.Decoder
	var m decode.Message
	if err := d.DecodeReader(&review2DataErr{data: []byte(`{"a" 1}`), err: boom}, &m); !errors.Is(err, decode.ErrSyntax) {
		t.Fatalf("identity: %v, want ErrSyntax", err)
	}
}

// TestReview2FramerCRLFAtCeiling: "MaxBytes is the per-message ceiling,
// not counting the '\n'" and "A '\r' before the '\n' is whitespace, so
// CRLF streams work". A message of exactly MaxBytes bytes is accepted
// when its line ends in "\n" but refused 413 when it ends in "\r\n": the
// '\r' is fed to the Decoder and counted against the ceiling.
func TestReview2FramerCRLFAtCeiling(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":1,"method":"a"}`
	next := `{"jsonrpc":"2.0","id":2,"method":"b"}`
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"data+err": iotest.DataErrReader,
	}
	for _, eol := range []string{"\n", "\r\n"} {
		for rn, wrap := range readers {
			in := msg + eol + next + eol
			f, err := decode.NewFramer(wrap(strings.NewReader(in)), decode.Options{MaxBytes: int64(len(msg))})
			if err != nil {
				t.Fatal(err)
			}
			var m decode.Message
			var got []string
			for {
				err := f.Next(&m)
				if err == io.EOF {
					break
				}
				if err != nil {
					got = append(got, fmt.Sprintf("line %d: %v", f.Line(), err))
					continue
				}
				got = append(got, fmt.Sprintf("line %d: %s", f.Line(), m.Method))
			}
			if want := "[line 1: a line 2: b]"; fmt.Sprint(got) != want {
				t.Errorf("line end %q, %s reader, messages of exactly MaxBytes: %v, want %v", eol, rn, got, want)
			}
		}
	}
}

// review2Negative returns a negative count (outside io.Reader's contract)
// up to limit times, then an error.
type review2Negative struct{ calls, limit int }

func (r *review2Negative) Read(p []byte) (int, error) {
	if r.calls++; r.calls > r.limit {
		return 0, errReview2GaveUp
	}
	return -1, nil
}

// TestReview2DecodeReaderNegativeCount: a reader returning a negative
// count and no error is neither data nor "no progress" to DecodeReader,
// which then loops for ever (bufio panics with errNegativeRead instead).
// Minor: outside io.Reader's contract, but a hang rather than an error.
func TestReview2DecodeReaderNegativeCount(t *testing.T) {
	var d decode.Decoder
	var m decode.Message
	r := &review2Negative{limit: 100000}
	err := d.DecodeReader(r, &m)
	if err == errReview2GaveUp || r.calls > 1000 {
		t.Errorf("a reader returning -1, nil: DecodeReader called it %d times (%v); want an error after at most about 100 calls", r.calls, err)
	}
}

// TestReview2FramerNegativeCount: a reader returning a negative count
// (outside io.Reader's contract) makes Framer.Next slice f.buf[0:-1] and
// panic with an index error; an error (or bufio's explicit
// errNegativeRead panic) would be the clear outcome.
func TestReview2FramerNegativeCount(t *testing.T) {
	f, _ := decode.NewFramer(&review2Negative{limit: 100000}, decode.Options{})
	var m decode.Message
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("Framer.Next panicked on a reader returning -1: %v", p)
		}
	}()
	if err := f.Next(&m); err == nil {
		t.Errorf("Framer.Next: nil error for a reader returning -1")
	}
}
