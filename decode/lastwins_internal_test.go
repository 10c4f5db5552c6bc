package decode

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// genDupValue writes a random JSON value whose objects draw names from a
// small pool (some escaped, some the same name spelled two ways) or from
// many, so that repeats are sometimes there, at any depth, and objects
// pass smallMembers.
func genDupValue(r *rand.Rand, b *strings.Builder, depth int) {
	ws := func() {
		if r.IntN(5) == 0 {
			b.WriteString([]string{" ", "\n\t", "\r\n "}[r.IntN(3)])
		}
	}
	ws()
	switch k := r.IntN(7); {
	case depth > 0 && k < 2:
		b.WriteByte('{')
		n := r.IntN(6)
		if r.IntN(4) == 0 {
			n = smallMembers - 2 + r.IntN(60)
		}
		wide := r.IntN(2) == 0
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			name := "n" + strconv.Itoa(i)
			if !wide {
				name = []string{"a", "b", "c", "d"}[r.IntN(4)]
			} else if r.IntN(40) == 0 {
				name = "n" + strconv.Itoa(r.IntN(i+1)) // one repeat, maybe
			}
			if r.IntN(6) == 0 {
				b.WriteString(`"\u006` + strconv.Itoa(int(name[0]-'a'+1)) + name[1:] + `"`)
			} else {
				b.WriteString(`"` + name + `"`)
			}
			ws()
			b.WriteByte(':')
			genDupValue(r, b, depth-1)
		}
		ws()
		b.WriteByte('}')
	case depth > 0 && k < 4:
		b.WriteByte('[')
		for i := range r.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
			}
			genDupValue(r, b, depth-1)
		}
		ws()
		b.WriteByte(']')
	case k == 4:
		b.WriteString(`"s\"{[,:"`)
	case k == 5:
		b.WriteString(strconv.Itoa(r.IntN(1000) - 500))
	default:
		b.WriteString([]string{"true", "false", "null"}[r.IntN(3)])
	}
	ws()
}

// TestHasDuplicateNameDeepOnePass compares the one-pass check with the
// level-by-level one (hasDuplicateNameDeepHuge) on random values.
func TestHasDuplicateNameDeepOnePass(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 5))
	n, dups := 20000, 0
	if testing.Short() {
		n = 4000
	}
	for range n {
		var b strings.Builder
		genDupValue(r, &b, 1+r.IntN(5))
		v := []byte(b.String())
		if !Valid(v) {
			t.Fatalf("seed %d: the generator wrote invalid JSON: %s", seed, v)
		}
		want := hasDuplicateNameDeepHuge(v)
		if got := HasDuplicateNameDeep(v); got != want {
			t.Fatalf("seed %d: %s: got %v, want %v", seed, v, got, want)
		}
		if want {
			dups++
		}
	}
	t.Logf("seed %d: %d values, %d with a repeated name", seed, n, dups)
	if dups < n/10 || dups > n*9/10 {
		t.Errorf("only %d of %d values repeat a name: the comparison is lopsided", dups, n)
	}
}

// TestHasDuplicateNameDeepLinear: a value nested 1,000 deep with its bulk
// at the bottom costs about what the same bytes flat cost (it cost a read
// of the bulk per level: 0.85 s against ~1 ms). A ratio of two times, of
// the same bytes, with a wide margin.
func TestHasDuplicateNameDeepLinear(t *testing.T) {
	bulk := `[` + strings.Repeat(`"aaaaaaaa",{"x":1,"y":[2,3]},`, 1<<12) + `0]`
	deep := []byte(strings.Repeat(`{"a":`, 1000) + bulk + strings.Repeat(`}`, 1000))
	head := `{"a":` + bulk + `,"p":"`
	flat := []byte(head + strings.Repeat("b", len(deep)-len(head)-2) + `"}`)
	if len(deep) != len(flat) || !Valid(deep) || !Valid(flat) {
		t.Fatalf("sizes %d and %d", len(deep), len(flat))
	}
	best := func(v []byte) time.Duration {
		d := time.Duration(1 << 62)
		for range 5 {
			t0 := time.Now()
			if HasDuplicateNameDeep(v) {
				t.Fatal("no name repeats")
			}
			d = min(d, time.Since(t0))
		}
		return d
	}
	tf, td := best(flat), best(deep)
	t.Logf("%d bytes: flat %v, 1,000 deep %v", len(deep), tf, td)
	if td > 20*tf {
		t.Errorf("nested 1,000 deep took %.0f× the flat value's time: the check reads the bulk once per level", float64(td)/float64(tf))
	}
}

// TestAppendLastWinsTwoPasses compares the two-pass rewrite with the
// level-by-level one (appendLastWinsHuge) on random values, with the
// generator's repeated names, escaped names and white space.
func TestAppendLastWinsTwoPasses(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race (the plain run and the purego, AVX2-off and scalar passes cover it)")
	}
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 7))
	n := 20000
	if testing.Short() {
		n = 4000
	}
	changed := 0
	for range n {
		var b strings.Builder
		genDupValue(r, &b, 1+r.IntN(5))
		v := []byte(b.String())
		want := appendLastWinsHuge(nil, v)
		got := AppendLastWins(nil, v)
		if string(got) != string(want) {
			t.Fatalf("seed %d: %s:\ngot  %s\nwant %s", seed, v, got, want)
		}
		if !Valid(got) || HasDuplicateNameDeep(got) {
			t.Fatalf("seed %d: %s: the rewrite %s is not valid JSON without repeated names", seed, v, got)
		}
		if HasDuplicateNameDeep(v) {
			changed++
		}
	}
	t.Logf("seed %d: %d values, %d rewritten", seed, n, changed)
}

// TestAppendLastWinsLinear: a value nested 900 deep with its bulk at the
// bottom and a repeated name at the top costs about what the same bytes
// flat cost (the level-by-level rewrite read the bulk three times per
// level: 2.8 s for 1 MiB, found by review on 2026-12-06). A ratio of two
// times, of the same bytes, with a wide margin.
func TestAppendLastWinsLinear(t *testing.T) {
	bulk := `[` + strings.Repeat(`"aaaaaaaa",{"x":1,"y":[2,3]},`, 1<<12) + `0]`
	deep := []byte(`{"d":1,"d":2,"a":` + strings.Repeat(`{"a":`, 900) + bulk + strings.Repeat(`}`, 900) + `}`)
	head := `{"d":1,"d":2,"a":` + bulk + `,"p":"`
	flat := []byte(head + strings.Repeat("b", len(deep)-len(head)-2) + `"}`)
	if len(deep) != len(flat) || !Valid(deep) || !Valid(flat) {
		t.Fatalf("sizes %d and %d", len(deep), len(flat))
	}
	dst := make([]byte, 0, len(deep))
	best := func(v []byte) time.Duration {
		d := time.Duration(1 << 62)
		for range 5 {
			t0 := time.Now()
			out := AppendLastWins(dst[:0], v)
			d = min(d, time.Since(t0))
			if HasDuplicateNameDeep(out) {
				t.Fatal("a name still repeats")
			}
		}
		return d
	}
	tf, td := best(flat), best(deep)
	t.Logf("%d bytes: flat %v, 900 deep %v", len(deep), tf, td)
	if td > 20*tf {
		t.Errorf("nested 900 deep took %.0f× the flat value's time: the rewrite reads the bulk once per level", float64(td)/float64(tf))
	}
}
