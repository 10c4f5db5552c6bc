package mcp

// Hostile review of the raw walk (schemaraw.go). Every TestRawReview test
// but the last two (TestRawReviewDifferential, TestRawReviewConcurrent,
// regression guards) failed against the code reviewed: each asserts what
// the contract (§3: at most 8× the body allocated for a request's decoded
// form; a 10 s handler deadline) or the walk's own documentation promises.
// No test asserts on wall-clock time: time is compared between two
// arguments of the same size and the same step count.

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/memtest"
)

// rvMinTime returns the least time of three runs of f.
func rvMinTime(f func()) time.Duration {
	best := time.Duration(1 << 62)
	for range 3 {
		t0 := time.Now()
		f()
		best = min(best, time.Since(t0))
	}
	return best
}

// rvSteps returns the steps the walk takes on v, without a budget.
func rvSteps(rs *rawSchema, v []byte) int {
	e := &rawEval{budget: 1 << 60}
	var ue uneval
	e.unevalFrom(&ue, v, rs.root, false)
	e.eval(rs.root, v, 0, &ue)
	return e.steps
}

// rvAmplification returns what one warm validate of v allocates, per byte.
func rvAmplification(rs *rawSchema, v []byte) float64 {
	rs.validate(v)
	return float64(memtest.Allocated(func() { rs.validate(v) })) / float64(len(v))
}

// rvUnion is a discriminated union whose discriminator ("op") is judged
// after the recursive member ("args") when the client puts it last: each
// level is judged by both branches (and once more, for the message, when
// both fail), as the library also does. format is asserted under draft-07.
const rvUnion = `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"e":{"$ref":"#/definitions/expr"}},"definitions":{
"expr":{"anyOf":[{"$ref":"#/definitions/add"},{"$ref":"#/definitions/mul"}]},
"add":{"type":"object","properties":{"op":{"const":"add"},"id":{"type":"string","format":"uuid"},"args":{"type":"array","items":{"$ref":"#/definitions/expr"}}},"required":["op"]},
"mul":{"type":"object","properties":{"op":{"const":"mul"},"id":{"type":"string","format":"uuid"},"args":{"type":"array","items":{"$ref":"#/definitions/expr"}}},"required":["op"]}}}`

// rvNest wraps leaf in depth levels of the union, "op" last.
func rvNest(leaf string, depth int) string {
	for range depth {
		leaf = `{"args":[` + leaf + `],"op":"mul"}`
	}
	return leaf
}

// TestRawReviewStepCostIgnoresValueSize: the step budget counted schema
// nodes applied, but one application costs time linear in the value it
// judges (members and elements are found by skipping their values, byte
// by byte). Two arguments of the same size: one keeps its padding beside
// the recursion (skipped once), the other at its bottom (skipped by every
// one of the 2^depth walks of the levels above). Found: the same step
// count for both, 4-7 ms against 1.0-1.2 s; a 66 KB body judged up to
// its budget took 47 s (hours for 1 MiB). Now a step is charged for each
// 32 bytes a node judges: the time a step costs must not depend on where
// the bytes are (compared as a ratio of time per step, generous), and a
// 1 MiB body with its padding at the bottom is refused by the budget.
func TestRawReviewStepCostIgnoresValueSize(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race: it checks verdicts or time per step, not concurrency; the plain run covers it")
	}
	rs, _ := rawCompile(t, rvUnion)
	depth, pad := 7, 1<<13
	if testing.Short() {
		depth, pad = 6, 1<<12
	}
	padding := `"pad":[` + strings.Repeat("0,", pad) + `0]`
	shallow := []byte(`{"e":` + rvNest(`{"op":"mul"}`, depth) + `,` + padding + `}`)
	deep := []byte(`{"e":` + rvNest(`{"op":"mul",`+padding+`}`, depth) + `}`)
	if len(shallow) != len(deep) {
		t.Fatalf("sizes %d and %d", len(shallow), len(deep))
	}
	ss, sd := rvSteps(rs, shallow), rvSteps(rs, deep)
	ts := rvMinTime(func() { rvSteps(rs, shallow) })
	td := rvMinTime(func() { rvSteps(rs, deep) })
	perStep := (float64(td) / float64(sd)) / (float64(ts) / float64(ss))
	t.Logf("%d bytes: padding beside %v in %d steps, below %v in %d steps (%.1f× the time a step)", len(deep), ts, ss, td, sd, perStep)
	if perStep > 20 {
		t.Errorf("a step cost %.0f× as long with the padding below the recursion: the budget does not count what a step walks", perStep)
	}
	big := []byte(`{"e":` + rvNest(`{"op":"mul",`+`"pad":[`+strings.Repeat("0,", 1<<19-64)+`0]}`, 12) + `}`)
	if err := rs.validate(big); err == nil || err.msg != errCostly {
		t.Errorf("%d bytes with the padding 12 levels down: got %v, want the budget's refusal", len(big), err)
	}
}

// TestRawReviewUniqueItemsKindCollision: uniqueItems keeps 44 bits of
// each element's hash, the high ones, but tags strings (^4) and numbers
// (^5) in the low bits it drops: the number 11 (hashed as the text
// "11e2") and the string "11e2" collide, and every colliding pair costs a
// walk from the array's start to find each element (element(k)). Found:
// 16 000 such pairs (265 KB) took 3.7 s, 6 ms with the strings changed
// by one letter; about 60 s for 1 MiB. The step budget counts len/16.
func TestRawReviewUniqueItemsKindCollision(t *testing.T) {
	e := new(rawEval)
	for _, p := range [][2]string{{`11`, `"11e2"`}, {`true`, `"true"`}, {`0`, `""`}} {
		if e.hash([]byte(p[0]))>>20 == e.hash([]byte(p[1]))>>20 {
			t.Errorf("%s and %s agree in the 44 hash bits uniqueItems sorts by", p[0], p[1])
		}
	}
	rs, ls := rawCompile(t, `{"type":"object","properties":{"v":{"type":"array","uniqueItems":true}}}`)
	n := 1200
	if testing.Short() {
		n = 800
	}
	build := func(tag string) []byte {
		var sb strings.Builder
		sb.WriteString(`{"v":[`)
		for i := 1; i <= n; i++ {
			if i > 1 {
				sb.WriteByte(',')
			}
			s := strconv.Itoa(i*10 + 1)
			sb.WriteString(s + `,"` + s + tag + strconv.Itoa(len(s)) + `"`)
		}
		sb.WriteString(`]}`)
		return []byte(sb.String())
	}
	colliding, control := build("e"), build("f")
	if rs.validate(colliding) != nil || validateLibrary(ls, colliding) != nil {
		t.Fatal("the elements are distinct: the array must be valid")
	}
	tc := rvMinTime(func() { rs.validate(control) })
	tx := rvMinTime(func() { rs.validate(colliding) })
	ratio := float64(tx) / float64(tc)
	t.Logf("%d elements, %d bytes: %v, %v with colliding pairs (%.0f×)", 2*n, len(colliding), tc, tx, ratio)
	if ratio > 20 {
		t.Errorf("number/string pairs whose hashes collide took %.0f× as long as the same array without collisions (quadratic in the array)", ratio)
	}
}

// TestRawReviewFormatAmplification: under draft-07 format asserts, the
// compiled subset refuses the schema and the raw walk hands each string
// to the library's format function as a Go string (two copies), and
// those functions split it (uuid, ipv4, json-pointer: 16 bytes a
// separator) or compile it (regex: regexp.Compile). zod-to-json-schema
// emits exactly such schemas (draft-07, "format":"uuid"). Found: 18× the
// body for uuid, ipv4 and json-pointer, 240× for regex, 385× for "(a)".
func TestRawReviewFormatAmplification(t *testing.T) {
	n := 1 << 17
	if testing.Short() {
		n = 1 << 15
	}
	for _, c := range []struct{ format, s string }{
		{"uuid", strings.Repeat("-", n)},
		{"ipv4", strings.Repeat(".", n)},
		{"json-pointer", strings.Repeat("/", n)},
		{"regex", strings.Repeat("a", n)},
		{"regex", strings.Repeat("(a)", n/3)},
	} {
		rs, _ := rawCompile(t, `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"s":{"type":"string","format":"`+c.format+`"}}}`)
		args := []byte(`{"s":"` + c.s + `"}`)
		if r := rvAmplification(rs, args); r > maxFactor {
			t.Errorf("format %s, %.8s… (%d bytes): the walk allocated %.1f× the body (at most %d×)", c.format, c.s, len(args), r, maxFactor)
		}
	}
}

// maxFactor is contract §3's bound (maxDecodedFactor, in a file built
// without -race only).
const maxFactor = 8

// TestRawReviewReappliedAllocations: what one application of a node
// allocates (a format's copies here; a pattern's unescaped copy alike) is
// paid again on every application, and a union judges its deepest level
// 3^depth times (twice quietly, once more for the message) well within
// the step budget. Found: a 16 KiB body allocated 7.9 MB at depth 4,
// 647 MB at depth 8, 3.4 GB at depth 10 (202 799×).
func TestRawReviewReappliedAllocations(t *testing.T) {
	rs, ls := rawCompile(t, rvUnion)
	leaf := `{"id":"` + strings.Repeat("a", 16<<10) + `","op":"mul"}`
	t.Logf("the leaf alone: %.1f× the body", rvAmplification(rs, []byte(`{"e":`+leaf+`}`)))
	args := []byte(`{"e":` + rvNest(leaf, 5) + `}`)
	if (rs.validate(args) == nil) != (validateLibrary(ls, args) == nil) {
		t.Fatal("the walk and the library disagree")
	}
	if r := rvAmplification(rs, args); r > maxFactor {
		t.Errorf("the same leaf 5 levels down (%d bytes): the walk allocated %.0f× the body (at most %d×)", len(args), r, maxFactor)
	}
}

// TestRawReviewLastWinsRewrite: one name repeated below the top level
// makes validate rewrite the arguments (decode.AppendLastWins), which
// builds a map of every name of the object that repeats it (a string and
// a map entry for each member, ~60 bytes for "xy":0). Found: 16-20× the
// body for 10 000-100 000 distinct names and one repeated.
func TestRawReviewLastWinsRewrite(t *testing.T) {
	rs, _ := rawCompile(t, `{"type":"object","properties":{"deep":{"type":"object"}},"unevaluatedProperties":false}`)
	n := 50000
	if testing.Short() {
		n = 10000
	}
	var sb strings.Builder
	sb.WriteString(`{"deep":{"k":0`)
	for i := range n {
		sb.WriteString(`,"` + strconv.FormatInt(int64(i), 36) + `":0`)
	}
	sb.WriteString(`,"k":1}}`)
	args := []byte(sb.String())
	if err := rs.validate(args); err != nil {
		t.Fatal(err)
	}
	if r := rvAmplification(rs, args); r > maxFactor {
		t.Errorf("%d distinct names and one repeated, one level down (%d bytes): %.1f× the body (at most %d×)", n, len(args), r, maxFactor)
	}
}

// TestRawReviewUniqueItemsObjectMaps: up to 20 elements, uniqueItems
// compares every pair, and rawEqual compares two objects of more than
// smallSet members through a map of one's members (a string for each
// name), built before the first member is compared: 190 maps for 20
// objects of the same member count that differ in their first member.
// Found: 86× the body (453 KB, 20 objects of 3001 members), 137× (139 KB).
func TestRawReviewUniqueItemsObjectMaps(t *testing.T) {
	rs, ls := rawCompile(t, `{"type":"object","properties":{"v":{"type":"array","uniqueItems":true}}}`)
	m := 1000
	if testing.Short() {
		m = 500
	}
	var sb strings.Builder
	sb.WriteString(`{"v":[`)
	for e := range 20 {
		if e > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"_":` + strconv.Itoa(e))
		for i := range m {
			sb.WriteString(`,"` + strconv.FormatInt(int64(i), 36) + `":0`)
		}
		sb.WriteString(`}`)
	}
	sb.WriteString(`]}`)
	args := []byte(sb.String())
	if rs.validate(args) != nil || validateLibrary(ls, args) != nil {
		t.Fatal("the objects are distinct: the array must be valid")
	}
	if r := rvAmplification(rs, args); r > maxFactor {
		t.Errorf("20 objects of %d members (%d bytes): %.1f× the body (at most %d×)", m+1, len(args), r, maxFactor)
	}
}

// TestRawReviewPatternEscapes: pattern on a string that holds an escape
// unescapes it into a new slice (matchString) on every application: a
// valid call allocates, which the walk's documentation (and
// TestRawAllocs, whose suite has no such case) says it does not, and ten
// patterns on each string cost 10.2× the body.
func TestRawReviewPatternEscapes(t *testing.T) {
	rs, _ := rawCompile(t, `{"type":"object","properties":{"s":{"type":"string","pattern":"a"}}}`)
	one := []byte(`{"s":"a\n"}`)
	if rs.validate(one) != nil {
		t.Fatal("must be valid")
	}
	if n := testing.AllocsPerRun(50, func() { rs.validate(one) }); n != 0 && !raceEnabled {
		t.Errorf("%s: a valid call allocated %.0f times", one, n)
	}
	all := strings.TrimSuffix(strings.Repeat(`{"pattern":"^[^<]*$"},`, 10), ",")
	rs, _ = rawCompile(t, `{"type":"object","properties":{"s":{"type":"array","items":{"type":"string","allOf":[`+all+`]}}}}`)
	el := `"` + strings.Repeat("a", 200) + `\n"`
	args := []byte(`{"s":[` + strings.TrimSuffix(strings.Repeat(el+",", 1000), ",") + `]}`)
	if r := rvAmplification(rs, args); r > maxFactor {
		t.Errorf("ten patterns on strings with an escape (%d bytes): %.1f× the body (at most %d×)", len(args), r, maxFactor)
	}
}

// rvGen returns a random small JSON value: names that repeat (some
// escaped), numbers spelled several ways, strings some formats judge.
func rvGen(r *rand.Rand, depth int) string {
	if depth <= 0 || r.IntN(3) == 0 {
		leaves := []string{`null`, `true`, `0`, `1`, `1.5`, `-1`, `"a"`, `"b"`, `""`, `"1e1"`, `[]`, `{}`,
			`"\u0061"`, `"-"`, `"aa"`, `2`, `1.0`, `"2020-01-01"`, `"x@y"`, `"/a"`, `1e1`, `-0`}
		return leaves[r.IntN(len(leaves))]
	}
	n := r.IntN(4)
	parts := make([]string, n)
	if r.IntN(2) == 0 {
		for i := range parts {
			parts[i] = rvGen(r, depth-1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	names := []string{"a", "b", "c", "x1", "x2", "foo", `\u0061`, "kind", "d"}
	for i := range parts {
		parts[i] = `"` + names[r.IntN(len(names))] + `":` + rvGen(r, depth-1)
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// rvSchemas are schemas around the keywords whose interplay the walk
// reads from the library: unevaluated* under anyOf/oneOf/if/not and
// dependentSchemas, contains with minContains 0, prefixItems and items,
// dynamic and recursive references, propertyNames, dependencies and
// format in older drafts, empty enum, $ref cycles.
var rvSchemas = func() []string {
	const d19 = `"$schema":"https://json-schema.org/draft/2019-09/schema",`
	const d7 = `"$schema":"http://json-schema.org/draft-07/schema#",`
	const d6 = `"$schema":"http://json-schema.org/draft-06/schema#",`
	const d4 = `"$schema":"http://json-schema.org/draft-04/schema#",`
	return []string{
		`{"unevaluatedProperties":false,"anyOf":[{"properties":{"a":true}},{"properties":{"b":true}}]}`,
		`{"unevaluatedProperties":false,"oneOf":[{"properties":{"a":{"type":"integer"}}},{"properties":{"b":true},"required":["b"]}]}`,
		`{"unevaluatedProperties":false,"if":{"properties":{"a":{"const":1}},"required":["a"]},"then":{"properties":{"b":true}},"else":{"properties":{"c":true}}}`,
		`{"unevaluatedProperties":false,"properties":{"a":true},"allOf":[{"anyOf":[{"properties":{"b":true}},{"unevaluatedProperties":true}]}]}`,
		`{"unevaluatedProperties":{"type":"integer"},"allOf":[{"not":{"properties":{"a":true},"required":["a"]}}]}`,
		`{"unevaluatedProperties":false,"dependentSchemas":{"a":{"properties":{"b":true}}},"properties":{"a":true}}`,
		`{"unevaluatedProperties":false,"patternProperties":{"^x":true},"anyOf":[{"additionalProperties":true},true]}`,
		`{"unevaluatedProperties":false,"allOf":[{"unevaluatedProperties":false,"properties":{"a":true}}],"properties":{"b":true}}`,
		`{"unevaluatedItems":false,"prefixItems":[true],"anyOf":[{"prefixItems":[true,true]},{"contains":{"type":"string"}}]}`,
		`{"unevaluatedItems":false,"contains":{"type":"integer"},"minContains":0}`,
		`{"unevaluatedItems":{"type":"integer"},"if":{"prefixItems":[{"type":"null"}]},"then":{"items":{"type":"string"}}}`,
		`{"unevaluatedItems":false,"oneOf":[{"items":true},{"prefixItems":[true]}]}`,
		`{"contains":{"type":"integer"},"minContains":0,"maxContains":1}`,
		`{"prefixItems":[{"type":"integer"}],"items":false}`,
		`{"enum":[]}`,
		`{"enum":[1,"a",[1],{"a":1}]}`,
		`{"const":{"a":[1,{"b":null}]}}`,
		`{"uniqueItems":true}`,
		`{"propertyNames":{"pattern":"^[a-c]$"}}`,
		`{"propertyNames":{"$ref":"#/$defs/n"},"$defs":{"n":{"maxLength":1}}}`,
		`{"propertyNames":false}`,
		`{"$defs":{"t":{"$dynamicAnchor":"n","type":["object","array"],"properties":{"a":{"$dynamicRef":"#n"}},"items":{"$dynamicRef":"#n"}}},"$ref":"#/$defs/t"}`,
		`{"$id":"https://x.invalid/root","$dynamicAnchor":"n","properties":{"a":{"$dynamicRef":"#n"}},"$defs":{"o":{"$id":"other","$dynamicAnchor":"n","type":"integer"}},"anyOf":[{"$ref":"other"},true]}`,
		`{` + d19 + `"$recursiveAnchor":true,"type":["object","integer"],"properties":{"a":{"$recursiveRef":"#"}},"unevaluatedProperties":false}`,
		`{` + d19 + `"unevaluatedItems":false,"items":[true],"additionalItems":false,"anyOf":[{"contains":{"type":"string"}}]}`,
		`{` + d19 + `"unevaluatedItems":false,"items":[true],"anyOf":[{"items":[true,true]},{"contains":true}]}`,
		`{` + d19 + `"dependentSchemas":{"a":{"required":["b"]}},"dependentRequired":{"b":["c"]}}`,
		`{` + d7 + `"dependencies":{"a":["b"],"b":{"properties":{"c":{"type":"integer"}}}}}`,
		`{` + d7 + `"items":[{"type":"integer"}],"additionalItems":{"type":"string"}}`,
		`{` + d7 + `"additionalItems":false}`,
		`{` + d7 + `"format":"email"}`,
		`{` + d7 + `"format":"date"}`,
		`{` + d7 + `"format":"json-pointer"}`,
		`{` + d7 + `"propertyNames":{"format":"email"}}`,
		`{` + d7 + `"$ref":"#/definitions/a","type":"string","definitions":{"a":{"minLength":1}}}`,
		`{` + d7 + `"contains":{"const":1}}`,
		`{` + d7 + `"if":{"type":"integer"},"then":{"minimum":1},"else":{"type":"string"}}`,
		`{` + d6 + `"dependencies":{"a":{"required":["d"]}},"propertyNames":{"maxLength":1}}`,
		`{` + d4 + `"dependencies":{"a":["b"]},"properties":{"a":{"type":"integer"}},"maximum":1,"exclusiveMaximum":true}`,
		`{"not":{"not":{"properties":{"a":false}}},"unevaluatedProperties":false}`,
		`{"properties":{"a":{"$ref":"#"}},"anyOf":[{"required":["a"]},{"maxProperties":0},{"type":"array","items":{"$ref":"#"}},{"type":["string","number","null","boolean"]}]}`,
		`{"multipleOf":0.5,"minimum":-1,"exclusiveMaximum":2}`,
		`{"minProperties":1,"maxProperties":2,"required":["a"]}`,
		`{"allOf":[{"$ref":"#/$defs/a"}],"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}}}`,
	}
}()

// TestRawReviewDifferential (regression guard): the walk and the library
// agree, and the walk does not panic, on random small instances of
// rvSchemas (none found to differ).
func TestRawReviewDifferential(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 3))
	n := 3000
	if testing.Short() {
		n = 500
	}
	for _, s := range rvSchemas {
		rs, ls := rawCompile(t, s)
		bad := 0
		for range n {
			inst := []byte(rvGen(r, 3))
			lib := validateLibrary(ls, inst) == nil
			raw, pnc := rdValidateRawReview(rs, inst)
			if pnc != "" {
				t.Fatalf("seed %d: %s on %s: panic %s", seed, s, inst, pnc)
			}
			if lib != raw && bad < 3 {
				bad++
				t.Errorf("seed %d: %s on %s: library %v, raw walk %v", seed, s, inst, lib, raw)
			}
		}
	}
}

func rdValidateRawReview(rs *rawSchema, v []byte) (ok bool, pnc string) {
	defer func() {
		if p := recover(); p != nil {
			pnc = strings.TrimSpace(strings.SplitN(strings.TrimSpace(fmtAny(p)), "\n", 2)[0])
		}
	}()
	return rs.validate(v) == nil, ""
}

func fmtAny(p any) string {
	if err, ok := p.(error); ok {
		return err.Error()
	}
	if s, ok := p.(string); ok {
		return s
	}
	return "panic"
}

// TestRawReviewConcurrent (regression guard, for -race): one rawSchema
// judged from many goroutines (pooled walks, shared buffers per walk)
// gives each goroutine the verdict it gives alone.
func TestRawReviewConcurrent(t *testing.T) {
	rs, _ := rawCompile(t, `{"type":"object","$defs":{"n":{"anyOf":[{"type":"integer"},{"type":"array","items":{"$ref":"#/$defs/n"},"uniqueItems":true}]}},
		"properties":{"v":{"$ref":"#/$defs/n"},"o":{"type":"object","patternProperties":{"^x":{"type":"string","pattern":"^a"}},"unevaluatedProperties":false,"propertyNames":{"maxLength":4}}}}`)
	r := rand.New(rand.NewPCG(rand.Uint64(), 4))
	var cases [][]byte
	var want []bool
	for i := range 200 {
		var sb strings.Builder
		sb.WriteString(`{"v":[`)
		for j := range 30 + r.IntN(40) {
			if j > 0 {
				sb.WriteByte(',')
			}
			if r.IntN(5) == 0 {
				sb.WriteString(`[` + strconv.Itoa(j) + `,` + strconv.Itoa(j+r.IntN(2)) + `]`)
			} else {
				sb.WriteString(strconv.Itoa(j + r.IntN(2)))
			}
		}
		sb.WriteString(`],"o":{"x` + strconv.Itoa(i%100) + `":"a\n","x":"` + []string{"a", "b"}[r.IntN(2)] + `","xx":"a","xx":"a\u0062"}}`)
		c := []byte(sb.String())
		cases = append(cases, c)
		want = append(want, rs.validate(c) == nil)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 400 {
				i := (g*37 + k) % len(cases)
				if got := rs.validate(cases[i]) == nil; got != want[i] {
					t.Errorf("%s: %v concurrently, %v alone", cases[i], got, want[i])
					return
				}
			}
		})
	}
	wg.Wait()
}
