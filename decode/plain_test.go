package decode

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// plainByte reports whether c is a byte of a plain block that needs no
// escape algebra: 0x20 to 0x7F but the quote and the backslash.
func plainByte(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }

// plainRef is the reference for the plain-run kernels: it reads the
// blocks as string content one byte at a time (the UTF-8 by stage 1's
// definition, utf8Err and utf8BadByte, from buf[start-3]), with no escape
// pending at the first, and returns how many from the first are plain and whether
// an escape is pending after them, as count<<1 | pending (see
// plainGeneric).
func plainRef(buf []byte, start, nb int) int {
	escaped := false
	pending := func(j int) int {
		if escaped {
			return j<<1 | 1
		}
		return j << 1
	}
	for j := range nb {
		was := escaped
		for k := start + 64*j; k < start+64*j+64; k++ {
			c := buf[k]
			bad := false
			switch {
			case c < 0x20 || utf8Err(buf[k-3], buf[k-2], buf[k-1], c) || utf8BadByte(c):
				bad = true
			case escaped:
				bad = !strings.ContainsRune(`"\/bfnrt`, rune(c))
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				bad = true
			}
			if bad {
				escaped = was
				return pending(j)
			}
		}
	}
	return pending(nb)
}

// randomPlain returns n plain bytes, letters and punctuation mixed.
func randomPlain(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		c := byte(0x20 + r.IntN(0x60))
		for !plainByte(c) {
			c = byte(0x20 + r.IntN(0x60))
		}
		b[i] = c
	}
	return b
}

// plainEscapesList are the escapes a plain block may hold.
var plainEscapesList = []string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`}

// randomText returns n bytes of valid string content: plain bytes with,
// one in every about `every` bytes, a one-letter escape (runs of escaped
// backslashes and quotes among them) or a letter of two to four bytes
// of UTF-8.
func randomText(r *rand.Rand, n, every int) []byte {
	b := make([]byte, 0, n)
	for len(b) < n {
		if len(b)+4 <= n && r.IntN(every) == 0 {
			if r.IntN(2) == 0 {
				b = append(b, plainEscapesList[r.IntN(len(plainEscapesList))]...)
			} else {
				b = append(b, []string{"é", "ß", "日", "本", "😀", "\u00a0"}[r.IntN(6)]...)
			}
			continue
		}
		b = append(b, randomPlain(r, 1)...)
	}
	return b
}

// TestPlainTwin compares the plain-run kernel in use and plainGeneric
// with plainRef: every byte value at every position of each of three
// plain blocks, every pair of a backslash and a byte after it, then
// random blocks of text with escapes, UTF-8, backslash runs and letters
// cut at block ends, quotes and other bytes.
func TestPlainTwin(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race (the plain run and the purego, AVX2-off and scalar passes cover it)")
	}
	r := rand.New(rand.NewPCG(21, 22))
	check := func(b []byte, start, nb int) {
		t.Helper()
		want := plainRef(b, start, nb)
		if got, g := plainAsm(b, start, nb), plainGeneric(b, start, nb); got != want || g != want {
			t.Fatalf("%d blocks at %d of %q: kernel %d, twin %d, reference %d", nb, start, b[start:start+64*nb], got, g, want)
		}
	}
	base := randomPlain(r, 3+3*64)
	for j := range 3 {
		for pos := range 64 {
			for c := range 256 {
				b := bytes.Clone(base)
				b[3+64*j+pos] = byte(c)
				for nb := 0; nb <= 3; nb++ {
					check(b, 3, nb)
				}
				if pos < 63 {
					b[3+64*j+pos] = '\\'
					b[3+64*j+pos+1] = byte(c)
					check(b, 3, 3)
				}
			}
		}
	}
	alphabet := []byte("ab \"\\/bfnrtu0\x00\x1f\x7f\x80\xbf\xc0\xc2\xe0\xed\xf0\xf4\xf5\xff")
	for i := range 40000 {
		nb := 1 + r.IntN(12)
		start := 3 + r.IntN(64)
		b := append(randomText(r, start, 1+r.IntN(20)), randomText(r, 64*nb+r.IntN(64), 1+r.IntN(20))...)
		switch i % 4 {
		case 0: // a byte of any kind
			b[start+r.IntN(64*nb)] = alphabet[r.IntN(len(alphabet))]
		case 1: // a run of backslashes
			p := start + r.IntN(64*nb)
			for k := range 1 + r.IntN(6) {
				if p+k < len(b) {
					b[p+k] = '\\'
				}
			}
		case 2: // a run of backslashes at a block's end
			p := start + 64*r.IntN(nb) + 64
			for k := range 1 + r.IntN(4) {
				b[p-1-k] = '\\'
			}
		case 3: // a letter cut by a block's end, whole or broken
			p := start + 64*r.IntN(nb) + 64 - 1 - r.IntN(3)
			copy(b[p:], []string{"é", "日", "😀", "\xe6\x97", "\xf0\x9f\x98", "\xc3"}[r.IntN(6)])
		}
		check(b, start, nb)
	}
}

// plainCarry returns a random carry that plainReady accepts.
func plainCarry(r *rand.Rand) s2carry {
	c := randomCarry(r)
	c.inStr = ^uint64(0)
	c.esc = 0
	c.u &= 1<<60 - 1
	c.hs &= 1<<58 - 1
	c.numRun, c.aftE, c.aftDot = 0, 0, 0
	c.pO, c.pA, c.pK, c.pMo, c.pMa, c.pKC, c.pVE = 0, 0, 0, 0, 0, 0, 0
	c.sc, c.ex, c.sign, c.dot, c.dig, c.rsMi, c.iz = 0, 0, 0, 0, 0, 0, 0
	return c
}

// TestPlainStage2 checks what the plain-run skip assumes: after three
// ASCII bytes, stage 1 and stage 2 (both kernels) find nothing wrong in
// plain blocks (escapes among them) entered with a carry plainReady
// accepts, and leave the carry as
// it was but for the \u masks, cleared. And that the carry stage 2 leaves after
// a block ending inside a string past its escapes is one plainReady
// accepts, so that the skip is taken.
func TestPlainStage2(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	kernels := []struct {
		name string
		fn   func([]blockMasks, []byte, *s2carry, uint64) int
	}{{"twin", stage2Generic}, {stage1Kernel, stage2Asm}}
	for i := range 20000 {
		nb := 1 + r.IntN(3)
		b := append([]byte("   "), randomText(r, 64*nb, 1+i%30)...)
		ref := plainRef(b, 3, nb)
		if ref>>1 != nb {
			t.Fatalf("randomText gave a block that is not plain: %q", b)
		}
		c := plainCarry(r)
		if !c.plainReady() {
			t.Fatalf("plainCarry gave %+v", c)
		}
		ms := make([]blockMasks, nb)
		stage1(b, 3, nb, ms)
		for j, m := range ms {
			if m.ctrl|m.utf8 != 0 {
				t.Fatalf("stage 1 on plain block %d of %q: %+v", j, b, m)
			}
		}
		for _, k := range kernels {
			got := c
			ms2 := append([]blockMasks(nil), ms...)
			n := k.fn(ms2, b[3:], &got, ^uint64(0))
			want := c
			want.esc = uint64(ref & 1)
			want.u, want.hexD, want.hs = 0, 0, 0
			if n != nb || got != want {
				t.Fatalf("%s stage 2 on plain %q: %d of %d blocks, carry\n%+v, want\n%+v", k.name, b, n, nb, got, want)
			}
			for j, m := range ms2 {
				if m.err != 0 || m.lits != 0 || m.exit != -1 {
					t.Fatalf("%s stage 2 on plain block %d: err %#x lits %#x exit %d", k.name, j, m.err, m.lits, m.exit)
				}
			}
		}
		// A block that ends inside a string, past any escape: stage 2
		// leaves a carry the skip takes, after numbers, literals, keys,
		// escapes, \u and surrogate pairs.
		pre := plainPrefixes[r.IntN(len(plainPrefixes))]
		blk := append([]byte("   "+pre), randomPlain(r, 64-len(pre))...)
		m := make([]blockMasks, 1)
		stage1Generic(blk, 3, 1, m)
		cc := s2carry{ctx: 1, st: 1, lim: 63, pO: 1} // after '{', as simdEnter leaves it
		stage2Generic(m, blk[3:], &cc, ^uint64(0))
		if m[0].err != 0 || !cc.plainReady() {
			t.Fatalf("after %q: error %#x, carry %+v", blk[3:], m[0].err, cc)
		}
	}
}

// plainPrefixes are valid object contents that leave a string open.
var plainPrefixes = []string{
	`"a":"`, `"k":[1,-2.5e+3,true,null,{"a":"`, `"a\n\u00e9\ud83d\ude00":0,"b":"x\"`, `"n":1e9, "s": "\u0041\\`,
	`"x":{"y":[false,"é"]},"z":"日本😀`, `"t":  "`,
}

// plainEvents are what can break a run of plain bytes inside a string:
// its end, escapes (\u ones cut at every point), UTF-8 right and wrong,
// control characters.
var plainEvents = []string{
	`"`, `","b":"`, `"}`, `"},"x":1`, `\"`, `\\`, `\n`, `\/`, `\\\`, `\\\\\"`, `\\"`, `\u00e9`, `\uD83D\uDE00`, `\ud83d\ude00`,
	`\ud83d`, `\ud83dx`, `\ude00`, `\u12`, `\u12g4`, `\x`, `\`, "\x00", "\x1f", "\n", "\t", "\x7f",
	"é", "日本", "😀", "\xc3", "\xe2\x82", "\xf0\x9f\x98", "\xff", "\xc0\xaf", "\xed\xa0\x80", "\x80",
}

// plainMessage returns an envelope whose params hold a string of n1
// bytes of text (plain bytes, and escapes none, some or many), an event
// and n2 more.
func plainMessage(r *rand.Rand, n1 int, ev string, n2 int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"name":"echo","text":"`)
	every := []int{1 << 30, 40, 5}[r.IntN(3)] // no escape, some, many
	b.Write(randomText(r, n1, every))
	b.WriteString(ev)
	b.Write(randomText(r, n2, every))
	b.WriteString(`"}}`)
	return b.Bytes()
}

// TestSIMDPlainRuns compares the scanner with and without the SIMD stage
// on strings whose plain runs the skip passes over, broken by every event
// at every offset around block boundaries, whole and in pieces; and
// checks that the skip was taken, and that the comparison catches a skip
// that passes a quote.
func TestSIMDPlainRuns(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race")
	}
	r := rand.New(rand.NewPCG(25, 26))
	old := plain
	defer func() { plain = old }()
	skipped := 0
	plain = func(buf []byte, start, nb int) int {
		k := old(buf, start, nb)
		skipped += k >> 1
		return k
	}
	var lens []int
	for l := 0; l < 140; l += 7 {
		lens = append(lens, l)
	}
	for _, base := range []int{1024, 1536, 4096} {
		for d := -70; d <= 70; d++ {
			if d%11 == 0 || d > -5 && d < 5 {
				lens = append(lens, base+d)
			}
		}
	}
	for _, ev := range plainEvents {
		for _, n1 := range lens {
			n2 := []int{0, 3, 64, 700, 2000}[r.IntN(5)]
			checkSIMD(t, fmt.Sprintf("%d plain, %q, %d plain", n1, ev, n2), plainMessage(r, n1, ev, n2), r)
		}
	}
	if skipped == 0 {
		t.Fatal("the plain-run skip was never taken")
	}
	t.Logf("%d blocks skipped", skipped)

	// A broken kernel that takes a quote for plain must be caught.
	plain = func(buf []byte, start, nb int) int {
		for j := range nb {
			for _, c := range buf[start+64*j : start+64*j+64] {
				if !plainByte(c) && c != '"' {
					return j << 1
				}
			}
		}
		return nb << 1
	}
	// (A wrong skip shows only where it turns a verdict: one that makes
	// the stage find an error falls back to the scalar scanner.) The
	// string opens in the first block: the first skip starts inside it
	// and passes the quote that ends it.
	data := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"` + strings.Repeat("x", 2000) + `"` + strings.Repeat("y", 100) + `"}}`)
	if equalResults(scanWith(data, nil, true, false, DefaultMaxDepth), scanWith(data, nil, true, true, DefaultMaxDepth)) {
		t.Fatal("a skip over a quote went unnoticed")
	}
}
