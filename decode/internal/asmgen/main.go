// Command asmgen generates decode's stage-1 kernel (stage1_amd64.s and its
// Go declaration) with avo. It lives in a module of its own so that avo is
// never a dependency of decode's users. Run it through go generate in
// decode:
//
//	cd decode && go generate
//
// The kernel turns 64-byte blocks into the 24 bitmasks of decode's
// blockMasks: 23 byte classes found with two nibble lookups (VPSHUFB)
// per table pair, and where the UTF-8 is broken (Keiser and Lemire's
// three-lookup check, plus the bytes that never occur in UTF-8).
package main

import (
	"fmt"
	"sort"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// classes are decode's byte classes, in blockMasks field order; the
// definitions must match classSet in decode/stage1.go (decode's
// TestStage1Twin compares the kernel with the Go twin on every byte).
var classes = []struct {
	name string
	in   func(c byte) bool
}{
	{"quote", func(c byte) bool { return c == '"' }},
	{"bslash", func(c byte) bool { return c == '\\' }},
	{"ws", func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }},
	{"opn", func(c byte) bool { return c == '{' || c == '[' }},
	{"cls", func(c byte) bool { return c == '}' || c == ']' }},
	{"obj", func(c byte) bool { return c == '{' || c == '}' }},
	{"colon", func(c byte) bool { return c == ':' }},
	{"comma", func(c byte) bool { return c == ',' }},
	{"digit", func(c byte) bool { return c >= '0' && c <= '9' }},
	{"zero", func(c byte) bool { return c == '0' }},
	{"minus", func(c byte) bool { return c == '-' }},
	{"plus", func(c byte) bool { return c == '+' }},
	{"dot", func(c byte) bool { return c == '.' }},
	{"expo", func(c byte) bool { return c == 'e' || c == 'E' }},
	{"ltr", func(c byte) bool { return in(c, "aflnrstu") }},
	{"lstart", func(c byte) bool { return in(c, "tfn") }},
	{"ctrl", func(c byte) bool { return c < 0x20 }},
	{"escOK", func(c byte) bool { return in(c, "\"\\/bfnrtu") }},
	{"ulet", func(c byte) bool { return c == 'u' }},
	{"hex", func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }},
	{"hexD", func(c byte) bool { return c == 'd' || c == 'D' }},
	{"hex89ab", func(c byte) bool { return in(c, "89abAB") }},
	{"hexCF", func(c byte) bool { return c >= 'c' && c <= 'f' || c >= 'C' && c <= 'F' }},
}

func in(c byte, set string) bool {
	for i := 0; i < len(set); i++ {
		if set[i] == c {
			return true
		}
	}
	return false
}

// rect is a set of bytes {hi<<4 | lo : hi in his, lo in los}.
type rect struct{ his, los uint16 }

// rects splits class k into rectangles: the high nibbles that share the
// same set of low nibbles.
func rects(k int) []rect {
	byLos := map[uint16]uint16{}
	for hi := 0; hi < 16; hi++ {
		var los uint16
		for lo := 0; lo < 16; lo++ {
			if classes[k].in(byte(hi<<4 | lo)) {
				los |= 1 << lo
			}
		}
		if los != 0 {
			byLos[los] |= 1 << hi
		}
	}
	var out []rect
	for los, his := range byLos {
		out = append(out, rect{his, los})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].his < out[j].his })
	return out
}

// A table pair classifies a byte as lo[c&15] & hi[c>>4]: eight rectangle
// bits per pair.
type pair struct {
	lo, hi [16]byte
	used   int
}

// placement says where class k is: its pair and its bits there.
type placement struct {
	pair int
	bits byte
}

func layout() ([]pair, []placement) {
	var pairs []pair
	place := make([]placement, len(classes))
	for k := range classes {
		rs := rects(k)
		p := -1
		for i := range pairs {
			if pairs[i].used+len(rs) <= 8 {
				p = i
				break
			}
		}
		if p < 0 {
			pairs = append(pairs, pair{})
			p = len(pairs) - 1
		}
		pl := placement{pair: p}
		for _, r := range rs {
			bit := byte(1) << pairs[p].used
			pairs[p].used++
			for n := 0; n < 16; n++ {
				if r.los&(1<<n) != 0 {
					pairs[p].lo[n] |= bit
				}
				if r.his&(1<<n) != 0 {
					pairs[p].hi[n] |= bit
				}
			}
			pl.bits |= bit
		}
		place[k] = pl
	}
	// Check the layout against the definitions, byte by byte.
	for k := range classes {
		pl := place[k]
		for c := 0; c < 256; c++ {
			got := pairs[pl.pair].lo[c&15]&pairs[pl.pair].hi[c>>4]&pl.bits != 0
			if got != classes[k].in(byte(c)) {
				panic(fmt.Sprintf("class %s: byte %#x misclassified", classes[k].name, c))
			}
		}
	}
	return pairs, place
}

// vec declares a 32-byte constant: a 16-byte table repeated in both lanes.
func vec(name string, t [16]byte) Mem {
	m := GLOBL(name, RODATA|NOPTR)
	for lane := 0; lane < 2; lane++ {
		for i := 0; i < 16; i++ {
			DATA(16*lane+i, U8(t[i]))
		}
	}
	return m
}

func splat(name string, b byte) Mem {
	var t [16]byte
	for i := range t {
		t[i] = b
	}
	return vec(name, t)
}

// The UTF-8 tables: decode/stage1.go (utf8B1High, utf8B1Low, utf8B2High).
const (
	tooShort  = 1 << 0
	tooLong   = 1 << 1
	overlong3 = 1 << 2
	tooLarge  = 1 << 3
	surrogate = 1 << 4
	overlong2 = 1 << 5
	tooLarge1 = 1 << 6
	twoConts  = 1 << 7
	carry     = tooShort | tooLong | twoConts
)

var (
	b1High = [16]byte{
		tooLong, tooLong, tooLong, tooLong, tooLong, tooLong, tooLong, tooLong,
		twoConts, twoConts, twoConts, twoConts,
		tooShort | overlong2, tooShort, tooShort | overlong3 | surrogate, tooShort | tooLarge | tooLarge1,
	}
	b1Low = [16]byte{
		carry | overlong3 | overlong2 | tooLarge1, carry | overlong2, carry, carry,
		carry | tooLarge, carry | tooLarge | tooLarge1, carry | tooLarge | tooLarge1, carry | tooLarge | tooLarge1,
		carry | tooLarge | tooLarge1, carry | tooLarge | tooLarge1, carry | tooLarge | tooLarge1, carry | tooLarge | tooLarge1,
		carry | tooLarge | tooLarge1, carry | tooLarge | tooLarge1 | surrogate, carry | tooLarge | tooLarge1, carry | tooLarge | tooLarge1,
	}
	b2High = [16]byte{
		tooShort, tooShort, tooShort, tooShort, tooShort, tooShort, tooShort, tooShort,
		tooLong | overlong2 | twoConts | overlong3 | tooLarge1,
		tooLong | overlong2 | twoConts | overlong3 | tooLarge,
		tooLong | overlong2 | twoConts | surrogate | tooLarge,
		tooLong | overlong2 | twoConts | surrogate | tooLarge,
		tooShort, tooShort, tooShort, tooShort,
	}
)

const (
	blockSize  = 64
	masksSize  = 8 * 27 // sizeof(blockMasks)
	utf8Offset = 8 * 23
)

func main() {
	ConstraintExpr("amd64,!purego")
	pairs, place := layout()

	var loTabs, hiTabs, bitTabs []Mem
	for i, p := range pairs {
		loTabs = append(loTabs, vec(fmt.Sprintf("classLo%d", i), p.lo))
		hiTabs = append(hiTabs, vec(fmt.Sprintf("classHi%d", i), p.hi))
	}
	for k, pl := range place {
		if pl.bits&(pl.bits-1) != 0 {
			bitTabs = append(bitTabs, splat("classBits_"+classes[k].name, pl.bits))
		} else {
			bitTabs = append(bitTabs, Mem{})
		}
	}
	nib := splat("nibbleMask", 0x0F)
	tB1H, tB1L, tB2H := vec("utf8B1High", b1High), vec("utf8B1Low", b1Low), vec("utf8B2High", b2High)
	c60, c70, c80 := splat("utf8Third", 0x60), splat("utf8Fourth", 0x70), splat("utf8High", 0x80)
	cF4, cFE, cC0 := splat("utf8F4", 0xF4), splat("utf8FE", 0xFE), splat("utf8C0", 0xC0)
	utf8 := utf8Check{tB1H, tB1L, tB2H, c60, c70, c80, cF4, cFE, cC0, nib}

	TEXT("stage1AVX2", NOSPLIT, "func(p *byte, nb int, out *uint64)")
	Doc(
		"stage1AVX2 fills out with the blockMasks of the nb 64-byte blocks at p.",
		"It reads p[-3:64*nb]. Generated by decode/internal/asmgen; do not edit.",
	)
	p := Load(Param("p"), GP64())
	n := Load(Param("nb"), GP64())
	out := Load(Param("out"), GP64())
	mask := YMM()
	VMOVDQU(nib, mask)
	zero := YMM()
	VPXOR(zero, zero, zero)

	Label("block")
	for h := 0; h < 2; h++ {
		Comment(fmt.Sprintf("classes, bytes %d to %d", 32*h, 32*h+31))
		v := YMM()
		VMOVDQU(Mem{Base: p, Disp: 32 * h}, v)
		lo, hi := YMM(), YMM()
		VPAND(mask, v, lo)
		VPSRLW(U8(4), v, hi)
		VPAND(mask, hi, hi)
		cls := make([]VecVirtual, len(pairs))
		for i := range pairs {
			a, b := YMM(), YMM()
			VMOVDQU(loTabs[i], a)
			VPSHUFB(lo, a, a)
			VMOVDQU(hiTabs[i], b)
			VPSHUFB(hi, b, b)
			VPAND(a, b, a)
			cls[i] = a
		}
		for k, pl := range place {
			t := YMM()
			r := GP32()
			dst := Mem{Base: out, Disp: 8*k + 4*h}
			if pl.bits&(pl.bits-1) == 0 {
				shift := 7
				for b := pl.bits; b > 1; b >>= 1 {
					shift--
				}
				if shift > 0 {
					VPSLLW(U8(shift), cls[pl.pair], t)
					VPMOVMSKB(t, r)
				} else {
					VPMOVMSKB(cls[pl.pair], r)
				}
			} else {
				VPAND(bitTabs[k], cls[pl.pair], t)
				VPCMPEQB(zero, t, t)
				VPMOVMSKB(t, r)
				NOTL(r)
			}
			MOVL(r, dst)
		}
	}

	Comment("UTF-8: nothing to do when the block and the 3 bytes before it are ASCII")
	{
		a, b := YMM(), YMM()
		VMOVDQU(Mem{Base: p, Disp: -3}, a)
		VPOR(Mem{Base: p}, a, a)
		VMOVDQU(Mem{Base: p, Disp: 32}, b)
		VPOR(a, b, a)
		r := GP32()
		VPMOVMSKB(a, r)
		TESTL(r, r)
		JNZ(LabelRef("utf8"))
		MOVQ(U32(0), Mem{Base: out, Disp: utf8Offset})
		JMP(LabelRef("next"))
	}
	Label("utf8")
	for h := 0; h < 2; h++ {
		Comment(fmt.Sprintf("UTF-8, bytes %d to %d", 32*h, 32*h+31))
		t1 := utf8.errors(p, 32*h, mask)
		VPCMPEQB(zero, t1, t1)
		r := GP32()
		VPMOVMSKB(t1, r)
		NOTL(r)
		MOVL(r, Mem{Base: out, Disp: utf8Offset + 4*h})
	}

	Label("next")
	ADDQ(U32(blockSize), p)
	ADDQ(U32(masksSize), out)
	DECQ(n)
	JNZ(LabelRef("block"))
	VZEROUPPER()
	RET()

	stage1AVX512(pairs, place)
	stage2()
	plain(utf8)
	Generate()
}

// utf8Check holds the constants of the UTF-8 check (Keiser and Lemire's
// three lookups, plus the bytes that never occur in UTF-8).
type utf8Check struct {
	b1High, b1Low, b2High, third, fourth, high, f4, fe, c0, nibble Mem
}

// errors returns a vector whose byte i is not zero where the UTF-8 of the
// 32 bytes at p+disp breaks at byte i, reading from p+disp-3; mask holds
// 0x0F in every byte.
func (u utf8Check) errors(p Register, disp int, mask VecVirtual) VecVirtual {
	v, p1, p2, p3 := YMM(), YMM(), YMM(), YMM()
	VMOVDQU(Mem{Base: p, Disp: disp}, v)
	VMOVDQU(Mem{Base: p, Disp: disp - 1}, p1)
	VMOVDQU(Mem{Base: p, Disp: disp - 2}, p2)
	VMOVDQU(Mem{Base: p, Disp: disp - 3}, p3)
	t1, t2, t3 := YMM(), YMM(), YMM()
	VPSRLW(U8(4), p1, t1)
	VPAND(mask, t1, t1)
	tab := YMM()
	VMOVDQU(u.b1High, tab)
	VPSHUFB(t1, tab, t1)
	VPAND(mask, p1, t2)
	VMOVDQU(u.b1Low, tab)
	VPSHUFB(t2, tab, t2)
	VPSRLW(U8(4), v, t3)
	VPAND(mask, t3, t3)
	VMOVDQU(u.b2High, tab)
	VPSHUFB(t3, tab, t3)
	VPAND(t1, t2, t1)
	VPAND(t1, t3, t1) // special cases
	VPSUBUSB(u.third, p2, p2)
	VPSUBUSB(u.fourth, p3, p3)
	VPOR(p2, p3, p2)
	VPAND(u.high, p2, p2) // must be a third or fourth byte
	VPXOR(p2, t1, t1)
	VPSUBUSB(u.f4, v, t2) // F5..FF
	VPOR(t2, t1, t1)
	VPAND(u.fe, v, t3)
	VPCMPEQB(u.c0, t3, t3) // C0, C1
	VPOR(t3, t1, t1)
	return t1
}
