//go:build !race

package sonicmem_test

// Hostile review of the cost model: each test is a (type, JSON) pair for
// which sonic's steady-state allocation passes Model.Cost by more than
// 256 bytes (the model must be an upper bound), measured as
// TestCostCoversSonic measures it.

import (
	"encoding/json"
	"math/big"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpcedge/rpcedge/internal/memtest"
	"github.com/rpcedge/rpcedge/internal/sonicmem"
)

// reviewCheck decodes js into a new value of typ with api, measures the
// bytes sonic allocates (less the value itself) and fails when they pass
// the model's cost by more than 256 bytes. A nil model (For judged the
// type bounded without a walk) costs only the copy of the input, as a
// server that does not walk it assumes.
func reviewCheck(t *testing.T, name string, typ reflect.Type, js []byte) (got, est uint64) {
	t.Helper()
	run := func() {
		p := reflect.New(typ)
		if err := api.Unmarshal(js, p.Interface()); err != nil {
			t.Fatalf("%s: %.200s", name, err.Error())
		}
	}
	run()
	got = memtest.Steady(run)
	got -= min(got, uint64(typ.Size())+16)
	model, err := sonicmem.For(typ)
	if err != nil {
		// Refused at registration: no request reaches sonic.
		t.Logf("%s: For refuses the type: %v", name, err)
		return 0, 0
	}
	if model != nil {
		est, _, _ = model.Cost(js, ^uint64(0), nil)
	} else {
		est = 64 + sonicmem.CopyCost(len(js))
	}
	if got > est+256 {
		t.Errorf("%s (%d bytes of JSON): sonic allocated %d bytes (%.1f× the JSON), the model %d (nil model: %v; budget %d)",
			name, len(js), got, float64(got)/float64(len(js)), est, model == nil, sonicmem.Budget(len(js)))
	}
	return got, est
}

func reviewField(t reflect.Type) reflect.Type {
	return reflect.StructOf([]reflect.StructField{{Name: "V", Type: t, Tag: `json:"v"`}})
}

// reviewWalked is reviewField plus a []int member, so that For walks the
// type whatever V is.
func reviewWalked(t reflect.Type) reflect.Type {
	return reflect.StructOf([]reflect.StructField{{Name: "V", Type: t, Tag: `json:"v"`},
		{Name: "Pad", Type: reflect.TypeFor[[]int](), Tag: `json:"pad"`}})
}

func reviewList(n int, item string) string {
	return "[" + strings.TrimSuffix(strings.Repeat(item+",", n), ",") + "]"
}

// Self-decoding stdlib types cost far more than "one copy of their JSON":
// math/big's decimal scan grows its nat 4 words at a time (quadratic:
// 20 KB of digits → ~950 KB, 47×); big.Rat computes 10^exp exactly (17
// bytes → 3.2 MB); regexp compiles the program ("[a-z]{1000}" → 108 KB).
// A struct of only such fields gets a nil model (not walked at all).
func TestReviewSonicmemSelfDecoderUnbounded(t *testing.T) {
	digits := strings.Repeat("1234567890", 2000)
	reviewCheck(t, "*big.Int, 20k digits", reviewWalked(reflect.TypeFor[*big.Int]()), []byte(`{"v":`+digits+`}`))
	reviewCheck(t, "*big.Int alone (nil model)", reviewField(reflect.TypeFor[*big.Int]()), []byte(`{"v":`+digits+`}`))
	reviewCheck(t, "*big.Float, 20k digits", reviewWalked(reflect.TypeFor[*big.Float]()), []byte(`{"v":"`+digits+`"}`))
	reviewCheck(t, "*big.Rat 1e1000000 (nil model)", reviewField(reflect.TypeFor[*big.Rat]()), []byte(`{"v":"1e1000000"}`))
	reviewCheck(t, "*regexp.Regexp", reviewWalked(reflect.TypeFor[*regexp.Regexp]()), []byte(`{"v":"[a-z]{1000}"}`))
}

// time.Time with an offset that is not a whole hour ("+05:31") allocates
// a fresh *time.Location (FixedZone: Location, zone and zoneTrans, ~160
// bytes) per value, beyond the copy the model charges: a []time.Time of
// them takes ~10× its JSON at 30 000 items while the model stays under
// Budget (a breach of §3's 8×).
func TestReviewSonicmemTimeOddOffset(t *testing.T) {
	js := []byte(`{"v":` + reviewList(3000, `"2006-01-02T15:04:05+05:31"`) + `}`)
	typ := reviewField(reflect.TypeFor[[]time.Time]())
	got, cost := reviewCheck(t, "[]time.Time +05:31", typ, js)
	if cost <= sonicmem.Budget(len(js)) && got > 8*uint64(len(js)) {
		t.Errorf("[]time.Time +05:31: cost %d within the budget %d, but sonic took %d bytes, over 8× the %d bytes of JSON",
			cost, sonicmem.Budget(len(js)), got, len(js))
	}
}

type rvHuge struct {
	_ [33000]int8 // blank: sonic compiles no code for it
	B int         `json:"b"`
}

type rvEmbedsHuge struct {
	*rvHuge
	P []int `json:"p"`
}

type rvBig struct {
	_ [1025]int8
}

// A pointer cost its pointee's size plus 16, and an
// embedded pointer its size alone, but the allocator rounds to a size
// class (1025 → 1152) or to whole pages past 32 KiB (33 008 → 40 960).
func TestReviewSonicmemPointerSizeClass(t *testing.T) {
	reviewCheck(t, "*[33000]int8 struct", reviewWalked(reflect.TypeFor[*rvHuge]()), []byte(`{"v":{}}`))
	reviewCheck(t, "embedded *[33000]int8 struct", reflect.TypeFor[rvEmbedsHuge](), []byte(`{"b":1}`))
	reviewCheck(t, "[]*[1025]int8 struct", reviewField(reflect.TypeFor[[]*rvBig]()), []byte(`{"v":`+reviewList(100, "{}")+`}`))
}

// buildCost tests DecodesItself before the kind, so *json.RawMessage (and
// *time.Time, *big.Int, ...) is modeled as a self-decoding value with no
// pointee: sonic allocates the RawMessage header (24 bytes) as well.
func TestReviewSonicmemPointerToSelfDecoder(t *testing.T) {
	reviewCheck(t, "[]*json.RawMessage", reviewField(reflect.TypeFor[[]*json.RawMessage]()), []byte(`{"v":`+reviewList(2000, "1")+`}`))
}

// A non-pointer self-decoding value given null has UnmarshalJSON("null")
// called (as encoding/json does): json.RawMessage copies "null", which
// the model, taking null as free whatever the type, does not count.
func TestReviewSonicmemSelfDecoderNull(t *testing.T) {
	reviewCheck(t, "[]json.RawMessage of null", reviewField(reflect.TypeFor[[]json.RawMessage]()), []byte(`{"v":`+reviewList(2000, "null")+`}`))
}

type rvKey struct{ s string }

func (k *rvKey) UnmarshalText(b []byte) error { k.s = string(b); return nil }

// Map keys that decode themselves (encoding.TextUnmarshaler) cost the
// model nothing beyond the slot (only string-kind keys are copied), but
// sonic hands them their text and they keep a copy (or, *big.Int, more).
func TestReviewSonicmemTextKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"v":{`)
	for i := range 100 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + strconv.Itoa(i) + strings.Repeat("k", 1000) + `":1`)
	}
	b.WriteString("}}")
	reviewCheck(t, "map[TextUnmarshaler]int", reviewField(reflect.TypeFor[map[rvKey]int]()), []byte(b.String()))
	reviewCheck(t, "map[*big.Int]int", reviewField(reflect.TypeFor[map[*big.Int]int]()),
		[]byte(`{"v":{"`+strings.Repeat("1234567890", 100)+`":1}}`))
}

// A []byte also takes a JSON array of numbers, which sonic appends like
// any slice (growth from 2, ~3× the JSON); the model charges one copy of
// the JSON whatever its form.
func TestReviewSonicmemBytesFromArray(t *testing.T) {
	reviewCheck(t, "[]byte from [1,1,…] ×20000", reviewWalked(reflect.TypeFor[[]byte]()), []byte(`{"v":`+reviewList(20000, "1")+`}`))
}

type rvFlags struct{ A, B, C, D, E uint8 }

// sliceCost starts at the capacity that fits the first block
// (allocBlock(2×5) = 16 bytes → 3 elements), but makeslice keeps cap 2:
// for 5-byte elements the runtime's sequence of capacities (2, 4, 9, …,
// 307, 972, 2048) leaves the model's (3, 6, 12, …, 409, 1075) and passes
// it past 256 items: 1025–2049 items cost sonic ~1.6× the model.
func TestReviewSonicmemFirstCapacity(t *testing.T) {
	reviewCheck(t, "[]struct{5×uint8} ×2049", reviewField(reflect.TypeFor[[]rvFlags]()), []byte(`{"v":`+reviewList(2049, "{}")+`}`))
	reviewCheck(t, "[][5]uint8 ×1025", reviewField(reflect.TypeFor[[][5]uint8]()), []byte(`{"v":`+reviewList(1025, "[]")+`}`))
}

type rvS struct {
	A int `json:"a"`
}

// sonic unescapes every struct member name with an escape into a new
// buffer (known or unknown member), one copy of the name per member; the
// model charges struct member names nothing (map keys it does charge).
func TestReviewSonicmemEscapedMemberNames(t *testing.T) {
	name := strings.Repeat(`\u0078`, 40)
	var b strings.Builder
	b.WriteByte('{')
	for i := range 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + name + strconv.Itoa(i) + `":1`)
	}
	b.WriteByte('}')
	reviewCheck(t, "[]struct, escaped unknown names", reflect.TypeFor[[]rvS](), []byte(reviewList(50, b.String())))
	reviewCheck(t, "[]struct, escaped known name", reflect.TypeFor[[]rvS](), []byte(reviewList(2000, `{"\u0061":1}`)))
}

type rvBadTag struct {
	//lint:ignore SA5008 the invalid tag name is the case under test
	V []int `json:"a\\b"`
}

type rvHidden struct{ X []int }

type rvTaggedUnexported struct {
	rvHidden `json:"in"`
	P        []int `json:"p"`
}

// Fields differs from sonic's (and encoding/json's) typeFields: a tag
// name that is not valid (a backslash or quote) falls back to the Go
// name, and an embedded unexported struct with a tag name is a member of
// that name. The model skips such members as unknown while sonic decodes
// them (12× the JSON, far under Budget).
func TestReviewSonicmemFieldNames(t *testing.T) {
	list := reviewList(5000, "1")
	reviewCheck(t, "invalid tag name", reflect.TypeFor[rvBadTag](), []byte(`{"V":`+list+`}`))
	reviewCheck(t, "tagged unexported embedded struct", reflect.TypeFor[rvTaggedUnexported](), []byte(`{"in":{"X":`+list+`}}`))
}
