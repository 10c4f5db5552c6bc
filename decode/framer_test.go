package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

type frameResult struct {
	line   int64
	err    error // sentinel, nil for a valid message
	method string
	id     string
}

func readFrames(t *testing.T, r io.Reader, opts Options) ([]frameResult, error) {
	t.Helper()
	f, err := NewFramer(r, opts)
	if err != nil {
		t.Fatal(err)
	}
	var out []frameResult
	var m Message
	for i := 0; i < 100000; i++ {
		err := f.Next(&m)
		if err == io.EOF {
			return out, nil
		}
		var e *Error
		if err != nil && !errors.As(err, &e) {
			return out, err
		}
		res := frameResult{line: f.Line()}
		if e != nil {
			res.err = e.Err
		} else {
			res.method = string(m.Method)
			res.id = string(m.ID)
		}
		out = append(out, res)
	}
	t.Fatal("framer did not end")
	return nil, nil
}

func TestFramer(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":9,"method":"` + strings.Repeat("x", 300) + `"}`
	tests := []struct {
		name  string
		input string
		max   int64
		want  []frameResult
	}{
		{"two messages", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"b\"}\n", 0,
			[]frameResult{{line: 1, method: "a", id: "1"}, {line: 2, method: "b"}}},
		{"CRLF and blank lines", "\r\n  \n{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"a\"}\r\n\n", 0,
			[]frameResult{{line: 3, method: "a", id: `"x"`}}},
		{"last line without newline", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"z\"}", 0,
			[]frameResult{{line: 1, method: "a", id: "1"}, {line: 2, method: "z", id: "2"}}},
		{"bad line then good", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n", 0,
			[]frameResult{{line: 1, err: ErrSyntax}, {line: 2, method: "b", id: "2"}}},
		{"over-long line skipped", long + "\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"c\"}\n", 100,
			[]frameResult{{line: 1, err: ErrTooLarge}, {line: 2, method: "c", id: "3"}}},
		{"batch line", "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}]\n{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"d\"}\n", 0,
			[]frameResult{{line: 1, err: ErrBatch}, {line: 2, method: "d", id: "4"}}},
		{"pretty-printed message is broken", "{\n\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n", 0,
			[]frameResult{{line: 1, err: ErrSyntax}, {line: 2, err: ErrSyntax}}},
		{"envelope error", "{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"a\"}\n", 0,
			[]frameResult{{line: 1, err: ErrEnvelope}}},
		{"empty stream", "", 0, nil},
		{"only blank", "\n\n \r\n", 0, nil},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+err": iotest.DataErrReader,
	}
	for _, tc := range tests {
		for rn, wrap := range readers {
			t.Run(tc.name+"/"+rn, func(t *testing.T) {
				got, err := readFrames(t, wrap(strings.NewReader(tc.input)), Options{MaxBytes: tc.max})
				if err != nil {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("got  %v\nwant %v", got, tc.want)
				}
			})
		}
	}
}

// TestFramerLongLines checks that over-long lines of many sizes, split at
// random, never cost the stream its place.
func TestFramerLongLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var in bytes.Buffer
	var want []frameResult
	for i := 1; i <= 200; i++ {
		if rng.IntN(3) == 0 {
			// a line far longer than the ceiling and the read buffer
			in.WriteString(`{"jsonrpc":"2.0","id":1,"method":"`)
			in.WriteString(strings.Repeat("y", 1000+rng.IntN(3*framerBuf)))
			in.WriteString("\"}\n")
			want = append(want, frameResult{line: int64(i), err: ErrTooLarge})
			continue
		}
		id := fmt.Sprint(rng.Int64())
		method := fmt.Sprintf("m%d", rng.IntN(1e6))
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%s,"method":"%s"}`+"\n", id, method)
		want = append(want, frameResult{line: int64(i), method: method, id: id})
	}
	got, err := readFrames(t, &randomReader{r: bytes.NewReader(in.Bytes()), rng: rng}, Options{MaxBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

type randomReader struct {
	r   io.Reader
	rng *rand.Rand
}

func (r *randomReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1+r.rng.IntN(len(p)-1)]
	}
	return r.r.Read(p)
}

func TestFramerReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n{\"jsonrpc\""), iotest.ErrReader(boom))
	f, err := NewFramer(r, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := f.Next(&m); err != nil || string(m.Method) != "a" {
		t.Fatalf("first line: %v %q", err, m.Method)
	}
	if err := f.Next(&m); err != boom {
		t.Fatalf("second call: got %v, want the reader's error", err)
	}
}

func TestNewFramerBadOptions(t *testing.T) {
	if _, err := NewFramer(strings.NewReader(""), Options{MaxBytes: -1}); err == nil {
		t.Fatal("negative MaxBytes accepted")
	}
}

// TestFramerLongBlankLines: a line of whitespace is skipped when it fits
// the ceiling and refused -32600 when it does not, as any over-long line
// (contract §6), counting what the line's message holds: a '\r' before
// its '\n' is the line end's, a '\r' ending a last line without '\n' is
// the line's (found by review and fuzzing on 2026-12-07: such lines were
// skipped whatever their length).
func TestFramerLongBlankLines(t *testing.T) {
	ok := `{"jsonrpc":"2.0","id":1,"method":"m"}`
	max := len(ok) // the ceiling: ok just fits
	okLine := frameResult{method: "m", id: "1"}
	at := func(r frameResult, line int64) frameResult { r.line = line; return r }
	tooLarge := frameResult{err: ErrTooLarge}
	for _, tc := range []struct {
		stream string
		want   []frameResult
	}{
		{strings.Repeat(" ", max) + "\r\n" + ok + "\n", []frameResult{at(okLine, 2)}},
		{strings.Repeat(" ", max+1) + "\r\n" + ok + "\n", []frameResult{at(tooLarge, 1), at(okLine, 2)}},
		{strings.Repeat("\t", max+1) + "\n", []frameResult{at(tooLarge, 1)}},
		{ok + "\n" + strings.Repeat(" ", max-1) + "\r", []frameResult{at(okLine, 1)}},
		{ok + "\n" + strings.Repeat(" ", max) + "\r", []frameResult{at(okLine, 1), at(tooLarge, 2)}},
	} {
		for _, r := range []io.Reader{strings.NewReader(tc.stream), iotest.OneByteReader(strings.NewReader(tc.stream))} {
			got, err := readFrames(t, r, Options{MaxBytes: int64(max)})
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("%q: got %v, want %v", tc.stream, got, tc.want)
			}
		}
	}
}
