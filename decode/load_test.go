package decode

import (
	"bytes"
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

// TestHasBackslash checks the word-at-a-time backslash test against
// bytes.IndexByte for every length up to 40 and every backslash position,
// beside non-ASCII bytes and bytes one off the backslash.
func TestHasBackslash(t *testing.T) {
	fill := []byte("a]\xc3\xa9[0\x7f]") // ']' and '[' are '\\'+1 and '\\'-1
	for n := 0; n <= 40; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = fill[i%len(fill)]
		}
		if hasBackslash(b) {
			t.Fatalf("hasBackslash(%q) = true", b)
		}
		for p := 0; p < n; p++ {
			c := append([]byte(nil), b...)
			c[p] = '\\'
			if got, want := hasBackslash(c), bytes.IndexByte(c, '\\') >= 0; got != want {
				t.Fatalf("hasBackslash(%q) = %v, want %v", c, got, want)
			}
		}
	}
}
