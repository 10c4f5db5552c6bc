package decode

import (
	"encoding/binary"
	"testing"
)

// load64 reads eight bytes little-endian whichever twin is compiled in
// (unsafeLoads says which: -tags purego builds the safe one).
func TestLoad64(t *testing.T) {
	b := make([]byte, 40)
	for i := range b {
		b[i] = byte(i*37 + 11)
	}
	for i := 0; i+8 <= len(b); i++ {
		if got, want := load64(b, i), binary.LittleEndian.Uint64(b[i:]); got != want {
			t.Fatalf("load64 at %d = %#x, want %#x (unsafe loads: %v)", i, got, want, unsafeLoads)
		}
	}
	t.Logf("load64 twin: unsafe loads %v", unsafeLoads)
}
