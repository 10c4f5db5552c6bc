package mcp

// NOTE: schemas beyond the compiled subset, judged over the raw bytes.
//
// A schema outside the compiled subset (schema.go) is compiled by the
// JSON Schema library, which checks it against its metaschema and resolves
// every $ref. Its compiled graph (*jsonschema.Schema) is then read once
// more, at registration, into rawNodes, and calls are judged by walking
// those nodes over the raw argument bytes with decode's iterators — the
// library's own Validate needs its instance model (maps, slices, boxed
// numbers) and allocates its errors as it goes, which for dense arguments
// cost 36-480 times their bytes, past contract §3's bound of 8 (found by
// review on 2026-12-06).
//
// The walk follows the library's validator keyword by keyword, including
// what decides unevaluatedProperties and unevaluatedItems (a subschema's
// evaluated members count only when it is valid) and its refusal of a
// schema applied to the same value again without end ($ref cycles). What
// it reads differently:
//
//   - numbers are exact decimals (number.go): minimum and its kin,
//     multipleOf and equality cost time linear in the number's text, so
//     no number is refused for its size (the library path refuses more
//     than maxLibDigits digits);
//   - uniqueItems hashes each element once (a random seed per process,
//     numbers and member order normalized) into one sorted word of 8
//     bytes an element, and compares only elements whose hashes agree;
//   - a repeated member name, at any depth, is read as every reader reads
//     it: the last occurrence wins (the arguments are rewritten once,
//     decode.AppendLastWins, only when some object repeats a name);
//   - format (an assertion under draft-07 and earlier) is judged on the
//     raw string, allocation-free, for every built-in format but the URI
//     ones and regex (schemaformat.go); those go to the library's
//     functions, charged at what they allocate against a budget of
//     256 KiB plus 4 times the arguments, and a regex longer than
//     rawRegexMax is refused as too costly to judge.
//
// Memory: besides that rewrite, a walk holds bit sets of the members or
// elements not yet evaluated (one bit each, only where an unevaluated*
// keyword may need them) and the uniqueItems words; nothing per value.
// Failing branches of anyOf, oneOf, not, if and contains are walked
// quietly (one shared failure, no message built), so a valid call
// allocates nothing once the walk's buffers are pooled.
// Time: every node applied to a value costs a step, and a step for each
// 32 bytes of the value (its keywords may walk them: the iterators skip
// a member's value byte by byte); uniqueItems a step for each 16 bytes
// it hashes; comparing objects a step per member compared. Walked once,
// a schema applies each of its nodes to a value at most once (twice
// along a failing anyOf or oneOf, walked again for its message), and a
// value takes at least two bytes of arguments: so a walk may take 2 steps
// per schema node per argument byte — at least 16, at most rawMaxPerByte
// — plus rawStepsBase. Combinators that re-judge a value on every level
// (anyOf of two recursive branches) could otherwise take time exponential
// in the nesting depth the client chooses, and a deep instance with its
// bulk at the bottom time quadratic in its size. A call past it is
// refused -32602.
//
// $recursiveRef and $dynamicRef are resolved in the dynamic scope as the
// library resolves them: the walk's stack of applied schemas is that
// scope, and each schema's resource (its $recursiveAnchor and
// $dynamicAnchors, which the library keeps unexported) is read at
// registration (libResource).
//
// compileRaw leaves to the library's own Validate what the walk cannot
// read — vocabulary extensions, content assertions, formats the library
// does not define — none of which this package enables.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"maps"
	"math"
	"math/big"
	"math/bits"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rpcedge/rpcedge/decode"
)

// errRawUnsupported is wrapped by compileRaw's error for a schema the raw
// walk leaves to the library.
var errRawUnsupported = errors.New("mcp: schema left to the library")

const (
	rawMinPerByte = 16
	rawMaxPerByte = 64      // 1 MiB of arguments: at most ~2^26 steps, a few seconds
	rawStepsBase  = 1 << 20 // tens of milliseconds
)

// rawNode is one library schema, read for the raw walk. A field left at
// its zero value (nil, 0, -1 for bounds) asserts nothing.
type rawNode struct {
	boolean int8 // 1: the true schema, -1: the false schema, 0: an object
	draft   int
	types   typeSet
	typeMsg string
	constv  []byte // nil: no const
	enum    [][]byte
	format  *jsonschema.Format
	ref     *rawNode
	recRef  *rawNode // $recursiveRef (2019-09)
	recDyn  bool     // its target has $recursiveAnchor: resolved in the dynamic scope
	dynRef  *rawNode // $dynamicRef (2020-12)
	dynName string   // not "": resolved in the dynamic scope by this anchor

	// What this schema's resource (the schema with its $id, or its
	// document's root) offers the dynamic scope.
	resRecursive bool                // the resource has $recursiveAnchor: true
	resDynamic   map[string]*rawNode // the resource's $dynamicAnchors
	allOf        []*rawNode
	anyOf        []*rawNode
	oneOf        []*rawNode
	not          *rawNode
	ifs          *rawNode
	then         *rawNode
	els          *rawNode

	// objects
	minProps, maxProps int
	names              map[string]int // required and dependency names: their presence bit
	required           []int
	deps               []rawDep // dependencies (before 2019)
	depSchemas         []rawDep // dependentSchemas
	depRequired        []rawDep // dependentRequired
	propertyNames      *rawNode
	props              map[string]*rawNode
	patterns           []rawPattern
	addlSet            bool     // additionalProperties is given
	addl               *rawNode // its schema; nil with addlSet: a boolean
	addlFalse          bool
	uneProps           *rawNode
	allProps           bool

	// arrays
	minItems, maxItems       int
	unique                   bool
	contains                 *rawNode
	minContains, maxContains int
	prefix                   []*rawNode
	rest                     *rawNode // every element after prefix
	restFalse                bool     // no element may follow prefix
	uneItems                 *rawNode
	allItems                 bool
	numItems                 int

	// strings
	minLen, maxLen int
	pattern        *regexp.Regexp

	// numbers
	min, max, exMin, exMax *decimal
	multipleOf             *multiple
}

// rawDep is a dependency: when the member key is present, names must be
// (by presence bit), or the schema s must hold for the object.
type rawDep struct {
	key   int
	name  string
	names []int
	s     *rawNode
}

type rawPattern struct {
	re *regexp.Regexp
	s  *rawNode
}

// rawSchema is a tool schema read for the raw walk.
type rawSchema struct {
	root    *rawNode
	perByte int // the walk's steps per argument byte
}

// rawCompiler reads a library schema graph, each schema once.
type rawCompiler struct {
	seen map[*jsonschema.Schema]*rawNode
}

// compileRaw reads the library's compiled schema ls for the raw walk.
func compileRaw(ls *jsonschema.Schema) (*rawSchema, error) {
	c := rawCompiler{seen: make(map[*jsonschema.Schema]*rawNode)}
	root, err := c.node(ls)
	if err != nil {
		return nil, err
	}
	return &rawSchema{root: root, perByte: min(max(2*len(c.seen), rawMinPerByte), rawMaxPerByte)}, nil
}

func unsupported(s *jsonschema.Schema, what string) error {
	return fmt.Errorf("%w: %s at %s", errRawUnsupported, what, s.Location)
}

func (c *rawCompiler) node(s *jsonschema.Schema) (*rawNode, error) {
	if s == nil {
		return nil, nil
	}
	if n, ok := c.seen[s]; ok {
		return n, nil
	}
	n := &rawNode{draft: s.DraftVersion, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1,
		minContains: -1, maxContains: -1, minLen: -1, maxLen: -1}
	c.seen[s] = n
	if s.Bool != nil {
		n.boolean = -1
		if *s.Bool {
			n.boolean = 1
		}
		return n, nil
	}
	switch {
	case len(s.Extensions) > 0:
		return nil, unsupported(s, "a vocabulary extension")
	case s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil:
		return nil, unsupported(s, "a content assertion")
	case s.Format != nil && !builtinFormat(s.Format):
		return nil, unsupported(s, "a format the library does not define")
	}
	var err error
	one := func(dst **rawNode, sub *jsonschema.Schema) {
		if err == nil {
			*dst, err = c.node(sub)
		}
	}
	many := func(subs []*jsonschema.Schema) []*rawNode {
		var out []*rawNode
		for _, sub := range subs {
			var x *rawNode
			one(&x, sub)
			out = append(out, x)
		}
		return out
	}
	if s.Types != nil {
		for _, name := range s.Types.ToStrings() {
			for _, tn := range typeNames {
				if tn.name == name {
					n.types |= tn.t
				}
			}
		}
		n.typeMsg = typeMessage(n.types)
	}
	if s.Const != nil {
		if n.constv, err = json.Marshal(*s.Const); err != nil {
			return nil, err
		}
	}
	if s.Enum != nil {
		for _, v := range s.Enum.Values {
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			n.enum = append(n.enum, b)
		}
		if len(n.enum) == 0 {
			n.enum = [][]byte{} // nothing is valid
		}
	}
	n.format = s.Format
	one(&n.ref, s.Ref)
	if s.RecursiveRef != nil {
		one(&n.recRef, s.RecursiveRef)
		n.recDyn = s.RecursiveRef.RecursiveAnchor
	}
	if s.DynamicRef != nil {
		one(&n.dynRef, s.DynamicRef.Ref)
		if a := s.DynamicRef.Anchor; a != "" && s.DynamicRef.Ref.DynamicAnchor == a {
			n.dynName = a
		}
	}
	if res, anchors, ok := libResource(s); ok {
		n.resRecursive = res.RecursiveAnchor
		for _, name := range slices.Sorted(maps.Keys(anchors)) {
			if n.resDynamic == nil {
				n.resDynamic = make(map[string]*rawNode, len(anchors))
			}
			var x *rawNode
			one(&x, anchors[name])
			n.resDynamic[name] = x
		}
	} else if n.recDyn || n.dynName != "" {
		return nil, unsupported(s, "a dynamic reference, with no resource to resolve it in")
	}
	n.allOf, n.anyOf, n.oneOf = many(s.AllOf), many(s.AnyOf), many(s.OneOf)
	one(&n.not, s.Not)
	one(&n.ifs, s.If)
	one(&n.then, s.Then)
	one(&n.els, s.Else)

	// objects
	if s.MinProperties != nil {
		n.minProps = *s.MinProperties
	}
	if s.MaxProperties != nil {
		n.maxProps = *s.MaxProperties
	}
	n.names = make(map[string]int)
	bit := func(name string) int {
		i, ok := n.names[name]
		if !ok {
			i = len(n.names)
			n.names[name] = i
		}
		return i
	}
	for _, r := range s.Required {
		n.required = append(n.required, bit(r))
	}
	for _, key := range slices.Sorted(maps.Keys(s.Dependencies)) {
		d := rawDep{key: bit(key), name: key}
		switch dep := s.Dependencies[key].(type) {
		case []string:
			for _, r := range dep {
				d.names = append(d.names, bit(r))
			}
		case *jsonschema.Schema:
			one(&d.s, dep)
		}
		n.deps = append(n.deps, d)
	}
	for _, key := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
		d := rawDep{key: bit(key), name: key}
		one(&d.s, s.DependentSchemas[key])
		n.depSchemas = append(n.depSchemas, d)
	}
	for _, key := range slices.Sorted(maps.Keys(s.DependentRequired)) {
		d := rawDep{key: bit(key), name: key}
		for _, r := range s.DependentRequired[key] {
			d.names = append(d.names, bit(r))
		}
		n.depRequired = append(n.depRequired, d)
	}
	if len(n.names) == 0 {
		n.names = nil
	}
	one(&n.propertyNames, s.PropertyNames)
	if len(s.Properties) > 0 {
		n.props = make(map[string]*rawNode, len(s.Properties))
		for name, sub := range s.Properties {
			var x *rawNode
			one(&x, sub)
			n.props[name] = x
		}
	}
	for re, sub := range s.PatternProperties {
		p := rawPattern{}
		if p.re, err = regexp.Compile(re.String()); err != nil {
			return nil, unsupported(s, "a pattern Go's regexp does not compile")
		}
		one(&p.s, sub)
		n.patterns = append(n.patterns, p)
	}
	slices.SortFunc(n.patterns, func(a, b rawPattern) int { return cmp.Compare(a.re.String(), b.re.String()) })
	switch a := s.AdditionalProperties.(type) {
	case bool:
		n.addlSet, n.addlFalse = true, !a
	case *jsonschema.Schema:
		n.addlSet = true
		one(&n.addl, a)
	}
	one(&n.uneProps, s.UnevaluatedProperties)
	n.allProps = s.AdditionalProperties != nil

	// arrays
	if s.MinItems != nil {
		n.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		n.maxItems = *s.MaxItems
	}
	n.unique = s.UniqueItems
	one(&n.contains, s.Contains)
	if s.MinContains != nil {
		n.minContains = *s.MinContains
	}
	if s.MaxContains != nil {
		n.maxContains = *s.MaxContains
	}
	if s.DraftVersion < 2020 {
		switch items := s.Items.(type) {
		case *jsonschema.Schema:
			one(&n.rest, items)
			n.allItems = true
		case []*jsonschema.Schema:
			n.prefix = many(items)
			n.numItems = len(items)
		}
		if _, ok := s.Items.(*jsonschema.Schema); !ok {
			switch a := s.AdditionalItems.(type) {
			case bool:
				n.restFalse = !a
			case *jsonschema.Schema:
				one(&n.rest, a)
			}
		}
		if s.AdditionalItems != nil {
			n.allItems = true
		}
	} else {
		n.prefix = many(s.PrefixItems)
		one(&n.rest, s.Items2020)
		n.allItems = s.Items2020 != nil
		n.numItems = len(s.PrefixItems)
	}
	one(&n.uneItems, s.UnevaluatedItems)

	// strings
	if s.MinLength != nil {
		n.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		n.maxLen = *s.MaxLength
	}
	if s.Pattern != nil {
		if n.pattern, err = regexp.Compile(s.Pattern.String()); err != nil {
			return nil, unsupported(s, "a pattern Go's regexp does not compile")
		}
	}

	// numbers
	for _, b := range []struct {
		r   *big.Rat
		dst **decimal
	}{{s.Minimum, &n.min}, {s.Maximum, &n.max}, {s.ExclusiveMinimum, &n.exMin}, {s.ExclusiveMaximum, &n.exMax}} {
		if b.r == nil {
			continue
		}
		text, ok := ratText(b.r)
		if !ok {
			return nil, unsupported(s, "a bound that is not a decimal")
		}
		d := parseDecimal(text)
		*b.dst = &d
	}
	if s.MultipleOf != nil {
		text, ok := ratText(s.MultipleOf)
		if !ok || s.MultipleOf.Sign() <= 0 {
			return nil, unsupported(s, "a multipleOf that is not a positive decimal")
		}
		n.multipleOf = newMultiple(text)
	}
	if err != nil {
		return nil, err
	}
	return n, nil
}

// libResource returns the library's resource of s (the schema that holds
// its $id, or its document's root) and the resource's $dynamicAnchors.
// The library resolves $recursiveRef and $dynamicRef through them but
// keeps both unexported; they are read here by reflection, and a library
// whose Schema no longer has them makes compileRaw leave dynamic
// references to the library (ok false).
func libResource(s *jsonschema.Schema) (*jsonschema.Schema, map[string]*jsonschema.Schema, bool) {
	v := reflect.ValueOf(s).Elem()
	rf, af := v.FieldByName("resource"), v.FieldByName("dynamicAnchors")
	schemaPtr := reflect.TypeFor[*jsonschema.Schema]()
	if !rf.IsValid() || rf.Type() != schemaPtr || rf.IsNil() ||
		!af.IsValid() || af.Type() != reflect.TypeFor[map[string]*jsonschema.Schema]() {
		return nil, nil, false
	}
	res := (*jsonschema.Schema)(rf.UnsafePointer())
	rv := reflect.ValueOf(res).Elem().FieldByName("dynamicAnchors")
	var anchors map[string]*jsonschema.Schema
	for it := rv.MapRange(); it.Next(); {
		if anchors == nil {
			anchors = make(map[string]*jsonschema.Schema)
		}
		anchors[it.Key().String()] = (*jsonschema.Schema)(it.Value().UnsafePointer())
	}
	return res, anchors, true
}

// builtinFormat reports whether f is one of the library's own formats,
// every one of which judges strings only (any other value passes).
func builtinFormat(f *jsonschema.Format) bool {
	switch f.Name {
	case "regex", "ipv4", "ipv6", "hostname", "email", "date", "time", "date-time",
		"duration", "period", "json-pointer", "relative-json-pointer", "uuid", "uri",
		"iri", "uri-reference", "iri-reference", "uri-template", "semver":
		return true
	}
	return false
}

// ratText writes the exact decimal text of r, or false when r has none
// (a schema's numbers are decimals, so it always has): its denominator
// must be 2^a × 5^b, and max(a, b) fractional digits then hold it
// exactly. (Dividing out one factor at a time took minutes for 1e-300000.)
func ratText(r *big.Rat) ([]byte, bool) {
	den := r.Denom()
	a := den.TrailingZeroBits()
	rest := new(big.Int).Rsh(den, a)
	// rest must be 5^b: b is about its bit length over log2(5).
	guess := int(float64(rest.BitLen()-1) / math.Log2(5))
	b := -1
	for k := max(0, guess-1); k <= guess+2; k++ {
		if new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(k)), nil).Cmp(rest) == 0 {
			b = k
			break
		}
	}
	if b < 0 {
		return nil, false
	}
	return []byte(r.FloatString(max(int(a), b))), true
}

// multiple is a multipleOf divisor b = m × 10^f, m an integer with no
// trailing zero, m = odd × 2^twos × 5^fives with odd prime to 10.
type multiple struct {
	f           int64
	twos, fives int
	odd         *big.Int // nil when it fits small
	oddSmall    uint64
}

func newMultiple(text []byte) *multiple {
	d := parseDecimal(text)
	var m big.Int
	digits := make([]byte, 0, d.end-d.start)
	for i := d.start; i < d.end; i++ {
		digits = append(digits, d.digit(i))
	}
	m.SetString(string(digits), 10)
	mu := &multiple{f: d.point - int64(d.end-d.start)}
	var r big.Int
	mu.twos = int(m.TrailingZeroBits())
	m.Rsh(&m, uint(mu.twos))
	for five := big.NewInt(5); r.Mod(&m, five).Sign() == 0; mu.fives++ {
		m.Quo(&m, five)
	}
	if m.IsUint64() && m.Uint64() < 1<<32 {
		mu.oddSmall = m.Uint64()
	} else {
		mu.odd = &m
	}
	return mu
}

// divides reports whether the number d is an integer multiple of mu.
// With d = D × 10^e (D its significant digits, no trailing zero) and
// k = e - f: if k < 0, D would need a trailing zero; else m divides
// D × 10^k exactly when odd divides D and D × 10^k holds twos factors 2
// and fives factors 5, read from D's last digits.
func (mu *multiple) divides(d *decimal) bool {
	if d.zero {
		return true
	}
	k := d.point - int64(d.end-d.start) - mu.f
	if k < 0 {
		return false
	}
	if need := int64(mu.twos) - k; need > 0 && !d.lastDigitsDivisible(2, int(need)) {
		return false
	}
	if need := int64(mu.fives) - k; need > 0 && !d.lastDigitsDivisible(5, int(need)) {
		return false
	}
	if mu.odd == nil {
		if mu.oddSmall == 1 {
			return true
		}
		var r uint64
		for i := d.start; i < d.end; i++ {
			r = (r*10 + uint64(d.digit(i)-'0')) % mu.oddSmall
		}
		return r == 0
	}
	// Horner's rule in chunks of 18 digits.
	var r, chunk big.Int
	ten18 := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	for i := d.start; i < d.end; {
		var c uint64
		j := i
		for ; j < d.end && j < i+18; j++ {
			c = c*10 + uint64(d.digit(j)-'0')
		}
		if j-i == 18 {
			r.Mul(&r, ten18)
		} else {
			r.Mul(&r, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(j-i)), nil))
		}
		r.Add(&r, chunk.SetUint64(c))
		r.Mod(&r, mu.odd)
		i = j
	}
	return r.Sign() == 0
}

// lastDigitsDivisible reports whether p^t (p is 2 or 5) divides the
// integer D of d's significant digits: since 10^t is a multiple of p^t,
// D's last t digits decide.
func (d *decimal) lastDigitsDivisible(p uint64, t int) bool {
	if t > 25 {
		var mod, r big.Int
		mod.Exp(big.NewInt(int64(p)), big.NewInt(int64(t)), nil)
		from := max(d.start, d.end-t)
		for i := from; i < d.end; i++ {
			r.Mul(&r, big.NewInt(10))
			r.Add(&r, big.NewInt(int64(d.digit(i)-'0')))
		}
		return r.Mod(&r, &mod).Sign() == 0
	}
	mod := uint64(1)
	for range t {
		mod *= p
	}
	var r uint64
	for i := max(d.start, d.end-t); i < d.end; i++ {
		r = (r*10 + uint64(d.digit(i)-'0')) % mod
	}
	return r == 0
}

// validate judges the raw JSON value v.
func (rs *rawSchema) validate(v []byte) *fieldError {
	v = trimWS(v)
	if decode.HasDuplicateNameDeep(v) {
		v = decode.AppendLastWins(make([]byte, 0, len(v)), v)
	}
	e := rawEvals.Get().(*rawEval)
	e.steps, e.budget = 0, rawStepsBase+rs.perByte*len(v)
	e.fmtBytes, e.fmtBudget = 0, 256<<10+4*len(v)
	var ue uneval
	e.unevalFrom(&ue, v, rs.root, false)
	err := e.eval(rs.root, v, 0, &ue)
	e.release(&ue)
	if e.steps > e.budget {
		err = &fieldError{msg: errCostly} // whatever a not made of it
	}
	e.quiet = 0
	if cap(e.words) > maxPooledWords || cap(e.uniq) > maxPooledWords || cap(e.cmp) > maxPooledWords ||
		cap(e.buf) > 8*maxPooledWords || cap(e.stack) > maxPooledWords {
		return err // a large walk's buffers are left to the collector
	}
	e.stack = e.stack[:0]
	rawEvals.Put(e)
	return err
}

// maxPooledWords bounds the buffers a pooled rawEval keeps.
const maxPooledWords = 4 << 10

var rawEvals = sync.Pool{New: func() any { return new(rawEval) }}

// rawEval is one walk.
type rawEval struct {
	stack  []rawFrame // the nodes applied in place to the values being judged
	words  []uint64   // bit sets, allocated and freed in stack order
	steps  int
	budget int
	// fmtBytes charges the format checks left to the library (they
	// allocate): at most fmtBudget.
	fmtBytes, fmtBudget int
	quiet               int      // > 0: only whether subschemas hold matters, not why
	buf                 []byte   // unescaped names and strings, number spellings
	uniq                []uint64 // uniqueItems' words, reused for every array
	cmp                 []uint64 // equal's member words, in stack order
}

type rawFrame struct {
	n   *rawNode
	vid int32 // the value's depth: equal for nodes applied in place
}

// uneval holds the members (by position) or elements of one value that
// no valid subschema has evaluated yet; nil sets track nothing.
type uneval struct {
	props, items []uint64
	mark         int // e.words's length before these sets
}

func (u *uneval) empty() bool {
	for _, w := range u.props {
		if w != 0 {
			return false
		}
	}
	for _, w := range u.items {
		if w != 0 {
			return false
		}
	}
	return true
}

// merge keeps in u only what other has not evaluated either.
func (u *uneval) merge(other *uneval) {
	for i := range u.props {
		if other.props == nil {
			u.props[i] = 0
		} else {
			u.props[i] &= other.props[i]
		}
	}
	for i := range u.items {
		if other.items == nil {
			u.items[i] = 0
		} else {
			u.items[i] &= other.items[i]
		}
	}
}

func clearBit(set []uint64, i int) {
	if set != nil {
		set[i/64] &^= 1 << (i % 64)
	}
}

func hasBit(set []uint64, i int) bool { return set[i/64]&(1<<(i%64)) != 0 }

// bits returns a set of n bits, from from on set, others clear.
func (e *rawEval) bits(n, from int) []uint64 {
	w := (n + 63) / 64
	if w == 0 {
		w = 1
	}
	at := len(e.words)
	e.words = slices.Grow(e.words, w)[:at+w]
	set := e.words[at : at+w : at+w]
	for i := range set {
		set[i] = 0
	}
	for i := from; i < n; i++ {
		set[i/64] |= 1 << (i % 64)
	}
	return set
}

// unevalFrom starts u for node n applied to v, as the library does: the
// members (elements) n does not evaluate itself, when its caller needs
// them or it has unevaluatedProperties (unevaluatedItems).
func (e *rawEval) unevalFrom(u *uneval, v []byte, n *rawNode, callerNeeds bool) {
	u.mark = len(e.words)
	switch kindOf(v) {
	case kindObject:
		if !n.allProps && (callerNeeds || n.uneProps != nil) {
			c := countMembers(v)
			u.props = e.bits(c, 0)
		}
	case kindArray:
		if !n.allItems && (callerNeeds || n.uneItems != nil) {
			if c := countElements(v); n.numItems < c {
				u.items = e.bits(c, n.numItems)
			}
		}
	}
}

func (e *rawEval) release(u *uneval) { e.words = e.words[:u.mark] }

func countElements(v []byte) int {
	n := 0
	var it decode.Elements
	for it.Reset(v); it.Next(); {
		n++
	}
	return n
}

// inPlace applies n to the value of the current node (allOf, $ref...),
// merging what it evaluated into u when it holds.
func (e *rawEval) inPlace(n *rawNode, v []byte, vid int32, u *uneval) *fieldError {
	var sub uneval
	e.unevalFrom(&sub, v, n, !u.empty())
	err := e.eval(n, v, vid, &sub)
	if err == nil {
		u.merge(&sub)
	}
	e.release(&sub)
	return err
}

// child applies n to a member or element of the current value.
func (e *rawEval) child(n *rawNode, v []byte, vid int32) *fieldError {
	var sub uneval
	e.unevalFrom(&sub, v, n, false)
	err := e.eval(n, v, vid+1, &sub)
	e.release(&sub)
	return err
}

// quietFail is every failure while the walk is quiet: shared, never
// modified, so that a failing branch of anyOf, oneOf, not, if or
// contains allocates nothing.
var quietFail = &fieldError{msg: "does not match the schema"}

// fail returns a failure saying msg, or quietFail.
func (e *rawEval) fail(msg string) *fieldError {
	if e.quiet > 0 {
		return quietFail
	}
	return &fieldError{msg: msg}
}

// failFn is fail for a message that costs building.
func (e *rawEval) failFn(msg func() string) *fieldError {
	if e.quiet > 0 {
		return quietFail
	}
	return &fieldError{msg: msg()}
}

// inName puts err under the current member's name.
func (e *rawEval) inName(err *fieldError, it *decode.Members) *fieldError {
	if err == quietFail {
		return err
	}
	return err.in(memberName(it))
}

// inIndex puts err under element i.
func (e *rawEval) inIndex(err *fieldError, i int) *fieldError {
	if err == quietFail {
		return err
	}
	return err.in("[" + strconv.Itoa(i) + "]")
}

// inString puts err under the member name.
func (e *rawEval) inString(err *fieldError, name string) *fieldError {
	if err == quietFail {
		return err
	}
	return err.in(name)
}

const errCostly = "is too costly to check against this tool's schema (its subschemas judge each value too many times)"

// eval judges v against n. u holds what is not evaluated yet of v.
func (e *rawEval) eval(n *rawNode, v []byte, vid int32, u *uneval) *fieldError {
	// A node costs a step, and a step for each 32 bytes of the value it
	// judges: its keywords may walk them.
	if e.steps += 1 + len(v)>>5; e.steps > e.budget {
		return e.fail(errCostly)
	}
	switch n.boolean {
	case 1:
		return nil
	case -1:
		return e.fail("is not allowed")
	}
	for i := len(e.stack) - 1; i >= 0 && e.stack[i].vid == vid; i-- {
		if e.stack[i].n == n {
			return e.fail("cannot be checked: the schema applies itself to it without end")
		}
	}
	e.stack = append(e.stack, rawFrame{n, vid})
	err := e.evalKeywords(n, v, vid, u)
	e.stack = e.stack[:len(e.stack)-1]
	return err
}

func (e *rawEval) evalKeywords(n *rawNode, v []byte, vid int32, u *uneval) *fieldError {
	k := kindOf(v)
	if n.types != 0 && !typeHolds(n.types, k, v) {
		return e.fail(n.typeMsg)
	}
	if n.constv != nil && !equalJSON(v, n.constv) {
		return e.fail("must be the value the schema's const gives")
	}
	if n.enum != nil && !slices.ContainsFunc(n.enum, func(x []byte) bool { return equalJSON(v, x) }) {
		return e.fail("must be one of the values the schema's enum lists")
	}
	if n.format != nil && k == kindString {
		ok, handled := rawFormat(n.format.Name, v)
		if !handled {
			// The library's function, on a Go string, charged at what it
			// allocates a byte (measured: the URI formats 6.25, the
			// template 12.4, regexp.Compile 240-480; plus the string),
			// against a budget of 256 KiB and 4 times the arguments over
			// the whole walk; a regex longer than rawRegexMax is refused
			// outright.
			per := 8
			switch n.format.Name {
			case "uri-template":
				per = 14
			case "regex":
				if len(v) > rawRegexMax+2 {
					e.steps = e.budget + 1
					return e.fail(errCostly)
				}
				per = 300
			}
			if e.fmtBytes += per * len(v); e.fmtBytes > e.fmtBudget {
				e.steps = e.budget + 1
				return e.fail(errCostly)
			}
			e.buf = decode.AppendUnquoted(e.buf[:0], v)
			ok = n.format.Validate(string(e.buf)) == nil
		}
		if !ok {
			return e.failFn(func() string { return "is not a valid " + n.format.Name })
		}
	}
	if n.ref != nil {
		err := e.inPlace(n.ref, v, vid, u)
		if n.draft < 2019 || err != nil {
			return err
		}
	}
	var err *fieldError
	switch k {
	case kindObject:
		err = e.object(n, v, vid, u)
	case kindArray:
		err = e.array(n, v, vid, u)
	case kindString:
		err = e.checkString(n, v)
	case kindNumber:
		err = e.checkNumber(n, v)
	}
	if err != nil {
		return err
	}
	if n.draft >= 2019 && n.recRef != nil {
		t := n.recRef
		if n.recDyn {
			// The outermost schema in scope whose resource has
			// $recursiveAnchor: true, as the library resolves it.
			for _, f := range e.stack {
				if f.n.resRecursive {
					t = f.n
					break
				}
			}
		}
		if err := e.inPlace(t, v, vid, u); err != nil {
			return err
		}
	}
	if n.draft >= 2019 && n.dynRef != nil {
		t := n.dynRef
		if n.dynName != "" {
			// The outermost resource in scope with this $dynamicAnchor.
			for _, f := range e.stack {
				if a, ok := f.n.resDynamic[n.dynName]; ok {
					t = a
					break
				}
			}
		}
		if err := e.inPlace(t, v, vid, u); err != nil {
			return err
		}
	}
	if err := e.combinators(n, v, vid, u); err != nil {
		return err
	}
	if n.draft >= 2019 {
		return e.unevaluated(n, v, vid, u)
	}
	return nil
}

func typeHolds(t typeSet, k byte, v []byte) bool {
	s := schema{types: t}
	return s.hasType(k, v)
}

func (e *rawEval) combinators(n *rawNode, v []byte, vid int32, u *uneval) *fieldError {
	if n.not != nil {
		e.quiet++
		err := e.inPlace(n.not, v, vid, u)
		e.quiet--
		if err == nil {
			return e.fail("must not match the schema that not gives")
		}
	}
	for _, s := range n.allOf {
		if err := e.inPlace(s, v, vid, u); err != nil {
			return err
		}
	}
	if len(n.anyOf) > 0 {
		matched := false
		e.quiet++
		for _, s := range n.anyOf {
			if e.inPlace(s, v, vid, u) == nil {
				matched = true
				if u.empty() {
					break // every member and element evaluated: no need to try more
				}
			}
		}
		e.quiet--
		if !matched {
			return e.inPlace(n.anyOf[0], v, vid, u) // again, for its message
		}
	}
	if len(n.oneOf) > 0 {
		matched := -1
		e.quiet++
		for i, s := range n.oneOf {
			if e.inPlace(s, v, vid, u) != nil {
				continue
			}
			if matched >= 0 {
				e.quiet--
				return e.failFn(func() string {
					return "must match exactly one schema of oneOf (it matches schemas " +
						strconv.Itoa(matched) + " and " + strconv.Itoa(i) + ")"
				})
			}
			matched = i
		}
		e.quiet--
		if matched < 0 {
			return e.inPlace(n.oneOf[0], v, vid, u) // again, for its message
		}
	}
	if n.ifs != nil {
		e.quiet++
		err := e.inPlace(n.ifs, v, vid, u)
		e.quiet--
		if err == nil {
			if n.then != nil {
				return e.inPlace(n.then, v, vid, u)
			}
		} else if n.els != nil {
			return e.inPlace(n.els, v, vid, u)
		}
	}
	return nil
}

// unevaluated applies unevaluatedProperties and unevaluatedItems to what
// no valid subschema evaluated.
func (e *rawEval) unevaluated(n *rawNode, v []byte, vid int32, u *uneval) *fieldError {
	if n.uneProps != nil && u.props != nil {
		var it decode.Members
		i := 0
		for it.Reset(v); it.Next(); i++ {
			if hasBit(u.props, i) {
				if err := e.child(n.uneProps, it.Value(), vid); err != nil {
					return e.inName(err, &it)
				}
			}
		}
		for i := range u.props {
			u.props[i] = 0
		}
	}
	if n.uneItems != nil && u.items != nil {
		var it decode.Elements
		i := 0
		for it.Reset(v); it.Next(); i++ {
			if hasBit(u.items, i) {
				if err := e.child(n.uneItems, it.Value(), vid); err != nil {
					return e.inIndex(err, i)
				}
			}
		}
		for i := range u.items {
			u.items[i] = 0
		}
	}
	return nil
}

// nameOf returns the current member's name, escapes resolved, as a
// string that lives only until the next call (no allocation for a name
// without escapes, which is read in place).
func (e *rawEval) nameBytes(it *decode.Members, obj []byte) []byte {
	raw := it.Name()
	if !it.NameEscaped() {
		return raw
	}
	off := cap(obj) - cap(raw) // the name's start in obj, after its quote
	e.buf = decode.AppendUnquoted(e.buf[:0], obj[off-1:off+len(raw)+1])
	return e.buf
}

// quotedName returns the current member's name as the raw JSON string
// it is in obj.
func quotedName(it *decode.Members, obj []byte) []byte {
	raw := it.Name()
	off := cap(obj) - cap(raw)
	return obj[off-1 : off+len(raw)+1]
}

func (e *rawEval) object(n *rawNode, v []byte, vid int32, u *uneval) *fieldError {
	var it decode.Members
	if n.minProps >= 0 || n.maxProps >= 0 {
		c := countMembers(v)
		if n.minProps >= 0 && c < n.minProps {
			return e.failFn(func() string { return "must hold at least " + strconv.Itoa(n.minProps) + " members" })
		}
		if n.maxProps >= 0 && c > n.maxProps {
			return e.failFn(func() string { return "must hold at most " + strconv.Itoa(n.maxProps) + " members" })
		}
	}
	var present []uint64
	if len(n.names) > 0 {
		present = e.bits(len(n.names), len(n.names))
		defer func(at int) { e.words = e.words[:at] }(len(e.words) - len(present))
		for it.Reset(v); it.Next(); {
			if i, ok := n.names[string(e.nameBytes(&it, v))]; ok {
				present[i/64] |= 1 << (i % 64)
			}
		}
	}
	missing := func(bits []int) *fieldError {
		for _, b := range bits {
			if !hasBit(present, b) {
				for name, i := range n.names {
					if i == b {
						return e.inString(e.fail("is required"), name)
					}
				}
			}
		}
		return nil
	}
	if err := missing(n.required); err != nil {
		return err
	}
	for _, d := range n.deps {
		if !hasBit(present, d.key) {
			continue
		}
		if d.s != nil {
			if err := e.inPlace(d.s, v, vid, u); err != nil {
				return err
			}
		} else if err := missing(d.names); err != nil {
			if err != quietFail { // shared: never written
				err.msg = "is required when " + strconv.Quote(d.name) + " is present"
			}
			return err
		}
	}
	if n.props != nil || len(n.patterns) > 0 || n.addlSet {
		i := 0
		for it.Reset(v); it.Next(); i++ {
			name := e.nameBytes(&it, v)
			evaluated := false
			if s, ok := n.props[string(name)]; ok {
				evaluated = true
				if err := e.child(s, it.Value(), vid); err != nil {
					return e.inName(err, &it)
				}
				name = e.nameBytes(&it, v) // the walk below may have reused the buffer
			}
			for _, p := range n.patterns {
				if p.re.Match(name) {
					evaluated = true
					if err := e.child(p.s, it.Value(), vid); err != nil {
						return e.inName(err, &it)
					}
					name = e.nameBytes(&it, v)
				}
			}
			if !evaluated && n.addlSet {
				evaluated = true
				if n.addlFalse {
					return e.inName(e.fail("is not a member the schema allows"), &it)
				}
				if n.addl != nil {
					if err := e.child(n.addl, it.Value(), vid); err != nil {
						return e.inName(err, &it)
					}
				}
			}
			if evaluated {
				clearBit(u.props, i)
			}
		}
	}
	if n.draft == 4 {
		return nil
	}
	if n.propertyNames != nil {
		// The library judges a name as an instance of its own: a scope
		// (for dynamic references and cycles) that starts afresh.
		outer := e.stack
		e.stack = e.stack[len(e.stack):]
		defer func() { e.stack = outer }()
		for it.Reset(v); it.Next(); {
			if err := e.child(n.propertyNames, quotedName(&it, v), vid); err != nil {
				if err == quietFail {
					return err
				}
				msg := "is a member name the schema does not allow (propertyNames): " + err.msg
				return e.inName(e.fail(msg), &it)
			}
		}
	}
	if n.draft == 6 {
		return nil
	}
	for _, d := range n.depSchemas {
		if hasBit(present, d.key) {
			if err := e.inPlace(d.s, v, vid, u); err != nil {
				return err
			}
		}
	}
	for _, d := range n.depRequired {
		if hasBit(present, d.key) {
			if err := missing(d.names); err != nil {
				if err != quietFail { // shared: never written
					err.msg = "is required when " + strconv.Quote(d.name) + " is present"
				}
				return err
			}
		}
	}
	return nil
}

func (e *rawEval) array(n *rawNode, v []byte, vid int32, u *uneval) *fieldError {
	var it decode.Elements
	if n.minItems >= 0 || n.maxItems >= 0 {
		c := countElements(v)
		if n.minItems >= 0 && c < n.minItems {
			return e.failFn(func() string { return "must hold at least " + strconv.Itoa(n.minItems) + " items" })
		}
		if n.maxItems >= 0 && c > n.maxItems {
			return e.failFn(func() string { return "must hold at most " + strconv.Itoa(n.maxItems) + " items" })
		}
	}
	if n.unique {
		if i, j, dup := e.duplicateItems(v); dup {
			return e.failFn(func() string {
				return "must hold unique items (items " + strconv.Itoa(i) + " and " + strconv.Itoa(j) + " are equal)"
			})
		}
	}
	if len(n.prefix) > 0 || n.rest != nil || n.restFalse {
		i := 0
		for it.Reset(v); it.Next(); i++ {
			var s *rawNode
			switch {
			case i < len(n.prefix):
				s = n.prefix[i]
			case n.rest != nil:
				s = n.rest
			case n.restFalse:
				return e.inIndex(e.fail("is not an item the schema allows"), i)
			default:
				continue
			}
			if err := e.child(s, it.Value(), vid); err != nil {
				return e.inIndex(err, i)
			}
		}
	}
	if n.contains != nil {
		matched := 0
		i := 0
		e.quiet++
		for it.Reset(v); it.Next(); i++ {
			if e.child(n.contains, it.Value(), vid) != nil {
				continue
			}
			matched++
			if n.draft >= 2020 {
				clearBit(u.items, i)
			}
		}
		e.quiet--
		switch {
		case n.minContains >= 0 && matched < n.minContains:
			return e.failFn(func() string {
				return "must hold at least " + strconv.Itoa(n.minContains) + " items that match contains"
			})
		case n.minContains < 0 && matched == 0:
			return e.fail("must hold an item that matches contains")
		case n.maxContains >= 0 && matched > n.maxContains:
			return e.failFn(func() string {
				return "must hold at most " + strconv.Itoa(n.maxContains) + " items that match contains"
			})
		}
	}
	return nil
}

// match reports whether re matches the text of the raw JSON string v,
// escapes resolved into the walk's buffer.
func (e *rawEval) match(re *regexp.Regexp, v []byte) bool {
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return re.Match(raw)
	}
	e.buf = decode.AppendUnquoted(e.buf[:0], v)
	return re.Match(e.buf)
}

func (e *rawEval) checkString(n *rawNode, v []byte) *fieldError {
	if n.minLen >= 0 || n.maxLen >= 0 {
		c := stringLength(v)
		if n.minLen >= 0 && c < n.minLen {
			return e.failFn(func() string { return "must be at least " + strconv.Itoa(n.minLen) + " characters long" })
		}
		if n.maxLen >= 0 && c > n.maxLen {
			return e.failFn(func() string { return "must be at most " + strconv.Itoa(n.maxLen) + " characters long" })
		}
	}
	if n.pattern != nil && !e.match(n.pattern, v) {
		return e.failFn(func() string { return clip("does not match pattern '" + n.pattern.String() + "'") })
	}
	return nil
}

func (e *rawEval) checkNumber(n *rawNode, v []byte) *fieldError {
	if n.min == nil && n.max == nil && n.exMin == nil && n.exMax == nil && n.multipleOf == nil {
		return nil
	}
	d := parseDecimal(v)
	switch {
	case n.min != nil && compareDecimals(&d, n.min) < 0:
		return e.fail("is less than the minimum")
	case n.max != nil && compareDecimals(&d, n.max) > 0:
		return e.fail("is greater than the maximum")
	case n.exMin != nil && compareDecimals(&d, n.exMin) <= 0:
		return e.fail("must be greater than the exclusive minimum")
	case n.exMax != nil && compareDecimals(&d, n.exMax) >= 0:
		return e.fail("must be less than the exclusive maximum")
	case n.multipleOf != nil && !n.multipleOf.divides(&d):
		return e.fail("is not a multiple of the schema's multipleOf")
	}
	return nil
}

// uniqueSeed keys the hashes of uniqueItems: chosen per process, so
// that a client cannot aim elements at one another.
var uniqueSeed = maphash.MakeSeed()

// offBits is how many low bits of a hashed word hold an offset: the
// hashed paths serve values shorter than 1 MiB (a body's ceiling), longer
// ones (a tool's own structuredContent) fall back to maps.
const offBits = 20

// duplicateItems finds two equal elements of the array v. Small arrays
// (up to 20 elements in at most 1 KiB) have every pair compared; beyond,
// each element is hashed once into a word of 44 hash bits and its offset
// in v, the words sorted, and only elements whose hashes agree compared.
// The words live in a buffer the walk reuses: at most 8 bytes an element
// of the largest array, 4 times its bytes (an element and its comma take
// at least 2).
func (e *rawEval) duplicateItems(v []byte) (int, int, bool) {
	var it, jt decode.Elements
	c := countElements(v)
	if c <= 20 && len(v) <= 1<<10 {
		i := 0
		for it.Reset(v); it.Next(); i++ {
			j := 0
			for jt.Reset(v); jt.Next() && j < i; j++ {
				if e.equal(it.Value(), jt.Value()) {
					return j, i, true
				}
			}
		}
		return 0, 0, false
	}
	if len(v) >= 1<<offBits {
		return e.duplicateItemsByMap(v)
	}
	e.steps += len(v) / 16
	words := slices.Grow(e.uniq[:0], c)[:c]
	e.uniq = words
	i := 0
	for it.Reset(v); it.Next(); i++ {
		words[i] = e.hash(it.Value())&^(1<<offBits-1) | uint64(cap(v)-cap(it.Value()))
	}
	slices.Sort(words)
	for a := 0; a < len(words); {
		b := a + 1
		for b < len(words) && words[b]>>offBits == words[a]>>offBits {
			b++
		}
		// words[a:b] share their hash bits: equal elements, or a collision.
		for x := a; x < b; x++ {
			for y := x + 1; y < b; y++ {
				ox, oy := int(words[x]&(1<<offBits-1)), int(words[y]&(1<<offBits-1))
				if e.equal(valueAt(v, ox), valueAt(v, oy)) {
					return elementIndex(v, ox), elementIndex(v, oy), true
				}
			}
		}
		a = b
	}
	return 0, 0, false
}

// valueAt returns the JSON value that starts at offset off of v.
func valueAt(v []byte, off int) []byte {
	return v[off:decode.SkipValue(v, off)]
}

// elementIndex returns the number of the element of the array v that
// starts at offset off.
func elementIndex(v []byte, off int) int {
	var it decode.Elements
	k := 0
	for it.Reset(v); it.Next() && cap(v)-cap(it.Value()) != off; k++ {
	}
	return k
}

// duplicateItemsByMap is duplicateItems for arrays of 1 MiB or more,
// which only output schemas (a tool's own results, no body ceiling) can
// meet.
func (e *rawEval) duplicateItemsByMap(v []byte) (int, int, bool) {
	seen := make(map[uint64][]int)
	var it decode.Elements
	var vals [][]byte
	i := 0
	for it.Reset(v); it.Next(); i++ {
		h := e.hash(it.Value())
		for _, j := range seen[h] {
			if e.equal(vals[j], it.Value()) {
				return j, i, true
			}
		}
		seen[h] = append(seen[h], i)
		vals = append(vals, it.Value())
	}
	return 0, 0, false
}

// tagged mixes a kind's tag into a hash, into its high bits as well as
// its low ones (the sorted words keep only the high 44).
func tagged(h, tag uint64) uint64 {
	return bits.RotateLeft64((h^tag)*0x9E3779B97F4A7C15, 32) ^ tag
}

// hash hashes the raw value v so that equal values (equal) hash alike:
// strings by their unescaped text, numbers by their decimal value,
// objects whatever the order of their members; values of different
// kinds are tagged apart.
func (e *rawEval) hash(v []byte) uint64 {
	const mix = 0x9E3779B97F4A7C15
	switch kindOf(v) {
	case kindString:
		raw := v[1 : len(v)-1]
		if bytes.IndexByte(raw, '\\') >= 0 {
			e.buf = decode.AppendUnquoted(e.buf[:0], v)
			raw = e.buf
		}
		return tagged(maphash.Bytes(uniqueSeed, raw), 4)
	case kindNumber:
		d := parseDecimal(v)
		b := e.buf[:0]
		if !d.zero {
			if d.neg {
				b = append(b, '-')
			}
			for i := d.start; i < d.end; i++ {
				b = append(b, d.digit(i))
			}
			b = strconv.AppendInt(append(b, 'e'), d.point, 10)
		}
		e.buf = b
		return tagged(maphash.Bytes(uniqueSeed, b), 5)
	case kindArray:
		h := uint64(1)
		var it decode.Elements
		for it.Reset(v); it.Next(); {
			h = bits.RotateLeft64((h^e.hash(it.Value()))*mix, 29)
		}
		return tagged(h, 1)
	case kindObject:
		var sum uint64
		var it decode.Members
		for it.Reset(v); it.Next(); {
			hv := e.hash(it.Value())
			hn := maphash.Bytes(uniqueSeed, e.nameBytes(&it, v))
			sum += bits.RotateLeft64((hn^bits.RotateLeft64(hv, 17))*mix, 31)
		}
		return tagged(sum, 2)
	}
	return tagged(maphash.Bytes(uniqueSeed, v), 3) // true, false, null
}

// equal is equalJSON for values the walk compares with each other, which
// may both be large: objects of many members are matched through sorted
// words of their names' hashes and offsets (8 bytes a member, from a
// buffer the walk reuses), never pair by pair, at every depth.
func (e *rawEval) equal(a, b []byte) bool {
	ka := kindOf(a)
	if ka != kindOf(b) {
		return false
	}
	switch ka {
	case kindArray:
		return equalElements(a, b, e.equal)
	case kindObject:
	default:
		return equalJSON(a, b)
	}
	na := countMembers(a)
	if na != countMembers(b) {
		return false
	}
	var ia, ib decode.Members
	if na <= smallSet || len(a) >= 1<<offBits || len(b) >= 1<<offBits {
		for ia.Reset(a); ia.Next(); {
			found := false
			n := 0
			for ib.Reset(b); ib.Next(); n++ {
				if namesEqual(ia.Name(), ib.Name()) {
					found = true
					if !e.equal(ia.Value(), ib.Value()) {
						return false
					}
					break
				}
			}
			if !found {
				return false
			}
			e.steps += n
		}
		return true
	}
	mark := len(e.cmp)
	defer func() { e.cmp = e.cmp[:mark] }()
	e.cmp = slices.Grow(e.cmp, 2*na)
	wa := e.memberWords(a)
	wb := e.memberWords(b)
	for x := 0; x < len(wa); {
		y := x + 1
		for y < len(wa) && wa[y]>>offBits == wa[x]>>offBits {
			y++
		}
		// wa[x:y] share a name hash: so must wb[x:y], names matched
		// within the group.
		for k := x; k < y; k++ {
			if wb[k]>>offBits != wa[x]>>offBits {
				return false
			}
		}
		for k := x; k < y; k++ {
			na, va := memberAt(a, int(wa[k]&(1<<offBits-1)))
			found := false
			for l := x; l < y; l++ {
				nb, vb := memberAt(b, int(wb[l]&(1<<offBits-1)))
				if namesEqual(na, nb) {
					if !e.equal(va, vb) {
						return false
					}
					found = true
					break
				}
			}
			if !found {
				return false
			}
		}
		x = y
	}
	return true
}

// memberWords appends to e.cmp, and returns sorted, a word for each
// member of the object obj: its name's hash (high 44 bits) and the
// offset of the name's first byte after its quote.
func (e *rawEval) memberWords(obj []byte) []uint64 {
	at := len(e.cmp)
	var it decode.Members
	for it.Reset(obj); it.Next(); {
		h := tagged(maphash.Bytes(uniqueSeed, e.nameBytes(&it, obj)), 7)
		e.cmp = append(e.cmp, h&^(1<<offBits-1)|uint64(cap(obj)-cap(it.Name())))
	}
	w := e.cmp[at:len(e.cmp):len(e.cmp)]
	slices.Sort(w)
	return w
}

// memberAt returns the raw name (no quotes) and the value of the member
// of obj whose name starts at offset off, after its quote.
func memberAt(obj []byte, off int) ([]byte, []byte) {
	end := decode.SkipValue(obj, off-1) // past the name's closing quote
	name := obj[off : end-1]
	i := skipWS(obj, end) + 1 // past the colon
	i = skipWS(obj, i)
	return name, obj[i:decode.SkipValue(obj, i)]
}
