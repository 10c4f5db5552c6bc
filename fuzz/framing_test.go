package fuzz

// FuzzFraming: a newline-delimited stream (contract §6) never loses a
// valid message that follows a bad or over-long line. The stream is built
// as, for each line of the fuzz input (split at '\n', each line repeated
// to make over-long ones): the line, "\n", and unless the flags say
// otherwise (several bad lines in a row) a valid request with a unique
// id, "\n" (CRLF on every other pair). Read through decode.NewFramer over
// a reader that returns arbitrary pieces, each fuzz line gets exactly the
// verdict Decode gives it alone (a blank line is skipped), and each valid
// request comes out decoded with its id, each at its line number; then
// io.EOF. The flags also drop the stream's last '\n' (the last line is
// still decoded at the end of the stream), have the reader return its
// last bytes together with io.EOF, and end the stream with a read error
// instead of io.EOF: the complete lines before it come out, then that
// error (a line it cuts is not complete, and does not come out).

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strconv"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// readSizes turns cut bytes into Read sizes: below 0xC0 a size of 0 to
// 63 bytes, from 0xC0 on 1 to 64 KiB (past the Framer's 32 KiB buffer).
func readSizes(n int, cuts []byte) []int {
	if len(cuts) == 0 {
		return []int{n}
	}
	var sizes []int
	zeros := 0
	for i, total := 0, 0; total < n; i++ {
		c := cuts[i%len(cuts)]
		s := int(c % 64)
		if c >= 0xC0 {
			s = int(c-0xC0+1) << 10
		}
		if s == 0 {
			if zeros++; zeros > 4 { // a reader may return 0, nil, but not forever
				s = 1
			}
		}
		if s > 0 {
			zeros = 0
		}
		s = min(s, n-total)
		sizes = append(sizes, s)
		total += s
	}
	return sizes
}

func isBlankLine(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// Flags of FuzzFraming's input.
const (
	framingNoFinalNL = 1 << 0    // drop the stream's last '\n'
	framingDataAtEnd = 1 << 1    // the last bytes come with io.EOF (or the read error)
	framingReadError = 1 << 2    // the stream ends with errFramingRead, not io.EOF
	framingBadRun    = 0xFF << 8 // bit 8+k: no valid request after line k
)

var errFramingRead = errors.New("fuzz: injected read error")

// endReader is a pieceReader whose stream ends with end (io.EOF or a read
// error), returned with the last bytes when withData is set.
type endReader struct {
	pieceReader
	end      error
	withData bool
}

func (r *endReader) Read(p []byte) (int, error) {
	n, err := r.pieceReader.Read(p)
	switch {
	case err == io.EOF:
		return 0, r.end
	case r.withData && n > 0 && r.n == len(r.data):
		return n, r.end
	}
	return n, err
}

func FuzzFraming(f *testing.F) {
	long := bytes.Repeat([]byte("x"), 40<<10)
	seeds := []struct {
		junk   []byte
		repeat uint8
		max    uint16
		cuts   []byte
		flags  uint16
	}{
		{[]byte(""), 0, 0, nil, 0},
		{[]byte("   \t\r"), 0, 0, []byte{1}, 0},
		{[]byte("{"), 0, 0, []byte{3, 0, 200}, 0},
		{[]byte("not json\n[1,2]\n\xff\xfe"), 0, 0, []byte{7}, 0},
		{[]byte(`{"jsonrpc":"2.0","id":"v0","method":"ping"}`), 0, 60, []byte{0, 1, 2}, 0},
		{[]byte(`{"jsonrpc":"2.0","method":"m","params":"` + string(long[:1000])), 60, 0, []byte{0xFF, 5}, 0},
		{append([]byte(`{"a":"`), long...), 0, 100, []byte{0xC7}, 0},
		{[]byte(`{"a":1,"a":2}` + "\n" + `{"jsonrpc":"1.0","id":1,"method":"m"}` + "\n" + `"\ud800"`), 3, 50, []byte{63, 1}, 0},
		{[]byte("\r\r\r\n \n{}\r"), 0, 0, []byte{2}, 0},
		// The last line without '\n'; bytes with io.EOF; a read error.
		{[]byte("x\ny"), 0, 0, nil, framingNoFinalNL},
		{[]byte("x\ny"), 0, 0, []byte{5}, framingNoFinalNL},
		{[]byte("x\ny"), 0, 0, nil, framingDataAtEnd},
		{[]byte("x\ny"), 0, 0, []byte{9, 1}, framingDataAtEnd | framingNoFinalNL},
		{[]byte("x\ny"), 0, 0, []byte{4}, framingReadError},
		{[]byte("x\ny"), 0, 0, nil, framingReadError | framingDataAtEnd},
		{[]byte("x\ny"), 0, 0, []byte{3}, framingReadError | framingNoFinalNL},
		{[]byte("x\ny"), 0, 0, nil, framingReadError | framingNoFinalNL | framingDataAtEnd},
		// Bad lines in a row, the last one without '\n'.
		{[]byte("not json\n[1,2]\n\n{\n\xff"), 0, 0, []byte{2, 11}, framingBadRun | framingNoFinalNL},
		{[]byte("{\n{\n{"), 0, 0, nil, 0x0300 | framingNoFinalNL | framingDataAtEnd},
		{append([]byte(`{"a":"`), long[:100]...), 200, 1000, []byte{0xC3, 9}, framingBadRun},
		{[]byte("{}\n \n\"x"), 1, 0, []byte{1}, framingBadRun | framingReadError},
	}
	for _, s := range seeds {
		if len(s.junk) > bigSeed && fuzzing() {
			continue
		}
		f.Add(s.junk, s.repeat, s.max, s.cuts, s.flags)
	}
	var d decode.Decoder
	var want, got decode.Message
	f.Fuzz(func(t *testing.T, junk []byte, repeat uint8, maxBytes uint16, cuts []byte, flags uint16) {
		lines := bytes.Split(junk, []byte("\n"))
		if len(lines) > 8 {
			lines = lines[:8]
		}
		valid := func(k int) []byte {
			return []byte(`{"jsonrpc":"2.0","id":"v` + strconv.Itoa(k) + `","method":"ping"}`)
		}
		opts := decode.Options{IDs: decode.IDsMCP}
		if maxBytes != 0 {
			// Room for the valid messages and a '\r': the ceiling counts
			// every byte of a line but the '\n' and a '\r' right before
			// it.
			opts.MaxBytes = max(int64(maxBytes), int64(len(valid(len(lines))))+1)
		}
		ceiling := opts.MaxBytes
		if ceiling == 0 {
			ceiling = decode.DefaultMaxBytes
		}
		// The stream, and what must come out of it: a fuzz line (its
		// bytes as the Framer sees them, '\r' included) or valid(k).
		type item struct {
			line []byte // nil for valid(k)
			k    int
			no   int64 // its line number
		}
		var stream []byte
		var items []item
		for k := range lines {
			line := bytes.Repeat(lines[k], 1+int(repeat))
			if k%2 == 1 {
				line = append(line, '\r')
			}
			items = append(items, item{line: line, k: k, no: int64(len(items) + 1)})
			stream = append(append(stream, line...), '\n')
			if flags&(1<<(8+k)) != 0 {
				continue // the next line is bad too
			}
			items = append(items, item{k: k, no: int64(len(items) + 1)})
			stream = append(stream, valid(k)...)
			if k%2 == 1 {
				stream = append(stream, '\r')
			}
			stream = append(stream, '\n')
		}
		end := error(io.EOF)
		if flags&framingReadError != 0 {
			end = errFramingRead
		}
		if flags&framingNoFinalNL != 0 {
			stream = stream[:len(stream)-1]
			if end != io.EOF {
				items = items[:len(items)-1] // cut by the error: not a line
			}
		}
		r := &endReader{pieceReader{data: stream, sizes: readSizes(len(stream), cuts)}, end, flags&framingDataAtEnd != 0}
		sizes := slices.Clone(r.sizes)
		fr, err := decode.NewFramer(r, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.SetOptions(opts); err != nil {
			t.Fatal(err)
		}
		for i, it := range items {
			if it.line == nil {
				err := fr.Next(&got)
				if err != nil || got.Kind != decode.KindRequest || string(got.ID) != `"v`+strconv.Itoa(it.k)+`"` || string(got.Method) != "ping" {
					t.Fatalf("stream %q (options %+v, flags %#x, reads %v): the valid message v%d came out as %v, id %q, method %q",
						stream, opts, flags, sizes, it.k, err, got.ID, got.Method)
				}
			} else {
				// The message is the line without a '\r' right before its
				// '\n' (the last line, when the stream ends without one,
				// keeps it).
				msg := it.line
				unended := i == len(items)-1 && flags&framingNoFinalNL != 0 && end == io.EOF
				if n := len(msg); n > 0 && msg[n-1] == '\r' && !unended {
					msg = msg[:n-1]
				}
				// A line of whitespace is skipped, unless it is longer
				// than the ceiling: refused as any over-long line
				// (contract §6; skipped until 2026-12-07).
				if isBlankLine(msg) && int64(len(msg)) <= ceiling {
					continue
				}
				w := verdictOf(&want, d.Decode(msg, &want))
				g := verdictOf(&got, fr.Next(&got))
				if g != w {
					t.Fatalf("line %d %q (options %+v, flags %#x, reads %v):\n\tDecode      %+v\n\tFramer.Next %+v", it.no, it.line, opts, flags, sizes, w, g)
				}
			}
			if fr.Line() != it.no {
				t.Fatalf("stream %q (flags %#x, reads %v): line %d reported at line %d", stream, flags, sizes, it.no, fr.Line())
			}
		}
		if err := fr.Next(&got); err != end {
			t.Fatalf("stream %q (flags %#x, reads %v): at the end %v, want %v", stream, flags, sizes, err, end)
		}
	})
}
