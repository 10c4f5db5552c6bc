package decode_test

import (
	"bytes"
	stdgzip "compress/gzip"
	stdzlib "compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"

	"github.com/rpcedge/rpcedge/decode"
)

// ---------------------------------------------------------------------------
// Helpers

// compressWith applies the codings of a Content-Encoding list to data, in
// the order listed (the sender's order). gzip and deflate use the standard
// library, so the decoder is checked against another implementation (at
// BestSpeed, to keep -race runs short).
func compressWith(tb testing.TB, list string, data []byte) []byte {
	tb.Helper()
	for _, c := range strings.Split(list, ",") {
		c = strings.ToLower(strings.TrimSpace(c))
		var buf bytes.Buffer
		switch c {
		case "", "identity":
			continue
		case "gzip", "x-gzip":
			w, _ := stdgzip.NewWriterLevel(&buf, stdgzip.BestSpeed)
			w.Write(data)
			w.Close()
		case "deflate":
			w, _ := stdzlib.NewWriterLevel(&buf, stdzlib.BestSpeed)
			w.Write(data)
			w.Close()
		case "zstd":
			// A streaming writer declares its window: keep it within the
			// cap of the default ceiling (1 MiB).
			w, err := zstd.NewWriter(&buf, zstd.WithWindowSize(1<<20))
			if err != nil {
				tb.Fatal(err)
			}
			w.Write(data)
			w.Close()
		default:
			tb.Fatalf("compressWith: unknown coding %q", c)
		}
		data = buf.Bytes()
	}
	return data
}

// textish returns n pseudo-random bytes of JSON-like text drawn from a small
// vocabulary: random enough to exercise the decoders, compressible enough
// (about 3:1) that a body of the ceiling's size compresses below it.
func textish(seed uint64, n int) []byte {
	words := []string{`{"id":`, `"method"`, `"params":`, `[1,2,3]`, `null`, `true`, `"text"`, `},`, ` `, `"\u00e9"`, `0.5e3`, `"caf`}
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, 0, n+16)
	for len(b) < n {
		b = append(b, words[rng.IntN(len(words))]...)
		b = append(b, byte('a'+rng.IntN(26)))
	}
	return b[:n]
}

func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 11))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// readBody reads r to its end with reads of at most chunk bytes.
func readBody(r io.Reader, chunk int) ([]byte, error) {
	var out []byte
	buf := make([]byte, chunk)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
}

// decodeAll parses list, decodes wire with limit and returns the decoded
// bytes and the final error (nil at io.EOF).
func decodeAll(tb testing.TB, br *decode.BodyReader, list string, wire []byte, limit int64, chunk int) ([]byte, error) {
	tb.Helper()
	enc, err := decode.ParseEncoding([]byte(list))
	if err != nil {
		tb.Fatalf("ParseEncoding(%q): %v", list, err)
	}
	if err := br.Reset(bytes.NewReader(wire), enc, limit); err != nil {
		tb.Fatalf("Reset: %v", err)
	}
	out, err := readBody(br, chunk)
	if err == io.EOF {
		err = nil
	}
	return out, err
}

// wantRefusal checks that err is a *decode.Error wrapping sentinel whose
// Offset is at most produced.
func wantRefusal(tb testing.TB, err, sentinel error, produced int) *decode.Error {
	tb.Helper()
	if !errors.Is(err, sentinel) {
		tb.Fatalf("error %v, want one wrapping %v", err, sentinel)
	}
	var e *decode.Error
	if !errors.As(err, &e) {
		tb.Fatalf("error %T is not a *decode.Error", err)
	}
	if e.Offset > int64(produced) {
		tb.Fatalf("Offset %d > %d decoded bytes produced", e.Offset, produced)
	}
	if e.Reason == "" {
		tb.Fatalf("empty Reason in %v", e)
	}
	wantCode, wantStatus := decode.CodeParseError, 400
	if sentinel == decode.ErrTooLarge {
		wantCode, wantStatus = decode.CodeInvalidRequest, 413
	}
	if e.Code != wantCode || e.HTTPStatus() != wantStatus {
		tb.Fatalf("%v: Code %d HTTPStatus %d, want %d %d", e, e.Code, e.HTTPStatus(), wantCode, wantStatus)
	}
	return e
}

// ---------------------------------------------------------------------------
// ParseEncoding

func TestParseEncoding(t *testing.T) {
	tests := []struct {
		header string
		want   string // String(); "" when refused
		reason string // substring of the refusal's Reason
	}{
		{"", "identity", ""},
		{"identity", "identity", ""},
		{"IDENTITY", "identity", ""},
		{"gzip", "gzip", ""},
		{"GZIP", "gzip", ""},
		{"x-gzip", "gzip", ""},
		{"X-GZip", "gzip", ""},
		{"deflate", "deflate", ""},
		{"Deflate", "deflate", ""},
		{"zstd", "zstd", ""},
		{" gzip , zstd ", "gzip, zstd", ""},
		{"\tzstd\t", "zstd", ""},
		{"identity, gzip", "gzip", ""},
		{"gzip, identity, zstd, identity", "gzip, zstd", ""},
		{"deflate,gzip", "deflate, gzip", ""},
		{"zstd, zstd", "zstd, zstd", ""},
		// Empty list elements are ignored (RFC 9110 section 5.6.1).
		{"gzip,,zstd", "gzip, zstd", ""},
		{",", "identity", ""},
		{" , ,\t", "identity", ""},
		{"gzip,", "gzip", ""},
		{",gzip", "gzip", ""},

		{"br", "", "unsupported"},
		{"compress", "", "unsupported"},
		{"x-compress", "", "unsupported"},
		{"gzip, br", "", "unsupported"},
		{"gzip;q=1", "", "unsupported"},
		{"gzip zstd", "", "unsupported"},
		{"gz ip", "", "unsupported"},
		{`"gzip"`, "", "unsupported"},
		{"gzip\x00", "", "unsupported"},
		{"gzip\r\n", "", "unsupported"},
		{"\u212agzip", "", "unsupported"},
		{"gzip,gzip,gzip", "", "more than two"},
		{"gzip, deflate, zstd", "", "more than two"},
		{"zstd, identity, zstd, identity, gzip", "", "more than two"},
	}
	for _, tt := range tests {
		enc, err := decode.ParseEncoding([]byte(tt.header))
		if tt.want != "" {
			if err != nil {
				t.Errorf("ParseEncoding(%q): %v", tt.header, err)
				continue
			}
			if got := enc.String(); got != tt.want {
				t.Errorf("ParseEncoding(%q).String() = %q, want %q", tt.header, got, tt.want)
			}
			if enc.IsIdentity() != (tt.want == "identity") {
				t.Errorf("ParseEncoding(%q).IsIdentity() = %v", tt.header, enc.IsIdentity())
			}
			continue
		}
		if !errors.Is(err, decode.ErrEncoding) {
			t.Errorf("ParseEncoding(%q) = %v, %v; want ErrEncoding", tt.header, enc, err)
			continue
		}
		var e *decode.Error
		if !errors.As(err, &e) || e.HTTPStatus() != 415 || e.Code != decode.CodeInvalidRequest || e.Offset != 0 {
			t.Errorf("ParseEncoding(%q): %#v, want 415 / -32600 at offset 0", tt.header, err)
			continue
		}
		if !strings.Contains(e.Reason, tt.reason) {
			t.Errorf("ParseEncoding(%q): Reason %q, want it to mention %q", tt.header, e.Reason, tt.reason)
		}
		if enc != (decode.Encoding{}) {
			t.Errorf("ParseEncoding(%q) refused but returned %v", tt.header, enc)
		}
	}
}

func TestEncodingZeroValue(t *testing.T) {
	var enc decode.Encoding
	if !enc.IsIdentity() || enc.String() != "identity" {
		t.Fatalf("zero Encoding: IsIdentity %v, String %q", enc.IsIdentity(), enc.String())
	}
	a, _ := decode.ParseEncoding([]byte("x-gzip"))
	b, _ := decode.ParseEncoding([]byte("GZIP"))
	if a != b {
		t.Fatalf("x-gzip and GZIP parse differently: %v, %v", a, b)
	}
}

// ---------------------------------------------------------------------------
// Round trips

var roundTripLists = []string{
	"", "identity", "gzip", "x-gzip", "deflate", "zstd",
	"gzip, zstd", "deflate, gzip", "zstd, deflate", "zstd, zstd", "gzip, gzip",
}

func TestBodyReaderRoundTrip(t *testing.T) {
	const limit = 96 << 10
	sizes := []int{0, 1, 100, 4096, 40<<10 + 3, limit - 1, limit, limit + 1, 2 * limit}
	var br decode.BodyReader // reused across every case
	for _, list := range roundTripLists {
		for i, size := range sizes {
			data := textish(uint64(i), size)
			wire := compressWith(t, list, data)
			for _, chunk := range []int{1 << 20, 4093} {
				name := fmt.Sprintf("%q/%d/chunk%d", list, size, chunk)
				got, err := decodeAll(t, &br, list, wire, limit, chunk)
				if size <= limit {
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if !bytes.Equal(got, data) {
						t.Fatalf("%s: decoded %d bytes, differ from the %d sent", name, len(got), len(data))
					}
					if br.Wire() != int64(len(wire)) {
						t.Fatalf("%s: Wire() = %d, want %d", name, br.Wire(), len(wire))
					}
					continue
				}
				e := wantRefusal(t, err, decode.ErrTooLarge, len(got))
				if len(got) != limit || !bytes.Equal(got, data[:limit]) {
					t.Fatalf("%s: refused after %d bytes, want the first %d", name, len(got), limit)
				}
				if e.Offset != limit {
					t.Fatalf("%s: Offset %d, want %d", name, e.Offset, limit)
				}
				if br.Wire() > limit+1 {
					t.Fatalf("%s: read %d wire bytes, more than limit+1", name, br.Wire())
				}
				// The refusal is sticky and stays valid after Close.
				if _, err2 := br.Read(make([]byte, 10)); err2 != err {
					t.Fatalf("%s: second Read: %v, want the same refusal", name, err2)
				}
				br.Close()
				if *e != *err.(*decode.Error) || !errors.Is(err, decode.ErrTooLarge) {
					t.Fatalf("%s: refusal changed by Close", name)
				}
			}
		}
	}
	br.Close()
	br.Close() // twice is fine
}

// TestBodyReaderSmallReads feeds the wire one byte (or half a read) at a
// time and reads the output one byte at a time.
func TestBodyReaderSmallReads(t *testing.T) {
	data := textish(3, 20000)
	for _, list := range roundTripLists {
		wire := compressWith(t, list, data)
		enc, _ := decode.ParseEncoding([]byte(list))
		for _, wrap := range []func(io.Reader) io.Reader{iotest.OneByteReader, iotest.HalfReader, iotest.DataErrReader} {
			var br decode.BodyReader
			br.Reset(wrap(bytes.NewReader(wire)), enc, 0)
			got, err := readBody(&br, 1)
			if err != io.EOF || !bytes.Equal(got, data) {
				t.Fatalf("%q: %d bytes, %v", list, len(got), err)
			}
			br.Close()
		}
	}
}

func TestBodyReaderDefaultLimit(t *testing.T) {
	for _, list := range []string{"", "gzip", "zstd"} {
		var br decode.BodyReader
		for _, size := range []int{decode.DefaultMaxBytes, decode.DefaultMaxBytes + 1} {
			data := textish(9, size)
			got, err := decodeAll(t, &br, list, compressWith(t, list, data), 0, 64<<10)
			if size == decode.DefaultMaxBytes {
				if err != nil || len(got) != size {
					t.Fatalf("%q: %d bytes at the default ceiling: %d, %v", list, size, len(got), err)
				}
				continue
			}
			wantRefusal(t, err, decode.ErrTooLarge, len(got))
		}
		br.Reset(strings.NewReader("x"), decode.Encoding{}, -5) // negative: the default too
		if got, err := readBody(&br, 10); err != io.EOF || string(got) != "x" {
			t.Fatalf("negative limit: %q, %v", got, err)
		}
	}
}

func TestBodyReaderConcatenated(t *testing.T) {
	a, b := textish(1, 5000), textish(2, 7000)
	skippable := []byte{0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'a', 'b', 'c'}
	tests := []struct {
		list string
		wire []byte
	}{
		{"gzip", append(compressWith(t, "gzip", a), compressWith(t, "gzip", b)...)},
		{"zstd", append(compressWith(t, "zstd", a), compressWith(t, "zstd", b)...)},
		{"zstd", append(append(compressWith(t, "zstd", a), skippable...), compressWith(t, "zstd", b)...)},
	}
	var br decode.BodyReader
	for _, tt := range tests {
		got, err := decodeAll(t, &br, tt.list, tt.wire, 0, 4096)
		if err != nil || !bytes.Equal(got, append(append([]byte(nil), a...), b...)) {
			t.Fatalf("%s: %d bytes, %v", tt.list, len(got), err)
		}
	}
}

// An empty body decodes to an empty body whatever the coding: the JSON
// layer then refuses the empty body.
func TestBodyReaderEmptyWire(t *testing.T) {
	var br decode.BodyReader
	for _, list := range roundTripLists {
		got, err := decodeAll(t, &br, list, nil, 0, 100)
		if err != nil || len(got) != 0 {
			t.Fatalf("%q: empty wire gave %q, %v", list, got, err)
		}
	}
}

func TestBodyReaderZeroAndClosed(t *testing.T) {
	var br decode.BodyReader
	if n, err := br.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("zero BodyReader: %d, %v; want 0, io.EOF", n, err)
	}
	if br.Wire() != 0 || br.Close() != nil || br.Close() != nil {
		t.Fatal("zero BodyReader: Wire or Close")
	}
	gz, _ := decode.ParseEncoding([]byte("gzip"))
	br.Reset(bytes.NewReader(compressWith(t, "gzip", textish(1, 10000))), gz, 0)
	if n, err := br.Read(make([]byte, 100)); n != 100 || err != nil {
		t.Fatalf("first read: %d, %v", n, err)
	}
	br.Close()
	if _, err := br.Read(make([]byte, 100)); err != io.ErrClosedPipe {
		t.Fatalf("Read after Close mid-body: %v, want io.ErrClosedPipe", err)
	}
	// After the end, Close keeps io.EOF.
	br.Reset(strings.NewReader("{}"), decode.Encoding{}, 0)
	readBody(&br, 10)
	br.Close()
	if _, err := br.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("Read after Close at the end: %v, want io.EOF", err)
	}
}

// ---------------------------------------------------------------------------
// Ceilings

// An incompressible body whose compressed form is longer than the ceiling
// is refused on the wire bytes, having read limit+1 of them.
func TestBodyReaderWireLimit(t *testing.T) {
	const limit = 100 << 10
	data := randomBytes(5, limit-2) // fits decoded; the codings' framing pushes the wire over
	var br decode.BodyReader
	for _, list := range []string{"gzip", "deflate", "zstd", "gzip, zstd", "", "identity"} {
		wire := compressWith(t, list, data)
		if list == "" || list == "identity" {
			wire = randomBytes(6, limit+10)
		}
		if len(wire) <= limit {
			t.Fatalf("%q: wire is %d bytes, not over %d", list, len(wire), limit)
		}
		got, err := decodeAll(t, &br, list, wire, limit, 8192)
		e := wantRefusal(t, err, decode.ErrTooLarge, len(got))
		if e.Reason != "wire bytes over the ceiling" {
			t.Fatalf("%q: Reason %q", list, e.Reason)
		}
		if br.Wire() != limit+1 {
			t.Fatalf("%q: Wire() = %d, want limit+1", list, br.Wire())
		}
		if !bytes.HasPrefix(data, got) && list != "" && list != "identity" {
			t.Fatalf("%q: decoded bytes are not a prefix of the body", list)
		}
	}
}

// With two codings the bytes between them count too: a gzip stream that
// expands its content past the ceiling is refused even though the decoded
// body would fit, and even though zstd shrank it to a few bytes on the wire.
// This is also what stops a cheap outer stream from feeding the inner
// decoder an endless run of empty deflate blocks.
func TestBodyReaderMiddleLimit(t *testing.T) {
	const limit = 64 << 10
	data := make([]byte, limit-10)
	var inner bytes.Buffer
	w, _ := stdgzip.NewWriterLevel(&inner, stdgzip.NoCompression)
	w.Write(data)
	w.Close()
	if inner.Len() <= limit {
		t.Fatalf("inner stream is %d bytes, want over %d", inner.Len(), limit)
	}
	wire := compressWith(t, "zstd", inner.Bytes())

	var br decode.BodyReader
	got, err := decodeAll(t, &br, "gzip, zstd", wire, limit, 4096)
	e := wantRefusal(t, err, decode.ErrTooLarge, len(got))
	if !strings.Contains(e.Reason, "between") {
		t.Fatalf("Reason %q", e.Reason)
	}

	// Empty stored deflate blocks: zero output for five input bytes.
	var empties bytes.Buffer
	empties.Write([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	for empties.Len() < 2*limit {
		empties.Write([]byte{0, 0, 0, 0xff, 0xff})
	}
	wire = compressWith(t, "zstd", empties.Bytes())
	got, err = decodeAll(t, &br, "gzip, zstd", wire, limit, 4096)
	wantRefusal(t, err, decode.ErrTooLarge, len(got))
	if len(got) != 0 {
		t.Fatalf("empty blocks decoded to %d bytes", len(got))
	}
}

// ---------------------------------------------------------------------------
// Bombs

// bombs holds 64 MiB of zeros compressed by each coding, built once. gzip
// and deflate use level 1 (about 1000:1 on zeros, like level 9, and far
// quicker under -race); zstd uses its best level.
var bombs = sync.OnceValue(func() map[string][]byte {
	zeros := make([]byte, 64<<20)
	m := make(map[string][]byte)

	var b bytes.Buffer
	gw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	gw.Write(zeros)
	gw.Close()
	m["gzip"] = bytes.Clone(b.Bytes())

	b.Reset()
	zw, _ := zlib.NewWriterLevel(&b, zlib.BestSpeed)
	zw.Write(zeros)
	zw.Close()
	m["deflate"] = bytes.Clone(b.Bytes())

	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	m["zstd"] = enc.EncodeAll(zeros, nil)

	// gzip, then gzip again: a bomb inside a bomb.
	b.Reset()
	gw.Reset(&b)
	gw.Write(m["gzip"])
	gw.Close()
	m["gzip, gzip"] = bytes.Clone(b.Bytes())
	return m
})

// zstdFrame builds a zstd frame header by hand: a window descriptor wd (or,
// for a single-segment frame, an 8-byte content size fcs), followed by
// blocks RLE blocks of 128 KiB of 'a' each, the last one marked last.
func zstdFrame(wd byte, single bool, fcs uint64, blocks int) []byte {
	b := []byte{0x28, 0xb5, 0x2f, 0xfd}
	if single {
		b = append(b, 0xe0) // FCS field 8 bytes, single segment
		b = binary.LittleEndian.AppendUint64(b, fcs)
	} else {
		b = append(b, 0x00, wd)
	}
	for i := range blocks {
		h := uint32(1)<<1 | uint32(128<<10)<<3 // RLE block of 128 KiB
		if i == blocks-1 {
			h |= 1
		}
		b = append(b, byte(h), byte(h>>8), byte(h>>16), 'a')
	}
	return b
}

// windowDescriptor returns the descriptor of a window of 1<<log bytes.
func windowDescriptor(log int) byte { return byte(log-10) << 3 }

// totalAlloc reports the bytes allocated while f runs, on one P so that
// the pools' per-P caches find what was put back.
func totalAlloc(f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

type bombCase struct {
	name, list string
	wire       []byte
	sentinel   error
	reason     string
}

func bombCases() []bombCase {
	return []bombCase{
		{"gzip 64 MiB zeros", "gzip", bombs()["gzip"], decode.ErrTooLarge, "decoded"},
		{"deflate 64 MiB zeros", "deflate", bombs()["deflate"], decode.ErrTooLarge, "decoded"},
		{"zstd 64 MiB zeros (8 MiB window)", "zstd", bombs()["zstd"], decode.ErrTooLarge, "decoded"},
		{"gzip of gzip 64 MiB zeros", "gzip, gzip", bombs()["gzip, gzip"], decode.ErrTooLarge, "decoded"},
		{"zstd RLE 1 GiB, 1 MiB window", "zstd", zstdFrame(windowDescriptor(20), false, 0, 8192), decode.ErrTooLarge, "decoded"},
		{"zstd RLE 1 GiB, 8 MiB window", "zstd", zstdFrame(windowDescriptor(23), false, 0, 8192), decode.ErrTooLarge, "decoded"},
		{"zstd window 2 GiB", "zstd", zstdFrame(windowDescriptor(31), false, 0, 8192), decode.ErrTooLarge, "window"},
		{"zstd window 16 MiB", "zstd", zstdFrame(windowDescriptor(24), false, 0, 8192), decode.ErrTooLarge, "window"},
		{"zstd window 3.75 TiB", "zstd", zstdFrame(0xff, false, 0, 8192), decode.ErrTooLarge, "window"},
		{"zstd content size 1 TiB", "zstd", zstdFrame(0, true, 1<<40, 8192), decode.ErrTooLarge, "content size"},
	}
}

// runBomb decodes tt.wire with the default ceiling, discarding the output,
// and returns the bytes decoded, the error and the bytes allocated.
func runBomb(br *decode.BodyReader, tt bombCase, buf []byte) (got int, alloc uint64, err error) {
	enc, _ := decode.ParseEncoding([]byte(tt.list))
	src := bytes.NewReader(tt.wire)
	alloc = totalAlloc(func() {
		br.Reset(src, enc, 0)
		for err = nil; err == nil; {
			var n int
			n, err = br.Read(buf)
			got += n
		}
		br.Close()
	})
	return got, alloc, err
}

// TestBodyReaderBombs checks the verdicts; compress_alloc_test.go checks
// the memory with warm pools.
func TestBodyReaderBombs(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 64 MiB bombs")
	}
	var br decode.BodyReader
	buf := make([]byte, 32<<10)
	for _, tt := range bombCases() {
		got, alloc, err := runBomb(&br, tt, buf)
		e := wantRefusal(t, err, tt.sentinel, got)
		if !strings.Contains(e.Reason, tt.reason) {
			t.Errorf("%s: Reason %q, want it to mention %q", tt.name, e.Reason, tt.reason)
		}
		if got > decode.DefaultMaxBytes {
			t.Errorf("%s: %d bytes decoded, over the ceiling", tt.name, got)
		}
		// A window over 8 MiB is refused from the frame header, before
		// any window buffer exists, even with a new decoder; one up to
		// 8 MiB is decoded with the history the ceiling allows.
		if tt.reason == "window" && alloc >= 1<<20 {
			t.Errorf("%s: %d bytes allocated, want < 1 MiB", tt.name, alloc)
		}
		if limit := uint64(decode.ZstdHistory(0)) + 256<<10; strings.HasPrefix(tt.list, "zstd") && alloc > limit {
			t.Errorf("%s: %d bytes allocated, want at most the history the ceiling allows and 256 KiB (%d)", tt.name, alloc, limit)
		}
	}
}

// A frame declaring an 8 MiB window (RFC 9659's maximum, and what a
// streaming klauspost Writer declares by default) is decoded at any
// ceiling; a single-segment frame declares no more than its size.
func TestBodyReaderZstdWindow(t *testing.T) {
	data := textish(4, 300<<10)
	var b bytes.Buffer
	w, _ := zstd.NewWriter(&b) // declares an 8 MiB window
	w.Write(data)
	w.Close()
	var br decode.BodyReader
	for _, limit := range []int64{0, 8 << 20} {
		if got, err := decodeAll(t, &br, "zstd", b.Bytes(), limit, 4096); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("8 MiB window at ceiling %d: %d bytes, %v", limit, len(got), err)
		}
	}
	enc, _ := zstd.NewWriter(nil)
	if got, err := decodeAll(t, &br, "zstd", enc.EncodeAll(data, nil), 0, 4096); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("single segment: %d bytes, %v", len(got), err)
	}
}

func TestBodyReaderNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	wire := compressWith(t, "zstd", textish(1, 200<<10))
	var br decode.BodyReader
	for range 50 {
		decodeAll(t, &br, "zstd, zstd", compressWith(t, "zstd", wire), 0, 4096)
		decodeAll(t, &br, "zstd", wire[:len(wire)/2], 0, 4096)
	}
	br.Close()
	if after := runtime.NumGoroutine(); after > before {
		t.Fatalf("%d goroutines before, %d after", before, after)
	}
}

// ---------------------------------------------------------------------------
// Corruption

var corruptLists = []string{"gzip", "deflate", "zstd", "gzip, zstd", "deflate, gzip"}

func TestBodyReaderCorruptMiddle(t *testing.T) {
	data := textish(8, 200<<10)
	var br decode.BodyReader
	for _, list := range corruptLists {
		wire := compressWith(t, list, data)
		for _, at := range []int{len(wire) / 3, len(wire) / 2, len(wire) * 2 / 3} {
			bad := bytes.Clone(wire)
			bad[at] ^= 0x55
			got, err := decodeAll(t, &br, list, bad, 0, 4096)
			e := wantRefusal(t, err, decode.ErrCorrupt, len(got))
			if e.Offset != int64(len(got)) {
				t.Fatalf("%q flip at %d: Offset %d, %d bytes produced", list, at, e.Offset, len(got))
			}
			if br.Wire() > int64(len(bad)) {
				t.Fatalf("%q: Wire %d > %d", list, br.Wire(), len(bad))
			}
		}
	}
}

// Every single-byte flip of a small stream either decodes to the original
// (a flip in an unchecked header field such as gzip's MTIME) or is refused
// with ErrCorrupt or ErrTooLarge (a flip that grows a declared size), never
// a panic, never more than the ceiling.
func TestBodyReaderCorruptSweep(t *testing.T) {
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("hello ", 40) + `"}}}`)
	var br decode.BodyReader
	for _, list := range corruptLists {
		wire := compressWith(t, list, data)
		for at := range wire {
			for _, mask := range []byte{0x01, 0x80, 0xff} {
				bad := bytes.Clone(wire)
				bad[at] ^= mask
				got, err := decodeAll(t, &br, list, bad, 4096, 512)
				switch {
				case err == nil:
					if !bytes.Equal(got, data) {
						t.Fatalf("%q flip %#x at %d: decoded different bytes without error", list, mask, at)
					}
				case errors.Is(err, decode.ErrTooLarge):
					wantRefusal(t, err, decode.ErrTooLarge, len(got))
				default:
					wantRefusal(t, err, decode.ErrCorrupt, len(got))
				}
				if len(got) > 4096 {
					t.Fatalf("%q flip at %d: %d bytes", list, at, len(got))
				}
			}
		}
	}
}

func TestBodyReaderTruncated(t *testing.T) {
	data := textish(2, 50000)
	var br decode.BodyReader
	for _, list := range corruptLists {
		wire := compressWith(t, list, data)
		for _, n := range []int{1, 2, 5, len(wire) / 2, len(wire) - 4, len(wire) - 1} {
			got, err := decodeAll(t, &br, list, wire[:n], 0, 4096)
			e := wantRefusal(t, err, decode.ErrCorrupt, len(got))
			if !strings.Contains(e.Reason, "truncated") && !strings.Contains(e.Reason, "header") {
				t.Errorf("%q cut at %d of %d: Reason %q", list, n, len(wire), e.Reason)
			}
		}
	}
}

func TestBodyReaderTrailingGarbage(t *testing.T) {
	data := textish(2, 3000)
	var br decode.BodyReader
	for _, list := range corruptLists {
		wire := compressWith(t, list, data)
		for _, tail := range []string{"\x00", "x", "xyz", "garbage after the stream", strings.Repeat("\x00", 100)} {
			got, err := decodeAll(t, &br, list, append(bytes.Clone(wire), tail...), 0, 4096)
			wantRefusal(t, err, decode.ErrCorrupt, len(got))
		}
	}
	// Raw deflate (no zlib header) is not HTTP's deflate.
	got, err := decodeAll(t, &br, "deflate", compressWith(t, "gzip", data)[10:], 0, 4096)
	e := wantRefusal(t, err, decode.ErrCorrupt, len(got))
	if !strings.Contains(e.Reason, "header") {
		t.Errorf("raw deflate: Reason %q", e.Reason)
	}
}

// A failure of the source is returned as the source gave it.
func TestBodyReaderSourceError(t *testing.T) {
	boom := errors.New("connection reset")
	data := textish(1, 50000)
	for _, list := range []string{"", "gzip", "zstd", "deflate, zstd"} {
		wire := compressWith(t, list, data)
		enc, _ := decode.ParseEncoding([]byte(list))
		var br decode.BodyReader
		br.Reset(io.MultiReader(bytes.NewReader(wire[:len(wire)/2]), iotest.ErrReader(boom)), enc, 0)
		_, err := readBody(&br, 4096)
		if err != boom {
			t.Fatalf("%q: %v, want the source's error", list, err)
		}
		if _, err := br.Read(make([]byte, 1)); err != boom {
			t.Fatalf("%q: second Read %v", list, err)
		}
	}
}

// A refusal's Error() text names the sentinel, the offset and the reason.
func TestBodyReaderErrorText(t *testing.T) {
	var br decode.BodyReader
	_, err := decodeAll(t, &br, "gzip", []byte("not gzip at all"), 0, 100)
	if got := err.Error(); got != "decode: corrupt compressed body at byte 0: gzip: invalid header" {
		t.Fatalf("Error() = %q", got)
	}
}

// FuzzBodyReader feeds arbitrary wire bytes to every coding: no panic, never
// more than the ceiling, and every refusal a *decode.Error wrapping
// ErrCorrupt or ErrTooLarge.
func FuzzBodyReader(f *testing.F) {
	data := textish(1, 3000)
	for i, list := range roundTripLists {
		f.Add(uint8(i), compressWith(f, list, data))
	}
	f.Add(uint8(5), zstdFrame(windowDescriptor(23), false, 0, 3))
	const limit = 2048
	var br decode.BodyReader
	f.Fuzz(func(t *testing.T, which uint8, wire []byte) {
		list := roundTripLists[int(which)%len(roundTripLists)]
		got, err := decodeAll(t, &br, list, wire, limit, 700)
		if len(got) > limit || br.Wire() > limit+1 {
			t.Fatalf("%q: %d decoded, %d wire bytes", list, len(got), br.Wire())
		}
		if err != nil && !errors.Is(err, decode.ErrCorrupt) {
			wantRefusal(t, err, decode.ErrTooLarge, len(got))
		} else if err != nil {
			wantRefusal(t, err, decode.ErrCorrupt, len(got))
		}
	})
}

// BenchmarkBodyReader decodes a 64 KiB body per op with a reused
// BodyReader; the baseline twin makes a new klauspost reader per body, as
// code without pools would.
func BenchmarkBodyReader(b *testing.B) {
	body := textish(1, 64<<10)
	buf := make([]byte, 16<<10)
	for _, list := range []string{"identity", "gzip", "deflate", "zstd", "gzip, zstd"} {
		wire := compressWith(b, list, body)
		enc, _ := decode.ParseEncoding([]byte(list))
		b.Run(list, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			var br decode.BodyReader
			src := new(bytes.Reader)
			for b.Loop() {
				src.Reset(wire)
				br.Reset(src, enc, 0)
				for {
					if _, err := br.Read(buf); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
				}
				br.Close()
			}
		})
	}
	b.Run("baseline/gzip.NewReader", func(b *testing.B) {
		wire := compressWith(b, "gzip", body)
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			zr, err := gzip.NewReader(bytes.NewReader(wire))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.CopyBuffer(io.Discard, zr, buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline/zstd.NewReader", func(b *testing.B) {
		wire := compressWith(b, "zstd", body)
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			zr, err := zstd.NewReader(bytes.NewReader(wire), zstd.WithDecoderConcurrency(1))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.CopyBuffer(io.Discard, zr, buf); err != nil {
				b.Fatal(err)
			}
			zr.Close()
		}
	})
}
