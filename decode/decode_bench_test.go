package decode_test

// Benchmarks on the shared fixtures (testdata/bench), with their ids and
// text varied across iterations so that no fast path can key on the exact
// bytes, and a floor twin (utf8.Valid on the same inputs) so that ratios
// can be read from one run:
//
//	go test ./decode -run '^$' -bench 'Decode|Valid' -benchmem

import (
	"bytes"
	"math/rand/v2"
	"strconv"
	"testing"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/decode"
)

// benchVariants is how many versions of each fixture a benchmark cycles
// through (a power of two).
const benchVariants = 64

// benchSet is one fixture and its variants.
type benchSet struct {
	name     string
	opts     decode.Options
	variants [][]byte
	avg      int64 // mean length, for SetBytes
}

// benchSets loads the fixtures and makes their variants, or skips.
func benchSets(b *testing.B) []benchSet {
	b.Helper()
	fixtures := benchFixtures(b)
	if fixtures == nil {
		b.Skipf("bench fixtures not found in %s/bench: the shared test data is not checked out beside this repository", testdataDir)
	}
	var sets []benchSet
	for _, f := range fixtures {
		name := f.name[:len(f.name)-len(".json")]
		opts := decode.Options{}
		if len(f.data) > mib/2 {
			opts.MaxBytes = 2 * mib
		}
		vs := makeVariants(b, f.data, opts, uint64(len(f.data)))
		var total int64
		for _, v := range vs {
			total += int64(len(v))
		}
		sets = append(sets, benchSet{name, opts, vs, total / int64(len(vs))})
	}
	return sets
}

// makeVariants returns benchVariants versions of body: the id replaced by
// ids of other types and lengths, and a few letters of the strings
// changed. Every variant decodes to the same kind of message, id type
// and params type as body, so the benchmark measures the same work.
func makeVariants(tb testing.TB, body []byte, opts decode.Options, seed uint64) [][]byte {
	d := newDecoder(tb, opts)
	var m decode.Message
	if err := d.Decode(body, &m); err != nil {
		tb.Fatalf("fixture: %v", err)
	}
	kind, idType, paramsType := m.Kind, m.IDType, m.ParamsType
	// Where the id is, to replace it.
	idAt, idLen := -1, len(m.ID)
	if m.ID != nil {
		idAt = bytes.Index(body, append([]byte(`"id":`), m.ID...)) + len(`"id":`)
	}
	r := rand.New(rand.NewPCG(seed, 42))
	out := [][]byte{body}
	for tries := 0; len(out) < benchVariants; tries++ {
		if tries > 100*benchVariants {
			tb.Fatalf("could not make %d variants", benchVariants)
		}
		v := bytes.Clone(body)
		if idAt >= 0 {
			var id []byte
			if idType == decode.IDString || r.IntN(2) == 0 {
				id = []byte(`"req-` + strconv.FormatUint(r.Uint64()>>r.IntN(60), 36))
				if r.IntN(3) == 0 {
					id = append(id, `-\u00e9`...)
				}
				id = append(id, '"')
			} else {
				id = strconv.AppendUint(nil, r.Uint64()>>r.IntN(63), 10)
			}
			v = append(v[:idAt:idAt], append(id, body[idAt+idLen:]...)...)
		}
		// Change a few letters inside strings, away from escapes.
		letters := stringLetters(v)
		for range 1 + len(v)/512 {
			if len(letters) > 0 {
				v[letters[r.IntN(len(letters))]] = byte('a' + r.IntN(26))
			}
		}
		var mv decode.Message
		if err := d.Decode(v, &mv); err != nil || mv.Kind != kind || mv.ParamsType != paramsType || len(mv.Method) != len(m.Method) ||
			(mv.IDType != idType && !(idType == decode.IDInteger || idType == decode.IDString)) {
			continue // a letter of a name or a literal changed: not the same work
		}
		out = append(out, v)
	}
	return out
}

// stringLetters returns the offsets of the lower-case ASCII letters inside
// the strings of a valid JSON text, escapes excepted.
func stringLetters(b []byte) []int {
	var at []int
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\':
			if b[i+1] == 'u' {
				i += 5
			} else {
				i++
			}
		case c >= 'a' && c <= 'z':
			at = append(at, i)
		}
	}
	return at
}

func BenchmarkDecode(b *testing.B) {
	for _, s := range benchSets(b) {
		b.Run(s.name, func(b *testing.B) {
			d := newDecoder(b, s.opts)
			var m decode.Message
			b.SetBytes(s.avg)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := d.Decode(s.variants[i&(benchVariants-1)], &m); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkDecodeStream is BenchmarkDecode fed in 4 KiB pieces.
func BenchmarkDecodeStream(b *testing.B) {
	for _, s := range benchSets(b) {
		b.Run(s.name, func(b *testing.B) {
			d := newDecoder(b, s.opts)
			var m decode.Message
			b.SetBytes(s.avg)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				body := s.variants[i&(benchVariants-1)]
				d.Reset()
				for len(body) > 0 {
					n := min(4<<10, len(body))
					if _, err := d.Write(body[:n]); err != nil {
						b.Fatal(err)
					}
					body = body[n:]
				}
				if err := d.Finish(&m); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkValid is the validity check alone on the same inputs.
func BenchmarkValid(b *testing.B) {
	for _, s := range benchSets(b) {
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(s.avg)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if !decode.Valid(s.variants[i&(benchVariants-1)]) {
					b.Fatal("not valid")
				}
				i++
			}
		})
	}
}

// BenchmarkUTF8Valid is the floor: utf8.Valid on the same inputs.
func BenchmarkUTF8Valid(b *testing.B) {
	for _, s := range benchSets(b) {
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(s.avg)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if !utf8.Valid(s.variants[i&(benchVariants-1)]) {
					b.Fatal("not valid")
				}
				i++
			}
		})
	}
}

// BenchmarkDecodeReader is BenchmarkDecode through DecodeReader over a
// bytes.Reader (the decoder's buffer is reused across bodies).
func BenchmarkDecodeReader(b *testing.B) {
	for _, s := range benchSets(b) {
		b.Run(s.name, func(b *testing.B) {
			d := newDecoder(b, s.opts)
			var m decode.Message
			var r bytes.Reader
			b.SetBytes(s.avg)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Reset(s.variants[i&(benchVariants-1)])
				if err := d.DecodeReader(&r, &m); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkDecodeBody is BenchmarkDecodeReader through DecodeBody with the
// identity encoding, as fastserver calls it for an uncompressed body.
func BenchmarkDecodeBody(b *testing.B) {
	for _, s := range benchSets(b) {
		b.Run(s.name, func(b *testing.B) {
			d := newDecoder(b, s.opts)
			var m decode.Message
			var r bytes.Reader
			var identity decode.Encoding
			b.SetBytes(s.avg)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				r.Reset(s.variants[i&(benchVariants-1)])
				if err := d.DecodeBody(&r, identity, &m); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkFramer reads an NDJSON stream of the fixture's variants, one
// per line and cycled without end, through a Framer, and reports messages
// per second.
func BenchmarkFramer(b *testing.B) {
	for _, s := range benchSets(b) {
		if s.avg > 64<<10 {
			continue // one line per message: 1m is over the Framer's default ceiling
		}
		b.Run(s.name, func(b *testing.B) {
			var stream []byte
			for _, v := range s.variants {
				stream = append(append(stream, v...), '\n')
			}
			var m decode.Message
			f, err := decode.NewFramer(&loopReader{b: stream}, s.opts)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(s.avg)
			b.ReportAllocs()
			for b.Loop() {
				if err := f.Next(&m); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// loopReader reads b over and over, never reaching io.EOF.
type loopReader struct {
	b   []byte
	off int
}

func (r *loopReader) Read(p []byte) (int, error) {
	n := copy(p, r.b[r.off:])
	r.off += n
	if r.off == len(r.b) {
		r.off = 0
	}
	return n, nil
}
