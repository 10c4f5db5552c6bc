package fuzz

// FuzzChunking: the verdict of a body (sentinel, code, offset, reason, id
// rule; for a valid message its kind, id, method and params) is the one a
// one-shot Decode gives, however the body is cut into pieces — Write then
// Finish, DecodeReader over a reader that returns the pieces, DecodeBody
// over a gzip stream of the body and over a deflate, zstd or two-coding
// stream chosen from the input — and with a ceiling drawn from the input
// the crossing is refused at the same byte. A refusal decided while the
// body streams in (a batch, a syntax error, depth, the ceiling) is
// reported by the Write that brings the deciding byte, not later. The
// compressed stream cut short at a byte chosen from the input gets the
// plain verdict when it fails inside the decoded prefix, else the broken
// stream's refusal (checkCompressed).

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"

	kgzip "github.com/klauspost/compress/gzip"
	kzlib "github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
	"github.com/rpcedge/rpcedge/decode"
)

// cutSizes turns the fuzz input's cut bytes into piece sizes covering n
// bytes: each byte is a size of 0 to 63 (0: an empty Write), used in
// turn; no cuts means one piece. At most maxEmptyRun empty pieces come in
// a row: DecodeReader, like bufio, gives up with io.ErrNoProgress on a
// reader that returns nothing 100 times in a row (its documented limit,
// which TestDecodeReaderNoProgress in decode holds it to).
func cutSizes(n int, cuts []byte) []int {
	if len(cuts) == 0 {
		return []int{n}
	}
	const maxEmptyRun = 99
	var sizes []int
	progress := false
	empty := 0
	for i, total := 0, 0; total < n; i++ {
		if i%len(cuts) == 0 {
			if i > 0 && !progress {
				cuts = []byte{1} // only empty pieces: go one byte at a time
			}
			progress = false
		}
		s := min(int(cuts[i%len(cuts)]%64), n-total)
		if s > 0 {
			empty = 0
		} else if empty++; empty > maxEmptyRun {
			s, empty = 1, 0
		}
		sizes = append(sizes, s)
		total += s
		progress = progress || s > 0
	}
	return sizes
}

// pieceReader returns its pieces one Read at a time (a piece larger than
// the buffer over several Reads); an empty piece is a Read of 0, nil.
type pieceReader struct {
	data  []byte
	sizes []int
	n     int // bytes handed out
}

func (r *pieceReader) Read(p []byte) (int, error) {
	for len(r.sizes) > 0 {
		s := r.sizes[0]
		if s == 0 {
			r.sizes = r.sizes[1:]
			return 0, nil
		}
		k := min(s, len(p))
		copy(p, r.data[r.n:r.n+k])
		r.n += k
		if k == s {
			r.sizes = r.sizes[1:]
		} else {
			r.sizes[0] -= k
		}
		return k, nil
	}
	return 0, io.EOF
}

// verdict is what a decode produced, copied.
type verdict struct {
	err                    error // the sentinel, nil for a valid message
	code                   int
	off                    int64
	reason                 string
	echo                   bool
	kind                   decode.Kind
	id, method, params     string
	idType                 decode.IDType
	paramsType             decode.ParamsType
	answerID               string
	notDecodeError, hasErr bool
}

func verdictOf(m *decode.Message, err error) verdict {
	v := verdict{
		kind: m.Kind, id: string(m.ID), method: string(m.Method), params: string(m.Params),
		idType: m.IDType, paramsType: m.ParamsType, answerID: string(m.AnswerID()), hasErr: err != nil,
	}
	var de *decode.Error
	switch {
	case err == nil:
	case errors.As(err, &de):
		v.err, v.code, v.off, v.reason, v.echo = de.Err, de.Code, de.Offset, de.Reason, de.EchoID
	default:
		v.notDecodeError = true
	}
	return v
}

// streaming reports whether the refusal is decided while the body
// arrives, before it is complete.
func (v verdict) streaming() bool {
	switch v.err {
	case decode.ErrBatch, decode.ErrSyntax, decode.ErrDepth, decode.ErrTooLarge:
		return true
	}
	return false
}

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return w
}}

func gzipped(b []byte) []byte {
	var buf bytes.Buffer
	w := gzipWriters.Get().(*gzip.Writer)
	w.Reset(&buf)
	w.Write(b)
	w.Close()
	gzipWriters.Put(w)
	return buf.Bytes()
}

func FuzzChunking(f *testing.F) {
	cutPatterns := [][]byte{nil, {1}, {0, 1}, {7, 3}, {63}, {2, 0, 5, 11, 13}}
	for i, b := range contractBodies() {
		if len(b) > bigSeed && fuzzing() {
			continue
		}
		f.Add([]byte(b), cutPatterns[i%len(cutPatterns)], uint16(0), i%2 == 0)
		f.Add([]byte(b), cutPatterns[(i+1)%len(cutPatterns)], uint16(i+1), i%3 == 0)
	}
	for i, b := range corpusTexts(f) {
		if len(b) > bigSeed && fuzzing() {
			continue
		}
		f.Add(b, cutPatterns[i%len(cutPatterns)], uint16(i%5), false)
	}
	var d decode.Decoder
	var m decode.Message
	f.Fuzz(func(t *testing.T, in, cuts []byte, ceil uint16, mcpIDs bool) {
		opts := decode.Options{}
		if mcpIDs {
			opts.IDs = decode.IDsMCP
		}
		if ceil != 0 {
			// A ceiling near the body's length, so that it is crossed
			// often: 1 to len(in)+8.
			opts.MaxBytes = 1 + int64(ceil)%int64(len(in)+8)
		}
		max := opts.MaxBytes
		if max == 0 {
			max = decode.DefaultMaxBytes
		}
		if err := d.SetOptions(opts); err != nil {
			t.Fatal(err)
		}
		want := verdictOf(&m, d.Decode(in, &m))
		if want.notDecodeError || (want.hasErr && want.err == nil) {
			t.Fatalf("Decode(%q) returned %v, not a *decode.Error", in, want)
		}
		sizes := cutSizes(len(in), cuts)

		// Write ... Finish.
		d.Reset()
		var first error
		firstAt := -1 // index of the piece whose Write refused first
		pos := 0
		for i, s := range sizes {
			n, err := d.Write(in[pos : pos+s])
			switch {
			case first == nil && err != nil:
				first, firstAt = err, i
				if n > s {
					t.Fatalf("Write returned n=%d for %d bytes", n, s)
				}
			case first != nil && (err == nil || n != 0):
				t.Fatalf("Write after a refusal returned n=%d, %v; want 0 and the refusal again", n, err)
			case first != nil && err.Error() != first.Error():
				t.Fatalf("Write after a refusal returned %v, then %v", first, err)
			case first == nil && n != s:
				t.Fatalf("Write accepted %d of %d bytes without refusing", n, s)
			}
			pos += s
		}
		got := verdictOf(&m, d.Finish(&m))
		if got != want {
			t.Fatalf("input %q, cuts %v, options %+v:\n\tDecode      %+v\n\tWrite/Finish %+v", in, sizes, opts, want, got)
		}
		if first != nil && verdictOf(&m, first).off != want.off {
			t.Fatalf("input %q, cuts %v: Write refused with %v, Decode with %+v", in, sizes, first, want)
		}
		// The refusal comes with the piece that brings the deciding
		// byte: the byte at the offset (for the ceiling, byte max+1 at
		// offset max); a body that ends too early is decided by Finish.
		decidedAt := -1
		if want.streaming() && want.off < int64(len(in)) {
			for i, end := 0, 0; i < len(sizes); i++ {
				end += sizes[i]
				if int64(end) > want.off {
					decidedAt = i
					break
				}
			}
		}
		if firstAt != decidedAt {
			t.Fatalf("input %q, cuts %v, options %+v: verdict %+v decided by piece %d, first refused by Write of piece %d", in, sizes, opts, want, decidedAt, firstAt)
		}

		// DecodeReader over the same pieces.
		r := &pieceReader{data: in, sizes: append([]int(nil), sizes...)}
		got = verdictOf(&m, d.DecodeReader(r, &m))
		if got != want {
			t.Fatalf("input %q, cuts %v, options %+v:\n\tDecode       %+v\n\tDecodeReader %+v", in, sizes, opts, want, got)
		}
		if int64(r.n) > max+1 {
			t.Fatalf("DecodeReader read %d bytes with a ceiling of %d", r.n, max)
		}
		if decidedAt >= 0 {
			end := 0
			for _, s := range sizes[:decidedAt+1] {
				end += s
			}
			if r.n > end {
				t.Fatalf("input %q, cuts %v: DecodeReader read %d bytes, past the piece (ending at %d) that decided %+v", in, sizes, r.n, end, want)
			}
		}

		// DecodeBody over a gzip stream of the body: the same verdict on
		// the decoded bytes, as long as the wire bytes fit the ceiling.
		if z := gzipped(in); int64(len(z)) <= max {
			enc, _ := decode.ParseEncoding([]byte("gzip"))
			zr := &pieceReader{data: z, sizes: cutSizes(len(z), cuts)}
			got = verdictOf(&m, d.DecodeBody(zr, enc, &m))
			if got.err != want.err || got.code != want.code || got.off != want.off || got.echo != want.echo ||
				got.kind != want.kind || got.id != want.id || got.method != want.method || got.params != want.params {
				t.Fatalf("input %q, options %+v:\n\tDecode             %+v\n\tDecodeBody (gzip) %+v", in, opts, want, got)
			}
		}

		// DecodeBody over deflate, zstd or two stacked codings, chosen
		// from the input, whole and cut short (checkCompressed).
		checkCompressed(t, &d, &m, in, cuts, max, want)

		// The ceiling, against a decoder without it: the first max
		// bytes decide as they would in a longer body.
		if int64(len(in)) > max {
			if err := d.SetOptions(decode.Options{IDs: opts.IDs, MaxBytes: int64(len(in)) + 1}); err != nil {
				t.Fatal(err)
			}
			whole := verdictOf(&m, d.Decode(in, &m))
			if want.err == decode.ErrTooLarge {
				if want.off != max {
					t.Fatalf("input %q: ErrTooLarge at %d with a ceiling of %d", in, want.off, max)
				}
				if whole.streaming() && whole.err != decode.ErrTooLarge && whole.off < max {
					t.Fatalf("input %q, ceiling %d: refused as too large, but without the ceiling %+v comes first", in, max, whole)
				}
			} else if whole.err != want.err || whole.off != want.off || whole.code != want.code {
				t.Fatalf("input %q, ceiling %d: %+v, but without the ceiling %+v", in, max, want, whole)
			}
		}
	})
}

// chunkCodings are the Content-Encoding values checkCompressed draws from
// (gzip alone is checked on every input).
var chunkCodings = []string{"deflate", "zstd", "gzip, deflate", "deflate, zstd", "zstd, gzip", "zstd, zstd"}

var (
	zlibWriters = sync.Pool{New: func() any {
		w, _ := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
		return w
	}}
	zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(1<<20), zstd.WithEncoderLevel(zstd.SpeedFastest))
)

// layers applies the codings of header to b in order and returns every
// layer, the wire bytes last.
func layers(header string, b []byte) [][]byte {
	out := [][]byte{b}
	for _, c := range codingsOf(header) {
		switch c {
		case "gzip":
			b = gzipped(b)
		case "deflate":
			var buf bytes.Buffer
			w := zlibWriters.Get().(*zlib.Writer)
			w.Reset(&buf)
			w.Write(b)
			w.Close()
			zlibWriters.Put(w)
			b = buf.Bytes()
		case "zstd":
			b = zstdEncoder.EncodeAll(b, nil)
		}
		out = append(out, b)
	}
	return out
}

// short quotes b, cut to its first 120 bytes.
func short(b []byte) string {
	if len(b) <= 120 {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%q… (%d bytes)", b[:120], len(b))
}

// cutBody is a decode.BodyReader for checkCompressed (one per process:
// it holds pooled decompressors between bodies).
var cutBody decode.BodyReader

// checkCompressed compresses in with codings chosen from the input and
// decodes it with DecodeBody, when every layer fits the ceiling max.
// Whole, the verdict is want's, as for gzip. Cut short at a byte k, also
// chosen from the input, the stream is broken (the reference decoders of
// decompression_test.go fail on it) and:
//
//   - decode.BodyReader refuses it, ErrCorrupt / -32700 (or ErrTooLarge /
//     -32600 at the ceiling), at the offset of the bytes it yielded, and
//     those bytes are a prefix of in: the decoded prefix;
//   - DecodeBody's verdict is want's when want is a failure in byte order
//     met inside the decoded prefix (the deciding byte was decoded before
//     the stream broke), else that refusal of the stream, id null.
//
// How much of a broken stream a decompressor hands out before it fails
// is its own (klauspost's flate, which decode uses, keeps back bytes Go's
// compress/flate flushes; decode's zstd stage hands out a frame's last
// block before the checksum failure klauspost reports first), so the
// prefix is the one BodyReader yields, not the reference's.
func checkCompressed(t *testing.T, d *decode.Decoder, m *decode.Message, in, cuts []byte, max int64, want verdict) {
	t.Helper()
	h := uint64(len(in))
	for _, c := range cuts {
		h = h*131 + uint64(c)
	}
	header := chunkCodings[h%uint64(len(chunkCodings))]
	h /= uint64(len(chunkCodings))
	ls := layers(header, in)
	for _, l := range ls[1:] {
		if int64(len(l)) > max {
			return
		}
	}
	z := ls[len(ls)-1]
	enc, err := decode.ParseEncoding([]byte(header))
	if err != nil {
		t.Fatal(err)
	}
	same := func(got verdict) bool {
		return got.err == want.err && got.code == want.code && got.off == want.off && got.echo == want.echo &&
			got.kind == want.kind && got.id == want.id && got.method == want.method && got.params == want.params
	}
	got := verdictOf(m, d.DecodeBody(&pieceReader{data: z, sizes: cutSizes(len(z), cuts)}, enc, m))
	if !same(got) {
		t.Fatalf("input %s, max %d:\n\tDecode           %+v\n\tDecodeBody (%s) %+v", short(in), max, want, header, got)
	}
	if len(z) < 2 {
		return
	}
	k := 1 + int(h%uint64(len(z)-1))
	cut := z[:k]
	where := fmt.Sprintf("input %s, max %d, %s stream cut at %d of %d", short(in), max, header, k, len(z))
	if _, broken := refPrefix(header, cut, int64(len(in))+1); !broken {
		t.Fatalf("%s: the reference decodes it", where)
	}

	// The decoded prefix.
	if err := cutBody.Reset(&pieceReader{data: cut, sizes: cutSizes(len(cut), cuts)}, enc, max); err != nil {
		t.Fatal(err)
	}
	var prefix []byte
	buf := make([]byte, 4096)
	for {
		n, err := cutBody.Read(buf)
		prefix = append(prefix, buf[:n]...)
		if err != nil {
			break
		}
	}
	var stream verdict
	{
		var sm decode.Message
		_, err := cutBody.Read(buf[:1])
		stream = verdictOf(&sm, err)
	}
	cutBody.Close()
	switch {
	case stream.err == decode.ErrCorrupt && stream.code == decode.CodeParseError:
	case stream.err == decode.ErrTooLarge && stream.code == decode.CodeInvalidRequest:
	default:
		t.Fatalf("%s: BodyReader ends with %+v, want a broken stream", where, stream)
	}
	if stream.off != int64(len(prefix)) || !bytes.HasPrefix(in, prefix) {
		t.Fatalf("%s: BodyReader yields %d bytes (a prefix of the body: %v), then %+v", where, len(prefix), bytes.HasPrefix(in, prefix), stream)
	}
	if lib := libPrefix(header, cut); len(prefix) < min(len(lib), int(max)) {
		t.Fatalf("%s: BodyReader yields %d bytes before the break, the decompressors %d", where, len(prefix), len(lib))
	}

	got = verdictOf(m, d.DecodeBody(&pieceReader{data: cut, sizes: cutSizes(len(cut), cuts)}, enc, m))
	if want.streaming() && want.off < int64(len(prefix)) {
		if !same(got) {
			t.Fatalf("%s, %d bytes decoded:\n\tDecode     %+v\n\tDecodeBody %+v", where, len(prefix), want, got)
		}
		return
	}
	if got.err != stream.err || got.code != stream.code || got.off != stream.off || got.echo || got.kind != 0 {
		t.Fatalf("%s, %d bytes decoded (Decode: %+v):\n\tBodyReader %+v\n\tDecodeBody %+v", where, len(prefix), want, stream, got)
	}
}

// libPrefix undoes the codings of header on a stream cut short with the
// readers of klauspost/compress, which decode wraps, stage after stage,
// each read to its first failure: how much of the body the
// decompressors themselves give before they meet the break.
func libPrefix(header string, wire []byte) []byte {
	cs := codingsOf(header)
	out := wire
	for i := len(cs) - 1; i >= 0; i-- {
		src := bytes.NewReader(out)
		var r io.Reader
		var err error
		switch cs[i] {
		case "gzip":
			r, err = kgzip.NewReader(src)
		case "deflate":
			r, err = kzlib.NewReader(src)
		case "zstd":
			err = refZstd.Reset(src)
			r = refZstd
		}
		if err != nil {
			return nil
		}
		out, _ = io.ReadAll(r)
		if cs[i] == "zstd" {
			refZstd.Reset(nil)
		}
	}
	return out
}

// refPrefix undoes the codings of header on a stream cut short with the
// reference decoders (decompression_test.go), stage after stage, each on
// what the stage before gave up to its failure: the decoded prefix, and
// whether a stage failed.
func refPrefix(header string, wire []byte, limit int64) (prefix []byte, broken bool) {
	cs := codingsOf(header)
	prefix = wire
	for i := len(cs) - 1; i >= 0; i-- {
		out, err, _ := refStage(cs[i], prefix, limit)
		broken = broken || err != nil
		prefix = out
	}
	return prefix, broken
}
