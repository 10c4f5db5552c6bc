package loadgen

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// dupCases are JSON values with and without a member name twice; the
// answer is decode.HasDuplicateNameDeep's.
var dupCases = []string{
	`{}`, `[]`, `1`, `"a"`, `null`,
	`{"a":1,"b":2}`,
	`{"a":1,"a":2}`,
	`{"a":1,"\u0061":2}`,
	`{"\u0061":1,"a":2}`,
	`{"a\/b":1,"a/b":2}`,
	`{"é":1,"\u00e9":2}`,
	`{"a":{"b":1},"c":{"b":1}}`,
	`{"a":{"b":1,"b":1}}`,
	` { "a" : { "b" : [ { "c" : 1 , "c" : 2 } ] } } `,
	`[{"a":1},{"a":1}]`,
	`[[{"x":1,"y":{"x":2}}],{"z":[1,{"q":1,"q":2}]}]`,
	`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"u","text":"t"}]}}`,
	`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"t"}],"content":[]}}`,
	`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"t"}],"_meta":{"k":{"k":{"k":1}}}}}`,
	`{"a":"{\"b\":1,\"b\":2}"}`,
	`{"a":[],"b":{},"c":[{}],"a":0}`,
	`{"":1,"":2}`,
	`{"a\"":1,"a\u0022":2}`,
}

// manyNames returns an object of n distinct names, with the first name
// again at the end when dup is set.
func manyNames(n int, dup bool) string {
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"n` + strconv.Itoa(i) + `":{"x":` + strconv.Itoa(i) + `}`)
	}
	if dup {
		b.WriteString(`,"n0":1`)
	}
	return b.String() + "}"
}

func TestHasDuplicateName(t *testing.T) {
	cases := append([]string(nil), dupCases...)
	for _, n := range []int{maxNamesCompared - 1, maxNamesCompared, maxNamesCompared + 1, 40} {
		cases = append(cases, manyNames(n, false), manyNames(n, true), `[`+manyNames(n, true)+`]`, `{"a":`+manyNames(n, false)+`,"a":1}`)
	}
	for _, c := range cases {
		if !json.Valid([]byte(c)) {
			t.Fatalf("%q is not valid JSON", c)
		}
		want := decode.HasDuplicateNameDeep([]byte(c))
		if got := hasDuplicateName([]byte(c)); got != want {
			t.Errorf("hasDuplicateName(%.80q) = %v, want %v", c, got, want)
		}
	}
}

// FuzzHasDuplicateName: on any valid JSON, hasDuplicateName agrees with
// decode.HasDuplicateNameDeep.
func FuzzHasDuplicateName(f *testing.F) {
	for _, c := range dupCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(manyNames(20, true)))
	f.Fuzz(func(t *testing.T, b []byte) {
		if !decode.Valid(b) {
			return
		}
		if got, want := hasDuplicateName(b), decode.HasDuplicateNameDeep(b); got != want {
			t.Fatalf("hasDuplicateName(%q) = %v, decode says %v", b, got, want)
		}
	})
}
