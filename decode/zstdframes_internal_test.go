package decode

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
)

// recordingReader hands out data, at most size bytes a read, and records
// how much each read asked for.
type recordingReader struct {
	data  []byte
	size  int
	asked []int
}

func (r *recordingReader) Read(p []byte) (int, error) {
	r.asked = append(r.asked, len(p))
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.size)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestZstdFramesRoom walks a body that packs single-segment frames over
// the clamp as tightly as they come (12 bytes each: magic, descriptor, a
// 4-byte content size, an empty last raw block), after a frame whose raw
// block is large, through every buffer size from 1 to 80: every frame
// gets its window byte, in order, and no read overflows its buffer.
// Reads that fall inside the large block ask for the whole buffer (only
// a frame header needs room kept).
func TestZstdFramesRoom(t *testing.T) {
	const limit = 1 << 20
	const big = 3000
	var wire, want []byte
	// An ordinary frame (window byte present) with one raw block of big
	// bytes.
	wire = append(wire, 0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00) // no content size; window 1 KiB
	h := uint32(1) | uint32(big)<<3                         // last, raw
	wire = append(wire, byte(h), byte(h>>8), byte(h>>16))
	wire = append(wire, bytes.Repeat([]byte{'r'}, big)...)
	want = append(want, wire...)
	var z zstdFrames
	z.reset(nil, limit, nil)
	for range 40 {
		f := []byte{0x28, 0xb5, 0x2f, 0xfd, 0xa0}
		f = binary.LittleEndian.AppendUint32(f, 5<<20)
		f = append(f, 0x01, 0, 0) // last, raw, empty
		wire = append(wire, f...)
		w := append([]byte{}, f[:4]...)
		w = append(w, 0x80, z.clamp) // single-segment cleared, the clamp's window
		w = append(w, f[5:]...)
		want = append(want, w...)
	}
	for size := 1; size <= 80; size++ {
		src := &recordingReader{data: wire, size: 1 << 30}
		z.reset(src, limit, nil)
		var got []byte
		buf := make([]byte, size)
		for range 100000 {
			n, err := z.Read(buf)
			if n > len(buf) {
				t.Fatalf("buffer %d: read returned %d", size, n)
			}
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("buffer %d: %v", size, err)
			}
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("buffer %d: walked bytes differ from the frames with their window bytes\n got %x\nwant %x", size, got, want)
		}
		// The reads wholly inside the big block ask for the whole buffer.
		if size >= 12 {
			full := 0
			for _, a := range src.asked {
				if a == size {
					full++
				}
			}
			if min := big/size - 2; full < min {
				t.Errorf("buffer %d: %d reads asked for the whole buffer, want ≥ %d (inside the raw block)", size, full, min)
			}
		}
	}
}
