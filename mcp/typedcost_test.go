//go:build !race

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/valyala/fasthttp"
)

// costShape is a typed tool's input type and a way to write arguments of
// n items for it.
type costShape struct {
	name string
	t    reflect.Type
	args func(r *rand.Rand, n int) []byte
}

type costLeaf struct {
	A int    `json:"a"`
	B string `json:"b"`
}

type costNested struct {
	Kids []costNested `json:"kids"`
	Tag  string       `json:"tag"`
}

type costInner struct {
	X []int `json:"x"`
}

type costEmbeds struct {
	*costInner
	M map[string]int `json:"m"`
}

// jsonList writes {"v":[item(0),item(1),…]} with n items.
func jsonList(n int, item func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"v":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(item(i))
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// jsonObject writes {"v":{key(0):item(0),…}} with n members.
func jsonObject(n int, key, item func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"v":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Quote(key(i)) + ":" + item(i))
	}
	b.WriteString("}}")
	return []byte(b.String())
}

// anyValue writes a random JSON value of at most depth levels, small
// (the shapes that cost the most per byte).
func anyValue(r *rand.Rand, depth int) string {
	k := r.IntN(9)
	if depth <= 0 && k >= 6 {
		k = r.IntN(6)
	}
	switch k {
	case 0:
		return "0"
	case 1:
		return strconv.Itoa(r.IntN(1000)) + ".5"
	case 2:
		return `""`
	case 3:
		return strconv.Quote(strings.Repeat("x", r.IntN(40)))
	case 4:
		return "true"
	case 5:
		return "null"
	case 6:
		return "{}"
	case 7:
		return "[" + anyValue(r, depth-1) + "," + anyValue(r, depth-1) + "]"
	default:
		return `{"` + strconv.Itoa(r.IntN(100)) + `":` + anyValue(r, depth-1) + "}"
	}
}

// nestedValue writes a costNested tree of n nodes below its root.
func nestedValue(r *rand.Rand, n, depth int) string {
	var b strings.Builder
	b.WriteString(`{"kids":[`)
	for i := 0; n > 0; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		k := 1 + r.IntN(min(n, 4))
		if depth > 20 || r.IntN(2) == 0 {
			k = 1
		}
		b.WriteString(nestedValue(r, k-1, depth+1))
		n -= k
	}
	b.WriteString(`],"tag":"` + strconv.Itoa(depth) + `"}`)
	return b.String()
}

func keyOf(r *rand.Rand) func(i int) string {
	long := r.IntN(2) == 0
	return func(i int) string {
		k := strconv.FormatInt(int64(i), 36)
		if long {
			k += strings.Repeat("k", i%50)
		}
		return k
	}
}

func costShapes() []costShape {
	field := func(t reflect.Type) reflect.Type {
		return reflect.StructOf([]reflect.StructField{{Name: "V", Type: t, Tag: `json:"v"`}})
	}
	list := func(item func(r *rand.Rand, i int) string) func(r *rand.Rand, n int) []byte {
		return func(r *rand.Rand, n int) []byte { return jsonList(n, func(i int) string { return item(r, i) }) }
	}
	obj := func(item func(r *rand.Rand, i int) string) func(r *rand.Rand, n int) []byte {
		return func(r *rand.Rand, n int) []byte {
			return jsonObject(n, keyOf(r), func(i int) string { return item(r, i) })
		}
	}
	digits := func(r *rand.Rand, _ int) string { return strconv.Itoa(r.IntN(10)) }
	text := func(r *rand.Rand, _ int) string { return strconv.Quote(strings.Repeat("t", r.IntN(3)*r.IntN(30))) }
	return []costShape{
		{"[]int", field(reflect.TypeFor[[]int]()), list(digits)},
		{"[]int8", field(reflect.TypeFor[[]int8]()), list(digits)},
		{"[]string", field(reflect.TypeFor[[]string]()), list(text)},
		{"[]*string", field(reflect.TypeFor[[]*string]()), list(text)},
		{"[][]int", field(reflect.TypeFor[[][]int]()), list(func(r *rand.Rand, i int) string { return "[" + strings.Repeat("1,", r.IntN(3)) + "0]" })},
		{"[]costLeaf", field(reflect.TypeFor[[]costLeaf]()), list(func(r *rand.Rand, i int) string {
			return fmt.Sprintf(`{"a":%d,"b":%s,"c":1}`, r.IntN(9), text(r, i))
		})},
		{"[]*costLeaf", field(reflect.TypeFor[[]*costLeaf]()), list(func(r *rand.Rand, i int) string { return "{}" })},
		{"[][4]int64", field(reflect.TypeFor[[][4]int64]()), list(func(r *rand.Rand, i int) string { return "[1]" })},
		{"[]any", field(reflect.TypeFor[[]any]()), list(func(r *rand.Rand, i int) string { return anyValue(r, 2) })},
		{"any", field(reflect.TypeFor[any]()), list(func(r *rand.Rand, i int) string { return anyValue(r, 3) })},
		{"any of {}", field(reflect.TypeFor[any]()), obj(func(r *rand.Rand, i int) string { return "{}" })},
		{"[]json.RawMessage", field(reflect.TypeFor[[]json.RawMessage]()), list(func(r *rand.Rand, i int) string { return anyValue(r, 1) })},
		{"map[string]int", field(reflect.TypeFor[map[string]int]()), obj(digits)},
		{"map[string]bool", field(reflect.TypeFor[map[string]bool]()), obj(func(r *rand.Rand, i int) string { return "true" })},
		{"map[int]string", field(reflect.TypeFor[map[int]string]()), func(r *rand.Rand, n int) []byte {
			return jsonObject(n, strconv.Itoa, func(i int) string { return text(r, i) })
		}},
		{"map[string]map[string]int", field(reflect.TypeFor[map[string]map[string]int]()), obj(func(r *rand.Rand, i int) string {
			if r.IntN(2) == 0 {
				return "{}"
			}
			return `{"a":1}`
		})},
		{"map[string]*costLeaf", field(reflect.TypeFor[map[string]*costLeaf]()), obj(func(r *rand.Rand, i int) string { return "{}" })},
		{"map[string][]any", field(reflect.TypeFor[map[string][]any]()), obj(func(r *rand.Rand, i int) string { return "[0]" })},
		{"map[string]any", field(reflect.TypeFor[map[string]any]()), obj(func(r *rand.Rand, i int) string { return anyValue(r, 2) })},
		{"[2]map[string]int", field(reflect.TypeFor[[2]map[string]int]()), func(r *rand.Rand, n int) []byte {
			o := string(jsonObject(n, keyOf(r), func(int) string { return "1" }))
			o = o[len(`{"v":`) : len(o)-1]
			return []byte(`{"v":[` + o + "," + o + "]}")
		}},
		{"costNested", reflect.TypeFor[costNested](), func(r *rand.Rand, n int) []byte {
			return []byte(nestedValue(r, n, 0))
		}},
		{"costEmbeds", reflect.TypeFor[costEmbeds](), func(r *rand.Rand, n int) []byte {
			o := string(jsonObject(n, keyOf(r), func(int) string { return "1" }))
			return []byte(`{"x":[1,2],"m":` + o[len(`{"v":`):len(o)-1] + "}")
		}},
	}
}

// steadyAlloc returns the bytes one run of f allocates once sonic's pools
// are warm: two runs less one (a collection between the runs, which
// empties the pools again, can only add), the least of three tries.
func steadyAlloc(f func()) uint64 {
	best := ^uint64(0)
	for range 3 {
		one := memtest.Allocated(f)
		two := memtest.Allocated(func() { f(); f() })
		if two > one && two-one < best {
			best = two - one
		}
		if two <= one {
			best = 0
		}
	}
	return best
}

// TestTypedCostCoversSonic holds the cost model above what sonic
// allocates decoding each shape, from one item to tens of thousands, and
// within a small factor of it when the shape is large (a model far above
// sonic would refuse arguments that fit).
func TestTypedCostCoversSonic(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 21))
	for _, sh := range costShapes() {
		model := typedModel(sh.t)
		if model == nil {
			t.Fatalf("%s: no cost model; a type with a slice, map or interface is walked", sh.name)
		}
		for _, n := range []int{0, 1, 2, 7, 9, 17, 40, 257, 300, 1025, 3000, 4097, 30000, 32769} {
			args := sh.args(r, n)
			decodeTo := func() {
				p := reflect.New(sh.t)
				if err := argsAPI.Unmarshal(args, p.Interface()); err != nil {
					t.Fatalf("%s: %v\n%.200s", sh.name, err, args)
				}
			}
			decodeTo()
			got := steadyAlloc(decodeTo)
			est, _, _ := typedCost(model, args, ^uint64(0))
			// The struct itself, In, is allocated by reflect.New here,
			// by the call's frame in a tool: not the model's.
			got -= min(got, uint64(sh.t.Size())+16)
			if got > est {
				t.Errorf("%s, %d items (%d bytes): sonic allocated %d bytes, more than the model's %d", sh.name, n, len(args), got, est)
			}
			if n >= 3000 && 2*est > 5*got+8192 {
				t.Errorf("%s, %d items (%d bytes): the model's %d bytes is over 2.5× sonic's %d", sh.name, n, len(args), est, got)
			}
			if testing.Verbose() && n >= 3000 {
				t.Logf("%-26s %6d items %8d bytes: sonic %6.2f×, model %6.2f×", sh.name, n, len(args), float64(got)/float64(len(args)), float64(est)/float64(len(args)))
			}
		}
	}
}

// Inputs of the counting tools: each answers how many items it got.
type (
	intsIn struct {
		V []int `json:"v"`
	}
	mapIn struct {
		V map[string]int `json:"v"`
	}
	anyIn struct {
		V any `json:"v"`
	}
)

// addCountingTools registers typed tools with a slice, a map and an
// interface for arguments, each answering the number of items it got.
func addCountingTools(s *Server) {
	count := func(c *Call, n int) { c.AddText(strconv.Itoa(n)) }
	AddTool(s, Tool{Name: "typed-ints"}, func(_ context.Context, c *Call, in intsIn) (struct{}, error) {
		count(c, len(in.V))
		return struct{}{}, nil
	})
	AddTool(s, Tool{Name: "typed-map"}, func(_ context.Context, c *Call, in mapIn) (struct{}, error) {
		count(c, len(in.V))
		return struct{}{}, nil
	})
	AddTool(s, Tool{Name: "typed-any"}, func(_ context.Context, c *Call, in anyIn) (struct{}, error) {
		switch v := in.V.(type) {
		case []any:
			count(c, len(v))
		case map[string]any:
			count(c, len(v))
		default:
			count(c, -1)
		}
		return struct{}{}, nil
	})
}

// countingCall is a call of a counting tool with n items and the
// arguments' container: a list for typed-ints and for typed-any when
// list is set, an object otherwise.
func countingCall(r *rand.Rand, tool string, list bool, n int, item func(i int) string) []byte {
	var b strings.Builder
	b.WriteString(`{"jsonrpc":"2.0","id":` + strconv.Itoa(r.IntN(1e6)) + `,"method":"tools/call","params":{"name":"` + tool + `","arguments":{"v":`)
	open, end := "{", "}"
	if list {
		open, end = "[", "]"
	}
	b.WriteString(open)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		if !list {
			b.WriteString(`"` + shortName(i) + `":`)
		}
		b.WriteString(item(i))
	}
	b.WriteString(end + "}}}")
	return []byte(b.String())
}

// countingItems are the items each counting tool takes, costliest first.
func countingItems(r *rand.Rand) map[string][]func(i int) string {
	num := func(i int) string { return strconv.Itoa(r.IntN(10)) }
	long := func(i int) string { return strconv.FormatInt(r.Int64(), 10) }
	frac := func(i int) string { return strconv.Itoa(r.IntN(100)) + ".0" }
	text := func(i int) string { return strconv.Quote(strings.Repeat("w", 10+r.IntN(200))) }
	return map[string][]func(i int) string{
		"typed-ints":     {num, frac, long},
		"typed-map":      {num, long},
		"typed-any list": {func(int) string { return "{}" }, func(int) string { return "[]" }, num, text},
		"typed-any obj":  {func(int) string { return "[]" }, num, text},
	}
}

// serveCounting serves body through ep and returns the answer and its
// refusal, if any.
func serveCounting(t *testing.T, ep *fastserver.Endpoint, body, dst []byte) ([]byte, *fastserver.Error) {
	t.Helper()
	var h fasthttp.RequestHeader
	h.SetMethod("POST")
	h.SetRequestURI("/mcp")
	h.Set("MCP-Protocol-Version", "2025-11-25")
	out, err := memtest.Serve(ep, &h, body, dst)
	var fe *fastserver.Error
	if err != nil && !errors.As(err, &fe) {
		t.Fatalf("%.80s…: %v", body, err)
	}
	return out, fe
}

// TestTypedArgumentsBound serves typed tools whose inputs hold a slice, a
// map and an interface with items of every cost, from a few to a
// mebibyte of them: each call is served whole (the tool counts every
// item) at no more than 8× its body (contract §3), or refused -32602 as
// too large before sonic runs; and a call of up to 512 bytes is always
// served.
func TestTypedArgumentsBound(t *testing.T) {
	s, err := New(Info{Name: "test", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	addCountingTools(s)
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	r := rand.New(rand.NewPCG(rand.Uint64(), 22))
	refused, served := 0, 0
	for key, items := range countingItems(r) {
		tool, shape, _ := strings.Cut(key, " ")
		list := tool == "typed-ints" || shape == "list"
		for k, item := range items {
			// Sizes from a few items to what fits in 1 MiB, log-uniform,
			// and every small count.
			counts := []int{0, 1, 2, 3, 5, 8, 13, 21, 34, 55}
			for range 8 {
				counts = append(counts, int(math.Exp(math.Log(60)+r.Float64()*(math.Log(200000)-math.Log(60)))))
			}
			for _, n := range counts {
				body := countingCall(r, tool, list, n, item)
				if len(body) > 1<<20-64 {
					continue
				}
				out, fe := serveCounting(t, ep, body, nil)
				if fe != nil {
					if fe.Code != -32602 || !strings.Contains(fe.Message, "would take more than") {
						t.Fatalf("%s item %d, %d items (%d bytes): refused %d %s", key, k, n, len(body), fe.Code, fe.Message)
					}
					if len(body) <= 512 {
						t.Errorf("%s item %d, %d items (%d bytes): a call of at most 512 bytes refused: %s", key, k, n, len(body), fe.Message)
					}
					// The refusal costs what the server's checks before
					// the tool cost (a set of member names: at most 3×).
					if got := steadyAlloc(func() { serveCounting(t, ep, body, make([]byte, 0, 1024)) }); got > 4*uint64(len(body))+16<<10 {
						t.Errorf("%s, %d bytes: refusing allocated %d bytes", key, len(body), got)
					}
					refused++
					continue
				}
				if want := `"text":"` + strconv.Itoa(n) + `"`; !strings.Contains(string(out), want) {
					t.Fatalf("%s item %d, %d items: the tool did not count them all: %.200s", key, k, n, out)
				}
				dst := make([]byte, 0, len(out)+64)
				got := steadyAlloc(func() { serveCounting(t, ep, body, dst) })
				// 8× the body from 32 KiB on; the budget's allowance below.
				if got > max(maxDecodedFactor*uint64(len(body)), typedBudget(len(body))+8<<10) {
					t.Errorf("%s item %d, %d items (%d bytes): serving allocated %d bytes, %.2f× the body (at most %d×, or %d bytes)",
						key, k, n, len(body), got, float64(got)/float64(len(body)), maxDecodedFactor, typedBudget(len(body)))
				}
				served++
			}
		}
	}
	t.Logf("%d calls served, %d refused as too large", served, refused)
	if refused == 0 || served == 0 {
		t.Errorf("%d served, %d refused: the shapes must reach both sides of the bound", served, refused)
	}
}

// TestTypedCostWalkAllocates checks that the model's walk allocates
// nothing, escaped member names of up to 64 bytes included.
func TestTypedCostWalkAllocates(t *testing.T) {
	type in struct {
		Name string         `json:"name"`
		Tags []string       `json:"tags"`
		M    map[string]any `json:"m"`
	}
	model := typedModel(reflect.TypeFor[in]())
	args := []byte(`{"n\u0061me":"x","t\u0061gs":["a","b"],"m":{"k\u00e9y":[1,{"a":null}],"z":"s"},"other\u0020":1}`)
	if got := testing.AllocsPerRun(100, func() { typedCost(model, args, ^uint64(0)) }); got != 0 {
		t.Errorf("typedCost allocated %v times", got)
	}
	if c, _, _ := typedCost(model, args, ^uint64(0)); c <= copyCost(len(args))+unmarshalFixed {
		t.Errorf("cost %d: the escaped names were not matched to their fields", c)
	}
}

// BenchmarkTypedCost compares the model's walk with sonic's decoding of
// the same arguments, for a small call and a 64 KiB one.
func BenchmarkTypedCost(b *testing.B) {
	type in struct {
		Query string            `json:"query"`
		Tags  []string          `json:"tags"`
		Opts  map[string]string `json:"opts"`
		Limit int               `json:"limit"`
	}
	model := typedModel(reflect.TypeFor[in]())
	small := []byte(`{"query":"weather in Lisbon","tags":["city","forecast","metric"],"opts":{"units":"c","lang":"en"},"limit":5}`)
	large := jsonList(5000, func(i int) string { return strconv.Quote("tag" + strconv.Itoa(i)) })
	large = append([]byte(`{"query":"q","tags":`), large[len(`{"v":`):]...)
	for _, c := range []struct {
		name string
		args []byte
	}{{"small", small}, {"64KiB", large}} {
		b.Run(c.name+"/walk", func(b *testing.B) {
			b.SetBytes(int64(len(c.args)))
			for b.Loop() {
				typedCost(model, c.args, ^uint64(0))
			}
		})
		b.Run(c.name+"/sonic", func(b *testing.B) {
			b.SetBytes(int64(len(c.args)))
			for b.Loop() {
				var v in
				if err := argsAPI.Unmarshal(c.args, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestTypedCostAnyInput walks every JSONTestSuite file that is valid JSON,
// wrapped as an argument and cut at every length, with each shape's
// model: the walk is only given valid arguments, but a cut one must
// neither panic nor loop, and a valid one must cost at least the copy.
func TestTypedCostAnyInput(t *testing.T) {
	dir := "../../shared/testdata/jsontestsuite"
	files, err := filepath.Glob(filepath.Join(dir, "y_*.json"))
	if err != nil || len(files) == 0 {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no JSONTestSuite files in %s (%v)", dir, err)
		}
		t.Skipf("no JSONTestSuite files in %s", dir)
	}
	shapes := costShapes()
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		args := []byte(`{"v":` + string(raw) + `,"kids":` + string(raw) + `}`)
		if !decode.Valid(args) {
			continue
		}
		for _, sh := range shapes {
			model := typedModel(sh.t)
			if c, _, _ := typedCost(model, args, ^uint64(0)); c < copyCost(len(args)) {
				t.Errorf("%s, %s: cost %d under the copy", filepath.Base(f), sh.name, c)
			}
			for cut := range len(args) {
				typedCost(model, args[:cut], ^uint64(0))
			}
		}
	}
}
