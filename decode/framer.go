package decode

import (
	"bytes"
	"io"
)

// framerBuf is the size of a Framer's read buffer.
const framerBuf = 32 << 10

// A Framer reads newline-delimited JSON-RPC messages from a stream, the
// framing of MCP's stdio transport: one message per line, each no longer
// than the ceiling.
//
// A line that fails is reported and the stream goes on: an over-long line
// is refused with ErrTooLarge (-32600) and skipped without being held in
// memory, a line that is not valid JSON is refused with ErrSyntax (-32700),
// and the next call reads the next line normally. Lines holding only
// whitespace are skipped, unless they are over-long (refused as above).
// A '\r' before the '\n' is whitespace, so CRLF streams work; a final
// line without '\n' is decoded at the end of the stream.
//
// A Framer is not safe for concurrent use. Its zero value is not usable:
// make one with NewFramer.
type Framer struct {
	r    io.Reader
	d    Decoder
	buf  []byte
	head int // start of unread bytes in buf
	tail int // end of unread bytes in buf
	line int64
	rerr error // a read error met after the last byte in buf
	// cr: the line's last byte so far is a '\r' not yet given to the
	// decoder: part of the line end if a '\n' follows it, else of the line.
	cr bool
}

// crByte is a '\r' held back and then given to the decoder.
var crByte = []byte{'\r'}

// NewFramer returns a Framer reading from r, with opts applying to every
// message (MaxBytes is the per-message ceiling, counting neither the '\n' nor
// a '\r' right before it).
func NewFramer(r io.Reader, opts Options) (*Framer, error) {
	f := &Framer{r: r, buf: make([]byte, framerBuf)}
	if err := f.d.SetOptions(opts); err != nil {
		return nil, err
	}
	return f, nil
}

// Line returns the 1-based number of the line the last call to Next
// decoded or refused (0 before the first call).
func (f *Framer) Line() int64 { return f.line }

// Next reads the next non-blank line and decodes it into m. It returns nil
// for a request or a notification; a *Error (also in m.Error) for a line
// that was refused, after which the stream can still be read; io.EOF when
// the stream ends; and a read error as the reader gave it, once the lines
// before it have been returned.
//
// m's slices borrow from the Framer's buffers and stay valid until the
// next call to Next. Next allocates nothing, but for the objects Decode
// names.
func (f *Framer) Next(m *Message) error { return f.NextInto(&f.d, m) }

// NextInto is Next with the line decoded by d, under d's options rather
// than the Framer's, so that m's slices borrow from d's buffer and stay
// valid until d is next reset or written, not only until the next call. A
// reader that reads ahead while it serves the messages before (to see a
// cancellation while the call it names runs, say) gives each message
// read ahead a Decoder of its own. d must not be used by anything else
// during the call; the Framer's own buffer still holds the bytes read
// past the line.
func (f *Framer) NextInto(d *Decoder, m *Message) error {
	for {
		d.Reset()
		f.cr = false
		started := false // a non-whitespace byte has been seen on this line
		any := false     // any byte of the line has been seen
		for {
			if f.head == f.tail {
				if f.rerr != nil {
					if !any {
						return f.rerr
					}
					if f.rerr == io.EOF {
						// The last line, without '\n': a '\r' at its end
						// ends no line, and is the line's.
						f.line++
						if f.cr {
							d.Write(crByte)
						}
						if !started && !d.bad {
							return io.EOF
						}
						return d.Finish(m)
					}
					return f.rerr
				}
				f.fill()
				continue
			}
			chunk := f.buf[f.head:f.tail]
			nl := bytes.IndexByte(chunk, '\n')
			if nl >= 0 {
				chunk = chunk[:nl]
			}
			if len(chunk) > 0 {
				any = true
				if !started && !isBlank(chunk) {
					started = true
				}
				if f.cr {
					// The '\r' held back is followed by more of the line.
					f.cr = false
					d.Write(crByte)
				}
				// A '\r' right before the '\n' belongs to the line end
				// (not to the message, nor to its ceiling); one at the end
				// of what has arrived waits for the next byte.
				if chunk[len(chunk)-1] == '\r' {
					chunk = chunk[:len(chunk)-1]
					f.cr = nl < 0
				}
				// Once a verdict is reached, Write keeps returning it and
				// stores nothing: the rest of the line is skipped.
				d.Write(chunk)
			}
			if nl < 0 {
				f.head = f.tail
				continue
			}
			f.cr = false
			f.head += nl + 1
			f.line++
			if !started && !d.bad {
				break // a blank line
			}
			// A line of whitespace longer than the ceiling is refused as
			// any other (found by review on 2026-12-07: it was skipped).
			return d.Finish(m)
		}
	}
}

// fill reads more bytes into the emptied buffer.
func (f *Framer) fill() {
	f.head, f.tail = 0, 0
	for tries := 0; tries < 100; tries++ {
		n, err := f.r.Read(f.buf)
		if n < 0 || n > len(f.buf) {
			// Outside io.Reader's contract: no byte of it can be trusted.
			f.rerr = errBadCount
			return
		}
		f.tail = n
		if err != nil {
			f.rerr = err
			return
		}
		if n > 0 {
			return
		}
	}
	f.rerr = io.ErrNoProgress
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}
