package decode_test

// Chunking invariance: the verdict (sentinel, code, offset) and the message
// are the same whether a body comes whole (Decode), in any number of pieces
// (Write ... Finish), through any reader (DecodeReader) or compressed
// (DecodeBody), and under any ceiling.

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/rpcedge/rpcedge/decode"
)

// chunkInput is one body to feed in pieces.
type chunkInput struct {
	name string
	body []byte
	opts decode.Options
}

// chunkInputs gathers every test input of this package: the contract
// table, generated bodies, and every corpus that is present.
func chunkInputs(tb testing.TB) []chunkInput {
	var in []chunkInput
	for _, tc := range contractCases() {
		in = append(in, chunkInput{"contract/" + tc.name, []byte(tc.body), tc.opts})
	}
	for i, b := range generatedBodies(99, 600) {
		opts := decode.Options{}
		if i%3 == 1 {
			opts = policyMCP
		}
		in = append(in, chunkInput{fmt.Sprintf("generated/%d", i), b, opts})
	}
	for _, dir := range []string{"jsontestsuite", "json-checker", "nativejson-roundtrip"} {
		files, _ := loadCorpus(tb, dir, "*.json")
		for _, f := range files {
			in = append(in, chunkInput{dir + "/" + f.name, f.data, decode.Options{}})
			// The same text inside a request, so that object-level
			// checks run after every split too.
			wrapped := append([]byte(`{"jsonrpc":"2.0","id":"x","method":"m","params":`), f.data...)
			in = append(in, chunkInput{dir + "/params/" + f.name, append(wrapped, '}'), decode.Options{}})
		}
	}
	if files, ok := loadCorpus(tb, "blns", "blns.json"); ok {
		in = append(in, chunkInput{"blns/blns.json", files[0].data, decode.Options{}})
		// The list as the params of a request: 515 naughty strings in
		// one body.
		body := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"list":`), files[0].data...)
		in = append(in, chunkInput{"blns/params", append(body, '}'), decode.Options{}})
	}
	for _, f := range benchFixtures(tb) {
		in = append(in, chunkInput{"bench/" + f.name, f.data, decode.Options{MaxBytes: 2 * mib}})
	}
	return in
}

// benchFixtures returns the bench fixtures, or nothing when absent.
func benchFixtures(tb testing.TB) []corpusFile {
	var out []corpusFile
	for _, n := range []string{"small.json", "notification.json", "16k.json", "1m.json"} {
		files, ok := loadCorpus(tb, "bench", n)
		if !ok {
			return nil
		}
		out = append(out, files[0])
	}
	return out
}

// ceilingVariants returns opts with MaxBytes set below, at and above
// len(body), and at a few small values.
func ceilingVariants(opts decode.Options, n int) []decode.Options {
	var out []decode.Options
	for _, m := range []int{1, 5, 17, n/2 + 1, n - 1, n, n + 1} {
		if m <= 0 {
			continue
		}
		o := opts
		o.MaxBytes = int64(m)
		out = append(out, o)
	}
	return out
}

// decodeWrites feeds body to d in the pieces ending at the offsets in cuts
// (ascending, each in 1..len(body)-1), then Finishes. It checks that
// Write reports a refusal as soon as the bytes so far decide it, and
// keeps reporting it.
func decodeWrites(tb testing.TB, d *decode.Decoder, body []byte, cuts []int, oneShot verdict) verdict {
	tb.Helper()
	var m decode.Message
	d.Reset()
	var first *decode.Error
	prev := 0
	maxBytes := d.Options().MaxBytes
	if maxBytes == 0 {
		maxBytes = decode.DefaultMaxBytes
	}
	for k := 0; k <= len(cuts); k++ {
		end := len(body)
		if k < len(cuts) {
			end = cuts[k]
		}
		piece := body[prev:end]
		n, err := d.Write(piece)
		if err == nil {
			if n != len(piece) {
				tb.Errorf("Write(%d bytes) = %d, nil", len(piece), n)
			}
			// Nothing decided yet: the one-shot refusal, if streaming
			// decided it, lies beyond these bytes.
			decided := oneShot.Err == decode.ErrTooLarge && int64(end) > maxBytes ||
				isStreamErr(oneShot.Err) && oneShot.Offset < int64(end) && oneShot.Offset < maxBytes
			if decided {
				tb.Errorf("after %d bytes Write has not reported %v, at byte %d", end, oneShot, oneShot.Offset)
				return verdict{}
			}
		} else {
			e, ok := err.(*decode.Error)
			if !ok {
				tb.Fatalf("Write: %v is not a *decode.Error", err)
			}
			if first == nil {
				c := *e
				first = &c
				if e.Offset >= int64(end) && e.Err != decode.ErrTooLarge {
					tb.Errorf("Write of bytes [%d,%d) reported %v past them", prev, end, err)
				}
			} else if *e != *first {
				tb.Errorf("Write after a refusal: %v, first %v", err, first)
			}
		}
		prev = end
	}
	err := d.Finish(&m)
	v := verdictOf(tb, &m, err)
	if first != nil && (v.stream() != verdict{Err: first.Err, Code: first.Code, Offset: first.Offset}) {
		tb.Errorf("Finish = %v after Write reported %v", v, first)
	}
	return v
}

func isStreamErr(err error) bool {
	return err == decode.ErrSyntax || err == decode.ErrBatch || err == decode.ErrDepth || err == decode.ErrTooLarge
}

// randomCuts returns up to k distinct random cut points of a body of n
// bytes, ascending.
func randomCuts(r *rand.Rand, n, k int) []int {
	if n < 2 {
		return nil
	}
	cuts := make([]int, k)
	for i := range cuts {
		cuts[i] = 1 + r.IntN(n-1)
	}
	slices.Sort(cuts)
	return slices.Compact(cuts)
}

// everyByte returns the cuts that feed a body of n bytes one byte at a
// time.
func everyByte(n int) []int {
	cuts := make([]int, 0, n)
	for i := 1; i < n; i++ {
		cuts = append(cuts, i)
	}
	return cuts
}

// randomReader returns pieces of random sizes, sometimes none.
type randomReader struct {
	r   *rand.Rand
	src []byte
}

func (rr *randomReader) Read(p []byte) (int, error) {
	if len(rr.src) == 0 {
		return 0, io.EOF
	}
	n := rr.r.IntN(min(len(p), 3000) + 1)
	n = min(n, len(rr.src))
	copy(p, rr.src[:n])
	rr.src = rr.src[n:]
	return n, nil
}

// readers returns the readers every body is read through.
func readers(body []byte, seed uint64) map[string]io.Reader {
	return map[string]io.Reader{
		"bytes":            bytes.NewReader(body),
		"OneByteReader":    iotest.OneByteReader(bytes.NewReader(body)),
		"HalfReader":       iotest.HalfReader(bytes.NewReader(body)),
		"DataErrReader":    iotest.DataErrReader(bytes.NewReader(body)),
		"DataErr(OneByte)": iotest.DataErrReader(iotest.OneByteReader(bytes.NewReader(body))),
		"random":           &randomReader{rand.New(rand.NewPCG(seed, 1)), body},
	}
}

func gzipped(tb testing.TB, body []byte) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write(body); err != nil {
		tb.Fatal(err)
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

var gzipEncoding = func() decode.Encoding {
	enc, err := decode.ParseEncoding([]byte("gzip"))
	if err != nil {
		panic(err)
	}
	return enc
}()

// feedPlan says which ways of feeding a body checkChunkings tries.
type feedPlan struct {
	everySplit bool   // every two-piece split, not a sample
	byteWise   bool   // one byte at a time
	readers    bool   // DecodeReader through every odd reader
	wire       []byte // the body gzipped, for DecodeBody; nil: skip
}

// checkChunkings feeds in.body in the ways plan asks for and compares each
// verdict with Decode's (and Decode's with the model).
func checkChunkings(t *testing.T, in chunkInput, plan feedPlan, seed uint64) {
	t.Helper()
	d := newDecoder(t, in.opts)
	body := in.body
	want := decodeOnce(t, d, body)
	if ref := refDecode(t, body, in.opts); !sameVerdict(want, ref) {
		t.Errorf("%s: Decode = %v, model %v", in.name, want, ref)
	}
	check := func(got verdict, how string, args ...any) bool {
		if got != want {
			t.Errorf("%s (%d bytes, %+v) %s:\n got %v\nwant %v", in.name, len(body), in.opts, fmt.Sprintf(how, args...), got, want)
			return false
		}
		return true
	}
	r := rand.New(rand.NewPCG(seed, 2))
	var cut [1]int
	split := func(i int) bool {
		if i <= 0 || i >= len(body) {
			return true
		}
		cut[0] = i
		return check(decodeWrites(t, d, body, cut[:], want), "split at %d", i)
	}
	// Two pieces, at every split point or at a sample of them.
	if plan.everySplit {
		for i := 1; i < len(body); i++ {
			if !split(i) {
				break
			}
		}
	} else {
		for range 16 {
			if !split(r.IntN(len(body) + 1)) {
				break
			}
		}
		// Splits around the verdict's offset, where resuming matters.
		for i := want.Offset - 12; i <= want.Offset+2 && want.Offset > 0; i++ {
			split(int(i))
		}
	}
	if plan.byteWise {
		check(decodeWrites(t, d, body, everyByte(len(body)), want), "byte at a time")
	}
	// Random pieces.
	for _, k := range []int{2, 3, 8, 40, 200, len(body) / 97} {
		cuts := randomCuts(r, len(body), k)
		check(decodeWrites(t, d, body, cuts, want), "%d random cuts %.200v", len(cuts), cuts)
	}
	// A Write of nothing changes nothing.
	var m decode.Message
	d.Reset()
	d.Write(nil)
	d.Write(body)
	d.Write([]byte{})
	check(verdictOf(t, &m, d.Finish(&m)), "empty writes around the body")
	check(verdictOf(t, &m, d.DecodeReader(bytes.NewReader(body), &m)), "DecodeReader")
	if plan.readers {
		for name, rd := range readers(body, seed) {
			check(verdictOf(t, &m, d.DecodeReader(rd, &m)), "DecodeReader %s", name)
		}
		check(verdictOf(t, &m, d.DecodeBody(iotest.HalfReader(bytes.NewReader(body)), decode.Encoding{}, &m)), "DecodeBody identity")
	}
	maxBytes := in.opts.MaxBytes
	if maxBytes == 0 {
		maxBytes = decode.DefaultMaxBytes
	}
	if plan.wire != nil && int64(len(plan.wire)) <= maxBytes {
		check(verdictOf(t, &m, d.DecodeBody(iotest.OneByteReader(bytes.NewReader(plan.wire)), gzipEncoding, &m)), "DecodeBody gzip")
	}
}

func TestChunking(t *testing.T) {
	if decode.RaceEnabled {
		t.Skip("a pure computation in one goroutine: run without -race (the plain run and the purego, AVX2-off and scalar passes cover it)")
	}
	for i, in := range chunkInputs(t) {
		n := len(in.body)
		plan := feedPlan{
			everySplit: n <= 2<<10,
			byteWise:   n <= 64<<10 || !testing.Short(),
			readers:    n <= 64<<10 || !testing.Short(),
		}
		if testing.Short() {
			// -short (and -race): every split point only for small
			// bodies, no compression of the large ones.
			plan.everySplit = n <= 512
		}
		if n <= 64<<10 || !testing.Short() {
			plan.wire = gzipped(t, in.body)
		}
		checkChunkings(t, in, plan, uint64(i))
		if t.Failed() {
			return // one input's failures are enough to read
		}
	}
}

// TestChunkingCeilings runs every input again under ceilings below, at and
// above its length.
func TestChunkingCeilings(t *testing.T) {
	for i, in := range chunkInputs(t) {
		n := len(in.body)
		if testing.Short() && (n > 64<<10 || i%4 != 0) {
			continue // -short (and -race): a quarter of the inputs
		}
		plan := feedPlan{
			everySplit: n <= 512 && !testing.Short(),
			byteWise:   n <= 16<<10,
			readers:    n <= 64<<10,
		}
		if n <= 64<<10 {
			plan.wire = gzipped(t, in.body)
		}
		for _, o := range ceilingVariants(in.opts, n) {
			checkChunkings(t, chunkInput{in.name, in.body, o}, plan, uint64(i))
		}
		if t.Failed() {
			return
		}
	}
}

// FuzzDecode checks, for any input, that Decode agrees with the reference
// model and that a random two- or three-piece feeding and a one-byte
// reader reach the same verdict. Its corpus is seeded from the contract
// table.
func FuzzDecode(f *testing.F) {
	for _, tc := range contractCases() {
		if len(tc.body) <= 4<<10 {
			f.Add([]byte(tc.body), uint16(tc.opts.MaxBytes), uint16(tc.opts.MaxDepth), tc.opts.IDs == decode.IDsMCP, uint16(len(tc.body)/2), uint16(len(tc.body)/3))
		}
	}
	for _, b := range generatedBodies(1, 50) {
		f.Add(b, uint16(0), uint16(0), false, uint16(len(b)/2), uint16(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, maxBytes, maxDepth uint16, mcp bool, cut1, cut2 uint16) {
		opts := decode.Options{MaxBytes: int64(maxBytes), MaxDepth: int(maxDepth)}
		if mcp {
			opts.IDs = decode.IDsMCP
		}
		d := newDecoder(t, opts)
		want := checkRef(t, d, body, opts)
		var cuts []int
		for _, c := range []int{int(cut1), int(cut2)} {
			if c > 0 && c < len(body) {
				cuts = append(cuts, c)
			}
		}
		slices.Sort(cuts)
		if len(cuts) == 2 && cuts[0] == cuts[1] {
			cuts = cuts[:1]
		}
		if got := decodeWrites(t, d, body, cuts, want); got != want {
			t.Errorf("cuts %v: %v, Decode %v", cuts, got, want)
		}
		var m decode.Message
		if got := verdictOf(t, &m, d.DecodeReader(iotest.OneByteReader(bytes.NewReader(body)), &m)); got != want {
			t.Errorf("DecodeReader: %v, Decode %v", got, want)
		}
		checkValid(t, body)
	})
}
