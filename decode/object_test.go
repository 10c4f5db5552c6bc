package decode

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestMembers(t *testing.T) {
	obj := []byte(` { "a" : 1 , "b\u0063":{"x":[1,"}",{"y":"]"}]}, "\u006eame":"tools\/call" ,"e":[], "s":"q\"uo\\te", "n":null,"t":true,"f":-1.5e3 } `)
	var got []string
	var it Members
	for it.Reset(obj); it.Next(); {
		got = append(got, string(it.Name())+"="+string(it.Value()))
	}
	want := []string{`a=1`, `b\u0063={"x":[1,"}",{"y":"]"}]}`, `\u006eame="tools\/call"`, `e=[]`, `s="q\"uo\\te"`, `n=null`, `t=true`, `f=-1.5e3`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if v, n := Lookup(obj, "name"); n != 1 || !StringIs(v, "tools/call") {
		t.Errorf("Lookup name: %s %d", v, n)
	}
	if v, n := Lookup(obj, "bc"); n != 1 || v[0] != '{' {
		t.Errorf("Lookup bc: %s %d", v, n)
	}
	if _, n := Lookup(obj, "Name"); n != 0 {
		t.Error("Lookup is not case-sensitive")
	}
	for _, notObj := range []string{``, `[1]`, `"x"`, `1`, `null`} {
		if it.Reset([]byte(notObj)); it.Next() {
			t.Errorf("%q iterated", notObj)
		}
	}
}

func TestStringIs(t *testing.T) {
	tests := []struct {
		v, s string
		want bool
	}{
		{`"tools/call"`, "tools/call", true},
		{`"tools\/call"`, "tools/call", true},
		{`"TOOLS/CALL"`, "tools/call", false},
		{`"caf\u00e9"`, "café", true},
		{`"\ud83d\ude00!"`, "😀!", true},
		{`"\ud83d\ude00!"`, "😀", false},
		{`"a\nb"`, "a\nb", true},
		{`"a\nb"`, "a\\nb", false},
		{`1`, "1", false},
		{`""`, "", true},
		{`"` + strings.Repeat(`\u0041`, 100) + `"`, strings.Repeat("A", 100), true},
	}
	for _, tc := range tests {
		if got := StringIs([]byte(tc.v), tc.s); got != tc.want {
			t.Errorf("StringIs(%s, %q) = %v", tc.v, tc.s, got)
		}
		if tc.want {
			if got := string(AppendUnquoted(nil, []byte(tc.v))); got != tc.s {
				t.Errorf("AppendUnquoted(%s) = %q", tc.v, got)
			}
		}
	}
}

// spellJSON writes text as the content of a JSON string, each rune
// spelled at random: as itself, as \uXXXX (a surrogate pair beyond the
// BMP), or as its short escape where it has one; those that must be
// escaped always are.
func spellJSON(rng *rand.Rand, text string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range text {
		short := map[rune]string{'"': `\"`, '\\': `\\`, '/': `\/`, '\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}[r]
		switch k := rng.IntN(3); {
		case k == 0 && r >= 0x20 && r != '"' && r != '\\':
			b.WriteRune(r)
		case k == 1 && short != "":
			b.WriteString(short)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04X`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestStringsEqual: two spellings of one text are equal, whatever escapes
// each uses where; a text one rune off is not; and the verdict is the one
// of comparing both unescaped (AppendUnquoted), without an allocation.
func TestStringsEqual(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 5))
	runes := []rune("ab/\"\\\b\n\t\x01é€😀 z")
	for n := range 3000 {
		text := make([]rune, rng.IntN(12))
		for i := range text {
			text[i] = runes[rng.IntN(len(runes))]
		}
		a := spellJSON(rng, string(text))
		b := spellJSON(rng, string(text))
		if !json.Valid([]byte(a)) || !json.Valid([]byte(b)) {
			t.Fatalf("bad spelling %s %s", a, b)
		}
		if !StringsEqual([]byte(a), []byte(b)) {
			t.Fatalf("%s and %s: not equal", a, b)
		}
		if len(text) > 0 {
			other := append([]rune(nil), text...)
			i := rng.IntN(len(other))
			other[i] = runes[(slicesIndex(runes, other[i])+1+rng.IntN(len(runes)-1))%len(runes)]
			if n%2 == 0 {
				other = other[:len(other)-1] // or one rune shorter
			}
			c := spellJSON(rng, string(other))
			want := string(AppendUnquoted(nil, []byte(a))) == string(AppendUnquoted(nil, []byte(c)))
			if StringsEqual([]byte(a), []byte(c)) != want || StringsEqual([]byte(c), []byte(a)) != want {
				t.Fatalf("%s and %s: StringsEqual says %v", a, c, !want)
			}
		}
	}
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{`""`, `""`, true},
		{`"x"`, `x`, false},
		{`1`, `1`, false},
		{`"caf\u00e9"`, `"café"`, true},
		{`"caf\u00e9"`, `"cafe"`, false},
		{`"\ud83d\ude00"`, `"😀"`, true},
		{`"ab"`, `"a"`, false},
	} {
		if got := StringsEqual([]byte(tc.a), []byte(tc.b)); got != tc.want {
			t.Errorf("StringsEqual(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
	x, y := []byte(`"`+strings.Repeat(`caf\u00e9 \"q\" `, 20)+`"`), []byte(`"`+strings.Repeat(`café \"q\" `, 20)+`"`)
	if n := testing.AllocsPerRun(10, func() { StringsEqual(x, y) }); n != 0 || !StringsEqual(x, y) {
		t.Errorf("StringsEqual: %v allocations", n)
	}
}

// TestStringIsBytes: StringIs takes the text as a byte slice as well as
// a string, with the same verdicts, and allocates for neither.
func TestStringIsBytes(t *testing.T) {
	for _, tc := range []struct {
		v, s string
		want bool
	}{
		{`"tools\/call"`, "tools/call", true},
		{`"caf\u00e9"`, "café", true},
		{`"caf\u00e9"`, "cafe", false},
		{`"abc"`, "abc", true},
		{`"abc"`, "ab", false},
		{`1`, "1", false},
	} {
		if a, b := StringIs([]byte(tc.v), tc.s), StringIs([]byte(tc.v), []byte(tc.s)); a != tc.want || b != tc.want {
			t.Errorf("StringIs(%s, %q): string %v, bytes %v", tc.v, tc.s, a, b)
		}
	}
	v := []byte(`"` + strings.Repeat(`caf\u00e9 \"q\" `, 20) + `"`)
	s := strings.Repeat(`café "q" `, 20)
	b := []byte(s)
	if n := testing.AllocsPerRun(10, func() { StringIs(v, s); StringIs(v, b) }); n != 0 || !StringIs(v, s) || !StringIs(v, b) {
		t.Errorf("StringIs: %v allocations", n)
	}
}

// TestDuplicateNameLongEscaped: long names, both escaped or one of them,
// are compared without allocating (both escaped were unescaped onto the
// heap; a plain one was converted to a string), with the same verdicts.
func TestDuplicateNameLongEscaped(t *testing.T) {
	long := strings.Repeat(`\u00e9`, 60)
	differ := []byte(`{"` + long + `a":1,"` + long + `b":2}`)
	same := []byte(`{"` + long + `a":1,"` + strings.Repeat("é", 60) + `\u0061":2}`)
	// One name plain, the other escaped.
	mixed := []byte(`{"` + strings.Repeat("é", 60) + `a":1,"` + long + `a":2}`)
	if DuplicateName(differ) || !DuplicateName(same) || !DuplicateName(mixed) {
		t.Fatalf("DuplicateName: %v %v %v", DuplicateName(differ), DuplicateName(same), DuplicateName(mixed))
	}
	if n := testing.AllocsPerRun(10, func() { DuplicateName(differ); DuplicateName(same); DuplicateName(mixed) }); n != 0 {
		t.Errorf("DuplicateName: %v allocations", n)
	}
}

func slicesIndex(rs []rune, r rune) int {
	for i, x := range rs {
		if x == r {
			return i
		}
	}
	return -1
}

func TestDuplicateName(t *testing.T) {
	tests := []struct {
		obj  string
		want bool
	}{
		{`{}`, false},
		{`{"a":1}`, false},
		{`{"a":1,"b":{"a":2}}`, false},
		{`{"a":1,"a":2}`, true},
		{`{"a":1,"\u0061":2}`, true},
		{`{"\u0061":1,"a":2}`, true},
		{`{"\u0061":1,"\u0061":2}`, true},
		{`{"A":1,"a":2}`, false},
	}
	for _, tc := range tests {
		if got := DuplicateName([]byte(tc.obj)); got != tc.want {
			t.Errorf("DuplicateName(%s) = %v", tc.obj, got)
		}
	}
	// Many members, with and without a late duplicate.
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	base := b.String()
	if DuplicateName([]byte(base + `"end":0}`)) {
		t.Error("5000 distinct names: duplicate reported")
	}
	if !DuplicateName([]byte(base + `"k\u0034999":0}`)) {
		t.Error("5000 names with an escaped duplicate at the end: not found")
	}
}

// TestMembersDifferential checks the walker against encoding/json on
// random valid objects.
func TestMembersDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 2000; n++ {
		obj := randomJSON(rng, 0, true)
		var ref map[string]json.RawMessage
		if err := json.Unmarshal(obj, &ref); err != nil {
			t.Fatalf("generator made invalid JSON %s: %v", obj, err)
		}
		count := 0
		var it Members
		for it.Reset(obj); it.Next(); {
			count++
			name := string(AppendUnquoted(nil, append(append([]byte{'"'}, it.Name()...), '"')))
			want, ok := ref[name]
			if !ok {
				t.Fatalf("%s: member %q not in reference", obj, name)
			}
			if strings.TrimSpace(string(want)) != string(it.Value()) {
				t.Fatalf("%s: member %q = %s, reference %s", obj, name, it.Value(), want)
			}
			if got, want := it.NameEscaped(), bytes.IndexByte(it.Name(), '\\') >= 0; got != want {
				t.Fatalf("%s: member %q: NameEscaped %v, want %v", obj, it.Name(), got, want)
			}
		}
		if count != len(ref) {
			t.Fatalf("%s: %d members, reference %d", obj, count, len(ref))
		}
	}
}

func TestElements(t *testing.T) {
	arr := []byte(` [ 1 , "a,b]" , [2,[3]] , {"x":[]},"\u005d" ,null ] `)
	var got []string
	var it Elements
	for it.Reset(arr); it.Next(); {
		got = append(got, string(it.Value()))
	}
	want := []string{`1`, `"a,b]"`, `[2,[3]]`, `{"x":[]}`, `"\u005d"`, `null`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if it.End() != len(arr)-1 {
		t.Errorf("End %d, want %d", it.End(), len(arr)-1)
	}
	for _, empty := range []string{`[]`, ` [ ] `, "[\n]"} {
		if it.Reset([]byte(empty)); it.Next() {
			t.Errorf("%q iterated", empty)
		}
		if it.End() == 0 {
			t.Errorf("%q: End 0 after the last element", empty)
		}
	}
	for _, notArr := range []string{``, `{}`, `"[1]"`, `1`, `null`} {
		if it.Reset([]byte(notArr)); it.Next() {
			t.Errorf("%q iterated", notArr)
		}
	}
	// Cut short (not valid JSON): the walk stops, End stays 0, no panic.
	for _, cut := range []string{`[1,`, `[1`, `["a`, `[{"a":1}`, `[1 2]`} {
		n := 0
		for it.Reset([]byte(cut)); it.Next(); n++ {
		}
		if it.End() != 0 || n > 1 {
			t.Errorf("%q: %d elements, End %d", cut, n, it.End())
		}
	}
	if n := testing.AllocsPerRun(10, func() {
		for it.Reset(arr); it.Next(); {
		}
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

func TestElementsDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 2000; n++ {
		inner := randomJSON(rng, 0, false)
		arr := inner
		if len(bytes.TrimSpace(arr)) == 0 || bytes.TrimSpace(arr)[0] != '[' {
			arr = append(append([]byte("[ "), inner...), " , 0]"...)
		}
		var ref []json.RawMessage
		if err := json.Unmarshal(arr, &ref); err != nil {
			t.Fatalf("generator made invalid JSON %s: %v", arr, err)
		}
		k := 0
		var it Elements
		for it.Reset(arr); it.Next(); k++ {
			if k >= len(ref) || strings.TrimSpace(string(ref[k])) != string(it.Value()) {
				t.Fatalf("%s: element %d = %s, reference %q", arr, k, it.Value(), ref)
			}
		}
		if k != len(ref) {
			t.Fatalf("%s: %d elements, reference %d", arr, k, len(ref))
		}
	}
}

// TestMembersNameEscaped: the escape flag of a name, with the backslash
// in the first 16 bytes (the word-wise search), past them (the vector
// search), right before the closing quote, and as an escaped quote.
func TestMembersNameEscaped(t *testing.T) {
	for _, tc := range []struct {
		name string
		esc  bool
	}{
		{``, false}, {`a`, false}, {`\u0061`, true}, {`\\`, true}, {`a\"b`, true},
		{strings.Repeat("n", 15), false}, {strings.Repeat("n", 40), false},
		{strings.Repeat("n", 15) + `\n`, true}, {strings.Repeat("n", 16) + `\n`, true},
		{strings.Repeat("n", 33) + `\"`, true}, {strings.Repeat("é", 20) + `\/x`, true},
		{`\t` + strings.Repeat("n", 30), true},
	} {
		for _, other := range []string{`"x":1`, `"` + strings.Repeat("y", 24) + `":[1,{"\u00e9":2}]`} {
			obj := []byte(`{` + other + `, "` + tc.name + `" : "v` + strings.Repeat("w", len(tc.name)) + `"}`)
			var it Members
			found := 0
			for it.Reset(obj); found < 2 && it.Next(); {
				found++
			}
			if found != 2 {
				t.Fatalf("%s: two members not found", obj)
			}
			if string(it.Name()) != tc.name || it.NameEscaped() != tc.esc {
				t.Fatalf("%s: name %q escaped %v; want %q %v", obj, it.Name(), it.NameEscaped(), tc.name, tc.esc)
			}
			it.Reset(obj)
			it.Next()
			if !it.NextName() || it.NameEscaped() != tc.esc {
				t.Fatalf("%s: after NextName: escaped %v, want %v", obj, it.NameEscaped(), tc.esc)
			}
		}
	}
}

// TestMembersNextName: a walk by NextName that takes each value at the
// length SkipValue gives, or at 0 (its own skip), or leaves it to the next
// NextName, sees what Next sees; Rest starts each value; End is the
// object's length, also when more bytes follow it (an object met as the
// Rest of an outer one).
func TestMembersNextName(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 2000; n++ {
		obj := randomJSON(rng, 0, true)
		var names, values [][]byte
		var it Members
		for it.Reset(obj); it.Next(); {
			names, values = append(names, it.Name()), append(values, it.Value())
		}
		if it.End() != len(bytes.TrimRight(obj, " \t\r\n")) {
			t.Fatalf("%s: End %d, want %d", obj, it.End(), len(bytes.TrimRight(obj, " \t\r\n")))
		}
		tail := append(append([]byte{}, obj...), []byte(` , "next": {"a":"}"} }`)...)
		for mode := range 3 {
			i := 0
			for it.Reset(tail); it.NextName(); i++ {
				if i >= len(names) || !bytes.Equal(it.Name(), names[i]) {
					t.Fatalf("mode %d, %s: member %d named %q", mode, obj, i, it.Name())
				}
				rest := it.Rest()
				if !bytes.HasPrefix(rest, values[i]) || it.Value() != nil {
					t.Fatalf("mode %d, %s: member %d: Rest %q, Value %q before TakeValue", mode, obj, i, rest, it.Value())
				}
				switch mode {
				case 0:
					if !it.TakeValue(SkipValue(rest, 0)) {
						t.Fatalf("%s: TakeValue(SkipValue) failed", obj)
					}
				case 1:
					if !it.TakeValue(0) {
						t.Fatalf("%s: TakeValue(0) failed", obj)
					}
				default:
					continue // the next NextName skips it
				}
				if !bytes.Equal(it.Value(), values[i]) {
					t.Fatalf("mode %d, %s: member %d = %q, want %q", mode, obj, i, it.Value(), values[i])
				}
			}
			if i != len(names) {
				t.Fatalf("mode %d, %s: %d members, want %d", mode, obj, i, len(names))
			}
			if want := len(bytes.TrimRight(obj, " \t\r\n")); it.End() != want {
				t.Fatalf("mode %d, %s: End %d with more bytes after it, want %d", mode, obj, it.End(), want)
			}
		}
	}
	// A value that does not end inside the object ends the walk.
	var it Members
	it.Reset([]byte(`{"a":"bc"}`))
	if !it.NextName() || it.TakeValue(100) || it.Next() || it.End() != 0 {
		t.Error("a value taken past the object's end did not end the walk")
	}
	if it.Rest() != nil {
		t.Error("Rest after the end is not nil")
	}
}

// randomJSON generates a random valid JSON value (an object when obj),
// with distinct member names, escapes and whitespace.
func randomJSON(rng *rand.Rand, depth int, obj bool) []byte {
	ws := func() string { return []string{"", "", " ", "\n\t", "\r\n "}[rng.IntN(5)] }
	str := func() string {
		parts := []string{"a", "é", `\"`, `\\`, `\/`, `\u00e9`, `\ud83d\ude00`, "}", "]", ",", ":", "日本", `\n`}
		var b strings.Builder
		b.WriteByte('"')
		for i := rng.IntN(6); i > 0; i-- {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		b.WriteByte('"')
		return b.String()
	}
	if !obj {
		k := rng.IntN(8)
		if depth > 3 {
			k %= 5
		}
		switch k {
		case 0:
			return []byte(str())
		case 1:
			return []byte([]string{"0", "-1", "12.5e-3", "1E+9", "12345678901234567890"}[rng.IntN(5)])
		case 2:
			return []byte([]string{"true", "false", "null"}[rng.IntN(3)])
		case 3, 4:
			// fall through to an object
		default:
			var b strings.Builder
			b.WriteString("[" + ws())
			for i := rng.IntN(4); i > 0; i-- {
				b.Write(randomJSON(rng, depth+1, false))
				if i > 1 {
					b.WriteString(ws() + "," + ws())
				}
			}
			b.WriteString(ws() + "]")
			return []byte(b.String())
		}
	}
	var b strings.Builder
	b.WriteString(ws() + "{" + ws())
	n := rng.IntN(6)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(ws() + "," + ws())
		}
		fmt.Fprintf(&b, `"m%d%s"%s:%s`, i, []string{"", `\u0041`, "é", `\/`}[rng.IntN(4)], ws(), ws())
		b.Write(randomJSON(rng, depth+1, false))
	}
	b.WriteString(ws() + "}" + ws())
	return []byte(b.String())
}

// FuzzRawHelpers holds the raw-value helpers to their promise for input
// that is not valid JSON (the package doc, "Reading params"): results
// unspecified, but no panic and no endless loop, whatever the bytes. For
// valid input it checks them against each other: every member Next
// yields is one Lookup finds, StringIs agrees with AppendUnquoted, and a
// string equals itself respelled by AppendString.
func FuzzRawHelpers(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":"x\u00e9","a":[1,{"c":"\ud83d\ude00"}]}`, `"\u"`, `"\u12"`, `"\`, `{"\u":1}`,
		`{"a\"b":"c\\"}`, `[1,2`, `{"a":}`, `"\ud800\u"`, `{"x":"\/\b\f\n\r\t"}`,
		` [ 1 , "]" , [ [ ] ] , {"a":[2]} ] `, `[]`, `[1 2]`, `[,]`, `["a",`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		valid := Valid(b)
		var it Members
		n := 0
		for it.Reset(b); it.Next(); n++ {
			name, v := it.Name(), it.Value()
			StringIs(v, "x")
			StringsEqual(v, v)
			AppendUnquoted(nil, v)
			it.NameIs("a")
			if n > len(b) {
				t.Fatalf("%q: more members than bytes", b)
			}
			if valid {
				quoted := append(append([]byte{'"'}, name...), '"')
				if _, c := Lookup(b, string(AppendUnquoted(nil, quoted))); c == 0 {
					t.Fatalf("%q: member %q not found by Lookup", b, name)
				}
			}
		}
		for it.Reset(b); it.NextName(); {
			it.Rest()
			if !it.TakeValue(0) {
				break
			}
		}
		var el Elements
		k := 0
		for el.Reset(b); el.Next(); k++ {
			if k > len(b) {
				t.Fatalf("%q: more elements than bytes", b)
			}
			if valid && !Valid(el.Value()) {
				t.Fatalf("%q: element %d %q is not valid JSON", b, k, el.Value())
			}
		}
		if valid && firstByte(b) == '[' {
			var ref []json.RawMessage
			if json.Unmarshal(b, &ref) == nil && (len(ref) != k || el.End() == 0) {
				t.Fatalf("%q: %d elements (End %d), encoding/json %d", b, k, el.End(), len(ref))
			}
		}
		SkipValue(b, 0)
		DuplicateName(b)
		s := AppendUnquoted(nil, b)
		if valid && len(b) > 1 && b[0] == '"' && b[len(b)-1] == '"' {
			if !StringIs(b, s) || !StringIs(b, string(s)) {
				t.Fatalf("%q: StringIs disagrees with AppendUnquoted (%q)", b, s)
			}
			if again := AppendString(nil, s); !StringsEqual(b, again) || !StringsEqual(again, b) {
				t.Fatalf("%q and %q: not equal", b, again)
			}
		}
	})
}
