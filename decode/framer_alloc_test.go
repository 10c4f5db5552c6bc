//go:build !race

package decode

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestFramerAllocs pins Framer.Next at zero allocations per line once
// warm, for valid, refused and over-long lines alike.
func TestFramerAllocs(t *testing.T) {
	var in bytes.Buffer
	for i := 0; i < 300; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"text":"t%d"}}`+"\n", i, i*7)
		case 1:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"x"`+"\n", i)
		case 2:
			fmt.Fprintf(&in, `{"jsonrpc":"2.0","id":%d,"method":"%s"}`+"\n", i, strings.Repeat("z", 600))
		}
	}
	data := in.Bytes()
	r := bytes.NewReader(data)
	f, err := NewFramer(r, Options{MaxBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	var m Message
	// Warm up over the whole stream once.
	for i := 0; i < 300; i++ {
		f.Next(&m)
	}
	r.Reset(data)
	f.rerr = nil
	f.head, f.tail = 0, 0
	allocs := testing.AllocsPerRun(299, func() { f.Next(&m) })
	if allocs != 0 {
		t.Fatalf("Framer.Next: %v allocations per line, want 0", allocs)
	}
}
