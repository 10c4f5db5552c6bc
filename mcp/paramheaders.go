package mcp

// NOTE: Mcp-Param-* headers (SEP-2243, MCP 2026-07-28, "Custom Headers
// from Tool Parameters").
//
// A tool's input schema may mark a property with "x-mcp-header": "Name";
// a client then mirrors that argument's value into an Mcp-Param-Name
// header, so that a gateway can route on it without reading the body.
// Since the gateway trusts the header and the tool the body, the server
// must refuse a call whose two disagree (400 / -32020, row 12).
//
// At registration (scanParamHeaders) every annotation is checked against
// the constraints the specification puts on it — clients drop a tool that
// breaks one, so a server that published it would serve a tool no
// conforming client can call: the name non-empty and an HTTP token, unique
// across the schema whatever its case, on a property whose "type" is
// "string", "integer" or "boolean", reached from the root through a chain
// of "properties" alone (an annotation under items, anyOf, $defs, $ref
// targets or any other keyword is refused).
//
// Per call (checkParamHeaders), for each annotated property of the tool
// called, the value at its path in the arguments against the header:
//
//   - value present (not null) and header present: the header's value, its
//     base64 sentinel decoded as for Mcp-Name, must carry the value: a
//     string's text exactly, a number's value (compared as decimals: "42"
//     carries 42.0), true or false as "true" or "false". Anything else —
//     an object or array value, an argument given twice (row 17 refuses
//     such arguments; below them the last occurrence counts, as for the
//     schema and the tool), an undecodable sentinel — disagrees.
//   - value present and header absent: under 2026-07-28, where clients must
//     mirror, refused; under earlier versions allowed. An integer outside
//     ±(2^53−1), which the specification says a mirrored value must not
//     be, never needs its header.
//   - value absent or null and header present: disagrees (the header
//     claims a value the body does not hold).
//   - a header value holding a byte outside visible ASCII, space and tab,
//     or given in more than one line, is refused before it is compared.
//
// A header given in more than one line disagrees, whatever its lines
// combine into (contract §2 judges a one-value field by all its lines
// combined, so that two lines fail even when they agree; the combined
// "a, b" would equal a body value "a, b", while an intermediary reading
// one line would see "a"). Mcp-Param headers that name no annotated
// property are ignored, as HTTP asks of fields a recipient does not
// recognize. Streams without headers (stdio) are not checked.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// HeaderParamPrefix begins the name of the header that mirrors an
// argument annotated with "x-mcp-header" in a tool's input schema: the
// annotation's value follows it (Mcp-Param-Region for "Region").
const HeaderParamPrefix = "Mcp-Param-"

// paramHeader is one x-mcp-header annotation of a tool's input schema.
type paramHeader struct {
	header string // HeaderParamPrefix + the annotation's value
	key    fastserver.HeaderKey
	path   []string // the property names from the root to the annotated one
	// The refusals naming this header, made once at registration.
	errMissing, errDiffers, errInvalid, errLines *fastserver.Error
}

// maxSafeInteger is 2^53−1, the largest integer an annotated argument may
// hold (JavaScript's Number.MAX_SAFE_INTEGER); its negation the smallest.
var (
	maxSafeInteger = []byte("9007199254740991")
	minSafeInteger = []byte("-9007199254740991")
)

// scanParamHeaders returns the x-mcp-header annotations of the input
// schema raw (valid JSON, an object, member names unique at every level),
// or an error naming the first that breaks a constraint.
func scanParamHeaders(raw []byte) ([]paramHeader, error) {
	var hs []paramHeader
	if err := scanChain(raw, nil, &hs); err != nil {
		return nil, err
	}
	if n := countAnnotations(raw); n != len(hs) {
		return nil, errors.New(`an "x-mcp-header" annotation must sit on a property reached from the root through "properties" alone (not under items, anyOf, allOf, oneOf, not, if/then/else, $defs or any other keyword)`)
	}
	for i := range hs {
		for j := range i {
			if strings.EqualFold(hs[i].header, hs[j].header) {
				return nil, fmt.Errorf(`"x-mcp-header" %q is given twice (names compare ignoring case)`, hs[i].header[len(HeaderParamPrefix):])
			}
		}
	}
	for i := range hs {
		h := &hs[i]
		at := "arguments." + strings.Join(h.path, ".")
		h.errMissing = mismatch("header mismatch: the "+h.header+" header is required: "+at+" has a value", h.header)
		h.errDiffers = mismatch("header mismatch: "+h.header+" does not match "+at, h.header)
		h.errInvalid = mismatch("header mismatch: "+h.header+" holds a character outside visible ASCII, space and tab", h.header)
		h.errLines = mismatch("header mismatch: "+h.header+" is given in more than one line", h.header)
		h.key = fastserver.NewHeaderKey(h.header)
	}
	return hs, nil
}

// scanChain records the annotations of the properties of schema, whose
// path from the root is path, and of theirs, and so on down the chain of
// "properties".
func scanChain(schema []byte, path []string, hs *[]paramHeader) error {
	props, _ := decode.Lookup(schema, "properties")
	if kindOf(props) != kindObject {
		return nil
	}
	var it decode.Members
	for it.Reset(props); it.Next(); {
		sub := it.Value()
		if kindOf(sub) != kindObject {
			continue
		}
		name := memberName(&it)
		p := append(path[:len(path):len(path)], name)
		if ann, n := decode.Lookup(sub, "x-mcp-header"); n > 0 {
			h, err := annotation(ann, sub, p)
			if err != nil {
				return err
			}
			*hs = append(*hs, h)
		}
		if err := scanChain(sub, p, hs); err != nil {
			return err
		}
	}
	return nil
}

// annotation checks one x-mcp-header value ann, on the property schema sub
// at path.
func annotation(ann, sub []byte, path []string) (paramHeader, error) {
	where := "properties." + strings.Join(path, ".properties.")
	if !isString(ann) {
		return paramHeader{}, fmt.Errorf(`"x-mcp-header" on %s must be a string`, where)
	}
	name := string(decode.AppendUnquoted(nil, ann))
	if name == "" {
		return paramHeader{}, fmt.Errorf(`"x-mcp-header" on %s is empty`, where)
	}
	for i := 0; i < len(name); i++ {
		if !isTokenChar(name[i]) {
			return paramHeader{}, fmt.Errorf(`"x-mcp-header" %q on %s is not an HTTP field-name token (RFC 9110 §5.1): byte %#02x`, name, where, name[i])
		}
	}
	typ, _ := decode.Lookup(sub, "type")
	if !decode.StringIs(typ, "string") && !decode.StringIs(typ, "integer") && !decode.StringIs(typ, "boolean") {
		return paramHeader{}, fmt.Errorf(`"x-mcp-header" %q on %s: the property must have "type" "string", "integer" or "boolean"`, name, where)
	}
	return paramHeader{header: HeaderParamPrefix + name, path: path}, nil
}

// isTokenChar reports whether c may appear in an HTTP token (tchar).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// countAnnotations counts the x-mcp-header members of every schema object
// in v. Members of name-keyed maps (properties, patternProperties, $defs,
// definitions, dependentSchemas, and draft-07's dependencies, whose array
// values are lists of names) are property or definition names, not
// keywords, and their values schemas; const, enum, default and examples
// hold instances, and dependentRequired and required lists of names,
// which are not looked into.
func countAnnotations(v []byte) int {
	n := 0
	switch kindOf(v) {
	case kindArray:
		var it decode.Elements
		for it.Reset(v); it.Next(); {
			n += countAnnotations(it.Value())
		}
	case kindObject:
		var it decode.Members
		for it.Reset(v); it.Next(); {
			switch {
			case it.NameIs("x-mcp-header"):
				n++
			case it.NameIs("const"), it.NameIs("enum"), it.NameIs("default"), it.NameIs("examples"),
				it.NameIs("dependentRequired"), it.NameIs("required"):
			case it.NameIs("properties"), it.NameIs("patternProperties"), it.NameIs("$defs"),
				it.NameIs("definitions"), it.NameIs("dependentSchemas"), it.NameIs("dependencies"):
				if kindOf(it.Value()) == kindObject {
					var m decode.Members
					for m.Reset(it.Value()); m.Next(); {
						if kindOf(m.Value()) != kindArray { // a dependencies list of names
							n += countAnnotations(m.Value())
						}
					}
				}
			default:
				n += countAnnotations(it.Value())
			}
		}
	}
	return n
}

// argumentAt returns the value at path in the arguments args, or nil when
// a step is not an object or lacks the member, when the value is null, or
// when a member of the arguments themselves is given twice (row 17
// refuses such arguments). Below the top level a name given twice is read
// as the tool reads it, and as the schema judges it: the last occurrence
// (contract §2). idx, when not nil, is the index the schema check filled
// for args (valid, no name twice): the first step is looked up in it when
// it holds the name.
func argumentAt(args []byte, path []string, idx *argIndex) []byte {
	v := args
	for i, name := range path {
		if i == 0 && idx != nil {
			if w, ok := idx.lookup(name); ok {
				v = w
				continue
			}
		}
		if kindOf(v) != kindObject {
			return nil
		}
		var n int
		if v, n = decode.Lookup(v, name); n == 0 || n > 1 && i == 0 {
			return nil
		}
	}
	if kindOf(v) == kindNull {
		return nil
	}
	return v
}

// checkParamHeaders decides row 12 for the Mcp-Param headers of the
// tools/call of r to tool t, whose arguments are args (nil when the call
// has none) and idx their index (nil when t's schema check did not fill
// it); strict says the version in use requires them (2026-07-28).
func checkParamHeaders(r *fastserver.Request, t *tool, args []byte, idx *argIndex, strict bool) *fastserver.Error {
	for i := range t.headers {
		h := &t.headers[i]
		hv, lines := r.HeaderLines(h.key)
		v := argumentAt(args, h.path, idx)
		if hv == nil {
			if strict && v != nil && !(kindOf(v) == kindNumber && unsafeInteger(v)) {
				return h.errMissing
			}
			continue
		}
		if lines > 1 {
			return h.errLines
		}
		if !visibleASCII(hv) {
			return h.errInvalid
		}
		if v == nil {
			return h.errDiffers
		}
		if isSentinel(hv) {
			var buf [256]byte // zeroed only for a sentinel, as in headerCarries
			var ok bool
			if hv, ok = headerValue(hv, &buf); !ok {
				return h.errDiffers
			}
		}
		if !carries(hv, v) {
			return h.errDiffers
		}
	}
	return nil
}

// unsafeInteger reports whether the raw number v lies outside ±(2^53−1).
func unsafeInteger(v []byte) bool {
	return compareNumbers(v, maxSafeInteger) > 0 || compareNumbers(v, minSafeInteger) < 0
}

// visibleASCII reports whether every byte of h is visible ASCII, a space
// or a tab: what a header may carry unencoded (RFC 9110 §5.5).
func visibleASCII(h []byte) bool {
	for _, c := range h {
		if (c < 0x20 && c != '\t') || c > 0x7e {
			return false
		}
	}
	return true
}

// carries reports whether the header value h (decoded) carries the raw
// JSON value v: a string's text, a number's value, or a boolean's literal.
func carries(h, v []byte) bool {
	switch kindOf(v) {
	case kindString:
		return decode.StringIs(v, h)
	case kindNumber:
		if !headerNumber(h) {
			return false
		}
		dh, dv := parseDecimal(h), parseDecimal(v)
		if dh.saturated || dv.saturated {
			// An exponent beyond ±2^50 is not compared by value
			// (number.go): only the same text carries it.
			return string(h) == string(v)
		}
		return compareDecimals(&dh, &dv) == 0
	case kindBool:
		return string(h) == string(v)
	}
	return false
}

// headerNumber reports whether the header value h is a JSON number
// (RFC 8259 §6: an optional minus, an integer part without leading zeros,
// an optional fraction and exponent).
func headerNumber(h []byte) bool {
	i := 0
	if i < len(h) && h[i] == '-' {
		i++
	}
	digits := func() int {
		j := i
		for i < len(h) && '0' <= h[i] && h[i] <= '9' {
			i++
		}
		return i - j
	}
	switch n := digits(); {
	case n == 0, n > 1 && h[i-n] == '0':
		return false
	}
	if i < len(h) && h[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(h) && (h[i] == 'e' || h[i] == 'E') {
		i++
		if i < len(h) && (h[i] == '+' || h[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(h)
}
