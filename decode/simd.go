package decode

// NOTE: stage 2 of the SIMD scanner.
//
// The scalar scanner (scan.go) is the reference and keeps the envelope:
// depth 0 and the members of the top-level object. When it opens a
// container deep enough (inside params for a Decoder, at the top for
// Valid) with enough bytes ahead, it hands the container to this stage,
// which validates 64-byte blocks numbered from the start of the message
// with bitmask algebra over stage 1's masks (stage2AVX2 in assembly, with
// stage2Generic below as its twin and reference):
//
//   - strings: odd backslash runs, real quotes, a prefix XOR for the
//     in-string mask; escapes, \u digits and surrogate pairs, control
//     characters and UTF-8 (stage 1) are checked for every byte;
//   - grammar: for every token start, the class of the token before it
//     (across whitespace) must allow it; keys are the strings after '{'
//     or after ',' in an object, and a key must be followed by ':';
//   - numbers and literals: masks for the number grammar, a byte compare
//     for each true, false and null;
//   - nesting: a walk over the brackets alone keeps a 64-level stack in a
//     register and yields the object/array context of every byte.
//
// Every check of byte i looks only at bytes 0..i, so a block that is not
// yet complete (the end of a Write) is checked against its bytes so far
// without committing anything, and blocks are the same however the body
// was split. Carries (in string, odd backslash, the class of the last
// token, number fills, a literal cut at the block end, a pending
// surrogate) live in s2carry.
//
// The stage never decides a failure itself. When a block shows anything
// wrong, or something it does not handle (nesting deeper than 64 levels
// past the entry, or the depth limit), the scanner goes back to the state
// it had when it handed the container over and the scalar code rescans
// from there to the end of the message: verdicts, codes and offsets are
// the scalar scanner's, byte for byte. When the container closes, the
// scalar scanner takes over again at its closing bracket.

import (
	"encoding/binary"
	"math/bits"
)

// simdBatch is how many blocks stage 1 processes per call.
const simdBatch = 16

// simdThreshold is the fewest bytes ahead (in the buffer, after the
// container's opening bracket) for which the scanner hands a container to
// the SIMD stage. Entering costs about two blocks of work (the entry block
// and the partial last block are staged and checked apart): measured in
// instructions per Decode (valgrind, BenchmarkThreshold), the SIMD path
// costs 2.25× the scalar scanner's at 64 bytes, 1.14× at 512, 1.05× at
// 1 KiB and 0.93× from 2 KiB, and it runs at a higher IPC (1.2–1.3× the
// scalar scanner's speed on 1m at the same instruction count), so it
// takes over from 1 KiB. Tests lower it to 0 so that every container
// takes the SIMD path.
var simdThreshold = 1024

// s2carry is what stage 2 carries from one block to the next. The
// assembly kernel reads and writes it by field offset: every field is a
// uint64 and the order is fixed (see decode/internal/asmgen).
type s2carry struct {
	esc    uint64 // 1: the block's first byte is escaped
	inStr  uint64 // ^0: the block starts inside a string
	key    uint64 // carry of the key-string fill
	numRun uint64 // carry of the number-run fill
	aftE   uint64 // carry of the after-exponent fill
	aftDot uint64 // carry of the after-dot fill

	// The class of the last non-whitespace byte before the block (bit 0).
	pO, pA, pK, pMo, pMa, pKC, pVE uint64

	// The previous block's last byte (bit 0) in the classes that checks
	// look back one byte for, and its masks for the \u checks that look
	// back further.
	sc, ex, sign, dot, dig, rsMi, iz uint64
	u, hexD, hs                      uint64

	ctx uint64 // 1: the innermost open container is an object
	st  uint64 // container types, innermost in bit 0
	rd  uint64 // depth relative to the entry container
	lim uint64 // deepest relative depth handled
}

// simdState is the scanner's SIMD stage.
type simdState struct {
	active bool
	off    bool // the stage gave up on this message: scalar to the end

	// The scalar state when the container was handed over: the checkpoint
	// the scalar code rescans from.
	entryPos   int
	entryState uint8
	entryDepth int
	lit        int  // start of a literal whose check waits for more bytes, or -1
	retry      bool // the plain-run skip is tried again after plainResume blocks

	next int // offset of the next block
	from int // first byte of the block at next to check (entry block)
	c    s2carry

	// Scratch copies for checking a partial block without committing it.
	tc   s2carry
	tlit int

	out   [simdBatch]blockMasks
	stage [96]byte // a staged block at 32, with the 32 bytes before it
}

// plainResume is how many blocks the stages look at after a container is
// handed over and after a block that ended a run of plain blocks, before
// the plain-run skip is tried again (otherwise it is tried once a batch:
// a document of short strings keeps whole batches).
const plainResume = 4

// stage1 is the kernel in use: the assembly or its pure-Go twin.
var stage1 = stage1Generic

// simdOK says whether the scanner uses the SIMD stage at all: where the
// assembly kernel runs (amd64 with AVX2). The pure-Go twin gives the same
// verdicts but is slower than the scalar scanner (BenchmarkPaths: about a
// tenth of its speed on 1m), so without the kernel the scalar scanner
// does the work; tests turn the stage on with the twin to check it.
var simdOK = false

// lowMask returns the bits below n (0 <= n <= 64).
func lowMask(n int) uint64 {
	if n >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(n) - 1
}

// simdEnter hands the container just opened at buf[i-1] to the SIMD
// stage. The scanner's state is that after the opening bracket.
func (s *scanner) simdEnter(i, depth int, obj bool) {
	st := &s.simd
	st.active = true
	st.entryPos = i
	st.entryDepth = depth
	st.entryState = sArrFirst
	var t uint64
	if obj {
		st.entryState = sObjFirst
		t = 1
	}
	st.next = i &^ 63
	st.from = i
	st.lit = -1
	st.retry = true
	st.c = s2carry{ctx: t, st: t, lim: uint64(min(63, s.maxDepth-depth))}
	if obj {
		st.c.pO = 1
	} else {
		st.c.pA = 1
	}
}

// simd result codes.
const (
	simdMore   = iota // every byte so far is valid; feed more
	simdExit          // the container closes at s.pos: the scalar code goes on
	simdGiveUp        // the scalar code rescans from the checkpoint
)

// simdRun continues the SIMD stage over buf.
func (s *scanner) simdRun(buf []byte, final bool) uint8 {
	st := &s.simd
	n := len(buf)
	// The entry block: bytes before the container are blanked.
	if st.from > st.next {
		end := min(st.next+64, n)
		if end < st.next+64 {
			return s.simdTail(buf, final)
		}
		st.stageBlock(buf, st.next, st.from, end)
		stage1(st.stage[:], 32, 1, st.out[:1])
		if r, done := s.simdBlocks(buf, st.stage[32:], 1, &st.c, ^uint64(0), &st.lit); done {
			return r
		}
		st.from = st.next
	}
	for st.next+64 <= n {
		nb := min((n-st.next)>>6, simdBatch)
		if st.c.plainReady() && st.lit < 0 && st.next >= 64 {
			// Inside a string with nothing pending: the blocks of plain
			// bytes ahead are skipped (see plainReady).
			if r := plain(buf, st.next, (n-st.next)>>6); r > 1 {
				st.next += 64 * (r >> 1)
				st.c.esc = uint64(r & 1)
				st.c.u, st.c.hexD, st.c.hs = 0, 0, 0
				st.retry = true
				continue
			}
		}
		if st.retry {
			// A long string's run of plain blocks may resume soon after
			// what broke it, or begin soon after the container opens: the
			// stages look at a few blocks before the skip is tried again.
			nb = min(nb, plainResume)
			st.retry = false
		}
		stage1(buf, st.next, nb, st.out[:nb])
		if r, done := s.simdBlocks(buf, buf[st.next:st.next+64*nb], nb, &st.c, ^uint64(0), &st.lit); done {
			return r
		}
	}
	st.from = st.next
	return s.simdTail(buf, final)
}

// simdBlocks runs stage 2 over the nb blocks in st.out from st.next
// (their bytes in data), checks the literals stage 2 left, and moves
// st.next past them unless it reaches a verdict (the container closes, or
// something is wrong).
func (s *scanner) simdBlocks(buf, data []byte, nb int, c *s2carry, lastValid uint64, lit *int) (uint8, bool) {
	st := &s.simd
	done := stage2(st.out[:nb], data, c, lastValid)
	for j := range done {
		m := &st.out[j]
		base := st.next + 64*j
		if m.err != 0 {
			return s.simdFail(), true
		}
		// Literals stage 2 left (near the block's end or the end of the
		// bytes so far): a byte compare each, and one cut at the block's
		// end waits for the next block.
		if *lit >= 0 {
			bad, ok := litBad(buf, *lit)
			if bad {
				return s.simdFail(), true
			}
			if ok {
				*lit = -1
			}
		}
		for l := m.lits; l != 0; l &= l - 1 {
			p := base + bits.TrailingZeros64(l)
			bad, ok := litBad(buf, p)
			if bad {
				return s.simdFail(), true
			}
			if !ok {
				*lit = p
			}
		}
		if m.exit >= 0 {
			st.active = false
			s.pos = base + int(m.exit)
			s.state = sAfter
			s.depth = st.entryDepth
			return simdExit, true
		}
	}
	st.next += 64 * nb
	return 0, false
}

// simdTail checks the partial block at the end of buf without committing
// it: its bytes are checked again, with the same carries, once the block
// is complete.
func (s *scanner) simdTail(buf []byte, final bool) uint8 {
	st := &s.simd
	n := len(buf)
	if st.next < n {
		st.stageBlock(buf, st.next, st.from, n)
		stage1(st.stage[:], 32, 1, st.out[:1])
		st.tc, st.tlit = st.c, st.lit
		next := st.next
		r, done := s.simdBlocks(buf, st.stage[32:], 1, &st.tc, lowMask(n-st.next), &st.tlit)
		st.next = next
		if done {
			return r
		}
	}
	if final {
		// The message ends inside the container: the scalar code says
		// where and why.
		return s.simdFail()
	}
	s.pos = n
	return simdMore
}

// simdFail goes back to the checkpoint; the scalar code takes it from
// there to the end of the message.
func (s *scanner) simdFail() uint8 {
	st := &s.simd
	st.active = false
	st.off = true
	s.pos = st.entryPos
	s.state = st.entryState
	s.depth = st.entryDepth
	return simdGiveUp
}

// stageBlock copies buf[from:to] of the block at base into the stage,
// with spaces for the bytes before from and after to, and the 32 bytes
// before the block (spaces if from > base).
func (st *simdState) stageBlock(buf []byte, base, from, to int) {
	g := &st.stage
	for i := range g {
		g[i] = ' '
	}
	if from == base {
		lo := max(base-32, 0)
		copy(g[32-(base-lo):32], buf[lo:base])
	}
	copy(g[32+from-base:], buf[from:to])
}

// litFalse is "false" as the low five bytes of a little-endian word.
const litFalse = 'f' | 'a'<<8 | 'l'<<16 | 's'<<24 | 'e'<<32

// literal checks.
var scByte = func() (t [256]bool) {
	for c := range 256 {
		ct := classTab[c]
		t[c] = ct&(1<<cDigit|1<<cMinus|1<<cPlus|1<<cDot|1<<cExpo|1<<cLtr) != 0
	}
	return
}()

// litBad checks the literal starting at buf[s] against the bytes present
// (a literal cut by the end of buf is checked as far as it goes). It
// reports whether the literal is wrong and whether it could be checked
// to its end (including the byte after it).
func litBad(buf []byte, s int) (bad, done bool) {
	lit := "null"
	switch buf[s] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	}
	n := len(buf)
	end := s + len(lit)
	if end < n {
		return string(buf[s:end]) != lit || scByte[buf[end]], true
	}
	return string(buf[s:n]) != lit[:n-s], false
}

// prefixXor returns the prefix XOR of x: bit i is the parity of bits 0..i.
func prefixXor(x uint64) uint64 {
	x ^= x << 1
	x ^= x << 2
	x ^= x << 4
	x ^= x << 8
	x ^= x << 16
	x ^= x << 32
	return x
}

const (
	evenBits = 0x5555555555555555
	oddBits  = ^uint64(evenBits)
)

// stage2 is the stage-2 kernel in use: the assembly or its twin.
var stage2 = stage2Generic

// stage2Generic runs stage 2 over the blocks of ms, whose stage-1 masks
// are filled in and whose bytes are in data, and sets their err, lits and
// exit; lastValid says which bytes of the last block are present. It
// stops after the first block with an error or an exit, and returns how
// many blocks it processed.
func stage2Generic(ms []blockMasks, data []byte, c *s2carry, lastValid uint64) int {
	for j := range ms {
		valid := ^uint64(0)
		if j == len(ms)-1 {
			valid = lastValid
		}
		m := &ms[j]
		stage2Block(m, data[64*j:64*j+64], c, valid)
		if m.err != 0 || m.exit >= 0 {
			return j + 1
		}
	}
	return len(ms)
}

// stage2Block is stage 2 for one block of bytes blk.
func stage2Block(m *blockMasks, blk []byte, c *s2carry, valid uint64) {
	// Escapes: esc marks the bytes that follow an odd run of backslashes.
	var esc uint64
	esc, c.esc = escapes(m.bslash, c.esc)
	rq := m.quote &^ esc
	x := prefixXor(rq) ^ c.inStr
	c.inStr = -(x >> 63)
	oq := rq & x
	cq := rq &^ x
	content := x &^ rq
	out := ^(x | rq)

	var e uint64
	// Bytes that are wrong wherever they are.
	e |= m.utf8 | m.ctrl&content
	e |= esc &^ m.escOK
	allowed := m.ws | m.opn | m.cls | m.colon | m.comma | m.digit | m.minus | m.plus | m.dot | m.expo | m.ltr | m.quote
	e |= out &^ allowed
	// \u escapes: four hex digits, surrogates in pairs.
	u := esc & m.ulet
	if u|c.u != 0 {
		need := u<<1 | c.u>>63 | u<<2 | c.u>>62 | u<<3 | c.u>>61 | u<<4 | c.u>>60
		e |= need &^ m.hex
		dAt := (u<<1 | c.u>>63) & m.hexD                // 'd' right after the u
		at2 := (dAt<<1 | c.hexD>>63) & (u<<2 | c.u>>62) // second digit, after "ud"
		hs := at2 & m.hex89ab
		ls := at2 & m.hexCF
		// After a high surrogate's second digit: two more digits, then
		// '\', 'u', 'd' and a digit in c-f, each checked where it falls.
		e |= (hs<<3|c.hs>>61)&^m.bslash | (hs<<4|c.hs>>60)&^u | (hs<<5|c.hs>>59)&^m.hexD
		want := hs<<6 | c.hs>>58
		e |= want&^m.hexCF | ls&^want
		c.hexD = dAt
		c.hs = hs
	} else {
		c.hexD, c.hs = 0, 0
	}
	c.u = u

	// Classes outside strings.
	w := m.ws & out
	opn := m.opn & out
	cls := m.cls & out
	colon := m.colon & out
	comma := m.comma & out
	sc := (m.digit | m.minus | m.plus | m.dot | m.expo | m.ltr) & out

	// Nesting: walk the brackets. st keeps the container types, innermost
	// in bit 0; the select below avoids a branch on open or close.
	exit := -1
	cur := c.ctx
	ctx := -cur
	st, rd, lim := c.st, int(c.rd), int(c.lim)
	for br := (opn | cls) & valid; br != 0; br &= br - 1 {
		b := uint(bits.TrailingZeros64(br)) & 63
		o := opn >> b & 1
		stO := st<<1 | m.obj>>b&1
		stC := st >> 1
		st = stC ^ (stO^stC)&-o
		rd += int(o<<1) - 1
		if uint(rd) > uint(lim) {
			if rd > 0 {
				// Deeper than the stage handles.
				m.err, m.lits, m.exit = ^uint64(0), 0, -1
				return
			}
			exit = int(b)
			valid &= lowMask(exit + 1)
			break
		}
		nc := st & 1
		ctx ^= -(nc ^ cur) & (^uint64(0) << b << 1)
		cur = nc
	}
	c.ctx, c.st, c.rd = cur, st, uint64(rd)

	// Grammar.
	rs := sc &^ (sc<<1 | c.sc)
	vs := oq | opn | rs
	ts := vs | cls | colon | comma
	o := opn & m.obj
	a := opn &^ m.obj
	mo := comma & ctx
	ma := comma &^ ctx
	s1 := o<<1 | c.pO
	s2 := a<<1 | c.pA
	s3 := colon<<1 | c.pK
	s4 := mo<<1 | c.pMo
	s5 := ma<<1 | c.pMa
	if w != 0 {
		s1, s2, s3, s4, s5 = through(s1, w), through(s2, w), through(s3, w), through(s4, w), through(s5, w)
	}
	ko := oq & (s1 | s4)
	sum, carry := bits.Add64(x, ko, c.key)
	c.key = carry
	kc := sum &^ x
	ve := cq&^kc | sc | cls
	s6 := kc<<1 | c.pKC
	s7 := ve<<1 | c.pVE
	if w != 0 {
		s6, s7 = through(s6, w), through(s7, w)
	}
	e |= (s1&^(oq|cls&m.obj) | s2&^(vs|cls&^m.obj) | s3&^vs | s4&^oq | s5&^vs | s6&^colon | s7&^(comma|cls)) & ts
	e |= cls & (m.obj ^ ctx)
	// The class of the last non-whitespace byte, for the next block.
	if w != ^uint64(0) {
		last := uint(63 - bits.LeadingZeros64(^w))
		c.pO, c.pA, c.pK, c.pMo, c.pMa = o>>last&1, a>>last&1, colon>>last&1, mo>>last&1, ma>>last&1
		c.pKC, c.pVE = kc>>last&1, ve>>last&1
	}

	// Numbers and literals (no branch: the assembly computes the same).
	{
		d := m.digit & out
		mi := m.minus & out
		pl := m.plus & out
		dot := m.dot & out
		lstart := m.lstart & out
		e |= rs &^ (d | mi | lstart)
		sum, carry = bits.Add64(sc, rs&(d|mi), c.numRun)
		c.numRun = carry
		nr := sc &^ sum
		e |= nr & m.ltr
		ex := m.expo & nr
		exPrev := ex<<1 | c.ex
		sign := mi | pl
		e |= mi &^ (rs | exPrev)
		e |= pl &^ exPrev
		e |= (sign<<1 | c.sign) &^ d
		e |= (dot<<1 | c.dot) &^ d
		dPrev := d<<1 | c.dig
		e |= dot &^ dPrev
		e |= ex &^ dPrev
		e |= exPrev &^ (d | sign)
		rsMi := rs & mi
		iz := (rs | rsMi<<1 | c.rsMi) & m.zero & out
		e |= (iz<<1 | c.iz) & d
		sum, carry = bits.Add64(sc, exPrev&sc, c.aftE)
		c.aftE = carry
		e |= (dot | ex) & sc &^ sum
		sum, carry = bits.Add64(sc, (dot<<1|c.dot)&sc, c.aftDot)
		c.aftDot = carry
		e |= dot & sc &^ sum
		c.ex, c.sign, c.dot, c.dig, c.rsMi, c.iz = ex>>63, sign>>63, dot>>63, d>>63, rsMi>>63, iz>>63

		// Literals: true, false and null compared in place when they and
		// the byte after them are in the block and present; the others
		// are left in lits for the driver.
		var left uint64
		for l := rs & lstart & valid; l != 0; l &= l - 1 {
			b := uint(bits.TrailingZeros64(l))
			n := uint(4)
			if blk[b] == 'f' {
				n = 5
			}
			if b > 56 || valid>>(b+n)&1 == 0 {
				left |= 1 << b
				continue
			}
			w := binary.LittleEndian.Uint64(blk[b:])
			var ok bool
			switch blk[b] {
			case 't':
				ok = uint32(w) == litTrue
			case 'n':
				ok = uint32(w) == litNull
			default:
				ok = w&0xFF_FFFF_FFFF == litFalse
			}
			if !ok || sc>>(b+n)&1 != 0 {
				e |= 1 << b
			}
		}
		m.lits = left
	}
	c.sc = sc >> 63
	m.err = e & valid
	m.exit = int64(exit)
}

// The plain-run skip. Inside a long string, most blocks are plain: no
// control character, no broken UTF-8 (stage 1's check, which looks back
// three bytes), every quote escaped, every escape one of \" \\ \/ \b \f
// \n \r \t (an escape may straddle two blocks). In such a block stage 1
// finds no control character and no broken UTF-8 by definition, and
// stage 2, entered with a carry that plainReady accepts,
// finds every quote escaped, every escape allowed, no \u, no literal and
// no exit, and leaves the carry as it was but for the escape pending at
// the block's end (esc) and the \u masks (u, hexD, hs), which it clears:
// every other mask it combines is empty inside a string, and every carry
// plainReady requires to be 0 is one it would set to 0. So the driver
// skips such blocks — a few compares per 32 bytes, stage 1's UTF-8
// lookups where a byte from 0x80 is near, and stage 2's escape algebra on
// a block with backslashes (plainAVX2, or plainGeneric) — and sets esc
// and clears the \u masks as stage 2 would.
// TestPlainTwin checks the kernels against a byte-at-a-time reference,
// TestPlainStage2 the claim on both stage-2 kernels; TestSIMDPlainRuns
// and FuzzSIMD compare the verdicts with the scalar scanner's.

// plain is the plain-run kernel in use: the assembly or its twin.
var plain = plainGeneric

// plainEscape is the escape letters of a plain block.
var plainEscape = func() (t [256]bool) {
	for _, c := range []byte(`"\/bfnrt`) {
		t[c] = true
	}
	return
}()

// plainGeneric returns how many of the nb 64-byte blocks at buf[start:],
// from the first, are plain, entered with no escape pending, and whether
// an escape is pending after the last of them: count<<1 | pending. It
// reads from buf[start-3] (stage 1's UTF-8 check).
func plainGeneric(buf []byte, start, nb int) int {
	var carry uint64
	for j := range nb {
		var q, bs, ok uint64
		b := buf[start+64*j-3 : start+64*j+64]
		var high byte
		for _, c := range b {
			high |= c
		}
		for i, c := range b[3:] {
			if c < 0x20 || high >= 0x80 && (utf8Err(b[i], b[i+1], b[i+2], c) || utf8BadByte(c)) {
				return j<<1 | int(carry)
			}
			bit := uint64(1) << i
			switch c {
			case '"':
				q |= bit
			case '\\':
				bs |= bit
			}
			if plainEscape[c] {
				ok |= bit
			}
		}
		esc, next := escapes(bs, carry)
		if q&^esc != 0 || esc&^ok != 0 {
			return j<<1 | int(carry)
		}
		carry = next
	}
	return nb<<1 | int(carry)
}

// escapes returns, for a block whose backslashes are bs and whose first
// byte is escaped when carry is 1, the bytes escaped (those after an odd
// run of backslashes, and the first when carry is 1) and the carry for
// the next block (the block ends in an odd run).
func escapes(bs, carry uint64) (esc, next uint64) {
	bs &^= carry
	esc = carry
	if bs != 0 {
		starts := bs &^ (bs << 1)
		evenEnds := (bs + starts&evenBits) &^ bs
		oddEnds := (bs + starts&oddBits) &^ bs
		esc |= evenEnds&oddBits | oddEnds&evenBits
	}
	return esc, uint64(bits.LeadingZeros64(^bs)) & 1
}

// plainReady reports whether c is a carry that a run of plain blocks
// leaves as it is, but for esc and the \u masks: inside a string, no escape pending,
// no \u in the last four bytes of the block before (c.u from bit 60) and
// no high surrogate in its last six (c.hs from bit 58), whose digits or
// low half would fall in the next block, and no byte class or fill
// carried from outside a string. Stage 2 leaves such a carry after any
// block that ends inside a string past the escapes.
func (c *s2carry) plainReady() bool {
	return c.inStr != 0 && c.esc|c.u>>60|c.hs>>58|c.numRun|c.aftE|c.aftDot|c.pO|c.pA|c.pK|c.pMo|c.pMa|c.pKC|c.pVE|
		c.sc|c.ex|c.sign|c.dot|c.dig|c.rsMi|c.iz == 0
}

// through extends the seed bits s across runs of whitespace w: a seed at
// the start of a run moves to the first byte after it.
func through(s, w uint64) uint64 {
	return s&^w | (w+s&w)&^w
}
