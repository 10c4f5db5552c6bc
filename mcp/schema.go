package mcp

// NOTE: the input schema subset.
//
// A tool's inputSchema is compiled once, at registration, into a tree of
// schema nodes; checking a call's arguments walks that tree over the raw
// argument bytes and allocates nothing unless it fails (the failure names
// the field, which costs a few small allocations).
//
// Supported validation keywords: type (a name or an array of names;
// "integer" means a number with no fractional part, so 1.0 and 1e2
// qualify), properties, required, enum, items (one schema for every
// element), minimum and maximum (inclusive, compared as exact decimals),
// minLength and maxLength (in Unicode code points, escapes resolved),
// pattern (Go's regexp, unanchored, on the unescaped text) and
// additionalProperties (a boolean or a schema). Boolean schemas (true,
// false) may stand wherever a schema may.
//
// Accepted as annotations, asserting nothing: title, description, default,
// examples, deprecated, readOnly, writeOnly, $comment, $schema (JSON Schema
// 2020-12, 2019-09 or draft-07), format (an annotation in 2020-12, not
// an assertion) and x-mcp-header (which names the Mcp-Param header the
// argument is mirrored into: checked at registration and enforced on the
// headers, paramheaders.go).
//
// Any other keyword is a registration error, never silently ignored: a
// schema that says more than this package checks must not pass calls the
// tool's author meant to refuse. Notably unsupported: $ref and $defs,
// allOf/anyOf/oneOf/not, if/then/else, const, multipleOf,
// exclusiveMinimum/exclusiveMaximum, minItems/maxItems, uniqueItems,
// prefixItems, contains, patternProperties, propertyNames,
// dependentRequired, min/maxProperties, unevaluated* and x-* extensions
// other than x-mcp-header.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/rpcedge/rpcedge/decode"
)

// typeSet is a set of JSON Schema type names.
type typeSet uint8

const (
	tObject typeSet = 1 << iota
	tArray
	tString
	tNumber
	tInteger
	tBoolean
	tNull
)

var typeNames = []struct {
	name string
	t    typeSet
}{
	{"object", tObject}, {"array", tArray}, {"string", tString},
	{"number", tNumber}, {"integer", tInteger}, {"boolean", tBoolean}, {"null", tNull},
}

// schema is one compiled schema node.
type schema struct {
	never    bool    // the false schema: nothing is valid
	types    typeSet // 0: any type
	typeMsg  string  // the failure message for a wrong type
	props    []property
	required [][]byte
	addl     *schema // nil: any additional member is valid
	items    *schema // nil: any element is valid
	enum     [][]byte
	min, max *decimal
	minLen   int // -1: no bound
	maxLen   int // -1: no bound
	minItems int // -1: no bound
	maxItems int // -1: no bound
	pattern  *regexp.Regexp
}

type property struct {
	name []byte
	s    *schema
}

// unbounded returns a schema node that asserts nothing: its length and
// item bounds are -1.
func unbounded() *schema {
	return &schema{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1}
}

// errSchema wraps every schema registration error.
var errSchema = errors.New("mcp: invalid tool schema")

// schemaError is a compilation error at a JSON pointer inside the schema.
type schemaError struct {
	ptr, msg string
	which    string // "input" (when empty) or "output"
}

func (e *schemaError) Error() string {
	at := e.ptr
	if at == "" {
		at = "the root"
	}
	which := e.which
	if which == "" {
		which = "input"
	}
	return which + " schema at " + at + ": " + e.msg
}

func (e *schemaError) Unwrap() error { return errSchema }

// compileSchema compiles a tool's input schema. An empty text means
// {"type":"object"}. The root must be an object schema whose type is
// exactly "object".
func compileSchema(text []byte) (*schema, error) {
	if len(trimWS(text)) == 0 {
		s := unbounded()
		s.types, s.typeMsg = tObject, "must be an object"
		return s, nil
	}
	if !decode.Valid(text) {
		return nil, &schemaError{ptr: "", msg: "not valid JSON"}
	}
	text = trimWS(text)
	if kindOf(text) != kindObject {
		return nil, &schemaError{ptr: "", msg: `the root must be an object with "type": "object"`}
	}
	var c compiler
	if d, n := decode.Lookup(text, "$schema"); n == 1 && isString(d) {
		c.draft7 = draft7[string(decode.AppendUnquoted(nil, d))]
	}
	s, err := c.node(text, "")
	if err != nil {
		return nil, err
	}
	if s.types != tObject {
		return nil, &schemaError{ptr: "", msg: `the root must have "type": "object"`}
	}
	return s, nil
}

var annotations = map[string]bool{
	"title": true, "description": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true,
	// Checked at registration and enforced on the Mcp-Param headers
	// (paramheaders.go), not on the arguments.
	"x-mcp-header": true,
}

// dialects are the $schema values of the compiled subset: their
// keywords of the subset mean the same.
var dialects = map[string]bool{
	"https://json-schema.org/draft/2020-12/schema":  true,
	"https://json-schema.org/draft/2019-09/schema":  true,
	"http://json-schema.org/draft-07/schema#":       true,
	"http://json-schema.org/draft-07/schema":        true,
	"https://json-schema.org/draft-07/schema#":      true,
	"https://json-schema.org/draft-07/schema":       true,
	"https://json-schema.org/draft/2020-12/schema#": true,
}

// draft7 are the draft-07 names among dialects: under draft-07 the
// library asserts format, which the compiled subset does not.
var draft7 = map[string]bool{
	"http://json-schema.org/draft-07/schema#":  true,
	"http://json-schema.org/draft-07/schema":   true,
	"https://json-schema.org/draft-07/schema#": true,
	"https://json-schema.org/draft-07/schema":  true,
}

// compiler holds what a compilation knows of the whole schema.
type compiler struct {
	draft7 bool // the root's $schema is draft-07
}

func (c *compiler) node(v []byte, ptr string) (*schema, error) {
	switch kindOf(v) {
	case kindBool:
		if v[0] == 't' {
			return unbounded(), nil
		}
		s := unbounded()
		s.never = true
		return s, nil
	case kindObject:
	default:
		return nil, &schemaError{ptr: ptr, msg: "a schema must be an object or a boolean"}
	}
	if name, dup := duplicateName(v); dup {
		return nil, &schemaError{ptr: ptr, msg: fmt.Sprintf("keyword %q appears twice", name)}
	}
	s := unbounded()
	var it decode.Members
	for it.Reset(v); it.Next(); {
		key := memberName(&it)
		val := trimWS(it.Value())
		at := ptr + "/" + escapePointer(key)
		var err error
		switch key {
		case "type":
			err = s.compileType(val, at)
		case "properties":
			err = c.properties(s, val, at)
		case "required":
			err = s.compileRequired(val, at)
		case "enum":
			err = s.compileEnum(val, at)
		case "items":
			if kindOf(val) == kindArray {
				return nil, &schemaError{ptr: at, msg: "the array form of items (a tuple) is not supported"}
			}
			s.items, err = c.node(val, at)
		case "additionalProperties":
			s.addl, err = c.node(val, at)
		case "minimum", "maximum":
			if kindOf(val) != kindNumber {
				return nil, &schemaError{ptr: at, msg: key + " must be a number"}
			}
			d := parseDecimal(append([]byte(nil), val...))
			if key == "minimum" {
				s.min = &d
			} else {
				s.max = &d
			}
		case "pattern":
			if !isString(val) {
				return nil, &schemaError{ptr: at, msg: "pattern must be a string"}
			}
			// Go's regexp (RE2 syntax, linear time): the library's engine
			// too, so both paths match alike.
			re, err := regexp.Compile(string(decode.AppendUnquoted(nil, val)))
			if err != nil {
				return nil, &schemaError{ptr: at, msg: "pattern is not a valid regular expression: " + err.Error()}
			}
			s.pattern = re
		case "minLength", "maxLength":
			n, ok := nonNegativeInt(val)
			if !ok {
				return nil, &schemaError{ptr: at, msg: key + " must be a non-negative integer"}
			}
			if key == "minLength" {
				s.minLen = n
			} else {
				s.maxLen = n
			}
		case "minItems", "maxItems":
			// In the subset since a review on 2026-12-06: a schema with
			// them went to the library, whose instance model of dense
			// arrays costs 35-51 times their bytes.
			n, ok := nonNegativeInt(val)
			if !ok {
				return nil, &schemaError{ptr: at, msg: key + " must be a non-negative integer"}
			}
			if key == "minItems" {
				s.minItems = n
			} else {
				s.maxItems = n
			}
		case "$schema":
			if ptr != "" {
				return nil, &schemaError{ptr: at, msg: "$schema is accepted only at the root"}
			}
			if !isString(val) || !dialects[string(decode.AppendUnquoted(nil, val))] {
				return nil, &schemaError{ptr: at, msg: "only the JSON Schema 2020-12, 2019-09 and draft-07 dialects are accepted"}
			}
		case "format":
			if c.draft7 {
				return nil, &schemaError{ptr: at, msg: "format is an assertion under draft-07"}
			}
		default:
			if !annotations[key] {
				return nil, &schemaError{ptr: at, msg: fmt.Sprintf("keyword %q is not supported (supported: type, properties, required, enum, items, minimum, maximum, minLength, maxLength, minItems, maxItems, pattern, additionalProperties)", key)}
			}
		}
		if err != nil {
			return nil, err
		}
	}
	s.typeMsg = typeMessage(s.types)
	return s, nil
}

func (s *schema) compileType(v []byte, at string) error {
	one := func(name []byte) bool {
		for _, tn := range typeNames {
			if decode.StringIs(name, tn.name) {
				if s.types&tn.t != 0 {
					return false
				}
				s.types |= tn.t
				return true
			}
		}
		return false
	}
	switch kindOf(v) {
	case kindString:
		if !one(v) {
			return &schemaError{ptr: at, msg: "unknown type name"}
		}
		return nil
	case kindArray:
		var it decode.Elements
		n := 0
		for it.Reset(v); it.Next(); n++ {
			if !isString(it.Value()) || !one(it.Value()) {
				return &schemaError{ptr: at, msg: "type names must be known, unique strings"}
			}
		}
		if n == 0 {
			return &schemaError{ptr: at, msg: "type must name at least one type"}
		}
		return nil
	}
	return &schemaError{ptr: at, msg: "type must be a string or an array of strings"}
}

func (c *compiler) properties(s *schema, v []byte, at string) error {
	if kindOf(v) != kindObject {
		return &schemaError{ptr: at, msg: "properties must be an object"}
	}
	if name, dup := duplicateName(v); dup {
		return &schemaError{ptr: at, msg: fmt.Sprintf("property %q appears twice", name)}
	}
	var it decode.Members
	for it.Reset(v); it.Next(); {
		name := memberName(&it)
		sub, err := c.node(trimWS(it.Value()), at+"/"+escapePointer(name))
		if err != nil {
			return err
		}
		s.props = append(s.props, property{name: []byte(name), s: sub})
	}
	return nil
}

func (s *schema) compileRequired(v []byte, at string) error {
	if kindOf(v) != kindArray {
		return &schemaError{ptr: at, msg: "required must be an array of strings"}
	}
	var it decode.Elements
	for it.Reset(v); it.Next(); {
		if !isString(it.Value()) {
			return &schemaError{ptr: at, msg: "required must be an array of strings"}
		}
		name := decode.AppendUnquoted(nil, it.Value())
		for _, r := range s.required {
			if string(r) == string(name) {
				return &schemaError{ptr: at, msg: fmt.Sprintf("required names %q twice", name)}
			}
		}
		s.required = append(s.required, name)
	}
	return nil
}

func (s *schema) compileEnum(v []byte, at string) error {
	if kindOf(v) != kindArray {
		return &schemaError{ptr: at, msg: "enum must be an array"}
	}
	var it decode.Elements
	for it.Reset(v); it.Next(); {
		s.enum = append(s.enum, append([]byte(nil), it.Value()...))
	}
	if len(s.enum) == 0 {
		return &schemaError{ptr: at, msg: "enum must list at least one value"}
	}
	return nil
}

// nonNegativeInt reads a schema's length bound: a number with no
// fractional part, at least 0. Values beyond int range saturate.
func nonNegativeInt(v []byte) (int, bool) {
	if kindOf(v) != kindNumber {
		return 0, false
	}
	d := parseDecimal(v)
	if !d.isInteger() || d.neg && !d.zero {
		return 0, false
	}
	if d.zero {
		return 0, true
	}
	if d.point > 18 {
		return math.MaxInt, true
	}
	n := 0
	for i := int64(0); i < d.point; i++ {
		c := byte('0')
		if k := d.start + int(i); k < d.end {
			c = d.digit(k)
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// escapePointer escapes a name for a JSON pointer (RFC 6901).
func escapePointer(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func typeMessage(t typeSet) string {
	if t == 0 {
		return ""
	}
	var names []string
	for _, tn := range typeNames {
		if t&tn.t != 0 {
			article := "a "
			switch tn.name {
			case "object", "array", "integer":
				article = "an "
			case "null":
				article = ""
			}
			names = append(names, article+tn.name)
		}
	}
	if len(names) == 1 {
		return "must be " + names[0]
	}
	return "must be " + strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// fieldError is a validation failure: the message and the path to the
// offending value, innermost segment first (it is built on the way out of
// the recursion).
type fieldError struct {
	msg  string
	path []string // property names, or "[i]" for array indexes
}

// field renders the path under the given root, such as
// "arguments.items[2].name".
func (e *fieldError) field(root string) string {
	var b strings.Builder
	b.WriteString(root)
	for i := len(e.path) - 1; i >= 0; i-- {
		seg := e.path[i]
		if !strings.HasPrefix(seg, "[") {
			b.WriteByte('.')
		}
		b.WriteString(seg)
	}
	return b.String()
}

func (e *fieldError) in(seg string) *fieldError {
	e.path = append(e.path, seg)
	return e
}

// validate checks the raw value v against s. It returns nil, allocating
// nothing, when v is valid.
func (s *schema) validate(v []byte) *fieldError {
	return s.check(v, nil)
}

// dupMember is what check returns, at the top level only, when the
// object holds a member name twice. It is shared and never modified.
var dupMember = &fieldError{msg: "is given twice"}

// validateArguments checks a call's arguments object: a member name given
// twice first (it returns dupMember), then the schema. It walks the
// object once.
func (s *schema) validateArguments(v []byte, idx *argIndex) *fieldError {
	if len(s.enum) > 0 && decode.DuplicateName(v) {
		return dupMember
	}
	set := nameSet{idx: idx}
	return s.check(v, &set)
}

// maxIndexed is how many of a schema's properties an argIndex holds.
const maxIndexed = 8

// argIndex is what the walk that validates a call's arguments found of
// the properties the schema declares, so that the tool's Arg finds them
// without walking the arguments again.
type argIndex struct {
	// ok says the walk saw every member and the arguments are valid:
	// vals[i] is then the value of props[i] (for i < maxIndexed), nil
	// when the arguments do not hold it.
	ok    bool
	props []property
	vals  [maxIndexed][]byte
}

// lookup returns the value of a declared property and true, or false
// when the index cannot say (not ok, or name not among the indexed).
func (x *argIndex) lookup(name string) ([]byte, bool) {
	if !x.ok {
		return nil, false
	}
	for i := range x.props[:min(len(x.props), maxIndexed)] {
		if string(x.props[i].name) == name {
			return x.vals[i], true
		}
	}
	return nil, false
}

// holds reports whether v is exactly (the same bytes) the value of one of
// the indexed properties.
func (x *argIndex) holds(v []byte) bool {
	if !x.ok || len(v) == 0 {
		return false
	}
	for i := range x.props[:min(len(x.props), maxIndexed)] {
		if w := x.vals[i]; len(w) == len(v) && &w[0] == &v[0] {
			return true
		}
	}
	return false
}

// check is validate, finding repeated member names of an object v when
// set is not nil.
func (s *schema) check(v []byte, set *nameSet) *fieldError {
	if s.never {
		return &fieldError{msg: "is not allowed"}
	}
	k := kindOf(v)
	if s.types != 0 && !s.hasType(k, v) {
		return &fieldError{msg: s.typeMsg}
	}
	if len(s.enum) > 0 {
		ok := false
		for _, e := range s.enum {
			if equalJSON(v, e) {
				ok = true
				break
			}
		}
		if !ok {
			return &fieldError{msg: "must be one of the values the schema's enum lists"}
		}
	}
	switch k {
	case kindString:
		if s.minLen >= 0 || s.maxLen >= 0 {
			n := stringLength(v)
			if s.minLen >= 0 && n < s.minLen {
				return &fieldError{msg: "must be at least " + strconv.Itoa(s.minLen) + " characters long"}
			}
			if s.maxLen >= 0 && n > s.maxLen {
				return &fieldError{msg: "must be at most " + strconv.Itoa(s.maxLen) + " characters long"}
			}
		}
		if s.pattern != nil && !matchString(s.pattern, v) {
			return &fieldError{msg: "does not match pattern '" + s.pattern.String() + "'"}
		}
	case kindNumber:
		if s.min != nil || s.max != nil {
			d := parseDecimal(v)
			if s.min != nil && compareDecimals(&d, s.min) < 0 {
				return &fieldError{msg: "is less than the minimum"}
			}
			if s.max != nil && compareDecimals(&d, s.max) > 0 {
				return &fieldError{msg: "is greater than the maximum"}
			}
		}
	case kindObject:
		return s.checkObject(v, set)
	case kindArray:
		if s.items != nil || s.minItems >= 0 || s.maxItems >= 0 {
			var it decode.Elements
			i := 0
			for it.Reset(v); it.Next(); i++ {
				if s.items == nil {
					continue
				}
				if err := s.items.validate(it.Value()); err != nil {
					return err.in("[" + strconv.Itoa(i) + "]")
				}
			}
			if s.minItems >= 0 && i < s.minItems {
				return &fieldError{msg: "must hold at least " + strconv.Itoa(s.minItems) + " items"}
			}
			if s.maxItems >= 0 && i > s.maxItems {
				return &fieldError{msg: "must hold at most " + strconv.Itoa(s.maxItems) + " items"}
			}
		}
	}
	return nil
}

func (s *schema) hasType(k byte, v []byte) bool {
	switch k {
	case kindObject:
		return s.types&tObject != 0
	case kindArray:
		return s.types&tArray != 0
	case kindString:
		return s.types&tString != 0
	case kindBool:
		return s.types&tBoolean != 0
	case kindNull:
		return s.types&tNull != 0
	case kindNumber:
		if s.types&tNumber != 0 {
			return true
		}
		if s.types&tInteger != 0 {
			d := parseDecimal(v)
			return d.isInteger()
		}
	}
	return false
}

// checkObject walks the members of v once: each is matched against
// properties (or additionalProperties) and required, and, when set is not
// nil, against the names before it. A repeated name wins over a schema
// failure; a failing member over a missing required one.
func (s *schema) checkObject(v []byte, set *nameSet) *fieldError {
	_, err := s.walkObject(v, set)
	return err
}

// walkObject is checkObject that also returns the length of the object v
// starts with, when it walked to its closing brace (else 0). With set not
// nil, v may run on past the object (the rest of the params it is a
// member of): the walk finds where the object ends.
func (s *schema) walkObject(v []byte, set *nameSet) (int, *fieldError) {
	many := len(s.required) > 64 // beyond a bit mask: looked up one by one
	if set == nil && len(s.props) == 0 && s.addl == nil && len(s.required) == 0 {
		return 0, nil
	}
	var (
		found uint64
		first *fieldError
		it    decode.Members
		last  lastValues
	)
	for it.Reset(v); it.Next(); {
		name, esc := it.Name(), it.NameEscaped()
		if set != nil && set.add(&it) {
			return 0, dupMember
		}
		if first != nil {
			continue // only duplicates matter now
		}
		if !many {
			for i, r := range s.required {
				if found&(1<<i) == 0 && nameIsEsc(name, esc, r) {
					found |= 1 << i
				}
			}
		}
		sub := s.addl
		for i := range s.props {
			if nameIsEsc(name, esc, s.props[i].name) {
				sub = s.props[i].s
				if set != nil && set.idx != nil && i < maxIndexed {
					set.idx.vals[i] = it.Value()
				}
				break
			}
		}
		if sub == nil {
			continue
		}
		if err := sub.validate(it.Value()); err != nil {
			name := memberName(&it)
			if set == nil && !last.is(v, name, it.Value()) {
				// A repeated name below the top level: the last
				// occurrence is the value every reader sees (decode.Lookup,
				// sonic, the library), so only it is judged.
				continue
			}
			if sub == s.addl && sub.never {
				err.msg = "is not a member the schema allows"
			}
			first = err.in(name)
		}
	}
	n := it.End()
	if n > 0 {
		v = v[:n]
	}
	if set != nil && set.overflow && decode.DuplicateName(v) {
		return n, dupMember
	}
	if first != nil {
		return n, first
	}
	for i, r := range s.required {
		if many {
			if _, n := decode.Lookup(v, string(r)); n > 0 {
				continue
			}
		} else if found&(1<<i) != 0 {
			continue
		}
		return n, (&fieldError{msg: "is required"}).in(string(r))
	}
	if set != nil && set.idx != nil {
		set.idx.ok, set.idx.props = true, s.props
	}
	return n, nil
}

// lastValues tells, for the members of one object below the top level
// of the arguments, whether a value is its name's last occurrence, the
// one every reader sees (decode.Lookup, sonic, the library). It works on
// a failure only, once per object: a look for a repeated name, then,
// only if there is one, a map of where each name's last value starts.
// (Looking each failing member's name up again cost a walk of the object
// per failure: 32 KiB of {"k":1,"k":1,...} took 0.43 s, 1 MiB would
// have taken minutes; found by review on 2026-12-06.)
type lastValues struct {
	checked bool
	at      map[string]int // nil: no name repeats
}

// is reports whether value, a member value of name inside the object
// obj, is the last occurrence of name.
func (l *lastValues) is(obj []byte, name string, value []byte) bool {
	if !l.checked {
		l.checked = true
		if decode.DuplicateName(obj) {
			l.at = make(map[string]int)
			var it decode.Members
			for it.Reset(obj); it.Next(); {
				l.at[memberName(&it)] = cap(obj) - cap(it.Value())
			}
		}
	}
	if l.at == nil || len(value) == 0 {
		return true
	}
	return l.at[name] == cap(obj)-cap(value)
}

// matchString reports whether re matches the text of the raw JSON string
// v. Text without escapes is matched in place; escaped text is resolved
// first (into a stack buffer when it is short).
func matchString(re *regexp.Regexp, v []byte) bool {
	raw := v[1 : len(v)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return re.Match(raw)
	}
	return re.Match(decode.AppendUnquoted(nil, v))
}
