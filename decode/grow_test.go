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
