package decode_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"

	"github.com/rpcedge/rpcedge/decode"
)

// zstdBodies returns bodies of the given sizes: JSON-ish text, and one
// whose second half repeats its first, so that matches reach back half
// the body (a window smaller than that would break it), and one whose
// last 4 KiB repeat its first.
func zstdBodies(sizes ...int) map[string][]byte {
	m := map[string][]byte{}
	for i, n := range sizes {
		m[fmt.Sprintf("text %d B", n)] = textish(uint64(40+i), n)
		half := randomBytes(uint64(60+i), (n+1)/2)
		m[fmt.Sprintf("far matches %d B", n)] = append(bytes.Clone(half), half[:n-len(half)]...)
		if n > 8<<10 { // its end repeats its start: matches reach back nearly n
			far := randomBytes(uint64(80+i), n)
			copy(far[n-4<<10:], far[:4<<10])
			m[fmt.Sprintf("farthest matches %d B", n)] = far
		}
	}
	return m
}

// decodeZstd decodes wire as a zstd body at ceiling limit, reading the
// wire whole or (split) one byte per read, and returns the decoded bytes
// and the final error (nil at io.EOF).
func decodeZstd(t *testing.T, br *decode.BodyReader, wire []byte, limit int64, split bool) ([]byte, error) {
	t.Helper()
	enc, _ := decode.ParseEncoding([]byte("zstd"))
	src := io.Reader(bytes.NewReader(wire))
	if split {
		src = iotest.OneByteReader(src)
	}
	br.Reset(src, enc, limit)
	out, err := readBody(br, 4096)
	if err == io.EOF {
		err = nil
	}
	return out, err
}

// checkZstd decodes wire at ceiling limit, whole or split (one wire byte
// per read: frame headers cut anywhere) and checks the result against
// data: all of it when it fits, else the first limit bytes and a refusal
// for the byte after.
func checkZstd(t *testing.T, br *decode.BodyReader, name string, wire, data []byte, limit int64, split bool) {
	t.Helper()
	got, err := decodeZstd(t, br, wire, limit, split)
	if limit <= 0 {
		limit = decode.DefaultMaxBytes
	}
	if int64(len(wire)) > limit { // incompressible: the wire passes the ceiling first
		if !errors.Is(err, decode.ErrTooLarge) || !bytes.HasPrefix(data, got) {
			t.Errorf("%s (%d B on the wire) at ceiling %d: %d bytes, %v; want a prefix and ErrTooLarge", name, len(wire), limit, len(got), err)
		}
		return
	}
	if int64(len(data)) <= limit {
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s at ceiling %d, split %v: %d of %d bytes, %v", name, limit, split, len(got), len(data), err)
		}
		return
	}
	if !errors.Is(err, decode.ErrTooLarge) || int64(len(got)) != limit || !bytes.Equal(got, data[:limit]) {
		t.Errorf("%s (%d B) at ceiling %d, split %v: %d bytes, %v; want the first %d and ErrTooLarge",
			name, len(data), limit, split, len(got), err, limit)
	}
}

// TestBodyReaderZstdEveryWindow decodes frames made by klauspost's
// encoder at every window it offers up to RFC 9659's 8 MiB, streamed
// (the window declared) and single-segment (the content size declared),
// at ceilings under and over the bodies, whole and one byte at a time
// (a frame header split across reads).
func TestBodyReaderZstdEveryWindow(t *testing.T) {
	if decode.RaceEnabled {
		t.Skip("a pure computation in one goroutine: run without -race (the plain run and the purego, AVX2-off and scalar passes cover it)")
	}
	const limit = 256 << 10
	bodies := zstdBodies(40, 5<<10, 200<<10, limit-1, limit+1)
	var br decode.BodyReader
	for log := 10; log <= 23; log++ {
		w := 1 << log
		enc, err := zstd.NewWriter(nil, zstd.WithWindowSize(w), zstd.WithEncoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range bodies {
			var b bytes.Buffer
			enc.Reset(&b)
			enc.Write(data)
			enc.Close()
			single := enc.EncodeAll(data, nil)
			for _, lim := range []int64{limit, 1 << 20} {
				for _, split := range []bool{false, true} {
					if split && len(data) > 5<<10 && log%4 != 3 {
						continue // one byte at a time for a few windows only
					}
					checkZstd(t, &br, fmt.Sprintf("window %d KiB, %s streamed", w>>10, name), b.Bytes(), data, lim, split)
					checkZstd(t, &br, fmt.Sprintf("window %d KiB, %s single", w>>10, name), single, data, lim, split)
				}
			}
		}
	}
}

// needZstdCLI returns the path of the reference zstd CLI (Debian's zstd
// package), skipping the test when it is missing, or failing it under
// CI=true (.ci/run installs it).
func needZstdCLI(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("zstd")
	if err == nil {
		return p
	}
	msg := "zstd CLI not installed (Debian package zstd; .ci/run installs it)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// zstdCLI compresses data with the zstd CLI reading a pipe (so it knows
// no content size and declares its level's window), with extra flags.
func zstdCLI(t *testing.T, bin string, data []byte, flags ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-c", "-q"}, flags...)...)
	cmd.Stdin = bytes.NewReader(data) // a pipe for the child
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("zstd %v: %v: %s", flags, err, stderr.Bytes())
	}
	return out.Bytes()
}

// TestBodyReaderZstdCLI decodes frames made by the reference CLI: the
// 41-byte body it frames with a 2 MiB window (8 MiB at level 19), every
// window log from 10 to 23, frames without a checksum, and several frames
// in a row.
func TestBodyReaderZstdCLI(t *testing.T) {
	bin := needZstdCLI(t)
	const limit = 256 << 10
	bodies := zstdBodies(41, 5<<10, 200<<10, limit+1)
	ping := []byte(`{"jsonrpc":"2.0","id":17,"method":"ping"}`)
	var br decode.BodyReader
	for _, level := range []string{"-1", "-3", "-19"} {
		wire := zstdCLI(t, bin, ping, level)
		checkZstd(t, &br, "CLI "+level+" ping", wire, ping, 0, false)
		checkZstd(t, &br, "CLI "+level+" ping", wire, ping, 0, true)
	}
	for log := 10; log <= 23; log++ {
		for name, data := range bodies {
			wire := zstdCLI(t, bin, data, "-3", fmt.Sprintf("--zstd=wlog=%d", log))
			for _, lim := range []int64{limit, 1 << 20} {
				checkZstd(t, &br, fmt.Sprintf("CLI wlog %d, %s", log, name), wire, data, lim, false)
			}
		}
	}
	a, b := textish(90, 3000), textish(91, 70<<10)
	two := append(zstdCLI(t, bin, a, "-19"), zstdCLI(t, bin, b, "--no-check", "--zstd=wlog=23")...)
	checkZstd(t, &br, "CLI two frames", two, append(bytes.Clone(a), b...), 0, false)
	checkZstd(t, &br, "CLI two frames", two, append(bytes.Clone(a), b...), 0, true)
}

// coldAlloc returns the bytes allocated while f runs with empty pools.
func coldAlloc(f func()) uint64 {
	runtime.GC()
	runtime.GC() // a pooled item survives one collection in the victim cache
	return totalAlloc(f)
}

// TestBodyReaderZstdSmallBodyMemory measures what a small body framed
// with an 8 MiB window costs: with new decoders (empty pools) it must
// cost a small fraction of the window — the history follows the frame,
// not its declared window — and Reserve is told what the history takes.
func TestBodyReaderZstdSmallBodyMemory(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":23,"method":"ping"}`)
	// What the CLI makes of it at level 19: a checksummed frame whose
	// Window_Descriptor 0x68 declares 2^(10+13) = 8 MiB, and a raw block.
	bh := uint32(len(body))<<3 | 1
	wire := append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x68, byte(bh), byte(bh >> 8), byte(bh >> 16)}, body...)
	sum := zstdChecksum(body)
	wire = append(wire, sum[:]...)
	var br decode.BodyReader
	var reserved int64
	br.Reserve = func(n int64) error { reserved += n; return nil }
	run := func(split bool) func() {
		return func() {
			reserved = 0
			if got, err := decodeZstd(t, &br, wire, 0, split); err != nil || !bytes.Equal(got, body) {
				t.Fatalf("%d bytes, %v", len(got), err)
			}
			br.Close()
		}
	}
	// The naive way: klauspost's decoder allowed the window declared.
	naive := coldAlloc(func() {
		zr, _ := zstd.NewReader(bytes.NewReader(wire), zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(8<<20), zstd.WithDecodeBuffersBelow(0))
		if got, err := readAllReader(zr); err != nil || !bytes.Equal(got, body) {
			t.Fatalf("naive: %d bytes, %v", len(got), err)
		}
		zr.Close()
	})
	whole := coldAlloc(run(false))
	wholeReserved := reserved
	split := coldAlloc(run(true))
	splitReserved := reserved
	t.Logf("a %d-byte body in a %d-byte frame declaring an 8 MiB window, new decoders: naive decoder %d B; "+
		"BodyReader, frame in one read %d B (history reserved %d B), frame one byte at a time %d B (reserved %d B, ZstdHistory(1 MiB) %d B)",
		len(body), len(wire), naive, whole, wholeReserved, split, splitReserved, decode.ZstdHistory(0))
	if naive < 8<<20 {
		t.Errorf("the naive decoder allocated %d B; the comparison is void", naive)
	}
	// A 1 KiB window: a ring of 3 KiB and a block buffer of 1 KiB.
	if whole > 256<<10 || wholeReserved > 5<<10 {
		t.Errorf("frame in one read: %d B allocated, %d B reserved; want at most 256 KiB and 5 KiB", whole, wholeReserved)
	}
	if splitReserved != decode.ZstdHistory(0) || split > uint64(decode.ZstdHistory(0))+256<<10 {
		t.Errorf("frame split: %d B allocated, %d B reserved; want the reservation ZstdHistory(0) = %d and at most 256 KiB more allocated",
			split, splitReserved, decode.ZstdHistory(0))
	}
}

// zstdChecksum returns a frame's Content_Checksum: the low 4 bytes of
// the XXH64 of the content, little-endian, taken from a frame
// klauspost's encoder makes of the same content.
func zstdChecksum(content []byte) [4]byte {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(true))
	f := enc.EncodeAll(content, nil)
	return [4]byte(f[len(f)-4:])
}

func readAllReader(r interface{ Read([]byte) (int, error) }) ([]byte, error) {
	var out bytes.Buffer
	_, err := out.ReadFrom(r)
	return out.Bytes(), err
}

// TestBodyReaderZstdReserveRefused: an error from Reserve ends the body
// before the history is allocated and is returned as it is.
func TestBodyReaderZstdReserveRefused(t *testing.T) {
	data := textish(5, 100<<10)
	var b bytes.Buffer
	enc, _ := zstd.NewWriter(&b, zstd.WithWindowSize(8<<20), zstd.WithEncoderConcurrency(1))
	enc.Write(data)
	enc.Close()
	full := errors.New("budget spent")
	var br decode.BodyReader
	calls := 0
	br.Reserve = func(n int64) error { calls++; return full }
	var got []byte
	var err error
	alloc := coldAlloc(func() { got, err = decodeZstd(t, &br, b.Bytes(), 0, true) })
	if err != full || len(got) != 0 || calls != 1 {
		t.Fatalf("%d bytes, %v after %d calls; want none and Reserve's error after one", len(got), err, calls)
	}
	if _, err := br.Read(make([]byte, 10)); err != full {
		t.Fatalf("second Read: %v, want the same error (sticky)", err)
	}
	if alloc > 256<<10 {
		t.Errorf("%d B allocated with a refused reservation, want under 256 KiB (no history)", alloc)
	}
	// A single-segment frame reserves its content size's history.
	br.Reserve = func(n int64) error { calls++; return nil }
	zs, _ := zstd.NewWriter(nil)
	if got, err := decodeAll(t, &br, "zstd, gzip", compressWith(t, "gzip", zs.EncodeAll(data, nil)), 0, 4096); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("zstd, gzip: %d bytes, %v", len(got), err)
	}
}

// TestBodyReaderZstdSingleOverClamp: a single-segment frame's window is
// its content size, which may be anything up to RFC 9659's 8 MiB. One
// that declares more than the ceiling allows for (the ceiling plus a
// block) is decoded with the clamp's window, in byte order, like a frame
// that declares a window: its first ceiling bytes come out and the next
// one is refused (413), and a failure in them comes first (400); its
// history is the clamp's, not its content size. Over 8 MiB it is refused
// from its header.
func TestBodyReaderZstdSingleOverClamp(t *testing.T) {
	const limit = 256 << 10
	enc, err := zstd.NewWriter(nil, zstd.WithSingleSegment(true), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	var br decode.BodyReader
	var held int64
	br.Reserve = func(n int64) error { held += n; return nil }
	bodies := zstdBodies(limit+limit/2+1, 2<<20)
	bodies["8 MiB"] = textish(9, 8<<20)
	for name, data := range bodies {
		wire := enc.EncodeAll(data, nil)
		if wire[4]&0x20 == 0 {
			t.Fatalf("%s: not a single-segment frame", name)
		}
		for _, split := range []bool{false, true} {
			if split && len(data) > 2<<20 {
				continue
			}
			held = 0
			checkZstd(t, &br, name+", single segment", wire, data, limit, split)
			if max := decode.ZstdHistory(limit); held > max {
				t.Errorf("%s, one byte at a time %v: %d bytes of history reserved, want at most %d", name, split, held, max)
			}
		}
	}
	// The contract's examples, in a single segment: the first failure in
	// byte order decides.
	var d decode.Decoder
	zenc, _ := decode.ParseEncoding([]byte("zstd"))
	var m decode.Message
	for _, tc := range []struct {
		body     []byte
		sentinel error
		offset   int64
	}{
		{append([]byte(`{"a":[1,}`), bytes.Repeat([]byte("x"), 2<<20)...), decode.ErrSyntax, 8},
		{append(append([]byte(`[`), bytes.Repeat([]byte(" "), 2<<20)...), ']'), decode.ErrBatch, 0},
		{append([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":"`), bytes.Repeat([]byte("y"), 2<<20)...), decode.ErrTooLarge, decode.DefaultMaxBytes},
	} {
		wire := enc.EncodeAll(tc.body, nil)
		for _, split := range []bool{false, true} {
			var r io.Reader = bytes.NewReader(wire)
			if split {
				r = iotest.OneByteReader(r)
			}
			err := d.DecodeBody(r, zenc, &m)
			if !errors.Is(err, tc.sentinel) || m.Error.Offset != tc.offset {
				t.Errorf("%.12q… (%d B, single segment), one byte at a time %v: %v at %d, want %v at %d", tc.body, len(tc.body), split, err, m.Error.Offset, tc.sentinel, tc.offset)
			}
		}
	}
	// Over 8 MiB: refused from the header, nothing decoded, whether the
	// content size comes in the read of the descriptor or after it, and
	// whatever follows the header: the whole frame, nothing, or a broken
	// block (klauspost's decoder refuses all three from the header).
	whole := enc.EncodeAll(make([]byte, 8<<20+1), nil)
	header := 5 + 4 // magic, descriptor, 4-byte content size
	if whole[4]>>6 != 2 {
		t.Fatalf("descriptor %#x: want a 4-byte content size", whole[4])
	}
	for name, wire := range map[string][]byte{
		"whole":        whole,
		"header only":  whole[:header],
		"broken block": append(bytes.Clone(whole[:header]), 0xff, 0xff, 0xff, 1, 2, 3),
	} {
		for _, split := range []bool{false, true} {
			got, err := decodeZstd(t, &br, wire, limit, split)
			var e *decode.Error
			if !errors.As(err, &e) || e.Err != decode.ErrTooLarge || !strings.Contains(e.Reason, "content size") || len(got) != 0 {
				t.Errorf("single segment of 8 MiB + 1, %s, one byte at a time %v: %d bytes, %v; want 413 from the header", name, split, len(got), err)
			}
		}
	}
}

// TestZstdFramesInsertEveryRead decodes a body of many single-segment
// frames, each over the clamp and each inserting a window byte, through
// reads of every size from 1 to 64 bytes, so that the inserted bytes fall
// at every place in a read, at its end and past it.
func TestZstdFramesInsertEveryRead(t *testing.T) {
	if decode.RaceEnabled {
		t.Skip("a pure computation in one goroutine: run without -race (the plain run and the purego, AVX2-off and scalar passes cover it)")
	}
	const limit = 4 << 20 // the clamp: 4 MiB + 128 KiB
	// A frame declaring 5 MiB of 'q' in RLE blocks of 128 KiB, each frame
	// cut short of its declared size by its last block: the decoder
	// refuses the size mismatch only after the frame's blocks; but the
	// ceiling comes first. Several frames are too many for one body, so
	// use small frames instead: each declares 5 MiB and holds 5 MiB.
	frame := func() []byte {
		b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xa0} // 4-byte content size, single segment
		b = binary.LittleEndian.AppendUint32(b, 5<<20)
		for i := range 40 {
			h := uint32(1)<<1 | uint32(128<<10)<<3
			if i == 39 {
				h |= 1
			}
			b = append(b, byte(h), byte(h>>8), byte(h>>16), 'q')
		}
		return b
	}
	want := bytes.Repeat([]byte("q"), limit)
	wire := append(frame(), frame()...)
	enc, _ := decode.ParseEncoding([]byte("zstd"))
	var br decode.BodyReader
	for size := 1; size <= 64; size++ {
		br.Reset(&sizedReader{data: wire, size: size}, enc, limit)
		got, err := readBody(&br, size)
		if !errors.Is(err, decode.ErrTooLarge) || !bytes.Equal(got, want) {
			t.Fatalf("reads of %d: %d bytes, %v; want %d and 413", size, len(got), err, limit)
		}
	}
}

// sizedReader returns data size bytes a read at most.
type sizedReader struct {
	data []byte
	size int
}

func (r *sizedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.size)], r.data)
	r.data = r.data[n:]
	return n, nil
}
