package decode

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"io"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
)

// gzipReader undoes the gzip coding (RFC 1952), member after member, as
// klauspost's gzip.Reader does with multistream on, with the same
// verdicts (gzip.ErrHeader, gzip.ErrChecksum, io.ErrUnexpectedEOF), but
// without allocating: it checks a member's header and skips its extra
// field, name and comment rather than keeping them. gzip.Reader allocates
// the extra field's declared length, up to 64 KiB, before reading a byte
// of it (12 bytes of wire held 64 KiB while the client stalled, outside
// the body budget), and a string for the name that the gzip tool writes.
// The deflate data goes to klauspost's flate decompressor.
type gzipReader struct {
	r      *bufio.Reader
	fr     io.ReadCloser // a flate decompressor reading r
	digest uint32        // CRC-32 of the member's data so far
	size   uint32        // its length so far, modulo 2^32
	err    error         // sticky
	buf    [gzipMaxString]byte
}

// gzipMaxString is the longest name or comment, its NUL included, that
// a member's header may hold: gzip.Reader's own limit (its buffer), kept
// so that a body gets the same verdict.
const gzipMaxString = 512

// Flag bits of a member header (RFC 1952 §2.3.1).
const (
	gzipFlagHdrCRC  = 1 << 1
	gzipFlagExtra   = 1 << 2
	gzipFlagName    = 1 << 3
	gzipFlagComment = 1 << 4
)

func newGzipReader() gzipReader {
	return gzipReader{fr: flate.NewReader(nil)}
}

// reset starts reading the members in r: it reads the first header, and
// returns io.EOF for an input of no bytes (zero members, which RFC 1952
// allows and gzip.Reader accepts).
func (z *gzipReader) reset(r *bufio.Reader) error {
	z.r, z.digest, z.size = r, 0, 0
	z.err = z.readHeader()
	return z.err
}

// readHeader reads a member header, leaving the decompressor at the start
// of the member's deflate data.
func (z *gzipReader) readHeader() error {
	h := z.buf[:10]
	if _, err := io.ReadFull(z.r, h); err != nil {
		return err // io.EOF: no member (more)
	}
	if h[0] != 0x1f || h[1] != 0x8b || h[2] != 8 { // ID1, ID2, CM deflate
		return gzip.ErrHeader
	}
	flg := h[3]
	digest := crc32.ChecksumIEEE(h)
	if flg&gzipFlagExtra != 0 {
		x := z.buf[:2]
		if _, err := io.ReadFull(z.r, x); err != nil {
			return noEOF(err)
		}
		digest = crc32.Update(digest, crc32.IEEETable, x)
		for n := int(binary.LittleEndian.Uint16(x)); n > 0; {
			b, err := z.r.Peek(min(n, z.r.Size()))
			if len(b) > 0 {
				digest = crc32.Update(digest, crc32.IEEETable, b)
				z.r.Discard(len(b))
				n -= len(b)
			}
			if n > 0 && err != nil {
				return noEOF(err)
			}
		}
	}
	for _, f := range [2]byte{gzipFlagName, gzipFlagComment} {
		if flg&f == 0 {
			continue
		}
		var err error
		if digest, err = z.skipString(digest); err != nil {
			return err
		}
	}
	if flg&gzipFlagHdrCRC != 0 {
		x := z.buf[:2]
		if _, err := io.ReadFull(z.r, x); err != nil {
			return noEOF(err)
		}
		if binary.LittleEndian.Uint16(x) != uint16(digest) {
			return gzip.ErrHeader
		}
	}
	if flg>>5 != 0 { // reserved bits
		return gzip.ErrHeader
	}
	z.digest, z.size = 0, 0
	return z.fr.(flate.Resetter).Reset(z.r, nil)
}

// skipString reads a NUL-terminated name or comment, adding it to the
// header's digest.
func (z *gzipReader) skipString(digest uint32) (uint32, error) {
	for i := range z.buf {
		c, err := z.r.ReadByte()
		if err != nil {
			return digest, noEOF(err)
		}
		z.buf[i] = c
		if c == 0 {
			return crc32.Update(digest, crc32.IEEETable, z.buf[:i+1]), nil
		}
	}
	return digest, gzip.ErrHeader
}

// Read reads decoded bytes, checking each member's CRC-32 and length
// at its end and going on to the next member.
func (z *gzipReader) Read(p []byte) (n int, err error) {
	if z.err != nil {
		return 0, z.err
	}
	for n == 0 {
		n, z.err = z.fr.Read(p)
		z.digest = crc32.Update(z.digest, crc32.IEEETable, p[:n])
		z.size += uint32(n)
		if z.err != io.EOF {
			return n, z.err
		}
		t := z.buf[:8]
		if _, err := io.ReadFull(z.r, t); err != nil {
			z.err = noEOF(err)
			return n, z.err
		}
		if binary.LittleEndian.Uint32(t[:4]) != z.digest || binary.LittleEndian.Uint32(t[4:]) != z.size {
			z.err = gzip.ErrChecksum
			return n, z.err
		}
		// The member is whole: the next one, or the end (io.EOF).
		if z.err = z.readHeader(); z.err != nil {
			return n, z.err
		}
	}
	return n, nil
}

// noEOF turns an end of input inside a structure into a truncation.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
