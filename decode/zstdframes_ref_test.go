package decode_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/rpcedge/rpcedge/decode"
)

// zstdRef is klauspost's streaming decoder set up as the reference of
// fuzz/decompression_test.go (refZstd): RFC 9659's 8 MiB window, the
// same memory cap, one goroutine.
var zstdRef = func() *zstd.Decoder {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(8<<20), zstd.WithDecoderMaxMemory(8<<20))
	if err != nil {
		panic(err)
	}
	return d
}()

// refZstdVerdict decodes the unmodified wire with the reference, as
// refBody does for a zstd body: over reports that the wire or the
// decoded bytes pass limit.
func refZstdVerdict(wire []byte, limit int64) (out []byte, err error, over bool) {
	if int64(len(wire)) > limit {
		return nil, nil, true
	}
	if err := zstdRef.Reset(bytes.NewReader(wire)); err != nil {
		return nil, err, false
	}
	defer zstdRef.Reset(nil)
	out, err = io.ReadAll(io.LimitReader(zstdRef, limit+1))
	if int64(len(out)) > limit {
		return out[:limit], nil, true
	}
	return out, err, false
}

// cutReader hands out data in reads of the given sizes (the last size
// repeating), with io.EOF on the read that returns the last byte when
// eofWithData is set.
type cutReader struct {
	data        []byte
	sizes       []int
	eofWithData bool
}

func (r *cutReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	size := r.sizes[0]
	if len(r.sizes) > 1 {
		r.sizes = r.sizes[1:]
	}
	n := copy(p[:min(len(p), size)], r.data)
	r.data = r.data[n:]
	if len(r.data) == 0 && r.eofWithData {
		return n, io.EOF
	}
	return n, nil
}

// checkAgainstRef decodes wire as a zstd body through a BodyReader whose
// source is cut as src cuts it, and checks the verdict against the
// reference's on the unmodified wire, as FuzzDecompression does.
func checkAgainstRef(t *testing.T, br *decode.BodyReader, name string, wire []byte, limit int64, src io.Reader) {
	t.Helper()
	enc, _ := decode.ParseEncoding([]byte("zstd"))
	br.Reset(src, enc, limit)
	got, err := readBody(br, 4096)
	br.Close()
	var de *decode.Error
	if err != io.EOF && !errors.As(err, &de) {
		t.Errorf("%s: Read error %v (%T), want io.EOF or an *Error", name, err, err)
		return
	}
	ref, refErr, over := refZstdVerdict(wire, limit)
	switch {
	case over:
		if err == io.EOF {
			t.Errorf("%s, ceiling %d: a layer passes the ceiling, but the body decoded (%d bytes)", name, limit, len(got))
		}
	case refErr == nil:
		if err != io.EOF || !bytes.Equal(got, ref) {
			t.Errorf("%s, ceiling %d: the reference decodes %d bytes, BodyReader %d bytes, %v", name, limit, len(ref), len(got), err)
		}
	case errors.Is(refErr, zstd.ErrDecoderSizeExceeded):
		if de == nil || de.Err != decode.ErrTooLarge {
			t.Errorf("%s: the reference refuses the frame's content size (%v), BodyReader says %v", name, refErr, err)
		}
	default:
		if err == io.EOF {
			t.Errorf("%s, ceiling %d: the reference fails (%v), BodyReader decoded %d bytes", name, limit, refErr, len(got))
		}
	}
}

// rawLiteralsBlock returns a compressed block (type 2) holding lit as raw
// literals and no sequences: its wire size is len(lit) plus 3 or 4 bytes,
// more than it decodes to.
func rawLiteralsBlock(lit []byte, last bool) []byte {
	var body []byte
	switch n := len(lit); {
	case n < 32:
		body = append(body, byte(n<<3)) // raw, size format 0
	case n < 4096:
		body = append(body, byte(1<<2|(n&0xf)<<4), byte(n>>4)) // raw, size format 1
	default:
		body = append(body, byte(3<<2|(n&0xf)<<4), byte(n>>4), byte(n>>12)) // raw, size format 3
	}
	body = append(body, lit...)
	body = append(body, 0) // Number_of_Sequences 0
	h := uint32(2)<<1 | uint32(len(body))<<3
	if last {
		h |= 1
	}
	return append([]byte{byte(h), byte(h >> 8), byte(h >> 16)}, body...)
}

// singleSegmentHeader returns the header of a single-segment frame of
// content size fcs with a Frame_Content_Size field of fcsBytes (2, 4 or
// 8), a Dictionary_ID field of dictBytes (0, 1, 2 or 4) holding 0, and a
// checksum flag.
func singleSegmentHeader(fcs uint64, fcsBytes, dictBytes int, checksum bool) []byte {
	fhd := byte(0x20) // Single_Segment_flag
	fhd |= map[int]byte{2: 1, 4: 2, 8: 3}[fcsBytes] << 6
	fhd |= map[int]byte{0: 0, 1: 1, 2: 2, 4: 3}[dictBytes]
	if checksum {
		fhd |= 0x04
	}
	b := []byte{0x28, 0xb5, 0x2f, 0xfd, fhd}
	b = append(b, make([]byte, dictBytes)...)
	switch fcsBytes {
	case 2:
		b = binary.LittleEndian.AppendUint16(b, uint16(fcs-256))
	case 4:
		b = binary.LittleEndian.AppendUint32(b, uint32(fcs))
	case 8:
		b = binary.LittleEndian.AppendUint64(b, fcs)
	}
	return b
}

// TestZstdFramesSplitSmallSingleSegment: a single-segment frame's
// window is its content size (at least 1 KiB), and klauspost's decoder
// refuses a block whose wire size passes it (a compressed block that is
// larger than what it decodes to, a raw or RLE block larger than the
// frame). When the frame's content size comes in a later read than its
// descriptor, zstdFrames makes the frame ordinary with the clamp's
// window before it knows the size, also when the size is small: the
// decoder then accepts such a block, and the body decodes where the
// reference refuses it (and the verdict depends on where the reads are
// cut).
func TestZstdFramesSplitSmallSingleSegment(t *testing.T) {
	var br decode.BodyReader
	const limit = 64 << 10
	for _, fcs := range []int{1024, 1500, 2000, 4000, 9000} {
		for _, fcsBytes := range []int{2, 4, 8} {
			if fcsBytes == 2 && fcs > 65535+256 {
				continue
			}
			for _, dictBytes := range []int{0, 2} {
				for _, checksum := range []bool{false, true} {
					content := textish(uint64(fcs+fcsBytes), fcs)
					wire := singleSegmentHeader(uint64(fcs), fcsBytes, dictBytes, checksum)
					hdr := len(wire)
					wire = append(wire, rawLiteralsBlock(content, true)...)
					if checksum {
						sum := zstdChecksum(content)
						wire = append(wire, sum[:]...)
					}
					name := fmt.Sprintf("single segment of %d B (FCS field %d B, dictionary ID field %d B, checksum %v) in one compressed block of %d B",
						fcs, fcsBytes, dictBytes, checksum, len(wire)-hdr-3)
					// The reference refuses the block: its wire size
					// passes the frame's window.
					if _, refErr, _ := refZstdVerdict(wire, limit); !errors.Is(refErr, zstd.ErrCompressedSizeTooBig) {
						t.Fatalf("%s: the reference says %v, want %v", name, refErr, zstd.ErrCompressedSizeTooBig)
					}
					checkAgainstRef(t, &br, name+", whole", wire, limit, bytes.NewReader(wire))
					// Cut the read after the descriptor, and anywhere in
					// the dictionary ID and content size.
					for cut := 5; cut < hdr; cut++ {
						checkAgainstRef(t, &br, fmt.Sprintf("%s, cut after %d B", name, cut), wire, limit,
							&cutReader{data: wire, sizes: []int{cut, 1 << 20}})
					}
					checkAgainstRef(t, &br, name+", one byte a read", wire, limit, &cutReader{data: wire, sizes: []int{1}})
				}
			}
		}
	}
}

// TestZstdFramesHugeCeiling: BodyReader takes any positive
// ceiling; at one within 128 KiB of math.MaxInt64 (a caller's
// "unlimited") the clamp, the ceiling plus 128 KiB, overflowed to a
// negative size and every frame got the smallest window (1 KiB): a
// frame whose matches reach further back was refused as corrupt, which
// the reference decodes; and ZstdHistory gave a ring of 1 KiB.
func TestZstdFramesHugeCeiling(t *testing.T) {
	var br decode.BodyReader
	enc, _ := decode.ParseEncoding([]byte("zstd"))
	for _, limit := range []int64{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 - 100<<10} {
		for _, single := range []bool{false, true} {
			w, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20), zstd.WithSingleSegment(single))
			data := zstdBodies(40 << 10)["far matches 40960 B"]
			wire := w.EncodeAll(data, nil)
			if err := zstdRef.Reset(bytes.NewReader(wire)); err != nil {
				t.Fatal(err)
			}
			ref, refErr := io.ReadAll(zstdRef)
			zstdRef.Reset(nil)
			if refErr != nil || !bytes.Equal(ref, data) {
				t.Fatalf("reference: %d bytes, %v", len(ref), refErr)
			}
			br.Reset(bytes.NewReader(wire), enc, limit)
			got, err := readBody(&br, 4096)
			br.Close()
			if err != io.EOF || !bytes.Equal(got, data) {
				t.Errorf("ceiling %d, single segment %v: %d of %d bytes, %v; the reference decodes them", limit, single, len(got), len(data), err)
			}
		}
		if h, want := decode.ZstdHistory(limit), decode.ZstdHistory(8<<20); h != want {
			t.Errorf("ZstdHistory(%d) = %d, want %d (the ring of an 8 MiB window)", limit, h, want)
		}
	}
}

// TestZstdWindowRefusals: klauspost's decoder says ErrWindowSizeExceeded
// both of a frame declaring a window over 8 MiB (a size: 413, -32600)
// and of a raw or RLE block larger than its frame's window (corrupt
// data: -32700); BodyReader tells them apart, whole and split.
func TestZstdWindowRefusals(t *testing.T) {
	var br decode.BodyReader
	block := func(typ uint32, size int, last bool) []byte {
		h := typ<<1 | uint32(size)<<3
		if last {
			h |= 1
		}
		b := []byte{byte(h), byte(h >> 8), byte(h >> 16)}
		if typ == 1 { // RLE: one byte
			return append(b, 'r')
		}
		return append(b, bytes.Repeat([]byte("w"), size)...)
	}
	frame := func(wd byte, blocks ...[]byte) []byte {
		b := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, wd} // no content size, no checksum
		for _, bl := range blocks {
			b = append(b, bl...)
		}
		return b
	}
	for _, tc := range []struct {
		name     string
		wire     []byte
		sentinel error
		code     int
		reason   string
	}{
		{"16 MiB window", frame(14<<3, block(0, 10, true)), decode.ErrTooLarge, decode.CodeInvalidRequest, "window over 8 MiB"},
		{"3.75 TiB window", frame(0xff, block(0, 10, true)), decode.ErrTooLarge, decode.CodeInvalidRequest, "window over 8 MiB"},
		{"raw block over a 1 KiB window", frame(0, block(0, 1500, true)), decode.ErrCorrupt, decode.CodeParseError, "block over the window"},
		{"RLE block over a 2 KiB window, second block", frame(1<<3, block(0, 100, false), block(1, 3000, true)), decode.ErrCorrupt, decode.CodeParseError, "block over the window"},
	} {
		ref, refErr, _ := refZstdVerdict(tc.wire, decode.DefaultMaxBytes)
		if !errors.Is(refErr, zstd.ErrWindowSizeExceeded) {
			t.Fatalf("%s: the reference says %v after %d bytes, want ErrWindowSizeExceeded", tc.name, refErr, len(ref))
		}
		for _, split := range []bool{false, true} {
			got, err := decodeZstd(t, &br, tc.wire, 0, split)
			var e *decode.Error
			if !errors.As(err, &e) || e.Err != tc.sentinel || e.Code != tc.code || !strings.Contains(e.Reason, tc.reason) || !bytes.HasPrefix(ref, got) {
				t.Errorf("%s, one byte at a time %v: %d bytes, %v; want %v (%d) mentioning %q", tc.name, split, len(got), err, tc.sentinel, tc.code, tc.reason)
			}
		}
	}
}
