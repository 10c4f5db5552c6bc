package decode

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"hash/adler32"
	"hash/crc32"
	"io"
	"testing"
)

// bitWriter packs deflate's bit stream: numbers least significant bit
// first, Huffman codes most significant bit first (RFC 1951 §3.1.1).
type bitWriter struct {
	out   []byte
	acc   uint64
	nbits uint
}

func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.nbits
	w.nbits += n
	for w.nbits >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nbits -= 8
	}
}

func (w *bitWriter) code(c uint32, n uint) {
	var r uint64
	for i := uint(0); i < n; i++ {
		r = r<<1 | uint64(c>>i&1)
	}
	w.bits(r, n)
}

func (w *bitWriter) flush() []byte {
	if w.nbits > 0 {
		w.out = append(w.out, byte(w.acc))
	}
	return w.out
}

// canonical returns the canonical Huffman codes of the code lengths
// (RFC 1951 §3.2.2).
func canonical(lengths []uint8) []uint32 {
	var count [16]uint32
	for _, l := range lengths {
		if l > 0 {
			count[l]++
		}
	}
	var next [16]uint32
	code := uint32(0)
	for l := 1; l < 16; l++ {
		code = (code + count[l-1]) << 1
		next[l] = code
	}
	codes := make([]uint32, len(lengths))
	for s, l := range lengths {
		if l > 0 {
			codes[s] = next[l]
			next[l]++
		}
	}
	return codes
}

// dynamicBlock writes one dynamic-Huffman block: literal/length codes
// 0–253 of 8 bits and 254–257 of 9, the distance code lengths given, the
// code-length alphabet complete at 4 and 5 bits. data holds literals
// (0–255) and -1 for a match of length 3 whose distance is the bit 0:
// distance code 0 (distance 1) in a tree of two 1-bit codes.
func dynamicBlock(w *bitWriter, final bool, dist []uint8, data []int) {
	lit := make([]uint8, 258)
	for s := range lit {
		lit[s] = 8
		if s >= 254 {
			lit[s] = 9
		}
	}
	cl := make([]uint8, 19)
	for s := range cl {
		cl[s] = 4
		if s >= 13 {
			cl[s] = 5
		}
	}
	if final {
		w.bits(1, 1)
	} else {
		w.bits(0, 1)
	}
	w.bits(2, 2) // dynamic
	w.bits(uint64(len(lit)-257), 5)
	w.bits(uint64(len(dist)-1), 5)
	w.bits(19-4, 4)
	for _, s := range []int{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15} {
		w.bits(uint64(cl[s]), 3)
	}
	clCodes := canonical(cl)
	for _, l := range append(append([]uint8{}, lit...), dist...) {
		w.code(clCodes[l], uint(cl[l]))
	}
	litCodes := canonical(lit)
	for _, d := range data {
		if d >= 0 {
			w.code(litCodes[d], uint(lit[d]))
			continue
		}
		w.code(litCodes[257], uint(lit[257])) // length 3, no extra bits
		w.code(0, 1)
	}
	w.code(litCodes[256], uint(lit[256])) // end of block
}

func literals(s string) []int {
	out := make([]int, len(s))
	for i := range len(s) {
		out[i] = int(s[i])
	}
	return out
}

// A dynamic block whose distance tree is empty (one distance code of
// length 0: "the data is all literals", RFC 1951 §3.2.7) but which uses a
// match anyway is corrupt. klauspost/compress v1.20.4 kept the previous
// block's distance table when a tree was empty, so the match decoded with
// the old tree and the body was accepted (v1.20.5 clears it); the
// standard library refuses the stream. Whatever the decompressor, the
// body must fail as a broken compression stream.
func TestFlateEmptyDistanceTreeAfterFullOne(t *testing.T) {
	for _, id := range []string{"1", `"x-7"`, "123456789"} {
		head := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/list","params":{"t":"a`
		var w bitWriter
		dynamicBlock(&w, false, []uint8{1, 1}, literals(head))
		dynamicBlock(&w, true, []uint8{0}, append(append(literals("b"), -1), literals(`"}}`)...))
		raw := w.flush()
		if _, err := io.ReadAll(flate.NewReader(bytes.NewReader(raw))); err == nil {
			t.Fatal("the standard library accepts the crafted stream: the test does not build what it means to")
		}
		// What a decoder that reuses the first block's distance tree
		// produces; the gzip trailer matches it, so that only the block
		// decides.
		stale := head + "bbbb" + `"}}`
		gz := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
		gz = append(gz, raw...)
		gz = binary.LittleEndian.AppendUint32(gz, crc32.ChecksumIEEE([]byte(stale)))
		gz = binary.LittleEndian.AppendUint32(gz, uint32(len(stale)))
		zl := []byte{0x78, 0x01} // deflate, as HTTP means it: the zlib format
		zl = append(zl, raw...)
		zl = binary.BigEndian.AppendUint32(zl, adler32.Checksum([]byte(stale)))
		for _, c := range []struct {
			coding string
			wire   []byte
		}{{"gzip", gz}, {"deflate", zl}} {
			enc, err := ParseEncoding([]byte(c.coding))
			if err != nil {
				t.Fatal(err)
			}
			var br BodyReader
			if err := br.Reset(bytes.NewReader(c.wire), enc, 1<<20); err != nil {
				t.Fatal(err)
			}
			if got, err := io.ReadAll(&br); err == nil {
				t.Fatalf("%s, id %s: the stream decoded to %q, want a broken-stream error", c.coding, id, got)
			}
			// The decoder reading it answers -32700, a broken stream.
			if err := br.Reset(bytes.NewReader(c.wire), enc, 1<<20); err != nil {
				t.Fatal(err)
			}
			var d Decoder
			var m Message
			err = d.DecodeReader(&br, &m)
			var de *Error
			if !errors.As(err, &de) || !errors.Is(err, ErrCorrupt) || de.Code != CodeParseError {
				t.Errorf("%s, id %s: DecodeReader: %v (kind %v); want ErrCorrupt, -32700", c.coding, id, err, m.Kind)
			}
		}
	}
}
