//go:build !race

package decode_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// The numbers pinned here may only go down.

func TestParseEncodingAllocs(t *testing.T) {
	headers := [][]byte{
		[]byte(""), []byte("identity"), []byte(" GZIP , zstd "), []byte("x-gzip,,deflate"),
		[]byte("br"), []byte("gzip, gzip, gzip"),
	}
	var sink string
	allocs := testing.AllocsPerRun(100, func() {
		for _, h := range headers {
			enc, err := decode.ParseEncoding(h)
			if err == nil {
				sink = enc.String()
			} else {
				sink = err.(*decode.Error).Reason
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("ParseEncoding and String: %v allocations, want 0", allocs)
	}
	_ = sink
}

// readToEnd reads br into buf until an error and returns the bytes read.
func readToEnd(br *decode.BodyReader, buf []byte) (int, error) {
	total := 0
	for {
		n, err := br.Read(buf)
		total += n
		if err != nil {
			return total, err
		}
	}
}

func TestBodyReaderIdentityAllocs(t *testing.T) {
	body := textish(1, 64<<10)
	src := new(bytes.Reader)
	br := new(decode.BodyReader)
	buf := make([]byte, 4096)
	for _, tt := range []struct {
		name  string
		limit int64
		want  error
	}{
		{"body", 0, io.EOF},
		{"over the ceiling", 1000, nil},
	} {
		allocs := testing.AllocsPerRun(100, func() {
			*br = decode.BodyReader{} // a zero BodyReader each time
			src.Reset(body)
			br.Reset(src, decode.Encoding{}, tt.limit)
			_, err := readToEnd(br, buf)
			if tt.want != nil && err != tt.want {
				t.Fatal(err)
			}
			br.Close()
		})
		if allocs != 0 {
			t.Errorf("identity %s: %v allocations, want 0", tt.name, allocs)
		}
	}
}

// TestBodyReaderWarmAllocs pins the allocations of a compressed body
// decoded by a reused BodyReader with warm pools.
func TestBodyReaderWarmAllocs(t *testing.T) {
	body := textish(2, 200<<10)
	tests := []struct {
		name, list string
		wire       []byte
		max        float64 // pinned: may only go down
	}{
		{"gzip", "gzip", compressWith(t, "gzip", body), 0},
		{"deflate", "deflate", compressWith(t, "deflate", body), 0},
		{"zstd", "zstd", compressWith(t, "zstd", body), 0},
		{"gzip, zstd", "gzip, zstd", compressWith(t, "gzip, zstd", body), 0},
		{"deflate, gzip", "deflate, gzip", compressWith(t, "deflate, gzip", body), 0},
		{"gzip bomb", "gzip", bombs()["gzip"], 0},
		{"zstd bomb", "zstd", bombs()["zstd"], 0},
		{"gzip corrupt", "gzip", flipped(compressWith(t, "gzip", body)), 0},
		{"deflate corrupt", "deflate", flipped(compressWith(t, "deflate", body)), 0},
		// klauspost/compress builds this error with fmt.Errorf ("match
		// offset (49274) bigger than current history"); the refusal itself
		// allocates nothing.
		{"zstd corrupt", "zstd", flipped(compressWith(t, "zstd", body)), 4},
		{"gzip truncated", "gzip", truncated(compressWith(t, "gzip", body)), 0},
		{"zstd truncated", "zstd", truncated(compressWith(t, "zstd", body)), 0},
	}
	src := new(bytes.Reader)
	var br decode.BodyReader
	buf := make([]byte, 16<<10)
	for _, tt := range tests {
		enc, _ := decode.ParseEncoding([]byte(tt.list))
		run := func() {
			src.Reset(tt.wire)
			br.Reset(src, enc, 0)
			readToEnd(&br, buf)
			br.Close()
		}
		run() // warm the pools
		allocs := testing.AllocsPerRun(50, run)
		t.Logf("%-16s %v allocations per body", tt.name, allocs)
		if allocs > tt.max {
			t.Errorf("%s: %v allocations per body, pinned at %v", tt.name, allocs, tt.max)
		}
	}
}

func flipped(b []byte) []byte {
	b = bytes.Clone(b)
	b[len(b)/2] ^= 0x55
	return b
}

func truncated(b []byte) []byte { return b[:len(b)*2/3] }

// TestBodyReaderBombsTotalAlloc: with warm pools (a first run, then the
// measured one) a bomb is refused having allocated less than 4 MiB.
// Under -race sync.Pool drops items at random, hence the build tag.
func TestBodyReaderBombsTotalAlloc(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 64 MiB bombs")
	}
	var br decode.BodyReader
	buf := make([]byte, 32<<10)
	for _, tt := range bombCases() {
		_, cold, _ := runBomb(&br, tt, buf)
		got, warm, err := runBomb(&br, tt, buf)
		t.Logf("%-30s wire %6d B  decoded %7d B  TotalAlloc cold %8d B, warm %5d B: %v", tt.name, len(tt.wire), got, cold, warm, err)
		if warm >= 4<<20 {
			t.Errorf("%s: %d bytes allocated with warm pools, want < 4 MiB", tt.name, warm)
		}
	}
}
