package decode

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMain hands every container to the SIMD stage (threshold 0, and
// with the pure-Go twin where there is no AVX2 kernel: -tags purego,
// GODEBUG=cpu.avx2=off, other architectures) unless benchmarks are being
// run, so that the whole test suite — JSONTestSuite, chunking invariance,
// the contract tables, the allocation guards — runs through it. With
// DECODE_SIMD=off the suite runs on the scalar scanner alone.
func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		simdThreshold = 0
		simdOK = true
	}
	if os.Getenv("DECODE_SIMD") == "off" {
		simdOK = false
	}
	os.Exit(m.Run())
}

// scanResult is everything a scan decides.
type scanResult struct {
	r       uint8
	kind    error
	off     int
	reason  string
	members []member
	top     byte
}

func (a scanResult) String() string {
	return fmt.Sprintf("r=%d kind=%v off=%d reason=%q top=%q members=%v", a.r, a.kind, a.off, a.reason, a.top, a.members)
}

func equalResults(a, b scanResult) bool {
	if a.r != b.r || a.kind != b.kind || a.off != b.off || a.reason != b.reason || a.top != b.top || len(a.members) != len(b.members) {
		return false
	}
	for i := range a.members {
		if a.members[i] != b.members[i] {
			return false
		}
	}
	return true
}

// reusedScanner is the one scanner scanWith runs, reset for every scan
// as a pooled decoder's is: no allocation of its 4 KiB per scan (a fuzz
// exec makes 60), and state a reset failed to clear would show as a
// difference between the runs. scanWith is not safe for concurrent use
// (it also sets simdOK and simdThreshold).
var reusedScanner scanner

// scanWith scans data in the given pieces with the SIMD stage on or off.
func scanWith(data []byte, cuts []int, record, simd bool, maxDepth int) scanResult {
	old, oldT := simdOK, simdThreshold
	simdOK, simdThreshold = simd, 0
	defer func() { simdOK, simdThreshold = old, oldT }()
	s := &reusedScanner
	s.reset(maxDepth, record)
	r := scanMore
	for _, c := range cuts {
		if r = s.run(data[:c], false); r != scanMore {
			break
		}
	}
	if r == scanMore {
		r = s.run(data, true)
	}
	res := scanResult{r: r, top: s.top}
	if r == scanFail {
		res.kind, res.off, res.reason = s.errKind, s.errOff, s.errReason
	}
	if r == scanDone && record {
		res.members = append([]member(nil), s.members...)
	}
	return res
}

// randomCuts returns increasing cut points inside data.
func randomCuts(r *rand.Rand, n int) []int {
	var cuts []int
	for p := 0; p < n; {
		switch r.IntN(4) {
		case 0:
			p += 1 + r.IntN(3)
		case 1:
			p += 1 + r.IntN(70)
		default:
			p += 1 + r.IntN(400)
		}
		if p < n {
			cuts = append(cuts, p)
		}
	}
	return cuts
}

// checkSIMD compares the scanner with and without the SIMD stage, whole
// and under random chunkings.
func checkSIMD(t *testing.T, name string, data []byte, r *rand.Rand) {
	t.Helper()
	for _, record := range []bool{true, false} {
		for _, depth := range []int{DefaultMaxDepth, 3} {
			want := scanWith(data, nil, record, false, depth)
			got := scanWith(data, nil, record, true, depth)
			if !equalResults(want, got) {
				t.Fatalf("%s (record %v, depth %d): SIMD %v\nscalar %v\ninput %q", name, record, depth, got, want, clip(data))
			}
			for range 3 {
				cuts := randomCuts(r, len(data))
				got := scanWith(data, cuts, record, true, depth)
				if !equalResults(want, got) {
					t.Fatalf("%s (record %v, depth %d) cut at %v: SIMD %v\nscalar %v\ninput %q", name, record, depth, cuts, got, want, clip(data))
				}
			}
		}
	}
}

func clip(b []byte) []byte {
	if len(b) > 600 {
		return b[:600]
	}
	return b
}

// corpus reads every JSON file under the shared test data.
func corpus(t *testing.T) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	root := filepath.Join("..", "..", "shared", "testdata")
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() || info.Size() > 2<<20 {
			return nil
		}
		if strings.HasSuffix(p, ".json") || strings.Contains(p, "JSONTestSuite") {
			if b, err := os.ReadFile(p); err == nil {
				out[p] = b
			}
		}
		return nil
	})
	if len(out) == 0 {
		t.Skip("shared test data not found")
	}
	return out
}

// TestSIMDCorpora runs the scanner with and without the SIMD stage over
// every shared JSON file, wrapped in an envelope and alone, whole and in
// random pieces.
func TestSIMDCorpora(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race")
	}
	r := rand.New(rand.NewPCG(1, 2))
	for name, b := range corpus(t) {
		if testing.Short() && len(b) > 64<<10 {
			continue
		}
		checkSIMD(t, name, b, r)
		env := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":`), b...), "}}"...)
		checkSIMD(t, name+" in params", env, r)
		arr := append(append([]byte(`{"jsonrpc":"2.0","method":"m","params":[1, `), b...), "\n]}"...)
		checkSIMD(t, name+" in an array", arr, r)
	}
}

// TestSIMDMutations breaks valid documents one byte at a time (and cuts
// them) and compares the verdicts.
func TestSIMDMutations(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race")
	}
	r := rand.New(rand.NewPCG(3, 4))
	var docs [][]byte
	for name, b := range corpus(t) {
		if strings.Contains(name, "bench") && len(b) < 20000 && len(b) > 100 {
			docs = append(docs, b)
		}
	}
	docs = append(docs, []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[1,-2.5e+3,0,true,false,null,"x\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t",{"b":{}},[],[[]]],"c":"\u0000 é 日本 😀"}}`))
	alphabet := []byte("{}[]:,\"\\ \t\n\r0123456789-+.eEtrufalsn/bu\x00\x1f\x7f\xc2\xa9\xe0\xa0\xed\xf0\xf4\x90\x80\xbf\xff")
	n := 3000
	if testing.Short() {
		n = 500
	}
	for i := range n {
		d := bytes.Clone(docs[i%len(docs)])
		for range 1 + r.IntN(3) {
			p := r.IntN(len(d))
			switch r.IntN(4) {
			case 0:
				d[p] = alphabet[r.IntN(len(alphabet))]
			case 1:
				d = append(d[:p:p], d[p+1:]...)
			case 2:
				d = append(d[:p:p], append([]byte{alphabet[r.IntN(len(alphabet))]}, d[p:]...)...)
			default:
				d = d[:p]
			}
			if len(d) == 0 {
				break
			}
		}
		checkSIMD(t, fmt.Sprintf("mutation %d", i), d, r)
	}
}

// TestValidUTF8Table runs every lead byte against every second byte from
// 0x7f, then continuation and other bytes, inside a string, through both
// scanners (SIMD and scalar) and at offsets where the sequence straddles
// a 64-byte block, against unicode/utf8: the boundaries of strict UTF-8
// (overlong forms, surrogates, past U+10FFFF) are table entries and
// vector compares, which fuzzing is not steered towards.
func TestValidUTF8Table(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race (the plain run and the purego, AVX2-off and scalar passes cover it)")
	}
	old := simdOK
	defer func() { simdOK = old }()
	full := []byte{0x41, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0}
	short := []byte{0x41, 0x80, 0xbf, 0xc0}
	var seq, buf []byte
	for _, simd := range []bool{true, false} {
		simdOK = simd && old
		for _, off := range []int{1, 61, 62, 63} {
			tails := short
			if off == 1 {
				tails = full
			}
			for b0 := 0x80; b0 <= 0xff; b0++ {
				for b1 := 0x7f; b1 <= 0xff; b1++ {
					for _, b2 := range tails {
						for _, b3 := range tails {
							seq = append(seq[:0], byte(b0), byte(b1), b2, b3)
							buf = append(buf[:0], `["`...)
							for range off {
								buf = append(buf, 'a')
							}
							buf = append(buf, seq...)
							buf = append(buf, `aaaaaaaa"]`...)
							if got, want := Valid(buf), utf8.Valid(seq); got != want {
								t.Fatalf("simd %v, offset %d: Valid with %q inside a string = %v, want %v", simd, off, seq, got, want)
							}
						}
					}
				}
			}
		}
	}
}
