package decode_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/internal/memtest"
)

// randomValue writes a random JSON value whose objects draw their member
// names from a few, some spelled with escapes, so that names repeat at
// every depth.
func randomValue(rng *rand.Rand, b *strings.Builder, depth int) {
	ws := func() {
		if rng.IntN(4) == 0 {
			b.WriteString([]string{" ", "\n", "\t ", "\r\n"}[rng.IntN(4)])
		}
	}
	ws()
	switch k := rng.IntN(6); {
	case depth > 0 && k < 2:
		b.WriteByte('{')
		for i := range rng.IntN(5) {
			if i > 0 {
				b.WriteByte(',')
			}
			ws()
			b.WriteString([]string{`"a"`, `"\u0061"`, `"b"`, `"a\/b"`, `"a/b"`, `""`, `"é"`, `"\u00e9"`}[rng.IntN(8)])
			ws()
			b.WriteByte(':')
			randomValue(rng, b, depth-1)
		}
		ws()
		b.WriteByte('}')
	case depth > 0 && k < 4:
		b.WriteByte('[')
		for i := range rng.IntN(4) {
			if i > 0 {
				b.WriteByte(',')
			}
			randomValue(rng, b, depth-1)
		}
		ws()
		b.WriteByte(']')
	default:
		b.WriteString([]string{`1`, `-0.5e3`, `"s"`, `"\u0041\n"`, `true`, `null`, strconv.Itoa(rng.IntN(1000))}[rng.IntN(7)])
	}
	ws()
}

// TestLastWins: AppendLastWins keeps, in every object at any depth, the
// last member of each name, so that encoding/json (whose objects decoded
// into interface values keep the last occurrence) reads the same value
// from it as from the original, and no name repeats in it; it is the
// compacted original exactly when HasDuplicateNameDeep says no name
// repeats.
func TestLastWins(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 27))
	for range 5000 {
		var b strings.Builder
		randomValue(rng, &b, 4)
		v := []byte(b.String())
		var compact bytes.Buffer
		if err := json.Compact(&compact, v); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		out := decode.AppendLastWins(nil, v)
		var want, got any
		json.Unmarshal(v, &want)
		if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s\n→ %s (%v): a different value", v, out, err)
		}
		if decode.HasDuplicateNameDeep(out) {
			t.Fatalf("%s\n→ %s: a name still repeats", v, out)
		}
		if dup := decode.HasDuplicateNameDeep(v); dup != !bytes.Equal(out, compact.Bytes()) {
			t.Fatalf("%s: HasDuplicateNameDeep %v, but the rewrite is %s against %s", v, dup, out, compact.Bytes())
		}
	}
	// Appends to dst.
	if got := decode.AppendLastWins([]byte("x"), []byte(` {"a":{"b":1,"b":2}} `)); string(got) != `x{"a":{"b":2}}` {
		t.Errorf("AppendLastWins: %s", got)
	}
}

// TestHasDuplicateNameDeepAllocs: the check allocates nothing.
func TestHasDuplicateNameDeepAllocs(t *testing.T) {
	v := []byte(`{"a":[{"b":1,"c":{"d":[1,2,{"e":null}]}},{"b":2}],"f":{"g":{"h":{"i":1,"j":2}}}}`)
	if n := testing.AllocsPerRun(100, func() { decode.HasDuplicateNameDeep(v) }); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// TestAppendLastWinsMemory: rewriting an object of many distinct names
// and one repeated costs its set of names' offsets (at most 16 bytes a
// member) and the copy, not a map of the names (17 times the object,
// found by review on 2026-12-06).
func TestAppendLastWinsMemory(t *testing.T) {
	for _, n := range []int{1000, 50000} {
		var b strings.Builder
		b.WriteString(`{"deep":{"k":0`)
		for i := range n {
			b.WriteString(`,"` + strconv.FormatInt(int64(i)+rand.Int64N(1<<40)<<20, 36) + `":0`)
		}
		b.WriteString(`,"\u006b":1}}`)
		v := []byte(b.String())
		dst := make([]byte, 0, len(v))
		got := decode.AppendLastWins(dst, v)
		if !bytes.HasSuffix(got, []byte(`,"\u006b":1}}`)) || bytes.Contains(got, []byte(`"k"`)) {
			t.Fatalf("%d names: the rewrite keeps the wrong occurrence: …%s", n, got[len(got)-40:])
		}
		cost := memtest.Allocated(func() { decode.AppendLastWins(dst[:0], v) })
		if ratio := float64(cost) / float64(len(v)); ratio > 4 {
			t.Errorf("%d names (%d bytes): the rewrite allocated %d bytes, %.1f× the object (at most 4×)", n, len(v), cost, ratio)
		}
	}
}
