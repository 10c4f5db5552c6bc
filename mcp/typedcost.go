package mcp

// NOTE: the memory a typed tool's arguments take.
//
// Contract §3 bounds the memory of a request's decoded form at 8× its
// body. A typed tool's decoded form is In, as sonic builds it, and a Go
// value can take far more than its JSON: measured with sonic (steady
// state, 1 MiB of arguments), []int of one-digit numbers took ~10 bytes
// a byte of JSON, []string of "" ~16, map[string]int ~15, []any of 0
// ~38, and objects of empty objects into an any ~55 (found on
// 2026-12-06; the untyped path reads the raw bytes and takes nothing).
//
// So before sonic runs, typedCost walks the arguments as In's type
// directs (decode's iterators, each byte read once) and adds up a bound
// on what decoding them allocates: a slice as append grows it one element
// at a time (every backing array it leaves behind), a map's entries at 6× their
// key and value sizes plus its header and first group, an interface's
// value as sonic builds it (map[string]any, []any, a boxed json.Number
// or string), every string, []byte and self-decoding value as one copy
// of its JSON, and the copy of the whole arguments sonic.Unmarshal
// makes to read them as a string. TestTypedCostCoversSonic holds the model above sonic's
// measured allocations for each shape. Arguments whose bound is over
// typedBudget are refused -32602 before anything is decoded.
//
// Types with no slice, map or interface below them take a fixed size
// plus at most one copy of the arguments' strings: they are not walked,
// and the common typed tool (a struct of strings and numbers) pays
// nothing for the check.

import (
	"bytes"
	"maps"
	"reflect"
	"slices"
	"strconv"

	"github.com/rpcedge/rpcedge/decode"
)

// typedBudget returns the bytes decoding n bytes of arguments may take:
// 6× n plus 64 KiB. From 32 KiB of arguments on, that is within contract
// §3's 8× the body, with room for the server's own buffers; below, the
// 64 KiB let a small call into an expensive type through (a few thousand
// integers into a []int, ~20 bytes each; 500 bytes of the costliest
// item, [] into an interface, ~290 bytes for its 3).
func typedBudget(n int) uint64 { return 6*uint64(n) + typedAllowance }

// typedAllowance is the part of typedBudget that does not grow with the
// arguments.
const typedAllowance = 64 << 10

// costKind is how a JSON value costs memory when decoded into a Go type.
type costKind uint8

const (
	costNone    costKind = iota // a float or boolean: nothing beyond its place
	costInt                     // an integer: nothing, but 1.0 or 1e2 is rewritten first
	costCopy                    // a string or []byte: one copy of its JSON
	costSelf                    // a type decoding itself: one copy of its JSON and a word
	costSlice                   // a slice: its elements grown by append
	costArray                   // an array: its elements in place
	costPointer                 // a pointer: the pointee, once the value is not null
	costMap                     // a map: header, groups, keys and values
	costAny                     // an empty interface: what sonic builds for the JSON
	costStruct                  // a struct: its fields by JSON name
)

// The model's constants (calibrated by TestTypedCostCoversSonic).
const (
	unmarshalFixed = 64 // per call, beyond the copy of the arguments
	selfWord       = 16 // per value decoding itself, beyond the copy of its JSON
	sliceEmpty     = 16 // per array decoded into a slice, beyond its growth (sliceCost)
	sliceFirst     = 2  // the capacity sonic gives a typed slice's first element
	anyFirst       = 16 // and a []any's, allocated for an empty array too
	sliceBox       = 24 // a []any's header boxed into an interface
	pointerWord    = 16 // per pointer beyond its pointee's size (size classes)
	mapGrowth      = 6  // per byte of an entry's key and value
	mapEntry       = 8  // per entry beyond its key and value (control bytes)
	mapHeader      = 64 // a map's header, for an empty map too
	anySlot        = 16 // an interface value, the element of []any and map[string]any
	anyBox         = 16 // a string or json.Number's header boxed into an interface
)

// costField is a struct field's JSON name and model.
type costField struct {
	name string
	node *costNode
}

// smallStruct is the most fields a struct's model finds by comparing
// names one by one rather than by a map.
const smallStruct = 8

// costNode is the cost model of one Go type.
type costNode struct {
	kind   costKind
	size   uint64 // slice: element size; pointer: pointee size; map: a slot's size (key and value)
	strKey bool   // map: string keys, one copy each
	noscan bool   // slice: elements without pointers (no malloc header)
	elem   *costNode
	fields []costField          // struct: by JSON name, as jsonFields names them
	byName map[string]*costNode // and by a map for more than smallStruct fields
	// embedded is the size of the structs a struct reaches through
	// embedded pointers, which sonic allocates for promoted fields.
	embedded uint64
}

// typedModel returns the cost model of t, or nil when a value of t is
// bounded by its own size plus one copy of its strings (no slice, map or
// interface below it): such arguments are not walked.
func typedModel(t reflect.Type) *costNode {
	memo := map[reflect.Type]*costNode{}
	n := buildCost(t, memo)
	for _, m := range memo {
		switch m.kind {
		case costSlice, costMap, costAny:
			return n
		}
	}
	return nil
}

var anyNode = &costNode{kind: costAny}

// buildCost builds t's cost model, memo breaking the cycles of recursive
// types.
func buildCost(t reflect.Type, memo map[reflect.Type]*costNode) *costNode {
	if n, ok := memo[t]; ok {
		return n
	}
	n := &costNode{}
	memo[t] = n
	switch {
	case decodesItself(t):
		n.kind = costSelf
		return n
	}
	switch k := t.Kind(); {
	case isIntKind(k):
		n.kind = costInt
	}
	switch t.Kind() {
	case reflect.String:
		n.kind = costCopy
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !decodesItself(t.Elem()) {
			n.kind = costCopy // base64: fewer bytes than its JSON
			break
		}
		n.kind, n.size, n.elem = costSlice, uint64(t.Elem().Size()), buildCost(t.Elem(), memo)
		n.noscan = !hasPointers(t.Elem(), map[reflect.Type]bool{})
	case reflect.Array:
		n.kind, n.elem = costArray, buildCost(t.Elem(), memo)
	case reflect.Pointer:
		n.kind, n.size, n.elem = costPointer, uint64(t.Elem().Size()), buildCost(t.Elem(), memo)
	case reflect.Map:
		slot := reflect.StructOf([]reflect.StructField{{Name: "K", Type: t.Key()}, {Name: "V", Type: t.Elem()}})
		n.kind, n.size, n.elem = costMap, uint64(slot.Size()), buildCost(t.Elem(), memo)
		n.strKey = t.Key().Kind() == reflect.String
	case reflect.Interface:
		if t.NumMethod() == 0 {
			n.kind = costAny
		} // sonic refuses to decode into a non-empty interface
	case reflect.Struct:
		n.kind = costStruct
		fs := jsonFields(t)
		for _, name := range slices.Sorted(maps.Keys(fs)) {
			n.fields = append(n.fields, costField{name, buildCost(fs[name], memo)})
		}
		if len(n.fields) > smallStruct {
			n.byName = make(map[string]*costNode, len(n.fields))
			for _, f := range n.fields {
				n.byName[f.name] = f.node
			}
		}
		n.embedded = embeddedPointers(t, map[reflect.Type]bool{})
	}
	memo[t] = n
	return n
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

// embeddedPointers adds up the sizes of the structs t embeds through
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
			sum += uint64(ft.Elem().Size()) + embeddedPointers(ft.Elem(), seen)
		} else if ft.Kind() == reflect.Struct {
			sum += embeddedPointers(ft, seen)
		}
	}
	return sum
}

// costWalk adds up a model's bound over raw arguments.
type costWalk struct {
	total   uint64
	limit   uint64 // the walk stops once total is over it
	grow    int    // bytes the integers to rewrite add (1e3 → 1000)
	rewrite bool   // an integer field gets 1.0 or 1e2
}

// typedCost returns the bound of decoding args (a valid JSON object) into
// a value of the type model n describes, or a number over limit as soon
// as the bound passes it; and whether an integer field gets a number
// written with a fraction or an exponent (which appendPlainIntegersFor
// rewrites), with the bytes that rewriting adds.
func typedCost(n *costNode, args []byte, limit uint64) (cost uint64, grow int, rewrite bool) {
	w := costWalk{limit: limit}
	w.total = unmarshalFixed + copyCost(len(args)) // sonic.Unmarshal's string(args)
	w.value(n, args)
	return w.total, w.grow, w.rewrite
}

// copyCost is the block of one copy of a JSON text of n bytes.
func copyCost(n int) uint64 {
	if n <= 1024 {
		return uint64(smallClasses[(n+7)/8])
	}
	block, _ := allocBlock(uint64(n), true, 1)
	return block
}

// value adds the cost of the value at the start of v (which may go on past
// it) and returns how many bytes of v it took, 0 when v is cut short or the
// walk went over its limit.
func (w *costWalk) value(n *costNode, v []byte) int {
	i := skipWS(v, 0)
	if i >= len(v) || w.total > w.limit {
		return 0
	}
	c := v[i]
	if c == 'n' {
		return i + 4 // null: nothing allocated, whatever the type
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
	case costPointer:
		w.total += n.size + pointerWord
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
			w.total += anyBox + copyCost(end-i) // a string or json.Number
		}
		return end
	}
	end := decode.SkipValue(v, i)
	switch {
	case end <= i:
	case n.kind == costCopy:
		w.total += copyCost(end - i)
	case n.kind == costSelf:
		w.total += copyCost(end-i) + selfWord
	case n.kind == costInt && c != '"':
		if num := v[i:end]; bytes.ContainsAny(num, ".eE") {
			var tmp [48]byte
			if out, changed := appendPlainInteger(tmp[:0], num); changed {
				w.rewrite = true
				w.grow += max(0, len(out)-len(num))
			}
		}
	}
	return end
}

// The models of what sonic builds for an interface: map[string]any and
// []any.
var (
	anyMap   = &costNode{kind: costMap, size: 16 + anySlot, strKey: true, elem: anyNode}
	anySlice = &costNode{kind: costSlice, size: anySlot, elem: anyNode}
	// anySlice's first capacity is anyFirst: array() tells it by this node.
)

// object walks the object at v[i]: a struct's members by st's fields, or
// a map's entries by mp.
func (w *costWalk) object(v []byte, i int, st, mp *costNode) int {
	var it decode.Members
	entries := 0
	for it.Reset(v[i:]); it.NextName(); {
		var f *costNode
		if mp != nil {
			entries++
			w.total += mp.size*mapGrowth + mapEntry
			if mp.strKey {
				w.total += copyCost(len(it.Name()))
			}
			f = mp.elem
		} else {
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
func (w *costWalk) array(v []byte, i int, n *costNode) int {
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
	total, c := allocBlock(first*size, noscan, size)
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
func (n *costNode) field(it *decode.Members) *costNode {
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

// tooLarge is the refusal of arguments whose decoded form would pass the
// budget.
func tooLarge(t reflect.Type, cost uint64, n int) error {
	return invalidArguments("arguments", "would take more than "+strconv.FormatUint(cost>>10, 10)+
		" KiB as the tool's Go type "+t.String()+", over its bound of 6× their "+strconv.Itoa(n)+
		" bytes + 64 KiB (contract §3 bounds a request's decoded form): send fewer values")
}
