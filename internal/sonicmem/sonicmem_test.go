//go:build !race

package sonicmem_test

import (
	"encoding/json"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bytedance/sonic"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/rpcedge/rpcedge/internal/sonicmem"
)

// api decodes as mcp's typed tools and fastserver.Typed do.
var api = sonic.Config{
	CopyString:     true,
	ValidateString: true,
	UseNumber:      true,
	CaseSensitive:  true,
}.Froze()

// costShape is a typed handler's input type and a way to write arguments of
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

// TestCostCoversSonic holds the cost model above what sonic
// allocates decoding each shape, from one item to tens of thousands, and
// within a small factor of it when the shape is large (a model far above
// sonic would refuse arguments that fit).
func TestCostCoversSonic(t *testing.T) {
	r := rand.New(rand.NewPCG(rand.Uint64(), 21))
	for _, sh := range costShapes() {
		model, err := sonicmem.For(sh.t)
		if err != nil {
			t.Fatal(err)
		}
		if model == nil {
			t.Fatalf("%s: no cost model; a type with a slice, map or interface is walked", sh.name)
		}
		for _, n := range []int{0, 1, 2, 7, 9, 17, 40, 257, 300, 1025, 3000, 4097, 30000, 32769} {
			args := sh.args(r, n)
			decodeTo := func() {
				p := reflect.New(sh.t)
				if err := api.Unmarshal(args, p.Interface()); err != nil {
					t.Fatalf("%s: %v\n%.200s", sh.name, err, args)
				}
			}
			decodeTo()
			got := memtest.Steady(decodeTo)
			est, _, _ := model.Cost(args, ^uint64(0), nil)
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

// TestCostAllocatesNothing checks that the walk allocates nothing, and
// that it matches escaped member names to their fields: the same
// arguments with names no field has cost less.
func TestCostAllocatesNothing(t *testing.T) {
	type in struct {
		Name string         `json:"name"`
		Tags []string       `json:"tags"`
		M    map[string]any `json:"m"`
	}
	model, err := sonicmem.For(reflect.TypeFor[in]())
	if err != nil {
		t.Fatal(err)
	}
	args := []byte(`{"n\u0061me":"x","t\u0061gs":["a","b"],"m":{"k\u00e9y":[1,{"a":null}],"z":"s"},"other\u0020":1}`)
	other := []byte(`{"n\u0061mX":"x","t\u0061gX":["a","b"],"X":{"k\u00e9y":[1,{"a":null}],"z":"s"},"other\u0020":1}`)
	if got := testing.AllocsPerRun(100, func() { model.Cost(args, ^uint64(0), nil) }); got != 0 {
		t.Errorf("Cost allocated %v times", got)
	}
	c, _, _ := model.Cost(args, ^uint64(0), nil)
	if d, _, _ := model.Cost(other, ^uint64(0), nil); c <= d {
		t.Errorf("cost %d, %d with names no field has: the escaped names were not matched to their fields", c, d)
	}
}

// BenchmarkCost compares the model's walk with sonic's decoding of
// the same arguments, for a small call and a 64 KiB one.
func BenchmarkCost(b *testing.B) {
	type in struct {
		Query string            `json:"query"`
		Tags  []string          `json:"tags"`
		Opts  map[string]string `json:"opts"`
		Limit int               `json:"limit"`
	}
	model, err := sonicmem.For(reflect.TypeFor[in]())
	if err != nil {
		b.Fatal(err)
	}
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
				model.Cost(c.args, ^uint64(0), nil)
			}
		})
		b.Run(c.name+"/sonic", func(b *testing.B) {
			b.SetBytes(int64(len(c.args)))
			for b.Loop() {
				var v in
				if err := api.Unmarshal(c.args, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestCostAnyInput walks every JSONTestSuite file that is valid JSON,
// wrapped as an argument and cut at every length, with each shape's
// model: the walk is only given valid arguments, but a cut one must
// neither panic nor loop, and a valid one must cost at least the copy.
func TestCostAnyInput(t *testing.T) {
	dir := "../../../shared/testdata/jsontestsuite"
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
			model, err := sonicmem.For(sh.t)
			if err != nil {
				t.Fatal(err)
			}
			if c, _, _ := model.Cost(args, ^uint64(0), nil); c < sonicmem.CopyCost(len(args)) {
				t.Errorf("%s, %s: cost %d under the copy", filepath.Base(f), sh.name, c)
			}
			for cut := range len(args) {
				model.Cost(args[:cut], ^uint64(0), nil)
			}
		}
	}
}

// selfPointer is a pointer to itself, on which sonic does not return.
type selfPointer *selfPointer

// TestForRefuses: types whose decoding no bound of their JSON bounds are
// refused, wherever they sit; their neighbours are not.
func TestForRefuses(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct {
			R *regexp.Regexp `json:"r"`
		}](),
		reflect.TypeFor[map[string]big.Rat](),
		reflect.TypeFor[[]map[string]*big.Rat](),
		reflect.TypeFor[selfPointer](),
		reflect.TypeFor[struct{ P []selfPointer }](),
	} {
		if _, err := sonicmem.For(typ); err == nil {
			t.Errorf("%v: accepted", typ)
		}
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[struct {
			N *big.Int   `json:"n"`
			F *big.Float `json:"f"`
			T time.Time  `json:"t"`
		}](),
		reflect.TypeFor[struct{ Next *struct{ V []int } }](),
	} {
		if m, err := sonicmem.For(typ); err != nil || m == nil {
			t.Errorf("%v: model %v, %v: want one (big numbers are walked)", typ, m, err)
		}
	}
}
