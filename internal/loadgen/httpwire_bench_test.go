package loadgen

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkParseHead parses the head of an answer as rpcedge writes it
// (status line, Server, Date, Content-Type, Content-Length).
func BenchmarkParseHead(b *testing.B) {
	raw := []byte("HTTP/1.1 200 OK\r\nServer: rpcedge\r\nDate: Sun, 06 Dec 2026 08:51:27 GMT\r\n" +
		"Content-Type: application/json\r\nContent-Length: 36\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}")
	var r response
	if ok, err := r.parseOne(raw, 0, false); !ok || err != nil {
		b.Fatalf("parseOne: %v %v", ok, err)
	}
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		r.parseOne(raw, 0, false)
	}
}

// hasCTL's word-at-a-time search agrees with a byte loop on every
// length, every control byte at every position, and random lines.
func TestHasCTL(t *testing.T) {
	slow := func(line []byte) bool {
		for _, c := range line {
			if c < 0x20 && c != '\t' || c == 0x7f {
				return true
			}
		}
		return false
	}
	for n := range 40 {
		line := make([]byte, n)
		for i := range line {
			line[i] = 'a' + byte(i%26)
		}
		if hasCTL(line) {
			t.Fatalf("length %d: a clean line has a control byte", n)
		}
		for i := range n {
			for c := range 256 {
				line[i] = byte(c)
				if got, want := hasCTL(line), slow(line); got != want {
					t.Fatalf("length %d, byte %#x at %d: %v, want %v", n, c, i, got, want)
				}
			}
			line[i] = 'a' + byte(i%26)
		}
	}
	rng := rand.New(rand.NewPCG(1, uint64(len(t.Name()))))
	for range 200000 {
		line := make([]byte, rng.IntN(48))
		for i := range line {
			switch rng.IntN(4) {
			case 0:
				line[i] = byte(rng.IntN(256))
			case 1:
				line[i] = '\t'
			default:
				line[i] = byte(0x20 + rng.IntN(0x5f))
			}
		}
		if got, want := hasCTL(line), slow(line); got != want {
			t.Fatalf("%q: %v, want %v", line, got, want)
		}
	}
}
