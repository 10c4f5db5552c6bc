package decode

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// interesting are the bytes the classes and the UTF-8 check turn on.
var interesting = []byte("{}[]:,\"\\ \t\n\r0123456789-+.eEtrufalsnbdDcCAB/xyz\x00\x01\x1f\x7f\x80\x8f\x90\x9f\xa0\xbf\xc0\xc1\xc2\xdf\xe0\xed\xee\xef\xf0\xf1\xf4\xf5\xff")

// randomBlocks returns 3 lead bytes and nb random blocks.
func randomBlocks(r *rand.Rand, nb int) []byte {
	b := make([]byte, 3+64*nb)
	for i := range b {
		if r.IntN(3) == 0 {
			b[i] = byte(r.Uint32())
		} else {
			b[i] = interesting[r.IntN(len(interesting))]
		}
	}
	return b
}

// compareKernels runs the kernel in use and the twin on b (3 lead bytes
// and whole blocks) and reports the first block where they differ.
func compareKernels(t testing.TB, b []byte) {
	nb := (len(b) - 3) / 64
	if nb == 0 {
		return
	}
	want := make([]blockMasks, nb)
	stage1Generic(b, 3, nb, want)
	for _, k := range stage1Kernels {
		got := make([]blockMasks, nb)
		k.fn(b, 3, nb, got)
		for j := range nb {
			if got[j] != want[j] {
				t.Fatalf("block %d of %q:\n%s kernel %+v\ntwin %+v", j, b[3+64*j-3:3+64*j+64], k.name, got[j], want[j])
			}
		}
	}
}

// TestStage1Twin compares the assembly kernel with the pure-Go twin: every
// byte value at every position, then random blocks.
func TestStage1Twin(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race")
	}
	var names []string
	for _, k := range stage1Kernels {
		names = append(names, k.name)
	}
	t.Logf("stage-1 kernel: %s (compared with the twin: %v)", stage1Kernel, names)
	for c := range 256 {
		for pos := range 67 {
			b := make([]byte, 3+64*2)
			for i := range b {
				b[i] = 'a'
			}
			b[pos] = byte(c)
			compareKernels(t, b)
			// After a lead byte of each length.
			for _, lead := range []byte{0xC3, 0xE2, 0xF0} {
				if pos > 0 {
					b[pos-1] = lead
					compareKernels(t, b)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for range n {
		compareKernels(t, randomBlocks(r, 1+r.IntN(5)))
	}
}

// TestStage1Classes checks the twin's masks against the class
// definitions, byte by byte.
func TestStage1Classes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		b := randomBlocks(r, 1)
		var m [1]blockMasks
		stage1Generic(b, 3, 1, m[:])
		f := [numClasses]uint64{m[0].quote, m[0].bslash, m[0].ws, m[0].opn, m[0].cls, m[0].obj, m[0].colon, m[0].comma,
			m[0].digit, m[0].zero, m[0].minus, m[0].plus, m[0].dot, m[0].expo, m[0].ltr, m[0].lstart,
			m[0].ctrl, m[0].escOK, m[0].ulet, m[0].hex, m[0].hexD, m[0].hex89ab, m[0].hexCF}
		for i, c := range b[3:] {
			for k := range numClasses {
				if (f[k]>>i&1 != 0) != classSet(k, c) {
					t.Fatalf("byte %#x at %d: class %d is %v", c, i, k, f[k]>>i&1)
				}
			}
		}
	}
}

// FuzzStage1 compares the assembly kernel with the twin block by block:
// the three bytes before the first block are the carried UTF-8 state.
func FuzzStage1(f *testing.F) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 8 {
		f.Add(randomBlocks(r, 2))
	}
	f.Add([]byte(`  {"a":"\ud83d\ude00 é 日本","b":[1,-2.5e+3,true,null]}` + "\xf0\x9f\x98\x80\xed\xa0\x80\xc0\xaf"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < 3 {
			return
		}
		// Pad to whole blocks with bytes taken from the input.
		for (len(b)-3)%64 != 0 {
			b = append(b, b[len(b)/2])
		}
		compareKernels(t, b)
	})
}

// fuzzPlainPrefix opens a string in the first block and runs it on with
// plain bytes over many blocks.
var fuzzPlainPrefix = `{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"` + strings.Repeat("Lorem ipsum dolor sit amet, ", 50)

// FuzzSIMD compares the scanner with the SIMD stage (the kernel in use)
// against the scalar scanner alone, whole and in pieces chosen by seed,
// inside an envelope, alone, and inside a long string. Each exec scans
// its input 60 times (three contexts, four scanner settings, whole and
// cut three ways), and the engine minimizes every new interesting input
// before it fuzzes on, with a pass that tries removing every range of
// bytes, quadratic in the input's length: run by hand, pass
// -fuzzminimizetime 5s as fuzz/ci.sh does, or the progress line shows
// 0 execs/s for up to the default 60 s after each new input.
func FuzzSIMD(f *testing.F) {
	f.Add([]byte(`{"a":[1,2,{"b":"c\u00e9"}],"d":true}`), uint64(1))
	f.Add([]byte(`[1,-0.5e+3,"\ud800\udc00",null,false,{"":{}}]`), uint64(2))
	f.Add([]byte(`{"x":"\ud800"}`), uint64(3))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		r := rand.New(rand.NewPCG(seed, 11))
		checkSIMD(t, "input", data, r)
		env := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"p":`), data...), "}}"...)
		checkSIMD(t, "in params", env, r)
		// Inside a string, after a run of plain blocks the stage skips.
		str := append(append([]byte(fuzzPlainPrefix), data...), `"}}`...)
		checkSIMD(t, "after a plain run", str, r)
	})
}

// randomCarry returns a stage-2 carry with random content.
func randomCarry(r *rand.Rand) s2carry {
	bit := func() uint64 { return r.Uint64() & 1 }
	mask := func() uint64 {
		switch r.IntN(3) {
		case 0:
			return 0
		case 1:
			return r.Uint64() & r.Uint64() & r.Uint64()
		}
		return r.Uint64()
	}
	lim := uint64(r.IntN(64))
	return s2carry{
		esc: bit(), inStr: -bit(), key: bit(), numRun: bit(), aftE: bit(), aftDot: bit(),
		pO: bit(), pA: bit(), pK: bit(), pMo: bit(), pMa: bit(), pKC: bit(), pVE: bit(),
		sc: bit(), ex: bit(), sign: bit(), dot: bit(), dig: bit(), rsMi: bit(), iz: bit(), u: mask(), hexD: mask(), hs: mask(),
		ctx: bit(), st: r.Uint64(), rd: uint64(r.IntN(int(lim) + 1)), lim: lim,
	}
}

// compareStage2 runs the stage-2 kernel in use and the twin on the same
// blocks and carry and reports any difference in verdicts or carries.
func compareStage2(t testing.TB, b []byte, c s2carry, lastValid uint64) {
	nb := (len(b) - 3) / 64
	if nb == 0 {
		return
	}
	ms := make([]blockMasks, nb)
	stage1Generic(b, 3, nb, ms)
	ms2 := append([]blockMasks(nil), ms...)
	c1, c2 := c, c
	n1 := stage2Asm(ms, b[3:], &c1, lastValid)
	n2 := stage2Generic(ms2, b[3:], &c2, lastValid)
	if n1 != n2 || c1 != c2 {
		t.Fatalf("stage 2 on %q (carry %+v, last valid %#x):\n%s: %d blocks, carry %+v\ntwin: %d blocks, carry %+v", b, c, lastValid, stage1Kernel, n1, c1, n2, c2)
	}
	for j := range n1 {
		if ms[j] != ms2[j] {
			t.Fatalf("stage 2 block %d of %q (carry %+v):\n%s %+v\ntwin %+v", j, b, c, stage1Kernel, ms[j], ms2[j])
		}
	}
}

// jsonish returns n bytes of JSON-like text: mostly valid tokens, some
// noise, so that stage 2 goes through every branch.
func jsonish(r *rand.Rand, n int) []byte {
	toks := []string{`{`, `}`, `[`, `]`, `:`, `,`, `"a"`, `"k\"e\\y"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud800x"`, `"é日😀"`,
		`0`, `-1`, `12.5`, `-0.5e+3`, `1E9`, `01`, `1.`, `1e`, `-`, `1.2.3`, `1e5e`, `true`, `false`, `null`, `tru`, `nulll`,
		` `, "\n", "\t", `"`, `\`, `x`, "\x01", "\xff"}
	var b []byte
	for len(b) < n {
		b = append(b, toks[r.IntN(len(toks))]...)
	}
	return b[:n]
}

// TestStage2Twin compares the assembly stage 2 with the Go twin on random
// JSON-like blocks with random carried state and partial last blocks.
func TestStage2Twin(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race")
	}
	t.Logf("stage-2 kernel: %s", stage1Kernel)
	r := rand.New(rand.NewPCG(12, 13))
	n := 30000
	if testing.Short() {
		n = 3000
	}
	for i := range n {
		nb := 1 + r.IntN(4)
		var b []byte
		if i%3 == 0 {
			b = randomBlocks(r, nb)
		} else {
			b = jsonish(r, 3+64*nb)
		}
		last := ^uint64(0)
		if r.IntN(4) == 0 {
			last = lowMask(r.IntN(65))
		}
		compareStage2(t, b, randomCarry(r), last)
	}
}

// FuzzStage2 compares the assembly stage 2 with its twin block by block,
// with a carried state drawn from the seed.
func FuzzStage2(f *testing.F) {
	f.Add([]byte(`   {"a":[1,-2.5e+3,true,null,"\ud83d\ude00"],"b":{"c":"é"}}`), uint64(1))
	f.Add([]byte(`[[[[{"k":01,"l":1.e5,"m":tru}]]]]`), uint64(2))
	f.Fuzz(func(t *testing.T, b []byte, seed uint64) {
		if len(b) < 3 {
			return
		}
		for (len(b)-3)%64 != 0 {
			b = append(b, b[len(b)/2])
		}
		r := rand.New(rand.NewPCG(seed, 14))
		last := ^uint64(0)
		if seed&1 != 0 {
			last = lowMask(int(seed>>1) % 65)
		}
		compareStage2(t, b, randomCarry(r), last)
	})
}
