package decode

// Review of 58b8126 (the name set keeps bits of each name's hash beside
// its offset): guards for the set's verdicts at every width the offset
// may take (1..32 bits: objects up to 4 GiB - 2), for names passed by the
// caller against those the set reads itself, for growth, for setLast and
// isLast, and for sets reused from the pool for objects of other sizes.

import (
	"encoding/json"
	"errors"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// review4Member is a member of a generated object: its name as written
// (escapes kept) and as encoding/json reads it.
type review4Member struct {
	raw, name string
}

// review4Spell writes name with some of its characters escaped.
func review4Spell(rng *rand.Rand, name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case rng.IntN(6) != 0:
			b.WriteRune(r)
		case r == '/':
			b.WriteString(`\/`)
		case r < 0x10000:
			b.WriteString(`\u` + strconv.FormatInt(int64(r)+0x10000, 16)[1:])
		default: // a surrogate pair
			r -= 0x10000
			hi, lo := 0xd800+(r>>10), 0xdc00+(r&0x3ff)
			b.WriteString(`\u` + strconv.FormatInt(int64(hi), 16) + `\u` + strconv.FormatInt(int64(lo), 16))
		}
	}
	return b.String()
}

// review4Name returns a random name, short or long, plain or not.
func review4Name(rng *rand.Rand) string {
	const alphabet = "ab/é\t\"\\x𝄞0"
	rs := []rune(alphabet)
	n := 1 + rng.IntN(6)
	if rng.IntN(20) == 0 {
		n = 40 + rng.IntN(80)
	}
	var b strings.Builder
	for range n {
		b.WriteRune(rs[rng.IntN(len(rs))])
	}
	return b.String()
}

// review4Raw is the JSON spelling of name (quotes and backslashes
// escaped, a tab as \t), some characters escaped further.
func review4Raw(rng *rand.Rand, name string) string {
	var b strings.Builder
	for _, r := range name {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString([]string{`\t`, `\u0009`}[rng.IntN(2)])
		default:
			if r < 0x20 {
				b.WriteString(`\u00` + strconv.FormatInt(int64(r)+0x100, 16)[1:])
				continue
			}
			b.WriteString(review4Spell(rng, string(r)))
		}
	}
	return b.String()
}

// review4Unquote reads raw as encoding/json does.
func review4Unquote(t testing.TB, raw string) string {
	var s string
	if err := json.Unmarshal([]byte(`"`+raw+`"`), &s); err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	return s
}

// review4Object builds an object of the members, with white space here
// and there, values their indexes; and returns the offsets of the names'
// opening quotes.
func review4Object(rng *rand.Rand, ms []review4Member, pad int) ([]byte, []int) {
	var b strings.Builder
	offs := make([]int, len(ms))
	b.WriteString([]string{"", " ", "\n\t"}[rng.IntN(3)])
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		if i == len(ms)-1 {
			b.WriteString(strings.Repeat(" ", pad))
		} else if rng.IntN(5) == 0 {
			b.WriteString(" ")
		}
		offs[i] = b.Len()
		b.WriteString(`"` + m.raw + `"`)
		if rng.IntN(5) == 0 {
			b.WriteString(" ")
		}
		b.WriteString(":" + strconv.Itoa(i))
	}
	b.WriteByte('}')
	return []byte(b.String()), offs
}

// review4Members returns n members of distinct names, and, when dup, one
// of them repeated (in another spelling) at a later place.
func review4Members(t testing.TB, rng *rand.Rand, n int, dup bool) []review4Member {
	seen := map[string]bool{}
	ms := make([]review4Member, 0, n)
	for len(ms) < n {
		name := review4Name(rng)
		if rng.IntN(3) == 0 {
			name += strconv.Itoa(len(ms))
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		raw := review4Raw(rng, name)
		if got := review4Unquote(t, raw); got != name {
			t.Fatalf("generator: %q reads as %q, want %q", raw, got, name)
		}
		ms = append(ms, review4Member{raw, name})
	}
	if dup {
		a := rng.IntN(n - 1)
		b := a + 1 + rng.IntN(n-1-a)
		ms[b] = review4Member{review4Raw(rng, ms[a].name), ms[a].name}
	}
	return ms
}

// review4Widths returns the offset widths a set may be given for obj:
// its own and every wider one up to 32 (what a larger object would have).
func review4Widths(obj []byte) []uint {
	var ws []uint
	for w := uint(bits.Len(uint(len(obj)))); w <= 32; w++ {
		ws = append(ws, w)
	}
	return ws
}

// review4Widen makes s use w bits for offsets, as for an object of up to
// 2^w - 1 bytes.
func review4Widen(s *nameSet, w uint) {
	s.fpShift = w
	s.offMask = uint32(uint64(1)<<w - 1)
}

// review4CheckTable checks every entry of s: an offset of an opening
// quote in the object (never 0), and the hash bits of that name.
func review4CheckTable(t *testing.T, s *nameSet, want int) {
	t.Helper()
	n := 0
	for _, j := range s.table {
		if j == 0 {
			continue
		}
		n++
		off := int(j&s.offMask) - 1
		if off < 0 || off >= len(s.obj) || s.obj[off] != '"' {
			t.Fatalf("width %d: entry %#x: offset %d is not a name's quote", s.fpShift, j, off)
		}
		raw, _ := s.name(off)
		key := appendUnescaped(nil, raw)
		if fp := uint32(maphash.Bytes(s.seed, key)>>32) << s.fpShift; j&^s.offMask != fp {
			t.Fatalf("width %d: entry %#x of %q: hash bits %#x, want %#x", s.fpShift, j, raw, j&^s.offMask, fp)
		}
	}
	if n != want {
		t.Fatalf("width %d: %d entries, want %d", s.fpShift, n, want)
	}
}

// TestReview4NameSetEveryWidth: on random objects of names escaped or
// not (one repeated in another spelling, or none), add, addName,
// addGrowing, setLastGrowing and isLast agree with encoding/json's
// reading of the names for the object's own offset width and every wider
// one up to 32 (no hash bits: objects of 2 to 4 GiB), and every entry is
// a name's offset (never 0) with that name's hash bits.
func TestReview4NameSetEveryWidth(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race (the plain run and the purego, AVX2-off and scalar passes cover it)")
	}
	rng := rand.New(rand.NewPCG(4, 58))
	for _, n := range []int{smallMembers + 1, 60, 700, 3000} {
		for round := range 6 {
			dup := round%3 != 0
			ms := review4Members(t, rng, n, dup)
			obj, offs := review4Object(rng, ms, rng.IntN(3))
			// The expected verdicts.
			first := -1 // the member whose name was seen before
			last := map[string]int{}
			for i, m := range ms {
				if _, ok := last[m.name]; ok && first < 0 {
					first = i
				}
				last[m.name] = i
			}
			if dup != (first >= 0) {
				t.Fatal("generator: planted duplicate not found")
			}
			distinct := func(upto int) int {
				seen := map[string]bool{}
				for _, m := range ms[:upto] {
					seen[m.name] = true
				}
				return len(seen)
			}
			for _, w := range review4Widths(obj) {
				for mode := range 3 {
					s := getNameSet(obj, n)
					if mode == 2 {
						s = getNameSet(obj, 0) // grows from 64 slots
					}
					if want := uint(bits.Len(uint(len(obj)))); s.fpShift != want || s.offMask != uint32(uint64(1)<<want-1) {
						t.Fatalf("getNameSet: width %d mask %#x for %d bytes", s.fpShift, s.offMask, len(obj))
					}
					review4Widen(s, w)
					got := -1
					var it Members
					k := 0
					for it.Reset(obj); it.Next(); k++ {
						off := nameOffset(obj, it.name)
						if off != offs[k] {
							t.Fatalf("nameOffset %d, want %d", off, offs[k])
						}
						if raw, esc := s.name(off); string(raw) != string(it.name) || esc != it.esc {
							t.Fatalf("name at %d: %q %v, the iterator %q %v", off, raw, esc, it.name, it.esc)
						}
						var again bool
						switch mode {
						case 0:
							again = s.add(off)
						case 1:
							again = s.addName(off, it.name, it.esc)
						case 2:
							again = s.addGrowing(off, it.name, it.esc)
						}
						if again {
							got = k
							break
						}
					}
					if got != first {
						t.Fatalf("%d members (%d bytes), width %d, mode %d: repeat found at member %d, want %d", n, len(obj), w, mode, got, first)
					}
					upto := n
					if first >= 0 {
						upto = first
					}
					review4CheckTable(t, s, distinct(upto))
					s.release()
				}
				// setLastGrowing and isLast, as AppendLastWins uses them.
				s := getNameSet(obj, 0)
				review4Widen(s, w)
				repeats := false
				for _, off := range offs {
					repeats = s.setLastGrowing(off) || repeats
				}
				if repeats != dup {
					t.Fatalf("width %d: setLastGrowing reported a repeat %v, want %v", w, repeats, dup)
				}
				review4CheckTable(t, s, distinct(n))
				for k, off := range offs {
					if got, want := s.isLast(off), last[ms[k].name] == k; got != want {
						t.Fatalf("width %d: isLast(member %d %q) %v, want %v", w, k, ms[k].raw, got, want)
					}
				}
				s.release()
			}
		}
	}
}

// TestReview4PowerOfTwoLengths: objects whose length is about a power of
// two, where the offset's width changes, their last name (the largest
// offset) repeating the first one or not: DuplicateName,
// HasDuplicateNameDeep and AppendLastWins read it right.
func TestReview4PowerOfTwoLengths(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race (the plain run and the purego, AVX2-off and scalar passes cover it)")
	}
	for k := 8; k <= 17; k++ {
		for delta := -9; delta <= 9; delta++ {
			target := 1<<k + delta
			for _, tail := range []struct {
				raw  string
				want bool
			}{
				{`\u0061\u0061`, true}, // "aa", the first name
				{`a\u0062`, false},
				{`aa`, true},
				{`a`, false},
			} {
				var b strings.Builder
				b.WriteString(`{"aa":0`)
				for i := 1; b.Len() < target-60; i++ {
					b.WriteString(`,"m` + strconv.Itoa(i) + `":` + strconv.Itoa(i%10))
				}
				end := `,"` + tail.raw + `":7}`
				pad := target - b.Len() - len(end)
				if pad < 0 {
					t.Fatalf("length %d: no room", target)
				}
				b.WriteString(strings.Repeat(" ", pad))
				b.WriteString(end)
				obj := []byte(b.String())
				if len(obj) != target {
					t.Fatalf("length %d, want %d", len(obj), target)
				}
				if got := DuplicateName(obj); got != tail.want {
					t.Fatalf("length %d, last name %s: DuplicateName %v, want %v", target, tail.raw, got, tail.want)
				}
				if got := HasDuplicateNameDeep(obj); got != tail.want {
					t.Fatalf("length %d, last name %s: HasDuplicateNameDeep %v, want %v", target, tail.raw, got, tail.want)
				}
				out := string(AppendLastWins(nil, obj))
				if strings.HasPrefix(out, `{"aa":0,`) == tail.want || !strings.HasSuffix(out, `"`+tail.raw+`":7}`) {
					t.Fatalf("length %d, last name %s: AppendLastWins %.30s…%s", target, tail.raw, out, out[max(0, len(out)-30):])
				}
			}
		}
	}
}

// review4LastWins is AppendLastWins for a flat object of review4Object:
// the last member of each name, in order.
func review4LastWins(ms []review4Member) string {
	last := map[string]int{}
	for i, m := range ms {
		last[m.name] = i
	}
	var b strings.Builder
	b.WriteByte('{')
	n := 0
	for i, m := range ms {
		if last[m.name] != i {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.WriteString(`"` + m.raw + `":` + strconv.Itoa(i))
	}
	b.WriteByte('}')
	return b.String()
}

// TestReview4PooledSetsAcrossSizes: sets go back to the pool after
// objects of one size and come out for objects of another (the offset
// width and the hash bits change, the spare table is kept), in one
// goroutine and in several at once; every verdict is right, flat and
// nested (each level a set of its own).
func TestReview4PooledSetsAcrossSizes(t *testing.T) {
	type tcase struct {
		obj, nested []byte
		dup         bool
		lastWins    string
	}
	rng := rand.New(rand.NewPCG(5, 81))
	var cases []tcase
	for _, n := range []int{20, 30000, 40, 9000, 17, 70000, 100, 2000} {
		for _, dup := range []bool{false, true} {
			ms := review4Members(t, rng, n, dup)
			obj, _ := review4Object(rng, ms, 0)
			// The object inside one of many members and an array.
			small := review4Members(t, rng, 40, false)
			outer, _ := review4Object(rng, small, 0)
			nested := []byte(`[` + string(outer[:len(outer)-1]) + `,"inner":` + string(obj) + `}]`)
			cases = append(cases, tcase{obj, nested, dup, review4LastWins(ms)})
		}
	}
	check := func(t *testing.T, c tcase) bool {
		if got := DuplicateName(c.obj); got != c.dup {
			t.Errorf("%d bytes: DuplicateName %v, want %v", len(c.obj), got, c.dup)
			return false
		}
		if got := HasDuplicateNameDeep(c.nested); got != c.dup {
			t.Errorf("%d bytes nested: HasDuplicateNameDeep %v, want %v", len(c.nested), got, c.dup)
			return false
		}
		if got := string(AppendLastWins(nil, c.obj)); got != c.lastWins {
			t.Errorf("%d bytes: AppendLastWins differs from the last of each name", len(c.obj))
			return false
		}
		return true
	}
	for range 2 {
		for _, c := range cases {
			if !check(t, c) {
				return
			}
		}
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for r := range 3 {
				for i := range cases {
					if !check(t, cases[(i*(g+1)+r)%len(cases)]) {
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// TestReview4EnvelopeUnknownNames: Decode of a request of more members
// than the scanner records refuses a repeated unknown name (spelled with
// escapes or not) at its second occurrence, and nothing else.
func TestReview4EnvelopeUnknownNames(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 3))
	var d Decoder
	var m Message
	for _, n := range []int{maxRecordedMembers + 1, 300, 5000} {
		for round := range 8 {
			dup := round%2 == 1
			ms := review4Members(t, rng, n, dup)
			for i := range ms { // no well-known name among them
				ms[i].raw = "x" + ms[i].raw
				ms[i].name = "x" + ms[i].name
			}
			obj, offs := review4Object(rng, ms, 0)
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"m",` + string(obj[strings.IndexByte(string(obj), '{')+1:]))
			shift := len(`{"jsonrpc":"2.0","id":1,"method":"m",`) - strings.IndexByte(string(obj), '{') - 1
			seen := map[string]bool{}
			want := int64(-1)
			for i, m := range ms {
				if seen[m.name] {
					want = int64(offs[i] + shift)
					break
				}
				seen[m.name] = true
			}
			err := d.Decode(body, &m)
			var de *Error
			switch {
			case want < 0 && err != nil:
				t.Fatalf("%d members: %v, want no error", n, err)
			case want >= 0 && (!errors.As(err, &de) || de.Err != ErrDuplicateName):
				t.Fatalf("%d members: %v, want ErrDuplicateName", n, err)
			case want >= 0 && de.Offset != want:
				t.Fatalf("%d members: offset %d, want %d", n, de.Offset, want)
			}
		}
	}
}

// FuzzReview4NameSet: an object of the fuzzer's names (each escaped a
// little, many members so that the set is used): DuplicateName,
// HasDuplicateNameDeep and AppendLastWins agree with encoding/json's
// reading of the names.
func FuzzReview4NameSet(f *testing.F) {
	f.Add([]byte("a\x00b\x00a"), uint64(1), uint8(3))
	f.Add([]byte("é/\x00\"\\\x00x"), uint64(7), uint8(40))
	f.Add([]byte(""), uint64(2), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, extra uint8) {
		rng := rand.New(rand.NewPCG(seed, 1))
		var ms []review4Member
		for _, p := range strings.Split(string(data), "\x00") {
			name := strings.ToValidUTF8(p, "?")
			ms = append(ms, review4Member{review4Raw(rng, name), name})
		}
		for i := range int(extra) + smallMembers {
			name := "f" + strconv.Itoa(i)
			ms = append(ms, review4Member{review4Raw(rng, name), name})
		}
		rng.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
		for i := range ms {
			if got := review4Unquote(t, ms[i].raw); got != ms[i].name {
				t.Fatalf("generator: %q reads as %q", ms[i].raw, got)
			}
		}
		obj, _ := review4Object(rng, ms, rng.IntN(3))
		seen := map[string]bool{}
		dup := false
		for _, m := range ms {
			dup = dup || seen[m.name]
			seen[m.name] = true
		}
		if got := DuplicateName(obj); got != dup {
			t.Fatalf("%s: DuplicateName %v, want %v", obj, got, dup)
		}
		if got := HasDuplicateNameDeep(obj); got != dup {
			t.Fatalf("%s: HasDuplicateNameDeep %v, want %v", obj, got, dup)
		}
		if got, want := string(AppendLastWins(nil, obj)), review4LastWins(ms); got != want {
			t.Fatalf("%s: AppendLastWins\n%s\nwant\n%s", obj, got, want)
		}
	})
}
