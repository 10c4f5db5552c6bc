// Package sonicmem bounds the memory github.com/bytedance/sonic takes to
// decode JSON into a Go type, before it runs, so that the typed paths
// (mcp's typed tools, fastserver.Typed) can hold contract §3's bound on a
// request's decoded form. It also holds the type rules both share with
// encoding/json: which member names a struct takes (Fields) and which
// types decode their own JSON (DecodesItself).
package sonicmem

// NOTE: the memory a typed value takes.
//
// Contract §3 bounds the memory of a request's decoded form at 8× its
// body. A typed handler's decoded form is its Go value as sonic builds
// it, and a Go value can take far more than its JSON: measured with sonic
// (steady state, 1 MiB of arguments), []int of one-digit numbers took ~10
// bytes a byte of JSON, []string of "" ~16, map[string]int ~15, []any of 0
// ~38, and empty arrays into an any 109 (found on 2026-12-06;
// the untyped paths read the raw bytes and take nothing).
//
// So before sonic runs, Model.Cost walks the JSON as the type directs
// (decode's iterators, each byte read once) and adds up a bound on what
// decoding it allocates: a slice as sonic grows it (from 2 elements, or 16
// for a []any, each time twice its capacity through the runtime's
// growslice, rounded to the allocator's size classes), a map's entries at
// 6× their slot plus its header and first group, an interface's value as
// sonic builds it (map[string]any, []any, a boxed json.Number or string),
// every string, []byte and self-decoding value as one copy of its JSON,
// and the copy of the whole input sonic.Unmarshal makes to read it as a
// string. TestCostCoversSonic holds the model above sonic's
// measured allocations for 22 shapes, and within 2.5× of them. A caller
// refuses input whose bound is over Budget before anything is decoded.
//
// Types with no slice, map or interface below them take a fixed size
// plus at most one copy of the input's strings: For returns nil for them,
// and the common typed handler (a struct of strings and numbers) pays
// nothing for the check.

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/rpcedge/rpcedge/decode"
)

// Budget returns the bytes decoding n bytes of JSON (a call's params or
// arguments) may take: 6× n plus 64 KiB. From 32 KiB on, that is within
// contract §3's 8× the body, with room for the server's own buffers;
// below, the 64 KiB let a small call into an expensive type through (a few thousand
// integers into a []int, ~20 bytes each; 500 bytes of the costliest
// item, [] into an interface, ~290 bytes for its 3).
func Budget(n int) uint64 { return 6*uint64(n) + Allowance }

// TooLarge is the end of the message of a caller's -32602 refusing n
// bytes of JSON that a value of type t would take more than cost bytes
// (over Budget) to hold: "would take more than …".
func TooLarge(t reflect.Type, cost uint64, n int) string {
	return "would take more than " + strconv.FormatUint(cost>>10, 10) + " KiB as " + t.String() +
		", over its bound of 6× their " + strconv.Itoa(n) + " bytes + 64 KiB (contract §3 bounds a request's decoded form): send fewer values"
}

// Allowance is the part of Budget that does not grow with the JSON.
const Allowance = 64 << 10

// costKind is how a JSON value costs memory when decoded into a Go type.
type costKind uint8

const (
	costNone    costKind = iota // a float or boolean: nothing beyond its place
	costInt                     // an integer: nothing (but a rewrite of 1.0, 1e2: IntRewrite)
	costCopy                    // a string or []byte: one copy of its JSON
	costSelf                    // a type decoding itself: one copy of its JSON and a word
	costSlice                   // a slice: its elements grown by append
	costArray                   // an array: its elements in place
	costPointer                 // a pointer: the pointee, once the value is not null
	costMap                     // a map: header, groups, keys and values
	costAny                     // an empty interface: what sonic builds for the JSON
	costStruct                  // a struct: its fields by JSON name
)

// The model's constants (calibrated by TestCostCoversSonic).
const (
	unmarshalFixed = 64  // per call, beyond the copy of the input
	selfWord       = 16  // per value decoding itself, beyond the copy of its JSON
	sliceEmpty     = 16  // per array decoded into a slice, beyond its growth (sliceCost)
	sliceFirst     = 2   // the capacity sonic gives a typed slice's first element
	anyFirst       = 16  // and a []any's, allocated for an empty array too
	sliceBox       = 24  // a []any's header boxed into an interface
	timeLocation   = 256 // a time.Time with an offset: its FixedZone
	mapGrowth      = 6   // per byte of an entry's key and value
	mapEntry       = 8   // per entry beyond its key and value (control bytes)
	mapHeader      = 64  // a map's header, for an empty map too
	anySlot        = 16  // an interface value, the element of []any and map[string]any
	anyBox         = 16  // a string or json.Number's header boxed into an interface
)

// costField is a struct field's JSON name and model.
type costField struct {
	name string
	node *Model
}

// smallStruct is the most fields a struct's model finds by comparing
// names one by one rather than by a map.
const smallStruct = 8

// Model is the cost model of one Go type, built by For.
type Model struct {
	kind   costKind
	self   selfKind // costSelf: how the type decodes itself
	size   uint64   // slice: element size; pointer: the pointee's block; map: a slot's size (key and value)
	strKey bool     // map: string keys, one copy each
	noscan bool     // slice: elements without pointers (no malloc header)
	bytes  bool     // costCopy: a []byte, which takes an array of numbers too
	elem   *Model
	key    *Model            // map: keys that decode themselves (TextUnmarshaler), else nil
	fields []costField       // struct: by JSON name, as Fields names them
	byName map[string]*Model // and by a map for more than smallStruct fields
	// embedded is the blocks of the structs a struct reaches through
	// embedded pointers, which sonic allocates for promoted fields.
	embedded uint64
}

// selfKind is how a type that decodes itself costs.
type selfKind uint8

const (
	selfCopy selfKind = iota // one copy of its JSON (json.RawMessage; assumed of the caller's own types)
	selfTime                 // time.Time: and a time.Location for an offset other than Z
	selfBig                  // big.Int, big.Float: their decimal scan grows quadratically
)

// Types that decode themselves at a cost their JSON does not bound:
// big.Rat computes 10^exp exactly ("1e1000000", 17 bytes, took 3.2 MB)
// and regexp compiles its program ("[a-z]{1000}", 19 bytes, 108 KB).
// For refuses types that hold them (found by review on 2026-12-06).
var unboundedTypes = []reflect.Type{reflect.TypeFor[big.Rat](), reflect.TypeFor[regexp.Regexp]()}

// For returns the cost model of t, or nil when a value of t is bounded by
// its own size plus one copy of its strings (no slice, map, interface or
// big number below it): JSON for such a type need not be walked. It
// refuses a type whose decoding no bound of its JSON bounds: one holding
// a big.Rat or a regexp.Regexp (take those as strings and parse them with
// limits of your own), or a pointer to itself (type P *P, on which sonic
// does not return). A Model is immutable and safe for concurrent use.
func For(t reflect.Type) (*Model, error) {
	memo := map[reflect.Type]*Model{}
	n, err := buildCost(t, memo, nil)
	if err != nil {
		return nil, err
	}
	for _, m := range memo {
		switch {
		case m.kind == costSlice, m.kind == costMap, m.kind == costAny, m.kind == costSelf && m.self == selfBig:
			return n, nil
		}
	}
	return nil, nil
}

var anyNode = &Model{kind: costAny}

// buildCost builds t's cost model, memo breaking the cycles of recursive
// types; ptrs holds the pointer types of the chain being built (a chain
// back to one of them is a pointer to itself).
func buildCost(t reflect.Type, memo map[reflect.Type]*Model, ptrs []reflect.Type) (*Model, error) {
	if t.Kind() == reflect.Pointer && slices.Contains(ptrs, t) {
		return nil, fmt.Errorf("sonicmem: %v is a pointer to itself", t)
	}
	if n, ok := memo[t]; ok {
		return n, nil
	}
	if slices.Contains(unboundedTypes, t) {
		return nil, fmt.Errorf("sonicmem: %v decodes itself at a cost its JSON does not bound: take it as a string and parse it with limits of your own", t)
	}
	n := &Model{}
	memo[t] = n
	var err error
	build := func(t reflect.Type) *Model {
		var m *Model
		if err == nil {
			m, err = buildCost(t, memo, nil)
		}
		return m
	}
	switch {
	case t.Kind() == reflect.Pointer:
		// before DecodesItself: a *json.RawMessage allocates its pointee
		// too (found by review on 2026-12-06)
		block, _ := allocBlock(uint64(t.Elem().Size()), !hasPointers(t.Elem(), map[reflect.Type]bool{}), 1)
		n.kind, n.size = costPointer, block
		n.elem, err = buildCost(t.Elem(), memo, append(ptrs, t))
		return n, err
	case DecodesItself(t):
		n.kind = costSelf
		switch t {
		case reflect.TypeFor[time.Time]():
			n.self = selfTime
		case reflect.TypeFor[big.Int](), reflect.TypeFor[big.Float]():
			n.self = selfBig
		}
		return n, nil
	}
	switch k := t.Kind(); {
	case IntKind(k):
		n.kind = costInt
	}
	switch t.Kind() {
	case reflect.String:
		n.kind = costCopy
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !DecodesItself(t.Elem()) {
			n.kind, n.bytes = costCopy, true // base64: fewer bytes than its JSON
			break
		}
		n.kind, n.size, n.elem = costSlice, uint64(t.Elem().Size()), build(t.Elem())
		n.noscan = !hasPointers(t.Elem(), map[reflect.Type]bool{})
	case reflect.Array:
		n.kind, n.elem = costArray, build(t.Elem())
	case reflect.Map:
		slot := reflect.StructOf([]reflect.StructField{{Name: "K", Type: t.Key()}, {Name: "V", Type: t.Elem()}})
		n.kind, n.size, n.elem = costMap, uint64(slot.Size()), build(t.Elem())
		n.strKey = t.Key().Kind() == reflect.String
		if DecodesItself(t.Key()) || t.Key().Kind() == reflect.Pointer {
			n.key = build(t.Key()) // an encoding.TextUnmarshaler: its text, and more
		}
	case reflect.Interface:
		if t.NumMethod() == 0 {
			n.kind = costAny
		} // sonic refuses to decode into a non-empty interface
	case reflect.Struct:
		n.kind = costStruct
		fs := Fields(t)
		for _, name := range slices.Sorted(maps.Keys(fs)) {
			n.fields = append(n.fields, costField{name, build(fs[name])})
		}
		if len(n.fields) > smallStruct {
			n.byName = make(map[string]*Model, len(n.fields))
			for _, f := range n.fields {
				n.byName[f.name] = f.node
			}
		}
		n.embedded = embeddedPointers(t, map[reflect.Type]bool{})
	}
	return n, err
}

// hasPointers reports whether a value of type t holds pointers the
// collector scans.
func hasPointers(t reflect.Type, seen map[reflect.Type]bool) bool {
	switch t.Kind() {
	case reflect.Array:
		return t.Len() > 0 && hasPointers(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return false
		}
		seen[t] = true
		for i := range t.NumField() {
			if hasPointers(t.Field(i).Type, seen) {
				return true
			}
		}
		return false
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	}
	return true
}

// embeddedPointers adds up the blocks of the structs t embeds through
// pointers, at any depth.
func embeddedPointers(t reflect.Type, seen map[reflect.Type]bool) uint64 {
	if seen[t] {
		return 0
	}
	seen[t] = true
	var sum uint64
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.Anonymous {
			continue
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer && ft.Elem().Kind() == reflect.Struct {
			block, _ := allocBlock(uint64(ft.Elem().Size()), !hasPointers(ft.Elem(), map[reflect.Type]bool{}), 1)
			sum += block + embeddedPointers(ft.Elem(), seen)
		} else if ft.Kind() == reflect.Struct {
			sum += embeddedPointers(ft, seen)
		}
	}
	return sum
}

// costWalk adds up a model's bound over raw JSON.
type costWalk struct {
	total   uint64
	limit   uint64 // the walk stops once total is over it
	ints    IntRewrite
	grow    int  // bytes the integers to rewrite add (1e3 → 1000)
	rewrite bool // an integer field gets a number ints rewrites
}

// IntRewrite is a caller's rewriting of the numbers it gives integer
// fields (mcp's typed tools take 1.0 and 1e2, which JSON Schema counts as
// integers): given a number written with a fraction or an exponent, it
// reports whether it rewrites it and how many bytes that adds.
type IntRewrite func(num []byte) (grow int, rewrite bool)

// Cost returns the bound of what decoding js (valid JSON) with sonic into
// a value of m's type allocates, or a number over limit as soon as the
// bound passes it. With ints, it also reports whether ints rewrites a
// number given to an integer field, and the bytes the rewriting adds.
// Cost allocates nothing.
func (m *Model) Cost(js []byte, limit uint64, ints IntRewrite) (cost uint64, grow int, rewrite bool) {
	w := costWalk{limit: limit, ints: ints}
	w.total = unmarshalFixed + CopyCost(len(js)) // sonic.Unmarshal's string(js)
	w.value(m, js)
	return w.total, w.grow, w.rewrite
}

// skipWS returns the index of the first byte at or after i that is not
// JSON white space.
func skipWS(v []byte, i int) int {
	for i < len(v) && (v[i] == ' ' || v[i] == '\t' || v[i] == '\n' || v[i] == '\r') {
		i++
	}
	return i
}

// CopyCost returns the block the allocator gives one copy of n bytes.
func CopyCost(n int) uint64 {
	if n <= 1024 {
		return uint64(smallClasses[(n+7)/8])
	}
	block, _ := allocBlock(uint64(n), true, 1)
	return block
}

// value adds the cost of the value at the start of v (which may go on past
// it) and returns how many bytes of v it took, 0 when v is cut short or the
// walk went over its limit.
func (w *costWalk) value(n *Model, v []byte) int {
	i := skipWS(v, 0)
	if i >= len(v) || w.total > w.limit {
		return 0
	}
	c := v[i]
	if c == 'n' {
		// null: nothing allocated, but a value decoding itself is given
		// it (json.RawMessage copies it: found by review on 2026-12-06)
		if n.kind == costSelf {
			w.total += CopyCost(4) + selfWord
		}
		return i + 4
	}
	switch n.kind {
	case costStruct:
		if c == '{' {
			w.total += n.embedded
			return w.object(v, i, n, nil)
		}
	case costMap:
		if c == '{' {
			w.total += mapHeader
			return w.object(v, i, nil, n)
		}
	case costSlice, costArray:
		if c == '[' {
			return w.array(v, i, n)
		}
	case costCopy:
		if c == '[' && n.bytes {
			// a []byte takes an array of numbers too, grown as any
			// slice (found by review on 2026-12-06)
			return w.array(v, i, byteSlice)
		}
	case costPointer:
		w.total += n.size
		k := w.value(n.elem, v[i:])
		if k == 0 {
			return 0
		}
		return i + k
	case costAny:
		switch c {
		case '{':
			w.total += mapHeader
			return w.object(v, i, nil, anyMap)
		case '[':
			w.total += sliceBox
			return w.array(v, i, anySlice)
		case 't', 'f':
			return decode.SkipValue(v, i) // static booleans: no box
		}
		end := decode.SkipValue(v, i)
		if end > i {
			w.total += anyBox + CopyCost(end-i) // a string or json.Number
		}
		return end
	}
	end := decode.SkipValue(v, i)
	switch {
	case end <= i:
	case n.kind == costCopy:
		w.total += CopyCost(end - i)
	case n.kind == costSelf:
		w.total += selfCost(n.self, end-i, end-i >= 2 && v[end-2] == 'Z')
	case n.kind == costInt && c != '"' && w.ints != nil:
		if num := v[i:end]; bytes.ContainsAny(num, ".eE") {
			if grow, ok := w.ints(num); ok {
				w.rewrite = true
				w.grow += max(0, grow)
			}
		}
	}
	return end
}

// selfCost is the bound of what a value of a type decoding itself takes
// to decode js: a copy of its JSON and a word; for time.Time a
// time.Location when its offset is not Z; for big.Int and big.Float the
// quadratic growth of their decimal scan (20 KB of digits took 950 KB;
// found by review on 2026-12-06).
// js is n bytes long, its last byte but one a Z when zulu is set.
func selfCost(k selfKind, length int, zulu bool) uint64 {
	n := uint64(length)
	cost := CopyCost(length) + selfWord
	switch k {
	case selfTime:
		if !zulu {
			cost += timeLocation
		}
	case selfBig:
		cost += n*n/256 + 256
	}
	return cost
}

// The models of what sonic builds for an interface: map[string]any and
// []any; and of a []byte given an array of numbers.
var (
	anyMap    = &Model{kind: costMap, size: 16 + anySlot, strKey: true, elem: anyNode}
	anySlice  = &Model{kind: costSlice, size: anySlot, elem: anyNode}
	byteSlice = &Model{kind: costSlice, size: 1, noscan: true, elem: &Model{kind: costInt}}
	// anySlice's first capacity is anyFirst: array() tells it by this node.
)

// object walks the object at v[i]: a struct's members by st's fields, or
// a map's entries by mp.
func (w *costWalk) object(v []byte, i int, st, mp *Model) int {
	var it decode.Members
	entries := 0
	for it.Reset(v[i:]); it.NextName(); {
		var f *Model
		if mp != nil {
			entries++
			w.total += mp.size*mapGrowth + mapEntry
			name := it.Name()
			switch key := mp.key; {
			case key != nil:
				// a key that decodes itself is given its text (found
				// by review on 2026-12-06)
				if key.kind == costPointer {
					w.total += key.size
					key = key.elem
				}
				if key.kind == costSelf {
					// sonic's copy of the key and the []byte it hands
					// UnmarshalText, then the key's own
					w.total += 2*CopyCost(len(name)) + selfCost(key.self, len(name)+2, len(name) > 0 && name[len(name)-1] == 'Z')
				}
			case mp.strKey:
				w.total += CopyCost(len(name))
			}
			f = mp.elem
		} else {
			if it.NameEscaped() {
				// sonic unescapes a struct member's name into a copy,
				// known or not (found by review on 2026-12-06)
				w.total += CopyCost(len(it.Name()))
			}
			f = st.field(&it)
		}
		k := 0
		if f != nil {
			if k = w.value(f, it.Rest()); k == 0 {
				return 0
			}
		}
		if !it.TakeValue(k) {
			return 0
		}
	}
	if entries > 0 {
		w.total += 8*mp.size + 8 // the first group, of 8 slots
	}
	if e := it.End(); e > 0 {
		return i + e
	}
	return 0
}

// array walks the array at v[i], whose elements n.elem models, grown in a
// slice when n is one.
func (w *costWalk) array(v []byte, i int, n *Model) int {
	var it decode.Elements
	var count uint64
	for it.Reset(v[i:]); it.NextStart(); count++ {
		k := w.value(n.elem, it.Rest())
		if k == 0 || !it.TakeValue(k) {
			return 0
		}
	}
	switch {
	case n == anySlice:
		w.total += sliceCost(max(count, 1), n.size, anyFirst, false)
	case n.kind == costSlice:
		w.total += sliceEmpty + sliceCost(count, n.size, sliceFirst, n.noscan)
	}
	if e := it.End(); e > 0 {
		return i + e
	}
	return 0
}

// sliceCost returns the bytes of every backing array a slice of elements
// of the given size has while sonic decodes n of them into it: first a
// capacity of first, then, each time it is full, the runtime's growslice
// asked for twice the capacity (which grows a slice of 256 elements or
// more by steps of a quarter and 192 until it has that, and rounds the
// bytes up to the allocator's block).
func sliceCost(n, size, first uint64, noscan bool) uint64 {
	if n == 0 || size == 0 {
		return 0
	}
	// makeslice keeps the capacity asked for, whatever its block holds
	// (starting from the block's capacity skipped steps: found by review
	// on 2026-12-06); growslice takes the block's.
	total, _ := allocBlock(first*size, noscan, size)
	c := first
	for c < n {
		want, next := 2*c, c
		if c < 256 {
			next = want
		}
		for next < want {
			next += (next + 3*256) / 4
		}
		block, capacity := allocBlock(next*size, noscan, size)
		total, c = total+block, capacity
	}
	return total
}

// sizeClasses are the Go allocator's block sizes for objects of up to
// 32 KiB (runtime/internal/gc, Go 1.26).
var sizeClasses = [...]uint64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224,
	240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280,
	1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912,
	8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576,
	27264, 28672, 32768}

// smallClasses maps (b+7)/8 to the size class of b bytes, for b up to
// 1 KiB: the common copy costs a load, not a search.
var smallClasses = func() (t [129]uint16) {
	for i := range t {
		j, _ := slices.BinarySearch(sizeClasses[:], uint64(i*8))
		t[i] = uint16(sizeClasses[j])
	}
	return t
}()

// allocBlock returns the block the allocator gives a request of b bytes
// and the elements of the given size that fit in it: a size class (plus
// the 8-byte header an object with pointers of more than 512 bytes
// carries), or whole 8 KiB pages beyond 32 KiB (and a margin).
func allocBlock(b uint64, noscan bool, size uint64) (block, capacity uint64) {
	var header uint64
	if !noscan && b > 512 {
		header = 8
	}
	if r := b + header; r <= 1024 {
		block = uint64(smallClasses[(r+7)/8])
	} else if r <= sizeClasses[len(sizeClasses)-1] {
		i, _ := slices.BinarySearch(sizeClasses[:], r)
		block = sizeClasses[i]
	} else {
		// Whole pages, and a margin the model keeps for what else a
		// large slice's growth was seen to count (200 bytes at 4 MiB).
		block = (b+8191)&^8191 + 512
		header = 512
	}
	return block, (block - header) / size
}

// field returns the model of the struct field the current member names,
// nil for none: by comparing names (a map lookup for large structs; a
// name with escapes compared unescaping, no copy).
func (n *Model) field(it *decode.Members) *Model {
	name := it.Name()
	switch {
	case it.NameEscaped():
		for _, f := range n.fields {
			if it.NameIs(f.name) {
				return f.node
			}
		}
	case n.byName != nil:
		return n.byName[string(name)] // no copy for the lookup
	default:
		for _, f := range n.fields {
			if f.name == string(name) {
				return f.node
			}
		}
	}
	return nil
}

// implements reports whether t or *t implements iface (encoding/json
// calls a pointer method of an addressable value).
func Implements(t, iface reflect.Type) bool {
	return t.Implements(iface) || reflect.PointerTo(t).Implements(iface)
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// IntKind reports whether k is a Go integer kind.
func IntKind(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Uintptr
}

// DecodesItself reports whether a value of type t (or *t) decodes its own
// JSON (json.Unmarshaler, encoding.TextUnmarshaler).
func DecodesItself(t reflect.Type) bool {
	return Implements(t, jsonUnmarshaler) || Implements(t, textUnmarshaler)
}

// validTag reports whether name may be a member name in a json tag, as
// encoding/json judges it: letters, digits and the punctuation it allows
// (no quote, backslash or comma); an invalid one names the field by its
// Go name.
func validTag(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// fieldsOf caches Fields.
var fieldsOf sync.Map // reflect.Type → map[string]reflect.Type

// Fields maps the JSON member names a struct type t takes (Members) to
// the types of their fields; case-sensitive here, where sonic also takes
// a name in another case.
func Fields(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldsOf.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	ms := Members(t)
	m := make(map[string]reflect.Type, len(ms))
	for _, f := range ms {
		m[f.Name] = f.Field.Type
	}
	fieldsOf.Store(t, m)
	return m
}
