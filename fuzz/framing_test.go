package fuzz

// FuzzFraming: a newline-delimited stream (contract §6) never loses a
// valid message that follows a bad or over-long line. The stream is built
// as, for each line of the fuzz input (split at '\n', each line repeated
// to make over-long ones): the line, "\n", a valid request with a unique
// id, "\n" (CRLF on every other pair). Read through decode.NewFramer over
// a reader that returns arbitrary pieces, each fuzz line gets exactly the
// verdict Decode gives it alone (a blank line is skipped), at line 2k+1,
// and each valid request comes out decoded with its id at line 2k+2; then
// io.EOF.

import (
	"bytes"
	"io"
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

func FuzzFraming(f *testing.F) {
	long := bytes.Repeat([]byte("x"), 40<<10)
	seeds := []struct {
		junk   []byte
		repeat uint8
		max    uint16
		cuts   []byte
	}{
		{[]byte(""), 0, 0, nil},
		{[]byte("   \t\r"), 0, 0, []byte{1}},
		{[]byte("{"), 0, 0, []byte{3, 0, 200}},
		{[]byte("not json\n[1,2]\n\xff\xfe"), 0, 0, []byte{7}},
		{[]byte(`{"jsonrpc":"2.0","id":"v0","method":"ping"}`), 0, 60, []byte{0, 1, 2}},
		{[]byte(`{"jsonrpc":"2.0","method":"m","params":"` + string(long[:1000])), 60, 0, []byte{0xFF, 5}},
		{append([]byte(`{"a":"`), long...), 0, 100, []byte{0xC7}},
		{[]byte(`{"a":1,"a":2}` + "\n" + `{"jsonrpc":"1.0","id":1,"method":"m"}` + "\n" + `"\ud800"`), 3, 50, []byte{63, 1}},
		{[]byte("\r\r\r\n \n{}\r"), 0, 0, []byte{2}},
	}
	for _, s := range seeds {
		if len(s.junk) > bigSeed && fuzzing() {
			continue
		}
		f.Add(s.junk, s.repeat, s.max, s.cuts)
	}
	var d decode.Decoder
	var want, got decode.Message
	f.Fuzz(func(t *testing.T, junk []byte, repeat uint8, maxBytes uint16, cuts []byte) {
		lines := bytes.Split(junk, []byte("\n"))
		if len(lines) > 8 {
			lines = lines[:8]
		}
		valid := func(k int) []byte {
			return []byte(`{"jsonrpc":"2.0","id":"v` + strconv.Itoa(k) + `","method":"ping"}`)
		}
		opts := decode.Options{IDs: decode.IDsMCP}
		if maxBytes != 0 {
			// Room for the valid messages and their '\r': the ceiling
			// counts every byte of a line but the '\n'.
			opts.MaxBytes = max(int64(maxBytes), int64(len(valid(len(lines))))+1)
		}
		var stream []byte
		for k := range lines {
			lines[k] = bytes.Repeat(lines[k], 1+int(repeat))
			stream = append(stream, lines[k]...)
			if k%2 == 1 {
				stream = append(stream, '\r')
			}
			stream = append(stream, '\n')
			stream = append(stream, valid(k)...)
			if k%2 == 1 {
				stream = append(stream, '\r')
			}
			stream = append(stream, '\n')
		}
		r := &pieceReader{data: stream, sizes: readSizes(len(stream), cuts)}
		fr, err := decode.NewFramer(r, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.SetOptions(opts); err != nil {
			t.Fatal(err)
		}
		for k, line := range lines {
			lineK := line
			if k%2 == 1 {
				lineK = append(bytes.Clone(line), '\r')
			}
			if !isBlankLine(lineK) {
				w := verdictOf(&want, d.Decode(lineK, &want))
				g := verdictOf(&got, fr.Next(&got))
				if g != w {
					t.Fatalf("line %d %q (options %+v):\n\tDecode      %+v\n\tFramer.Next %+v", 2*k+1, lineK, opts, w, g)
				}
				if fr.Line() != int64(2*k+1) {
					t.Fatalf("line %q reported at line %d, want %d", lineK, fr.Line(), 2*k+1)
				}
			}
			err := fr.Next(&got)
			if err != nil || got.Kind != decode.KindRequest || string(got.ID) != `"v`+strconv.Itoa(k)+`"` || string(got.Method) != "ping" {
				t.Fatalf("after line %q (options %+v, reads %v): the valid message v%d came out as %v, id %q, method %q",
					lineK, opts, r.sizes, k, err, got.ID, got.Method)
			}
			if fr.Line() != int64(2*k+2) {
				t.Fatalf("after line %q: message v%d at line %d, want %d", lineK, k, fr.Line(), 2*k+2)
			}
		}
		if err := fr.Next(&got); err != io.EOF {
			t.Fatalf("at the end of the stream: %v, want io.EOF", err)
		}
	})
}
