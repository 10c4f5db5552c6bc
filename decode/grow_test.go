package decode

import (
	"bytes"
	"math/bits"
	"strconv"
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
	if b := c.take(n); b != nil {
		return b
	}
	return make([]byte, 7, n)
}

// take returns a buffer taken back earlier that holds n bytes, or nil.
func (c *countingBuffers) take(n int) []byte {
	for i, b := range c.free {
		if cap(b) >= n {
			c.free = append(c.free[:i], c.free[i+1:]...)
			return b[:len(b)/2] // a length that must not matter
		}
	}
	return nil
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

// idleBuffers is countingBuffers that also lends only what it holds idle.
type idleBuffers struct {
	countingBuffers
	idles []int
}

func (c *idleBuffers) Idle(n int) []byte {
	c.idles = append(c.idles, n)
	return c.take(n)
}

// TestGrowIdle: GrowIdle takes a buffer only from an IdleBuffers that has
// one idle, never allocates, keeps what the body holds so far, never asks
// past the ceiling plus one, and a body of that size is then read into it
// without a step of growth.
func TestGrowIdle(t *testing.T) {
	body := []byte(`{"jsonrpc":"2.0","id":"idle","method":"m","params":{"s":"` + strings.Repeat("é", 60000) + `"}}`)
	n := int64(len(body)) + 1

	// Without Buffers, or with Buffers that cannot lend idle ones: no.
	var plain Decoder
	if plain.GrowIdle(n) || cap(plain.buf) != 0 {
		t.Errorf("GrowIdle without Buffers: grew to %d", cap(plain.buf))
	}
	var cb countingBuffers
	plain.SetOptions(Options{Buffers: &cb})
	if plain.GrowIdle(n) || cap(plain.buf) != 0 || len(cb.gets) != 0 {
		t.Errorf("GrowIdle with plain Buffers: grew to %d, gets %v", cap(plain.buf), cb.gets)
	}

	var ib idleBuffers
	var d Decoder
	if err := d.SetOptions(Options{MaxBytes: 1 << 20, Buffers: &ib}); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(10, func() {
		if d.GrowIdle(n) {
			t.Fatal("GrowIdle with nothing idle reported room")
		}
	}); allocs != 0 || cap(d.buf) != 0 || len(ib.gets) != 0 {
		t.Errorf("GrowIdle with nothing idle: %v allocations, cap %d, gets %v", allocs, cap(d.buf), ib.gets)
	}

	// A buffer too small idle: left there.
	ib.free = append(ib.free, make([]byte, 0, n-1))
	if d.GrowIdle(n) || len(ib.free) != 1 {
		t.Errorf("GrowIdle took a buffer too small for %d bytes", n)
	}
	// One large enough: taken, what the body held moves with it, and the
	// buffer it held goes back.
	ib.free = append(ib.free, make([]byte, 0, 2*n))
	d.buf = append(d.buf[:0], "kept"...)
	old := cap(d.buf)
	if !d.GrowIdle(n) || cap(d.buf) != int(2*n) || string(d.buf) != "kept" {
		t.Fatalf("GrowIdle with a buffer idle: cap %d, holds %q", cap(d.buf), d.buf)
	}
	if len(ib.free) != 2 || len(ib.puts) != 1 || ib.puts[0] != old {
		t.Errorf("GrowIdle: %d idle after, puts %v, want the too small one and the old one (%d)", len(ib.free), ib.puts, old)
	}
	// Room already: true, nothing asked.
	asked := len(ib.idles)
	if !d.GrowIdle(n) || len(ib.idles) != asked {
		t.Error("GrowIdle with room already asked for a buffer")
	}
	gets := len(ib.gets)
	var m Message
	if err := d.DecodeReader(iotest.OneByteReader(bytes.NewReader(body)), &m); err != nil || string(m.ID) != `"idle"` {
		t.Fatalf("DecodeReader into the idle buffer: %v, id %s", err, m.ID)
	}
	if len(ib.gets) != gets || cap(d.buf) != int(2*n) {
		t.Errorf("the body did not stay in the idle buffer: gets %v, cap %d", ib.gets[gets:], cap(d.buf))
	}

	// Never past the ceiling plus one.
	var small Decoder
	small.SetOptions(Options{MaxBytes: 100, Buffers: &ib})
	small.GrowIdle(1 << 30)
	if last := ib.idles[len(ib.idles)-1]; last != 101 {
		t.Errorf("GrowIdle over the ceiling asked for %d bytes, want 101", last)
	}
}

// exactBuffers lends buffers of exactly the capacity asked for and
// records the sizes.
type exactBuffers struct{ gets []int }

func (e *exactBuffers) Get(n int) []byte { e.gets = append(e.gets, n); return make([]byte, 0, n) }
func (e *exactBuffers) Put([]byte)       {}

// TestGrowSizes: whatever size Grow left the buffer at, DecodeReader grows
// it into 4 KiB times a power of two (or the ceiling plus one), each step
// larger than the last and at most twice it, so that Options.Buffers can
// pool the sizes; before, a buffer Grow sized for a body of known length
// doubled into sizes no other body asks for.
func TestGrowSizes(t *testing.T) {
	const max = 1 << 20
	for _, start := range []int64{0, 100, 4095, 4096, 5000, 20001, 65537, 100_000, 262_145} {
		for _, n := range []int{3000, 70_000, 300_000, max - 100} {
			var eb exactBuffers
			var d Decoder
			if err := d.SetOptions(Options{MaxBytes: max, Buffers: &eb}); err != nil {
				t.Fatal(err)
			}
			d.Grow(start)
			eb.gets = nil
			text := strings.Repeat("g", n)
			body := []byte(`{"jsonrpc":"2.0","id":` + strconv.FormatInt(start, 10) + `,"method":"m","params":{"s":"` + text + `"}}`)
			if len(body) > max {
				body = body[:0]
				body = append(body, `{"jsonrpc":"2.0","id":1,"method":"m","params":{"s":"`...)
				body = append(body, text[:max-len(body)-3]...)
				body = append(body, `"}}`...)
			}
			var m Message
			if err := d.DecodeReader(iotest.HalfReader(bytes.NewReader(body)), &m); err != nil {
				t.Fatalf("start %d, body %d: %v", start, len(body), err)
			}
			prev := int(start)
			for _, g := range eb.gets {
				if g != max+1 && (g%4096 != 0 || bits.OnesCount(uint(g/4096)) != 1) {
					t.Errorf("start %d, body %d: grew into %d bytes, not 4 KiB times a power of two (gets %v)", start, len(body), g, eb.gets)
				}
				if g <= prev || (prev >= 4096 && g > 2*prev) {
					t.Errorf("start %d, body %d: grew from %d to %d bytes (gets %v)", start, len(body), prev, g, eb.gets)
				}
				prev = g
			}
			if prev < len(body) {
				t.Errorf("start %d: the last buffer, %d bytes, cannot hold the %d-byte body", start, prev, len(body))
			}
		}
	}
}
