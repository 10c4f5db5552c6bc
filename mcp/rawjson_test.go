package mcp

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/decode"
)

func TestCompareNumbers(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"0", "0", 0}, {"-0", "0", 0}, {"0.0", "-0e10", 0}, {"0", "1e-400", -1}, {"0", "-1e-400", 1},
		{"1", "1.0", 0}, {"1", "10e-1", 0}, {"100", "1e2", 0}, {"1.5e1", "15", 0}, {"0.001", "1e-3", 0},
		{"1", "2", -1}, {"2", "1", 1}, {"-1", "-2", 1}, {"-2", "-1", -1}, {"-1", "1", -1},
		{"9007199254740993", "9007199254740992", 1}, {"9007199254740993", "9007199254740993.0", 0},
		{"12345678901234567890123", "12345678901234567890124", -1},
		{"12345678901234567890123", "1.2345678901234567890123e22", 0},
		{"1e400", "1e399", 1}, {"1e400", "9.99e399", 1}, {"-1e400", "-1e399", -1}, {"1e-400", "1e-401", 1},
		{"0.1", "0.10000000000000001", -1}, {"0.30000000000000004", "0.3", 1},
		{"1e99999999999999999999", "1e400", 1}, {"1e-99999999999999999999", "1e-400", -1},
		{"123.456", "123.4560", 0}, {"123.456", "123.457", -1}, {"00.5e0", "0.5", 0},
		{"5E+2", "500", 0}, {"5e-0", "5", 0},
	}
	for _, tt := range tests {
		if got := compareNumbers([]byte(tt.a), []byte(tt.b)); got != tt.want {
			t.Errorf("compare(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := compareNumbers([]byte(tt.b), []byte(tt.a)); got != -tt.want {
			t.Errorf("compare(%s, %s) = %d, want %d", tt.b, tt.a, got, -tt.want)
		}
	}
}

func TestIsInteger(t *testing.T) {
	for n, want := range map[string]bool{
		"0": true, "-0": true, "0.0": true, "1": true, "1.0": true, "1e2": true, "1.5e1": true, "100e-2": true,
		"12345678901234567890123": true, "1e400": true, "0e-5": true,
		"1.5": false, "1e-1": false, "123e-2": false, "0.000001": false, "1.0000000000000000000001": false,
	} {
		d := parseDecimal([]byte(n))
		if d.isInteger() != want {
			t.Errorf("isInteger(%s) = %v", n, !want)
		}
	}
}

func TestDecimalInt(t *testing.T) {
	for n, want := range map[string]int64{
		"0": 0, "42": 42, "-42": -42, "4.2e1": 42, "9223372036854775807": 1<<63 - 1, "-9223372036854775808": -1 << 63,
		"1e18": 1e18,
	} {
		if got, ok := decimalInt([]byte(n)); !ok || got != want {
			t.Errorf("decimalInt(%s) = %d, %v", n, got, ok)
		}
	}
	for _, n := range []string{"9223372036854775808", "-9223372036854775809", "1e19", "1e400", "1.5", "18446744073709551616"} {
		if got, ok := decimalInt([]byte(n)); ok {
			t.Errorf("decimalInt(%s) = %d, true", n, got)
		}
	}
}

func TestStrings(t *testing.T) {
	tests := []struct {
		raw  string // a JSON string literal
		want string // its value
	}{
		{`""`, ""}, {`"a"`, "a"}, {`"caf\u00e9"`, "café"}, {`"café"`, "café"}, {`"\ud83d\ude00"`, "😀"},
		{`"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"}, {`"a\u0000b"`, "a\x00b"}, {`"\u2028x"`, "\u2028x"},
		{`"日本語\u65e5"`, "日本語日"}, {`"\uD83D\uDE00!"`, "😀!"},
	}
	for _, tt := range tests {
		raw := []byte(tt.raw)
		if !decode.StringIs(raw, tt.want) {
			t.Errorf("StringIs(%s, %q) = false", tt.raw, tt.want)
		}
		if decode.StringIs(raw, []byte(tt.want+"x")) || len(tt.want) > 0 && decode.StringIs(raw, []byte(tt.want[:len(tt.want)-1])) {
			t.Errorf("StringIs(%s) accepts a different value", tt.raw)
		}
		if n := stringLength(raw); n != utf8.RuneCountInString(tt.want) {
			t.Errorf("stringLength(%s) = %d", tt.raw, n)
		}
		plain := decode.AppendString(nil, tt.want)
		if !decode.StringsEqual(raw, plain) || !decode.StringsEqual(plain, raw) || !decode.StringsEqual(raw, raw) {
			t.Errorf("StringsEqual(%s, %s) = false", tt.raw, plain)
		}
		if name := raw[1 : len(raw)-1]; !nameIsEsc(name, strings.Contains(string(name), `\`), []byte(tt.want)) {
			t.Errorf("nameIsEsc(%s) = false", tt.raw)
		}
	}
	if decode.StringIs([]byte(`1`), []byte("1")) || decode.StringsEqual([]byte(`"a"`), []byte(`1`)) {
		t.Error("a number equals a string")
	}
	if decode.StringsEqual([]byte(`"\u0061b"`), []byte(`"\u0061c"`)) || decode.StringsEqual([]byte(`"\u0061"`), []byte(`"\u0061b"`)) {
		t.Error("different escaped strings equal")
	}
}

func TestEqualJSON(t *testing.T) {
	eq := [][2]string{
		{`1`, `1.0`}, {`"a"`, `"\u0061"`}, {`null`, `null`}, {`true`, `true`}, {`[]`, `[ ]`},
		{`[1,[2,{"a":3}]]`, `[1.0, [2e0, {"\u0061": 3}]]`}, {`{"a":1,"b":2}`, `{"b":2,"a":1}`}, {`{}`, `{ }`},
	}
	ne := [][2]string{
		{`1`, `"1"`}, {`true`, `false`}, {`null`, `false`}, {`[1]`, `[1,1]`}, {`[1,2]`, `[2,1]`},
		{`{"a":1}`, `{"a":1,"b":2}`}, {`{"a":1}`, `{"b":1}`}, {`{"a":1,"b":2}`, `{"a":1,"c":2}`}, {`[]`, `{}`},
	}
	for _, p := range eq {
		if !equalJSON([]byte(p[0]), []byte(p[1])) || !equalJSON([]byte(p[1]), []byte(p[0])) {
			t.Errorf("%s != %s", p[0], p[1])
		}
	}
	for _, p := range ne {
		if equalJSON([]byte(p[0]), []byte(p[1])) || equalJSON([]byte(p[1]), []byte(p[0])) {
			t.Errorf("%s == %s", p[0], p[1])
		}
	}
}

// FuzzCompareNumbers checks the decimal comparison against math/big on
// numbers with moderate exponents.
func FuzzCompareNumbers(f *testing.F) {
	for _, s := range [][2]string{{"1", "1.0"}, {"-0", "0"}, {"1e5", "99999.9"}, {"12345678901234567890123", "1.2e22"}, {"-0.001", "-1e-3"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if !isNumber(a) || !isNumber(b) || len(a) > 64 || len(b) > 64 {
			return
		}
		ra, ok1 := new(big.Rat).SetString(a)
		rb, ok2 := new(big.Rat).SetString(b)
		if !ok1 || !ok2 {
			return
		}
		if got, want := compareNumbers([]byte(a), []byte(b)), ra.Cmp(rb); got != want {
			t.Fatalf("compare(%s, %s) = %d, big.Rat says %d", a, b, got, want)
		}
		d := parseDecimal([]byte(a))
		if got, want := d.isInteger(), ra.IsInt(); got != want {
			t.Fatalf("isInteger(%s) = %v, big.Rat says %v", a, got, want)
		}
	})
}

// isNumber reports whether s is a JSON number with an exponent of at most
// three digits (math/big handles those quickly).
func isNumber(s string) bool {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return false
	}
	if _, ok := v.(float64); !ok && !strings.ContainsAny(s, "eE") {
		return false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(s[i+1:], "+-")) > 3 {
		return false
	}
	return len(s) > 0 && (s[0] == '-' || s[0] >= '0' && s[0] <= '9') && decode.Valid([]byte(s))
}

// FuzzStrings checks the string helpers against encoding/json.
func FuzzStrings(f *testing.F) {
	for _, s := range []string{`"a"`, `"caf\u00e9"`, `"\ud83d\ude00x"`, `"\"\\\/\b"`, `"日本"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		raw = string(trimWS([]byte(raw))) // values reach the helpers trimmed
		if !decode.Valid([]byte(raw)) || len(raw) < 2 || raw[0] != '"' {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if !decode.StringIs([]byte(raw), []byte(want)) {
			t.Fatalf("StringIs(%s, %q) = false", raw, want)
		}
		if n := stringLength([]byte(raw)); n != utf8.RuneCountInString(want) {
			t.Fatalf("stringLength(%s) = %d, want %d", raw, n, utf8.RuneCountInString(want))
		}
		if !decode.StringsEqual([]byte(raw), decode.AppendString(nil, want)) {
			t.Fatalf("StringsEqual(%s) = false", raw)
		}
	})
}
