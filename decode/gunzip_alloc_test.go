//go:build !race

package decode_test

// Under -race sync.Pool drops items at random, hence the build tag.

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// TestReview2GzipExtraFieldAllocation: "With warm pools decoding
// allocates nothing per body" and refusing "allocates nothing". A gzip
// header with FEXTRA set made klauspost's gzip reader allocate the
// declared extra length (up to 64 KiB) before reading it: 12 bytes of
// wire, cut after the length, cost 64 KiB per body with warm pools (and
// held it while the client stalled); a member naming its file (as the
// gzip tool writes it) allocated the name. The members are now read by
// gzipReader, which skips those fields.
func TestReview2GzipExtraFieldAllocation(t *testing.T) {
	enc, _ := decode.ParseEncoding([]byte("gzip"))
	var br decode.BodyReader
	cut := []byte{0x1f, 0x8b, 8, 1 << 2, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff} // FEXTRA, XLEN 65535, then nothing
	body := []byte(`{"jsonrpc":"2.0","id":"x7","method":"ping"}`)
	var zw bytes.Buffer
	w := gzip.NewWriter(&zw)
	w.Header.Name = "request-\u00e9t\u00e9.json"
	w.Header.Comment = "made by a test"
	w.Header.Extra = bytes.Repeat([]byte{'x'}, 60000)
	w.Write(body)
	w.Close()
	whole := zw.Bytes()
	for _, tc := range []struct {
		name string
		wire []byte
		want error
	}{{"truncated extra field", cut, decode.ErrCorrupt}, {"extra field, name, comment", whole, io.EOF}} {
		var src bytes.Reader
		out := make([]byte, 0, 4096)
		run := func() {
			src.Reset(tc.wire)
			br.Reset(&src, enc, 0)
			out = out[:0]
			var err error
			for err == nil {
				var n int
				n, err = br.Read(out[len(out):cap(out)])
				out = out[:len(out)+n]
			}
			if !errors.Is(err, tc.want) || (tc.want == io.EOF && !bytes.Equal(out, body)) {
				t.Fatalf("%s: %q, %v; want %v", tc.name, out, err, tc.want)
			}
			br.Close()
		}
		run() // warm the pool
		if allocs := testing.AllocsPerRun(20, run); allocs != 0 {
			t.Errorf("%s (%d bytes of wire): %.1f allocations per body with warm pools, want none", tc.name, len(tc.wire), allocs)
		}
	}
}
