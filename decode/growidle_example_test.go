package decode_test

import (
	"fmt"
	"strings"

	"github.com/rpcedge/rpcedge/decode"
)

// spare is an IdleBuffers holding at most one spare buffer: Get makes a
// buffer when it holds none large enough, Idle never does.
type spare struct{ buf []byte }

func (s *spare) Get(n int) []byte {
	if b := s.Idle(n); b != nil {
		return b
	}
	return make([]byte, 0, n)
}

func (s *spare) Idle(n int) []byte {
	if cap(s.buf) < n {
		return nil
	}
	b := s.buf
	s.buf = nil
	return b[:0]
}

func (s *spare) Put(b []byte) {
	if cap(b) > cap(s.buf) {
		s.buf = b
	}
}

// A server that charges a body's memory as its bytes arrive reads a body
// of known length into one buffer only if one is idle: the first body
// grows its buffer step by step, and leaves it idle when the decoder lets
// it go; the second, of the same length, is read straight into it.
func ExampleDecoder_GrowIdle() {
	var bufs spare
	d, _ := decode.NewDecoder(decode.Options{Buffers: &bufs})
	body := `{"jsonrpc":"2.0","id":1,"method":"upload","params":{"data":"` + strings.Repeat("x", 100_000) + `"}}`
	for i := range 2 {
		ok := d.GrowIdle(int64(len(body)) + 1)
		var m decode.Message
		if err := d.DecodeReader(strings.NewReader(body), &m); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("body %d: one buffer from the start: %v, %s\n", i+1, ok, m.Method)
		d.Trim(0) // give the buffer back, as a pooled decoder does after a large body
	}
	// Output:
	// body 1: one buffer from the start: false, upload
	// body 2: one buffer from the start: true, upload
}
