package decode

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
)

// gzipMember builds one member with the header fields chosen by rng
// (extra field, name, comment, header CRC, reserved bits now and then)
// around data compressed by the standard library.
func gzipMember(rng *rand.Rand, data []byte) []byte {
	var z bytes.Buffer
	w, _ := gzip.NewWriterLevel(&z, rng.IntN(10))
	w.Write(data)
	w.Close()
	std := z.Bytes() // a plain 10-byte header, deflate data, trailer
	flg := byte(0)
	var opt []byte
	if rng.IntN(2) == 0 {
		flg |= gzipFlagExtra
		x := make([]byte, []int{0, 1, 6, 300, 5000, 65535}[rng.IntN(6)])
		for i := range x {
			x[i] = byte(rng.IntN(256))
		}
		opt = binary.LittleEndian.AppendUint16(opt, uint16(len(x)))
		opt = append(opt, x...)
	}
	for _, f := range []byte{gzipFlagName, gzipFlagComment} {
		if rng.IntN(2) == 0 {
			flg |= f
			n := []int{0, 1, 40, 510, 511, 600}[rng.IntN(6)]
			for range n {
				opt = append(opt, byte(1+rng.IntN(255)))
			}
			opt = append(opt, 0)
		}
	}
	hdr := append([]byte{0x1f, 0x8b, 8, 0}, std[4:10]...)
	if rng.IntN(8) == 0 {
		flg |= byte(1+rng.IntN(7)) << 5 // reserved
	}
	hdr[3] = flg
	hdr = append(hdr, opt...)
	if rng.IntN(2) == 0 {
		hdr[3] |= gzipFlagHdrCRC
		sum := crc32.ChecksumIEEE(hdr)
		if rng.IntN(6) == 0 {
			sum++ // a wrong header CRC
		}
		hdr = binary.LittleEndian.AppendUint16(hdr, uint16(sum))
	}
	return append(hdr, std[10:]...)
}

// decodeBoth decodes wire with gzipReader and with klauspost's
// gzip.Reader (multistream), reading in chunks of step bytes.
func decodeBoth(z *gzipReader, wire []byte, step int) (ours, theirs []byte, oerr, terr error) {
	read := func(r io.Reader) ([]byte, error) {
		var out []byte
		buf := make([]byte, step)
		for {
			n, err := r.Read(buf)
			out = append(out, buf[:n]...)
			if err != nil {
				return out, err
			}
		}
	}
	if oerr = z.reset(bufio.NewReaderSize(bytes.NewReader(wire), 64)); oerr == nil {
		ours, oerr = read(z)
	}
	var k kgzip.Reader
	if terr = k.Reset(bufio.NewReaderSize(bytes.NewReader(wire), 64)); terr == nil {
		theirs, terr = read(&k)
	}
	return
}

// TestGzipReaderMatchesKlauspost: gzipReader gives the bytes and the
// verdict of klauspost's gzip.Reader on members with every header field,
// concatenated, cut at every kind of place, with bytes flipped, and with
// bytes after the last member.
func TestGzipReaderMatchesKlauspost(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 12))
	z := newGzipReader()
	outcomes := map[string]int{}
	cases := 1200
	if testing.Short() {
		cases = 300 // CI's -race run
	}
	for n := range cases {
		var wire []byte
		var data []byte
		for range 1 + rng.IntN(3) {
			d := make([]byte, []int{0, 1, 100, 20000}[rng.IntN(4)])
			for i := range d {
				d[i] = byte('a' + rng.IntN(3))
			}
			data = append(data, d...)
			wire = append(wire, gzipMember(rng, d)...)
		}
		switch rng.IntN(5) {
		case 0:
			wire = wire[:rng.IntN(len(wire)+1)] // cut anywhere
		case 1:
			if len(wire) > 0 {
				wire[rng.IntN(len(wire))] ^= byte(1 + rng.IntN(255)) // a byte flipped
			}
		case 2:
			wire = append(wire, []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0, 'x', 'y'}[:1+rng.IntN(12)]...) // bytes after the end
		}
		ours, theirs, oerr, terr := decodeBoth(&z, wire, 1+rng.IntN(5000))
		if oerr != terr || !bytes.Equal(ours, theirs) {
			t.Fatalf("case %d (%d wire bytes): gzipReader %d bytes, %v; gzip.Reader %d bytes, %v", n, len(wire), len(ours), oerr, len(theirs), terr)
		}
		if terr == io.EOF && !bytes.Equal(ours, data) && len(wire) > 0 {
			// A flipped byte may still decode (in an ignored field).
			outcomes["decoded other bytes"]++
		}
		outcomes[errName(terr)]++
	}
	t.Logf("outcomes: %v", outcomes)
	for _, want := range []string{"EOF", "header", "checksum", "unexpected EOF", "flate"} {
		if outcomes[want] == 0 {
			t.Errorf("no case ended with %s: the comparison misses it (%v)", want, outcomes)
		}
	}
}

func errName(err error) string {
	switch err {
	case io.EOF:
		return "EOF"
	case kgzip.ErrHeader:
		return "header"
	case kgzip.ErrChecksum:
		return "checksum"
	case io.ErrUnexpectedEOF:
		return "unexpected EOF"
	}
	return "flate"
}
