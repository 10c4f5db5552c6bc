package decode

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// skipStringBytewise is skipString one byte at a time: the reference.
func skipStringBytewise(v []byte, i int) (int, bool) {
	esc := false
	for i++; i < len(v); i++ {
		switch v[i] {
		case '"':
			return i + 1, esc
		case '\\':
			esc = true
			i++
		}
	}
	return len(v), esc
}

// TestSkipString checks skipString and skipStringEnd against the bytewise reference on
// strings of every length up to 300 with quotes, backslashes and
// non-ASCII bytes at random places, unterminated ones and trailing bytes
// included.
func TestSkipString(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 1))
	alphabet := []byte(`abc"\\ é` + "\x00\x7f\xff")
	for n := range 300 {
		for range 40 {
			b := make([]byte, n+1)
			b[0] = '"'
			for j := 1; j <= n; j++ {
				switch r := rng.IntN(100); {
				case r < 2:
					b[j] = '"'
				case r < 6:
					b[j] = '\\'
				default:
					b[j] = alphabet[rng.IntN(len(alphabet))]
				}
			}
			gotEnd, gotEsc := skipString(b, 0)
			wantEnd, wantEsc := skipStringBytewise(b, 0)
			if gotEnd != wantEnd || gotEsc != wantEsc {
				t.Fatalf("%q: skipString = %d, %v; want %d, %v", b, gotEnd, gotEsc, wantEnd, wantEsc)
			}
			if end := skipStringEnd(b, 0); end != wantEnd {
				t.Fatalf("%q: skipStringEnd = %d; want %d", b, end, wantEnd)
			}
		}
	}
}

// TestSkipStringLinear: a long string that is mostly escapes, with its
// closing quote far away, is skipped in linear time (a quadratic search
// would take minutes on 4 MiB).
func TestSkipStringLinear(t *testing.T) {
	v := []byte(`"` + strings.Repeat(`\"`, 2<<20) + `"`)
	if end, esc := skipString(v, 0); end != len(v) || !esc {
		t.Fatalf("end %d of %d, esc %v", end, len(v), esc)
	}
	if end := skipStringEnd(v, 0); end != len(v) {
		t.Fatalf("skipStringEnd: end %d of %d", end, len(v))
	}
	// Runs of backslashes before quotes, odd and even, far apart.
	bs := func(n int) string { return strings.Repeat(`\`, n) }
	w := []byte(`"` + strings.Repeat(strings.Repeat("x", 100)+bs(5)+`"`+strings.Repeat("y", 50)+bs(7)+`"`, 1000) + bs(4) + `"z`)
	if end, _ := skipStringBytewise(w, 0); skipStringEnd(w, 0) != end || end != len(w)-1 {
		t.Fatalf("skipStringEnd: %d, bytewise %d, of %d", skipStringEnd(w, 0), end, len(w))
	}
}

// BenchmarkSkipString skips strings of a few lengths, without escapes
// and with one every 64 bytes.
func BenchmarkSkipString(b *testing.B) {
	for _, n := range []int{8, 40, 180, 16 << 10, 256 << 10} {
		for _, escaped := range []bool{false, true} {
			s := []byte(strings.Repeat("x", n))
			if escaped {
				for j := 63; j+1 < n; j += 64 {
					s[j], s[j+1] = '\\', 'n'
				}
			}
			v := append(append([]byte{'"'}, s...), '"')
			name := "len=" + itoa(n)
			if escaped {
				name += "/escapes"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(int64(len(v)))
				for b.Loop() {
					if end, _ := skipString(v, 0); end != len(v) {
						b.Fatal(end)
					}
				}
			})
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
