package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// rawCase is one suite case whose schema the raw walk serves.
type rawCase struct {
	name   string
	schema []byte
	rs     *rawSchema
	ls     *jsonschema.Schema
	data   []byte
	valid  bool
}

// rawSuiteCases compiles every group of the suite's draft dir with the
// library and the raw walk, returning the cases of the groups the walk
// serves and how many groups it leaves to the library.
func rawSuiteCases(t *testing.T, draft, dialect string) ([]rawCase, int) {
	t.Helper()
	if _, err := os.Stat(suiteDir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the suite is missing: %v", err)
		}
		t.Skipf("the suite is missing (../shared beside the repository): %v", err)
	}
	var docs []schemaDoc
	suiteRemotes(t, func(rel string, b []byte) error {
		if strings.HasPrefix(rel, "draft7/") {
			b = withDialect(b, draft7URI)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err != nil {
			return err
		}
		docs = append(docs, schemaDoc{"http://localhost:1234/" + rel, doc})
		return nil
	})
	files, err := filepath.Glob(filepath.Join(suiteDir, "tests", draft, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files for %s: %v", draft, err)
	}
	var cases []rawCase
	left := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var groups []suiteGroup
		if err := json.Unmarshal(b, &groups); err != nil {
			t.Fatal(err)
		}
		for i, g := range groups {
			schema := []byte(g.Schema)
			if dialect != "" {
				schema = withDialect(schema, dialect)
			}
			name := fmt.Sprintf("%s/%s-%d", draft, strings.TrimSuffix(filepath.Base(f), ".json"), i)
			ls, err := compileLibrary(schema, "https://suite.invalid/"+name+".json", docs)
			if err != nil {
				t.Fatalf("%s: the library refused the schema: %v", name, err)
			}
			rs, err := compileRaw(ls)
			if errors.Is(err, errRawUnsupported) {
				left++
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, tc := range g.Tests {
				cases = append(cases, rawCase{name + " " + tc.Description, schema, rs, ls, trimWS(tc.Data), tc.Valid})
			}
		}
	}
	return cases, left
}

// BenchmarkSchemaWalk compares the raw walk with the library's Validate
// (on the model validateLibrary builds) for schemas outside the compiled
// subset, side by side in one run:
//
//	go test ./mcp -run '^$' -bench SchemaWalk -benchmem
func BenchmarkSchemaWalk(b *testing.B) {
	shapes := []struct {
		name, schema, args string
	}{
		{"tags-uniqueItems", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string"},"uniqueItems":true}},"required":["tags"]}`,
			`{"tags":["alpha","beta","gamma"]}`},
		{"ref-anyOf", `{"type":"object","$defs":{"pt":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"number"}},"required":["x","y"]}},"properties":{"shape":{"anyOf":[{"$ref":"#/$defs/pt"},{"type":"array","items":{"$ref":"#/$defs/pt"}}]}}}`,
			`{"shape":[{"x":1,"y":2},{"x":3.5,"y":-4},{"x":0,"y":0}]}`},
		{"unevaluated-1KiB", `{"type":"object","properties":{"id":{"type":"string"}},"unevaluatedProperties":{"type":"integer"}}`,
			func() string {
				var sb strings.Builder
				sb.WriteString(`{"id":"a"`)
				for i := 0; sb.Len() < 1<<10; i++ {
					fmt.Fprintf(&sb, `,"k%d":%d`, i, i)
				}
				return sb.String() + "}"
			}()},
		{"uniqueItems-64KiB", `{"type":"object","properties":{"v":{"type":"array","uniqueItems":true}}}`,
			func() string {
				var sb strings.Builder
				sb.WriteString(`{"v":[0`)
				for i := 1; sb.Len() < 64<<10; i++ {
					fmt.Fprintf(&sb, `,%d`, i)
				}
				return sb.String() + "]}"
			}()},
	}
	for _, sh := range shapes {
		ls, err := compileLibrary([]byte(sh.schema), "https://bench.invalid/s.json", nil)
		if err != nil {
			b.Fatal(err)
		}
		rs, err := compileRaw(ls)
		if err != nil {
			b.Fatal(err)
		}
		args := []byte(sh.args)
		if rs.validate(args) != nil || validateLibrary(ls, args) != nil {
			b.Fatalf("%s: the arguments must be valid", sh.name)
		}
		b.Run(sh.name+"/raw", func(b *testing.B) {
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			for b.Loop() {
				rs.validate(args)
			}
		})
		b.Run(sh.name+"/library", func(b *testing.B) {
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			for b.Loop() {
				validateLibrary(ls, args)
			}
		})
	}
}

// rawCompile compiles schema with the library and the raw walk.
func rawCompile(t testing.TB, schema string) (*rawSchema, *jsonschema.Schema) {
	t.Helper()
	ls, err := compileLibrary([]byte(schema), "https://test.invalid/s.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := compileRaw(ls)
	if err != nil {
		t.Fatal(err)
	}
	return rs, ls
}

// TestRawBudget: two recursive branches of anyOf judge each level of a
// nested array twice, so a leaf that fails both costs 2^depth walks. The
// walk stops at its step budget and refuses the call, whatever a not
// around it would have made of the failure.
func TestRawBudget(t *testing.T) {
	const branchy = `{"$defs":{"n":{"anyOf":[{"type":"array","items":{"$ref":"#/$defs/n"}},{"type":"array","minItems":0,"items":{"$ref":"#/$defs/n"}}]}},`
	for _, schema := range []string{
		branchy + `"properties":{"v":{"$ref":"#/$defs/n"}}}`,
		branchy + `"properties":{"v":{"not":{"$ref":"#/$defs/n"}}}}`,
	} {
		rs, _ := rawCompile(t, schema)
		depth := 28 + rand.IntN(4) // 2^28 walks without the budget
		args := []byte(`{"v":` + strings.Repeat("[", depth) + `"leaf"` + strings.Repeat("]", depth) + `}`)
		e := rawEvals.Get().(*rawEval)
		rawEvals.Put(e)
		err := rs.validate(args)
		if err == nil || err.msg != errCostly {
			t.Fatalf("%s, depth %d: got %v, want the budget's refusal", schema, depth, err)
		}
		// The walk that refused stopped near its budget.
		e = &rawEval{budget: rawStepsBase + rs.perByte*len(args)}
		var ue uneval
		e.unevalFrom(&ue, args, rs.root, false)
		e.eval(rs.root, args, 0, &ue)
		if e.steps > e.budget+1000 {
			t.Errorf("depth %d: %d steps for a budget of %d", depth, e.steps, e.budget)
		}
	}
	// A wide schema is not refused for its width: 200 conditions on each
	// of 1000 elements (found refused at 16 steps a byte, by review).
	wide := `{"type":"object","properties":{"v":{"items":{"allOf":[` + strings.TrimSuffix(strings.Repeat(`{"minimum":0},`, 200), ",") + `]}}}}`
	rs, ls := rawCompile(t, wide)
	args := []byte(`{"v":[` + strings.TrimSuffix(strings.Repeat(`1,`, 1000), ",") + `]}`)
	if err := rs.validate(args); err != nil || validateLibrary(ls, args) != nil {
		t.Errorf("200 conditions on 1000 elements: raw %v, library %v", err, validateLibrary(ls, args))
	}
	// A shallow instance of the same schema is judged as the library does.
	rs, ls = rawCompile(t, branchy+`"properties":{"v":{"$ref":"#/$defs/n"}}}`)
	for _, args := range []string{`{"v":[[[]],[]]}`, `{"v":[[["x"]]]}`} {
		if (rs.validate([]byte(args)) == nil) != (validateLibrary(ls, []byte(args)) == nil) {
			t.Errorf("%s: the raw walk and the library disagree", args)
		}
	}
}

// TestRawMultipleOf compares the exact multipleOf of the raw walk with
// big.Rat's quotient on random decimals, spelled in several ways.
func TestRawMultipleOf(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 7))
	spell := func(mant int64, exp int) string {
		switch r.IntN(3) {
		case 0:
			return fmt.Sprintf("%de%d", mant, exp)
		case 1:
			return new(big.Rat).Mul(big.NewRat(mant, 1), pow10Rat(exp)).FloatString(max(0, -exp))
		}
		return fmt.Sprintf("%d0e%d", mant, exp-1)
	}
	checked := 0
	for range 20000 {
		bm, be := int64(1+r.IntN(200)), r.IntN(9)-4
		am, ae := int64(r.IntN(100000)-50000), r.IntN(13)-6
		if r.IntN(4) == 0 {
			am *= bm // more multiples
			ae = be + r.IntN(4)
		}
		bt, at := spell(bm, be), spell(am, ae)
		b, _ := new(big.Rat).SetString(bt)
		a, _ := new(big.Rat).SetString(at)
		want := new(big.Rat).Quo(a, b).IsInt()
		text, _ := ratText(b)
		mu := newMultiple(text)
		d := parseDecimal([]byte(at))
		if got := mu.divides(&d); got != want {
			t.Fatalf("seed %d: %s multipleOf %s: got %v, want %v", seed, at, bt, got, want)
		}
		checked++
	}
	// Numbers the library path refuses for their size are judged exactly,
	// in time linear in their text.
	huge := "7" + strings.Repeat("0", 200000)
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{huge, "7", true}, {huge, "0.7", true}, {huge, "3", false}, {huge + "1", "7", false},
		{"1e-300000", "1e-300000", true}, {"1e-300000", "1e-299999", false}, {"1e300000", "0.0001", true},
		{"123456789123456789123456789123456789e40", "123456789123456789123456789123456789", true},
		{"1024e-3", "0.128", true}, {"1024e-3", "0.256", true}, {"1024e-3", "0.3", false},
	} {
		text, _ := ratText(mustRat(t, c.b))
		d := parseDecimal([]byte(c.a))
		if got := newMultiple(text).divides(&d); got != c.want {
			t.Errorf("%.40s multipleOf %s: got %v, want %v", c.a, c.b, got, c.want)
		}
	}
	t.Logf("seed %d: %d random pairs", seed, checked)
}

func pow10Rat(e int) *big.Rat {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(e))), nil)
	if e < 0 {
		return new(big.Rat).SetFrac(big.NewInt(1), p)
	}
	return new(big.Rat).SetInt(p)
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func mustRat(t *testing.T, s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a number: %s", s)
	}
	return r
}

// TestRawUniqueItems: arrays past 20 elements (hashed) with one pair of
// equal elements spelled differently, placed at random, and the same
// arrays without it; the pair reported must be the one placed.
func TestRawUniqueItems(t *testing.T) {
	rs, ls := rawCompile(t, `{"type":"object","properties":{"v":{"type":"array","uniqueItems":true}}}`)
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 9))
	pairs := [][2]string{
		{`1`, `1.0`}, {`100`, `1e2`}, {`-0`, `0`}, {`"a"`, `"\u0061"`}, {`"\ud83d\ude00"`, `"😀"`},
		{`{"a":1,"b":[2]}`, `{"b":[2.0],"a":1}`}, {`[{"x":null}]`, `[{"x":null}]`}, {`{"k":1,"k":2}`, `{"k":2}`},
	}
	for range 300 {
		n := 21 + r.IntN(200)
		els := make([]string, n)
		for i := range els {
			switch r.IntN(3) {
			case 0:
				els[i] = strconv.Itoa(i + 1000)
			case 1:
				els[i] = `"s` + strconv.Itoa(i) + `"`
			default:
				els[i] = `{"i":` + strconv.Itoa(i) + `,"t":"` + strconv.FormatInt(int64(i), 36) + `"}`
			}
		}
		distinct := `{"v":[` + strings.Join(els, ",") + `]}`
		if err := rs.validate([]byte(distinct)); err != nil {
			t.Fatalf("seed %d: distinct elements refused: %v", seed, err)
		}
		p := pairs[r.IntN(len(pairs))]
		i, j := r.IntN(n), r.IntN(n)
		for i == j {
			j = r.IntN(n)
		}
		els[i], els[j] = p[0], p[1]
		args := []byte(`{"v":[` + strings.Join(els, ",") + `]}`)
		err := rs.validate(args)
		want := fmt.Sprintf("(items %d and %d are equal)", min(i, j), max(i, j))
		if err == nil || !strings.HasSuffix(err.msg, want) {
			t.Fatalf("seed %d: %s and %s at %d and %d: got %v, want %s", seed, p[0], p[1], i, j, err, want)
		}
		if validateLibrary(ls, args) == nil {
			t.Fatalf("seed %d: the library takes %s", seed, args)
		}
	}
}

// TestRawLastWins: a name repeated below the top level is read as every
// reader reads it, the last occurrence winning, at any depth.
func TestRawLastWins(t *testing.T) {
	rs, ls := rawCompile(t, `{"type":"object","properties":{"o":{"type":"object","properties":{"a":{"type":"integer"}},"unevaluatedProperties":false}}}`)
	for _, c := range []struct {
		args  string
		valid bool
	}{
		{`{"o":{"a":"x","a":1}}`, true},
		{`{"o":{"a":1,"a":"x"}}`, false},
		{`{"o":{"\u0061":"x","a":2}}`, true},
		{`{"o":{"a":1,"b":2,"b":3}}`, false},
		{`{"o":{"a":1},"o":{"a":"x"}}`, false}, // the top level is the server's to refuse (dupMember); here the last wins
	} {
		got := rs.validate([]byte(c.args)) == nil
		if got != c.valid || got != (validateLibrary(ls, []byte(c.args)) == nil) {
			t.Errorf("%s: raw %v, library %v, want %v", c.args, got, validateLibrary(ls, []byte(c.args)) == nil, c.valid)
		}
	}
}

// TestRawEqualLargeObjects: objects past smallSet members are compared
// through sorted words of their names' hashes; equal whatever the order
// and spelling of names and numbers, unequal on one value or one name.
func TestRawEqualLargeObjects(t *testing.T) {
	rs, ls := rawCompile(t, `{"type":"object","properties":{"v":{"type":"array","uniqueItems":true}}}`)
	r := rand.New(rand.NewPCG(rand.Uint64(), 3))
	for range 200 {
		n := smallSet + 1 + r.IntN(60)
		type member struct{ name, a, b string }
		ms := make([]member, n)
		for i := range ms {
			name := "m" + strconv.Itoa(i)
			a := strconv.Itoa(i)
			ms[i] = member{`"` + name + `"`, a, a + ".0"}
			if r.IntN(4) == 0 {
				ms[i].name = `"\u006d` + name[1:] + `"` // the same name, escaped
			}
			if r.IntN(5) == 0 {
				inner := `{"x":[` + a + `,{"y":"` + name + `"}]}`
				ms[i].a, ms[i].b = inner, inner
			}
		}
		write := func(order []int, value func(member) string) string {
			parts := make([]string, len(order))
			for k, i := range order {
				parts[k] = `"` + strings.Trim(ms[i].name, `"`) + `":` + value(ms[i])
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
		a := write(r.Perm(n), func(m member) string { return m.a })
		b := write(r.Perm(n), func(m member) string { return m.b })
		changed := r.Perm(n)
		k := r.IntN(n)
		c := write(changed, func(m member) string {
			if m == ms[changed[k]] {
				return `"other"`
			}
			return m.a
		})
		for _, tc := range []struct {
			args  string
			valid bool
		}{
			{`{"v":[` + a + `,` + b + `]}`, false},
			{`{"v":[` + a + `,` + c + `]}`, true},
			{`{"v":[1,` + a + `,2,` + strings.Replace(a, `"m0"`, `"n0"`, 1) + `]}`, strings.Contains(a, `"m0"`)},
		} {
			got := rs.validate([]byte(tc.args)) == nil
			if got != tc.valid || got != (validateLibrary(ls, []byte(tc.args)) == nil) {
				t.Fatalf("%.200s…: raw %v, library %v, want %v", tc.args, got, validateLibrary(ls, []byte(tc.args)) == nil, tc.valid)
			}
		}
	}
}

// TestRawQuietFailUntouched: a failure inside a quiet branch (anyOf,
// oneOf, not, if, contains) is the one shared quietFail, which no
// keyword may write (a dependency once reworded it, for every walk in
// the process).
func TestRawQuietFailUntouched(t *testing.T) {
	want := quietFail.msg
	for _, schema := range []string{
		`{"type":"object","properties":{"v":{"anyOf":[{"dependentRequired":{"a":["b"]}},{"type":"string"}]}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"v":{"anyOf":[{"dependencies":{"a":["b"]}},{"type":"string"}]}}}`,
		`{"type":"object","properties":{"v":{"not":{"not":{"propertyNames":{"maxLength":0}}}}}}`,
	} {
		rs, ls := rawCompile(t, schema)
		args := []byte(`{"v":{"a":1}}`)
		got := rs.validate(args)
		if (got == nil) != (validateLibrary(ls, args) == nil) {
			t.Errorf("%s: raw %v, library %v", schema, got, validateLibrary(ls, args))
		}
		if quietFail.msg != want || len(quietFail.path) != 0 {
			t.Fatalf("%s: the shared quiet failure now says %q %v", schema, quietFail.msg, quietFail.path)
		}
	}
}
