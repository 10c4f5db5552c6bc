package decode

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// NextInto decodes each line with the Decoder it is given: messages read
// into different Decoders stay valid while later lines are read, and
// each Decoder's own options apply.
func TestFramerNextInto(t *testing.T) {
	const n = 40
	var in strings.Builder
	want := make([]string, n)
	for i := range n {
		text := strings.Repeat(fmt.Sprintf("é%d", rand.IntN(1000)), 1+rand.IntN(3000)) // some lines past the Framer's buffer
		want[i] = fmt.Sprintf(`{"text":%q}`, text)
		fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":"r%d","method":"m\u00e9%d","params":%s}`+"\r\n", i, i, want[i])
	}
	f, err := NewFramer(iotestHalf{strings.NewReader(in.String())}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	decs := make([]Decoder, n)
	msgs := make([]Message, n)
	for i := range n {
		if err := f.NextInto(&decs[i], &msgs[i]); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	if err := f.NextInto(&decs[0], &msgs[0]); err != io.EOF {
		t.Fatalf("after the last line: %v", err)
	}
	for i := 1; i < n; i++ { // msgs[0] was reset by the call above
		m := &msgs[i]
		if string(m.ID) != fmt.Sprintf(`"r%d"`, i) || string(m.Method) != fmt.Sprintf("mé%d", i) || string(m.Params) != want[i] {
			t.Fatalf("message %d after the later lines were read: id %s method %s params %.40s", i, m.ID, m.Method, m.Params)
		}
	}

	// The Decoder's ceiling, not the Framer's: the long line is refused
	// and skipped, the next one read whole.
	f, _ = NewFramer(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"`+strings.Repeat("x", 100)+`"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"y"}`), Options{})
	small, err := NewDecoder(Options{MaxBytes: 64})
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	if err := f.NextInto(small, &m); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("a 133-byte line with a 64-byte ceiling: %v", err)
	}
	if err := f.NextInto(small, &m); err != nil || string(m.ID) != "2" || f.Line() != 2 {
		t.Fatalf("the line after: %v, id %s, line %d", err, m.ID, f.Line())
	}
}

// iotestHalf returns at most half of what is asked, so that lines cross
// reads.
type iotestHalf struct{ r *strings.Reader }

func (h iotestHalf) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:len(p)/2]
	}
	return h.r.Read(p)
}
