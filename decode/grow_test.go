package decode

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

func TestGrowAndTrim(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"` + strings.Repeat("x", 100000) + `"}}`)
	var d Decoder
	d.Grow(int64(len(body)) + 1)
	if cap(d.buf) != len(body)+1 {
		t.Fatalf("Grow: cap %d, want %d", cap(d.buf), len(body)+1)
	}
	var m Message
	if err := d.DecodeReader(iotest.HalfReader(bytes.NewReader(body)), &m); err != nil || string(m.Method) != "m" {
		t.Fatalf("DecodeReader after Grow: %v", err)
	}
	if cap(d.buf) != len(body)+1 {
		t.Errorf("the body did not fit the grown buffer: cap %d", cap(d.buf))
	}
	// Grow never passes the ceiling plus one.
	var small Decoder
	small.SetOptions(Options{MaxBytes: 100})
	small.Grow(1 << 20)
	if cap(small.buf) != 101 {
		t.Errorf("Grow over the ceiling: cap %d, want 101", cap(small.buf))
	}
	d.Trim(1 << 20)
	if cap(d.buf) == 0 {
		t.Error("Trim dropped a buffer under its bound")
	}
	d.Trim(1000)
	if cap(d.buf) != 0 {
		t.Errorf("Trim kept a buffer of %d bytes over its bound", cap(d.buf))
	}
	if err := d.DecodeReader(bytes.NewReader(body), &m); err != nil {
		t.Fatalf("DecodeReader after Trim: %v", err)
	}
}

// countingBuffers is a Buffers that records what it lends and takes back,
// and lends the buffers it took back.
type countingBuffers struct {
	gets, puts []int
	free       [][]byte
}

func (c *countingBuffers) Get(n int) []byte {
	c.gets = append(c.gets, n)
	for i, b := range c.free {
		if cap(b) >= n {
			c.free = append(c.free[:i], c.free[i+1:]...)
			return b[:len(b)/2] // a length that must not matter
		}
	}
	return make([]byte, 7, n)
}

func (c *countingBuffers) Put(b []byte) {
	c.puts = append(c.puts, cap(b))
	c.free = append(c.free, b)
}

// TestBuffers: with Options.Buffers a Decoder grows into lent buffers,
// gives back every buffer it outgrows and the one Trim drops, and decodes
// the same messages, also when lent buffers come back dirty.
func TestBuffers(t *testing.T) {
	var cb countingBuffers
	var d Decoder
	if err := d.SetOptions(Options{MaxBytes: 1 << 20, Buffers: &cb}); err != nil {
		t.Fatal(err)
	}
	for round, n := range []int{100, 70000, 300000, 5000, 300000} {
		text := strings.Repeat(string(rune('a'+round)), n)
		body := []byte(`{"jsonrpc":"2.0","id":` + strings.Repeat("1", round+1) + `,"method":"m","params":{"s":"` + text + `"}}`)
		var m Message
		if err := d.DecodeReader(iotest.HalfReader(bytes.NewReader(body)), &m); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if want := `{"s":"` + text + `"}`; string(m.Params) != want || string(m.ID) != strings.Repeat("1", round+1) {
			t.Fatalf("round %d: params of %d bytes, id %s", round, len(m.Params), m.ID)
		}
		d.Trim(64 << 10)
	}
	if len(cb.gets) == 0 || len(cb.puts) != len(cb.gets) {
		t.Fatalf("gets %v, puts %v: every buffer lent must come back", cb.gets, cb.puts)
	}
	for _, n := range cb.gets {
		if n > 1<<20+1 {
			t.Errorf("asked for %d bytes, over the ceiling plus one", n)
		}
	}
}
