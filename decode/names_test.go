package decode

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// manyMembers returns n unknown top-level members, "u0":0,"u1":0,…,
// each followed by a comma.
func manyMembers(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(`"u` + strconv.Itoa(i) + `":0,`)
	}
	return b.String()
}

// TestEnvelopeManyMembers checks the envelope past the members the
// scanner records (maxRecordedMembers): well-known members found after
// them, repeated names refused at the same offset as the recorded path
// finds them, escapes resolved.
func TestEnvelopeManyMembers(t *testing.T) {
	for _, n := range []int{maxRecordedMembers - 6, maxRecordedMembers - 1, maxRecordedMembers, maxRecordedMembers + 1, 200} {
		pad := manyMembers(n)
		ok := `{` + pad + `"jsonrpc":"2.0","id":7,"method":"m","params":{"a":1}}`
		var d Decoder
		var m Message
		if err := d.Decode([]byte(ok), &m); err != nil {
			t.Fatalf("%d members: %v", n, err)
		}
		if string(m.Method) != "m" || string(m.ID) != "7" || string(m.Params) != `{"a":1}` {
			t.Errorf("%d members: method %s id %s params %s", n, m.Method, m.ID, m.Params)
		}
		for name, tc := range map[string]struct {
			body string
			dup  string // the repeated name, found at its second occurrence
		}{
			"unknown":         {`{"jsonrpc":"2.0",` + pad + `"id":1,"method":"m","u3":1}`, `"u3":1`},
			"escaped unknown": {`{"jsonrpc":"2.0",` + pad + `"id":1,"method":"m","\u00753":1}`, `"\u00753":1`},
			"known":           {`{"jsonrpc":"2.0",` + pad + `"id":1,"method":"m","id":2}`, `"id":2`},
			"escaped known":   {`{"jsonrpc":"2.0",` + pad + `"id":1,"method":"m","\u0069d":2}`, `"\u0069d":2`},
		} {
			if n < 4 && strings.Contains(name, "unknown") {
				continue
			}
			err := d.Decode([]byte(tc.body), &m)
			var de *Error
			if !errors.As(err, &de) || de.Err != ErrDuplicateName {
				t.Errorf("%d members, %s: %v, want ErrDuplicateName", n, name, err)
				continue
			}
			if want := int64(strings.LastIndex(tc.body, tc.dup)); de.Offset != want {
				t.Errorf("%d members, %s: offset %d, want %d", n, name, de.Offset, want)
			}
		}
	}
}

// TestDuplicateNameLarge compares DuplicateName with a map of unescaped
// names on objects past the pairwise check, with escapes on either side.
func TestDuplicateNameLarge(t *testing.T) {
	for _, n := range []int{smallMembers + 1, 100, 5000} {
		base := `{` + manyMembers(n)
		for _, tc := range []struct {
			last string
			want bool
		}{
			{`"end":0}`, false},
			{`"u0":1}`, true},
			{`"\u00750":1}`, true},
			{`"u` + strconv.Itoa(n-1) + `":1}`, true},
			{`"\u0075` + strconv.Itoa(n) + `":1}`, false},
		} {
			obj := []byte(base + tc.last)
			if got := DuplicateName(obj); got != tc.want {
				t.Errorf("%d members + %s: %v, want %v", n, tc.last, got, tc.want)
			}
			if got := duplicateHuge(obj); got != tc.want {
				t.Errorf("duplicateHuge: %d members + %s: %v, want %v", n, tc.last, got, tc.want)
			}
		}
	}
	// Both sides escaped.
	obj := []byte(`{` + manyMembers(40) + `"\u0061b":0,"a\u0062":1}`)
	if !DuplicateName(obj) {
		t.Error("two escaped spellings of one name: no duplicate found")
	}
}

// TestNameSetFingerprints: the set skips a probed name whose hash bits
// differ from the key's and compares the others; on objects whose
// offsets leave it from 20 bits of hash down to a few, with names
// escaped or not and one repeated (or none) at a random place, it finds
// what a map of the unescaped names finds.
func TestNameSetFingerprints(t *testing.T) {
	if raceEnabled {
		t.Skip("a pure computation: run without -race (the plain run and the purego, AVX2-off and scalar passes cover it)")
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for _, n := range []int{40, 300, 3000, 70000} {
		for round := range 20 {
			names := make([]string, n)
			for i := range names {
				names[i] = "n" + strconv.Itoa(rng.IntN(1<<30)) + "_" + strconv.Itoa(i)
			}
			dup := round%4 != 0
			if dup {
				a, b := rng.IntN(n), rng.IntN(n)
				if a == b {
					b = (a + 1) % n
				}
				names[b] = names[a]
			}
			var sb strings.Builder
			sb.WriteByte('{')
			for i, name := range names {
				if i > 0 {
					sb.WriteByte(',')
				}
				if rng.IntN(8) == 0 {
					name = `\u006e` + name[1:] // "n" escaped
				}
				sb.WriteString(`"` + name + `":` + strconv.Itoa(i))
			}
			sb.WriteByte('}')
			obj := []byte(sb.String())
			if got, want := DuplicateName(obj), duplicateHuge(obj); got != want || want != dup {
				t.Fatalf("%d members, round %d: DuplicateName %v, a map %v, planted %v", n, round, got, want, dup)
			}
			if got := HasDuplicateNameDeep(obj); got != dup {
				t.Fatalf("%d members, round %d: HasDuplicateNameDeep %v, planted %v", n, round, got, dup)
			}
		}
	}
}
