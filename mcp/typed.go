package mcp

// NOTE: typed tools.
//
// AddTool (the function, beside the Server.AddTool method, as the official
// MCP Go SDK has both) registers a handler written against Go types:
// the input and output schemas are inferred from In and Out with
// github.com/google/jsonschema-go (the generator the SDK uses, so the same
// structs and `json`/`jsonschema` tags give the same schemas, but for
// []byte, json.RawMessage and nil maps: see inferSchema), the
// arguments are checked against the input schema like any tool's (the
// compiled subset covers what the generator writes for plain structs, so
// the check allocates nothing), then decoded into In with sonic, and Out is
// encoded with sonic into structuredContent and a text item.
//
// Numbers stay exact: an integer field gets the exact integer or the call
// is refused (-32602 naming the field) — an integer beyond the field's type
// (the generator writes minimum/maximum for 8- to 32-bit types, sonic
// refuses the rest), a fraction for an integer field, or a number beyond
// float64 for a float field is never decoded into a wrong value. JSON
// Schema counts 1.0 and 1e2 as integers, and so does a typed tool: such a
// number decodes into an integer field as 1 and 100.

import (
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"reflect"
	"time"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/encoder"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/internal/sonicmem"
)

// ToolHandlerFor is the handler of a typed tool (see AddTool): it gets the
// call's context, the Call (headers, version, and a result builder for
// content beyond Out) and the decoded arguments, and returns the result
// or an error.
//
// A nil error answers Out: when Out's schema is an object (a struct or a
// map), as structuredContent, plus its JSON as a text item unless the
// handler added content of its own; otherwise as one text item (a string
// as it is, any other value as its JSON). An error is answered as
// ToolHandler describes: a *fastserver.Error as that JSON-RPC error, any
// other error as a result with isError: true and the error's text. An Out
// that JSON cannot encode (a NaN or infinite float, a MarshalJSON that
// fails) is answered 500 / -32603, as a result that breaks the output
// schema is.
type ToolHandlerFor[In, Out any] func(ctx context.Context, c *Call, in In) (Out, error)

// argsAPI decodes typed arguments: strings copied and checked as UTF-8,
// numbers exact (interface{} values get json.Number), names matched
// case-sensitively, as the schema matches them.
var argsAPI = sonic.Config{
	CopyString:     true,
	ValidateString: true,
	UseNumber:      true,
	CaseSensitive:  true,
}.Froze()

// resultOptions encode Out: invalid UTF-8 becomes U+FFFD (the answer
// stays valid JSON), map keys are sorted (answers are deterministic), and
// a nil map or slice is null, as its inferred schema allows.
const resultOptions = encoder.ValidateString | encoder.SortMapKeys

// AddTool registers a typed tool on s: h's In and Out give the tool's
// input and output schemas, unless t sets them (a schema given is used as
// it is and must describe In and Out). t.Handler must be nil: AddTool
// sets it.
//
// In must be a type whose schema is an object (a struct, a map with
// string keys, or a pointer to one). The inferred input schema follows
// the official MCP Go SDK's generator (github.com/google/jsonschema-go):
// exported fields by their json names, fields without omitempty or
// omitzero required, other members refused (additionalProperties:
// false), a `jsonschema:"…"` tag as the description; a struct's members
// are those encoding/json and sonic read and write, where the generator
// follows Go's field promotion instead (an embedded struct with a json
// name is a member of its own; an embedded non-struct is a member; a
// ",string" field is a string); and an
// `mcpheader:"Name"` tag as "x-mcp-header": "Name", which has clients
// mirror the field into an Mcp-Param-Name header (MCP 2026-07-28; see the
// package doc's header rules: the field's JSON must be a string, an
// integer or a boolean, and the chain of fields down to it structs).
// Out's schema is the output schema when it is an object; other types
// (a number, a string, any) declare none and are answered as text.
//
// Each call costs sonic's decoding of In and encoding of Out (a few
// allocations, more for strings and slices); the argument check itself
// is that of any tool. A Go value can take far more memory than its JSON
// (a []int ~10 bytes for each byte of "0,0,…", an any 17-109 for "{}" or
// "[]"), and contract §3 bounds a request's decoded form: when In holds a
// slice, a map or an interface, the arguments are first walked as In
// directs and refused -32602 ("would take more than … KiB") when
// decoding them would allocate more than 6× their size + 64 KiB, within
// 8× the body from 32 KiB of arguments on. The walk allocates nothing and
// costs about a quarter of sonic's decoding; a struct of strings and
// numbers is not walked. An In whose decoding no bound of its JSON bounds
// (one holding a big.Rat or a regexp.Regexp: take those as strings) is a
// mistake. Mistakes are recorded as Server.AddTool records them.
func AddTool[In, Out any](s *Server, t Tool, h ToolHandlerFor[In, Out]) error {
	if h == nil {
		return s.fail(fmt.Errorf("mcp: tool %q registered with a nil handler", t.Name))
	}
	if t.Handler != nil {
		return s.fail(fmt.Errorf("mcp: tool %q: a typed tool's Handler is set by AddTool; leave it nil", t.Name))
	}
	if t.InputSchema == "" {
		in, err := inferSchemaFor[In](true)
		if err != nil {
			return s.fail(fmt.Errorf("mcp: tool %q: input type %v: %w", t.Name, reflect.TypeFor[In](), err))
		}
		if !isObjectSchema(in) {
			return s.fail(fmt.Errorf("mcp: tool %q: input type %v is not an object (a struct or a map): MCP arguments are an object", t.Name, reflect.TypeFor[In]()))
		}
		t.InputSchema = string(in)
	}
	structured := false
	if t.OutputSchema == "" {
		out, err := inferSchemaFor[Out](false)
		if err != nil {
			return s.fail(fmt.Errorf("mcp: tool %q: output type %v: %w", t.Name, reflect.TypeFor[Out](), err))
		}
		if isObjectSchema(out) {
			t.OutputSchema = string(out)
			structured = true
		}
	} else {
		if k := reflect.TypeFor[Out]().Kind(); k != reflect.Struct && k != reflect.Map && k != reflect.Pointer && k != reflect.Interface {
			// A result that is not an object can never be the
			// structuredContent an output schema asks for.
			return s.fail(fmt.Errorf("mcp: tool %q: an OutputSchema with an output type %v, which is not an object (a struct or a map)", t.Name, reflect.TypeFor[Out]()))
		}
		structured = true
	}
	cost, err := sonicmem.For(reflect.TypeFor[In]())
	if err != nil {
		return s.fail(fmt.Errorf("mcp: tool %q: input type %v: %w", t.Name, reflect.TypeFor[In](), err))
	}
	t.Handler = &typedTool[In, Out]{h: h, structured: structured, text: reflect.TypeFor[Out]().Kind() == reflect.String,
		check: holdsRawJSON(reflect.TypeFor[Out](), map[reflect.Type]bool{}), cost: cost}
	return s.AddTool(t)
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// holdsRawJSON reports whether a value of type t may be encoded with
// bytes the encoder does not write itself: a MarshalJSON (json.RawMessage
// included), whose output sonic checks for syntax only, or an interface,
// which may hold one. Such a result is checked before it is answered.
func holdsRawJSON(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return true
	}
	switch t.Kind() {
	case reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsRawJSON(t.Elem(), seen)
	case reflect.Map:
		return holdsRawJSON(t.Key(), seen) || holdsRawJSON(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() || f.Anonymous {
				if holdsRawJSON(f.Type, seen) {
					return true
				}
			}
		}
	}
	return false
}

// typeSchemas are the schemas inferSchema gives the types whose JSON is
// not what the generator assumes from their kind: []byte is base64 text
// (or null), as sonic and encoding/json write and read it, not an array
// of numbers; json.RawMessage is any JSON value.
var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[[]byte]():          {Types: []string{"null", "string"}},
	reflect.TypeFor[json.RawMessage](): {},
}

// inferSchema writes T's JSON Schema with the official SDK's generator,
// []byte and json.RawMessage described as they are encoded (typeSchemas),
// and a map inside T allowed to be null, as a nil map is encoded (the
// generator allows it for slices only).
func inferSchema[T any]() ([]byte, error) { return inferSchemaFor[T](false) }

// inferSchemaFor is inferSchema for an input type (decoded from the
// arguments) or an output type (encoded into the result), with the types
// under T that write or read their own JSON described as they do
// (typeSchemasOf).
func inferSchemaFor[T any](input bool) ([]byte, error) {
	return inferSchemaType(reflect.TypeFor[T](), input)
}

// inferSchemaType is inferSchemaFor for type t.
func inferSchemaType(t reflect.Type, input bool) ([]byte, error) {
	m, err := typeSchemasOf(t, input)
	if err != nil {
		return nil, fmt.Errorf("the schema of %v: %w", t, err)
	}
	js, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: m})
	if err != nil {
		return nil, err
	}
	nullableMaps(js, true)
	if input {
		headerTags(t, js)
	}
	return js.MarshalJSON()
}

// headerTags marks with "x-mcp-header" the properties of js whose struct
// fields in t carry an `mcpheader:"Name"` tag, down the chain of struct
// fields the schema describes under "properties", each struct's members
// found as encoding/json finds them (sonicmem.Members: the fields of an
// embedded struct without a json name are its parent's; one with a json
// name is a member of its own). AddTool (the untyped one) then checks
// each annotation as it checks a written schema's.
func headerTags(t reflect.Type, js *jsonschema.Schema) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || js == nil || js.Properties == nil {
		return
	}
	for _, f := range sonicmem.Members(t) {
		sub := js.Properties[f.Name]
		if sub == nil {
			continue
		}
		if h, ok := f.Field.Tag.Lookup("mcpheader"); ok {
			if sub.Extra == nil {
				sub.Extra = map[string]any{}
			}
			sub.Extra["x-mcp-header"] = h
		}
		headerTags(f.Field.Type, sub)
	}
}

// generatorTypes are the types with methods of their own whose schema
// the generator knows (its initial map): left to it.
var generatorTypes = map[reflect.Type]bool{
	reflect.TypeFor[time.Time](): true, reflect.TypeFor[slog.Level](): true,
	reflect.TypeFor[big.Int](): true, reflect.TypeFor[big.Rat](): true, reflect.TypeFor[big.Float](): true,
}

// codecSchema is the schema of the JSON t's methods write (an output) or
// read (an input), or nil when t has no such methods: a json.Marshaler or
// Unmarshaler may write or take any value ({}); an encoding.TextMarshaler
// or TextUnmarshaler is a string. The generator describes such a type by
// its kind (a struct as an object, an int-based enum as an integer),
// which neither sonic nor encoding/json writes or reads: every call
// failed (found by review on 2026-12-06: a netip.Addr field, an enum with
// MarshalText).
func codecSchema(t reflect.Type, input bool) *jsonschema.Schema {
	jsonIface, textIface := jsonMarshaler, textMarshaler
	if input {
		jsonIface, textIface = reflect.TypeFor[json.Unmarshaler](), reflect.TypeFor[encoding.TextUnmarshaler]()
	}
	switch {
	case sonicmem.Implements(t, jsonIface):
		return &jsonschema.Schema{}
	case !input && !t.Implements(textIface) && reflect.PointerTo(t).Implements(textIface):
		// A MarshalText with a pointer receiver is called for an
		// addressable value only (a slice's element, a field behind a
		// pointer); elsewhere the value is written by its kind (found by
		// review on 2026-12-07: described as a string, every such result
		// was 500). Either may be written.
		return &jsonschema.Schema{}
	case sonicmem.Implements(t, textIface):
		return &jsonschema.Schema{Type: "string"}
	}
	return nil
}

// codesItself reports whether t (or *t) has any of the methods with which
// a type writes or reads its own JSON or text.
func codesItself(t reflect.Type) bool {
	return codecSchema(t, true) != nil || codecSchema(t, false) != nil
}

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// nullableMaps lets the map schemas under js (an object with
// additionalProperties and no properties: what the generator writes for
// a map) be null; the root, which must be an object, is left alone.
func nullableMaps(js *jsonschema.Schema, root bool) {
	if js == nil {
		return
	}
	if !root && js.Type == "object" && js.Properties == nil && js.AdditionalProperties != nil {
		js.Type, js.Types = "", []string{"null", "object"}
	}
	for _, p := range js.Properties {
		nullableMaps(p, false)
	}
	nullableMaps(js.Items, false)
	nullableMaps(js.AdditionalProperties, false)
}

// isObjectSchema reports whether a generated schema's type is exactly
// "object" (a pointer's ["null","object"] is not: MCP needs an object).
func isObjectSchema(js []byte) bool {
	t, n := decode.Lookup(js, "type")
	return n == 1 && decode.StringIs(t, "object")
}

type typedTool[In, Out any] struct {
	h          ToolHandlerFor[In, Out]
	structured bool            // Out is answered as structuredContent
	text       bool            // Out is a string: answered as the text itself
	check      bool            // Out may be encoded with bytes of its own (holdsRawJSON)
	cost       *sonicmem.Model // In's cost model; nil when In is not walked
}

// CallTool decodes the call's arguments into In, runs the handler and
// answers its Out as the tool's result.
func (tt *typedTool[In, Out]) CallTool(c *Call) error {
	var in In
	if err := decodeArguments(c.args, &in, tt.cost); err != nil {
		return err
	}
	out, err := tt.h(c.Context(), c, in)
	if err != nil {
		return err
	}
	if tt.text && c.items == 0 {
		c.AddText(reflect.ValueOf(&out).Elem().String())
		return nil
	}
	start := len(c.scratch)
	if err := encoder.EncodeInto(&c.scratch, out, resultOptions); err != nil {
		// A value JSON cannot hold (NaN, an infinity, a failing
		// MarshalJSON) is the server failing, row 18, not the tool
		// reporting an error to the model.
		return outputError("the result cannot be encoded as JSON: " + clip(err.Error()))
	}
	js := c.scratch[start:]
	if tt.check && (!decode.Valid(js) || decode.HasDuplicateNameDeep(js)) {
		// A MarshalJSON's bytes: sonic checks their syntax only (a lone
		// surrogate escape, a name twice get through).
		return outputError("the result's JSON (from a MarshalJSON or json.RawMessage) is not valid: invalid Unicode or a member name twice")
	}
	if tt.structured {
		// sonic's own output is valid JSON, a MarshalJSON's checked above.
		c.structured = append(c.structured[:0], js...)
		c.hasStructured = true
	}
	if c.items == 0 {
		c.sep()
		c.buf = append(c.buf, `{"type":"text","text":`...)
		c.buf = decode.AppendString(c.buf, js)
		c.buf = append(c.buf, '}')
	}
	return nil
}

// decodeArguments decodes the checked arguments into *in with sonic. JSON
// Schema's integers written with a fraction or an exponent (1.0, 1e2) are
// rewritten as plain integers: before decoding when In's cost model (nil:
// In is not walked) found one for an integer field; for a type not
// walked, and decoded again, when the first attempt fails. Arguments
// whose decoded form, by the model, would pass sonicmem.Budget are
// refused -32602 before any is decoded; a failure names the member at
// fault (-32602).
func decodeArguments[In any](args []byte, in *In, model *sonicmem.Model) error {
	budget := sonicmem.Budget(len(args))
	if decode.HasDuplicateNameDeep(args) {
		// A name repeated below the arguments' own level (the check
		// refuses it there): the last occurrence is the one the schema
		// judged and the one the handler gets, whereas sonic would merge
		// the two into one struct, slice or map.
		budget -= uint64(len(args)) // the copy
		args = decode.AppendLastWins(make([]byte, 0, len(args)), args)
	}
	if model != nil {
		cost, grow, rewrite := model.Cost(args, budget, plainIntegerGrowth)
		if rewrite {
			cost += uint64(len(args)) + 2*uint64(grow) // the rewritten copy, and sonic's of it
		}
		if cost > budget {
			return invalidArguments("arguments", sonicmem.TooLarge(reflect.TypeFor[In](), cost, len(args)))
		}
		if rewrite {
			// Rewritten before the one decoding: trying first and
			// rewriting on failure would decode many values twice.
			if norm, changed := appendPlainIntegersFor(make([]byte, 0, len(args)+grow), args, reflect.TypeFor[In]()); changed {
				args = norm
			}
		}
	}
	err := argsAPI.Unmarshal(args, in)
	if err == nil {
		return nil
	}
	// A type not walked gets the rewrite as a retry (a walked one had
	// it before: the walk follows the rewrite's own type rules).
	if model == nil {
		if norm, changed := appendPlainIntegersFor(make([]byte, 0, len(args)), args, reflect.TypeFor[In]()); changed {
			var zero In
			*in = zero // the first attempt's values are garbage before the second's
			if argsAPI.Unmarshal(norm, in) == nil {
				return nil
			}
		}
	}
	field := "arguments"
	if pos, ok := errorOffset(err); ok && pos > 0 {
		field = pathAt(args, pos, "arguments")
	} else if ute, ok := errors.AsType[*json.UnmarshalTypeError](err); ok && ute.Value != "" {
		// sonic's compatible errors carry the offending text but no
		// offset: name the first value written so.
		if p, found := pathOf(args, []byte(ute.Value), "arguments"); found {
			field = p
		}
	}
	return invalidArguments(field, "does not fit the tool's Go type "+reflect.TypeFor[In]().String()+" (out of range or not exact)")
}

// errorOffset reads the byte offset of a sonic decoding error. sonic's
// error types differ between its native and compatible builds, so the
// offset is read by field name.
func errorOffset(err error) (int, bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		v := reflect.ValueOf(e)
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				continue
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			continue
		}
		for _, name := range []string{"Pos", "Offset"} {
			if f := v.FieldByName(name); f.IsValid() && f.CanInt() {
				return int(f.Int()), true
			}
		}
	}
	return 0, false
}

// pathAt names the innermost member or element of the valid JSON value v
// whose bytes span offset pos, such as "arguments.items[2].n".
func pathAt(v []byte, pos int, path string) string {
	switch kindOf(trimWS(v)) {
	case kindObject:
		var it decode.Members
		for it.Reset(v); it.Next(); {
			x := it.Value()
			if start := cap(v) - cap(x); pos >= start && pos <= start+len(x) {
				return pathAt(x, pos-start, path+"."+memberName(&it))
			}
		}
	case kindArray:
		var it decode.Elements
		i := 0
		for it.Reset(v); it.Next(); i++ {
			x := it.Value()
			if start := cap(v) - cap(x); pos >= start && pos <= start+len(x) {
				return pathAt(x, pos-start, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	return path
}

// pathOf names the first number or string of the valid JSON value v,
// in document order, written exactly as text.
func pathOf(v, text []byte, path string) (string, bool) {
	v = trimWS(v)
	switch kindOf(v) {
	case kindObject:
		var it decode.Members
		for it.Reset(v); it.Next(); {
			if p, ok := pathOf(it.Value(), text, path+"."+memberName(&it)); ok {
				return p, true
			}
		}
	case kindArray:
		var it decode.Elements
		i := 0
		for it.Reset(v); it.Next(); i++ {
			if p, ok := pathOf(it.Value(), text, fmt.Sprintf("%s[%d]", path, i)); ok {
				return p, true
			}
		}
	default:
		if string(v) == string(text) {
			return path, true
		}
	}
	return "", false
}

// appendPlainIntegers appends v with every number that is an integer but
// written with a fraction or an exponent (1.0, 1e2, -2.50e1) rewritten as
// plain digits, and reports whether it rewrote any. Numbers of more than
// 40 digits are left as they are: no Go integer holds them.
func appendPlainIntegers(dst, v []byte) ([]byte, bool) {
	dst, changed, _ := plainIntegers(dst, v, nil, false)
	return dst, changed
}

// appendPlainIntegersFor is appendPlainIntegers for the numbers a Go
// value of type t takes into integers only: a number whose target is a
// float, an interface, a json.RawMessage, a type that decodes itself
// (UnmarshalJSON, UnmarshalText) or no field at all is copied as it came
// (found by review on 2026-12-06: 1.0 for one int field rewrote 2.0 and
// -0.0 in a json.RawMessage beside it, and 3.0 in an any).
func appendPlainIntegersFor(dst, v []byte, t reflect.Type) ([]byte, bool) {
	dst, changed, _ := plainIntegers(dst, v, t, true)
	return dst, changed
}

// plainIntegers appends the value at the start of v (which may go on past
// it) as appendPlainIntegers and appendPlainIntegersFor (typed) do, and
// returns how many bytes of v the value took (0 when v is cut short). It
// reads each byte once: a container's end is where its walk ended, not
// found by skipping it first (walking each member after skipping it read
// a value nested d levels deep d times over, found by review on
// 2026-12-06).
func plainIntegers(dst, v []byte, t reflect.Type, typed bool) ([]byte, bool, int) {
	i := skipWS(v, 0)
	if i >= len(v) {
		return dst, false, 0
	}
	if typed {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if t == nil || t.Kind() == reflect.Interface || sonicmem.DecodesItself(t) {
			end := decode.SkipValue(v, i)
			if end <= i {
				return dst, false, 0
			}
			return append(dst, v[i:end]...), false, end
		}
	}
	changed := false
	switch v[i] {
	case '{':
		var fields map[string]reflect.Type
		var elem reflect.Type
		if typed {
			switch t.Kind() {
			case reflect.Struct:
				fields = sonicmem.Fields(t)
			case reflect.Map:
				elem = t.Elem()
			}
		}
		dst = append(dst, '{')
		var it decode.Members
		n := 0
		for it.Reset(v[i:]); it.NextName(); n++ {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst = append(append(append(dst, '"'), it.Name()...), '"', ':')
			ft := elem
			switch {
			case fields == nil:
			case it.NameEscaped():
				ft = fields[memberName(&it)]
			default:
				ft = fields[string(it.Name())] // no copy of the name
			}
			var c bool
			var k int
			dst, c, k = plainIntegers(dst, it.Rest(), ft, typed)
			changed = changed || c
			if !it.TakeValue(k) {
				break
			}
		}
		if e := it.End(); e > 0 {
			return append(dst, '}'), changed, i + e
		}
		return append(dst, '}'), changed, 0
	case '[':
		var elem reflect.Type
		if typed && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		dst = append(dst, '[')
		var it decode.Elements
		n := 0
		for it.Reset(v[i:]); it.NextStart(); n++ {
			if n > 0 {
				dst = append(dst, ',')
			}
			var c bool
			var k int
			dst, c, k = plainIntegers(dst, it.Rest(), elem, typed)
			changed = changed || c
			if !it.TakeValue(k) {
				break
			}
		}
		if e := it.End(); e > 0 {
			return append(dst, ']'), changed, i + e
		}
		return append(dst, ']'), changed, 0
	}
	end := decode.SkipValue(v, i)
	if end <= i {
		return dst, false, 0
	}
	num := v[i:end]
	if kindOf(num) != kindNumber || typed && !sonicmem.IntKind(t.Kind()) {
		return append(dst, num...), false, end
	}
	dst, changed = appendPlainInteger(dst, num)
	return dst, changed, end
}

// plainIntegerGrowth is the sonicmem.IntRewrite of typed tools: the bytes
// appendPlainInteger adds to num, and whether it rewrites it.
func plainIntegerGrowth(num []byte) (int, bool) {
	var tmp [48]byte
	out, changed := appendPlainInteger(tmp[:0], num)
	return len(out) - len(num), changed
}

// appendPlainInteger appends the JSON number v, rewritten as plain digits
// when it is an integer written otherwise.
func appendPlainInteger(dst, v []byte) ([]byte, bool) {
	d := parseDecimal(v)
	plain := true
	for _, c := range v {
		if c == '.' || c == 'e' || c == 'E' {
			plain = false
		}
	}
	if d.zero && v[0] == '-' {
		return append(dst, '0'), true // -0: an unsigned field takes 0
	}
	if plain || !d.isInteger() || d.point > 40 {
		return append(dst, v...), false
	}
	if d.zero {
		return append(dst, '0'), true
	}
	if d.neg {
		dst = append(dst, '-')
	}
	for i := int64(0); i < d.point; i++ {
		c := byte('0')
		if k := d.start + int(i); k < d.end {
			c = d.digit(k)
		}
		dst = append(dst, c)
	}
	return dst, true
}
