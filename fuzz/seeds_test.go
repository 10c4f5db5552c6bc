package fuzz

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// sharedTestdata is /work/shared/testdata seen from this module's
// directory (/work/main/fuzz).
const sharedTestdata = "../../shared/testdata"

// bigSeed is the size above which a seed is replayed by go test but not
// given to the mutator: the engine minimizes every new interesting input,
// and minimizing mutants of a 250 KB JSONTestSuite file stalls a whole
// -fuzztime run.
const bigSeed = 16 << 10

// fuzzing reports whether this run is fuzzing (-fuzz given) rather than
// replaying the seed corpus.
func fuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
}

// addSeed adds a one-[]byte seed, leaving out big ones when fuzzing.
func addSeed(f *testing.F, b []byte) {
	if len(b) > bigSeed && fuzzing() {
		return
	}
	f.Add(b)
}

// corpusFiles returns the files of sharedTestdata/dir matching glob,
// sorted by name. When the directory is absent it logs that the target
// is seeded without it and returns nothing: seeding never fails a run.
func corpusFiles(tb testing.TB, dir, glob string) [][]byte {
	tb.Helper()
	root := filepath.Join(sharedTestdata, dir)
	names, _ := filepath.Glob(filepath.Join(root, glob))
	if len(names) == 0 {
		tb.Logf("seeding without %s: no %s there", root, glob)
		return nil
	}
	slices.Sort(names)
	var out [][]byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			tb.Logf("seeding without %s: %v", n, err)
			continue
		}
		out = append(out, b)
	}
	return out
}

// corpusTexts returns JSONTestSuite and JSON_checker: texts that RFC 8259
// accepts, refuses, or leaves to the implementation.
func corpusTexts(tb testing.TB) [][]byte {
	return append(corpusFiles(tb, "jsontestsuite", "*.json"), corpusFiles(tb, "json-checker", "*.json")...)
}

// asParams wraps a JSON text as the params of a request, so that the
// checks after the envelope run on it too.
func asParams(text []byte) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":`), text...)
	return append(b, '}')
}

func nest(open, close string, n int, inner string) string {
	return strings.Repeat(open, n) + inner + strings.Repeat(close, n)
}

// contractBodies are the bodies of the wire contract (§2, §4, §5) and of
// decode's own tables: every row of the verdict order, the escapes, the
// ids, the depth and the streaming examples.
func contractBodies() []string {
	const v2 = `"jsonrpc":"2.0"`
	huge := strings.Repeat("x", 64<<10)
	return []string{
		// Valid requests and notifications.
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"params":{"a":[1,2]},"id":"x","method":"m","jsonrpc":"2.0"}`,
		" \t\r\n{ \"jsonrpc\" :\t\"2.0\" ,\n\"id\"\r: 3 , \"method\" : \"m\" , \"params\" : [ ] } \n\t\r ",
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","params":-1.5e3}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`,
		`{"jsonrpc":"2.0","method":"ping","result":1,"error":2}`,
		`{"jsonrpc":"2.0","id":1,"method":""}`,
		// Escapes resolved before any comparison.
		`{"jsonrpc":"2.0","id":1,"\u006dethod":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools\/call"}`,
		`{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`,
		`{"\u006a\u0073\u006f\u006e\u0072\u0070\u0063":"2.0","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\u2028"}`,
		`{"jsonrpc":"2.0","method":"café/日本/😀"}`,
		`{"jsonrpc":"2.0","method":"a\u0000b"}`,
		// Ids verbatim.
		`{"jsonrpc":"2.0","id":12345678901234567890123,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"caf\u00e9","method":"ping"}`,
		`{"jsonrpc":"2.0","id":-0.0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		`{"jsonrpc":"2.0","id" :  42  ,"method":"ping"}`,
		// Row 10.
		`{"id":1,"method":"ping"}`,
		`{"jsonrpc":"1.0","id":"a","method":"ping"}`,
		`{"jsonrpc":2.0,"id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0 ","id":1,"method":"ping"}`,
		`{"jsonrpc":"\u0032\u002e\u0030\u0030\u0030\u0030\u0030\u0030","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"Method":"ping"}`,
		`{"jsonrpc":"2.0","id":"r","method":1}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"e","error":{"code":-32600,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1.5,"result":1}`,
		`{}`,
		// Row 9.
		`{"jsonrpc":"2.0","id":1,"method":"ping","method":"other"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping","\u0069d":2}`,
		`{"jsonrpc":"2.0","ab":1,"method":"ping","a\u0062":2}`,
		`{"jsonrpc":"2.0","\ud83d\ude00":1,"method":"ping","😀":2}`,
		`{"jsonrpc":1,"x":1,"x":1}`,
		`{"jsonrpc":"2.0","method":"ping","params":{"a":1,"a":2}}`,
		`{"jsonrpc":"2.0","a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"r":18,"a":19,"method":"m"}`,
		// Row 8.
		`"hello"`, ` 42 `, `true`, "\nnull", `"a" x`,
		// Row 7a.
		`[{"jsonrpc":"2.0","method":"m"}]`, `[]`, " \r\n\t[1]", "[\x00\xff}}}", `[`, "[" + huge,
		// Row 7b.
		``, " \t\r\n", "\xEF\xBB\xBF{" + v2 + `,"method":"ping"}`, " \xEF\xBB\xBF{}",
		`{"a":[1,}`, `{"a":[1,}` + huge, `{}{}`, "{}\x00", "\f{}", "{}\v", "{\xC2\xA0}", "{}\u2028",
		`{"jsonrpc":"2.0"`, `{"jsonrpc":"2.`, `{"json`,
		`{"a":"\ud800"}`, `{"a":"\udc00"}`, `{"a":"\ud800\u0041"}`, `{"a":"\ud83d\ude00"}`, `{"a":"\ud800\udbff"}`,
		"{\"a\":\"\xff\"}", "{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xf4\x90\x80\x80\"}", "{\"a\":\"\xe2\x82\"}",
		"{\"a\":\"\x01\"}", `{"a":"\x41"}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":nul`,
		// Rows 7c and 7d.
		`{"jsonrpc":"2.0","method":"m","params":` + nest(`{"a":`, `}`, 998, `{}`) + `}`,
		`{"jsonrpc":"2.0","method":"m","params":` + nest(`{"a":`, `}`, 999, `{}`) + `}`,
		`{"jsonrpc":"2.0","method":"m","params":` + nest(`[`, `]`, 1000, ``) + `}`,
		`{"a":` + strings.Repeat("[", 1001) + "garbage",
		`{"a":"` + huge + `"}`,
		strings.Repeat(" ", 64<<10),
	}
}
