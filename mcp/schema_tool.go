package mcp

import (
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/rpcedge/rpcedge/decode"
)

// toolSchema is a tool's input or output schema, compiled: by the library
// always (the schema is checked against its metaschema and its $refs
// resolved at registration), and into the compiled subset when it fits,
// else read for the raw walk (schemaraw.go).
type toolSchema struct {
	fast *schema            // nil: raw or the library serves it
	raw  *rawSchema         // nil: the library serves it (when fast is nil)
	lib  *jsonschema.Schema // never nil
	json []byte             // the schema, compact, for tools/list
}

// emptyInputSchema is what an empty InputSchema stands for.
const emptyInputSchema = `{"type":"object"}`

// compileToolSchema compiles a tool's input or output schema (which is
// "input" or "output", for messages and the base URI). The root must be
// an object schema with "type": "object", as MCP requires of both; member
// names must be unique at every level; everything else JSON Schema allows
// is accepted. paths says which validators may serve it.
func compileToolSchema(text, tool, which string, docs []schemaDoc, paths schemaPaths) (*toolSchema, error) {
	raw := trimWS([]byte(text))
	if len(raw) == 0 {
		raw = []byte(emptyInputSchema)
	}
	if !decode.Valid(raw) {
		return nil, &schemaError{which: which, msg: "not valid JSON"}
	}
	if kindOf(raw) != kindObject {
		return nil, &schemaError{which: which, msg: `the root must be an object with "type": "object" (MCP requires it)`}
	}
	if t, n := decode.Lookup(raw, "type"); n != 1 || !decode.StringIs(t, "object") && !onlyObject(t) {
		return nil, &schemaError{which: which, msg: `the root must have "type": "object" (MCP requires it)`}
	}
	if ptr, name, dup := duplicateAnywhere(raw, ""); dup {
		return nil, &schemaError{which: which, ptr: ptr, msg: fmt.Sprintf("the member name %q appears twice", name)}
	}
	lib, err := compileLibrary(raw, libraryBase(tool, which), docs)
	if err != nil {
		return nil, &libraryError{which, err}
	}
	ts := &toolSchema{lib: lib, json: compactJSON(raw)}
	if paths == pathsAll {
		if fast, err := compileSchema(raw); err == nil {
			ts.fast = fast
		}
	}
	if ts.fast == nil && paths != pathsLibrary {
		rs, err := compileRaw(lib)
		if err != nil && !errors.Is(err, errRawUnsupported) {
			return nil, &schemaError{which: which, msg: err.Error()}
		}
		ts.raw = rs
	}
	return ts, nil
}

// schemaPaths says which validators may serve a schema.
type schemaPaths uint8

const (
	pathsAll     schemaPaths = iota // the compiled subset, else the raw walk, else the library
	pathsRaw                        // the raw walk, else the library (tests)
	pathsLibrary                    // the library alone (WithLibraryValidation)
)

// validate checks the raw JSON value v. It allocates nothing when the
// compiled subset serves the schema and v is valid.
func (ts *toolSchema) validate(v []byte) *fieldError {
	if ts.fast != nil {
		return ts.fast.validate(v)
	}
	if ts.raw != nil {
		return ts.raw.validate(v)
	}
	return validateLibrary(ts.lib, v)
}

// validateArguments checks a call's arguments object: a member name given
// twice at its top level first (dupMember), then the schema.
//
// When the fast validator decides and idx is not nil, idx is filled with
// the values of the properties the schema declares.
func (ts *toolSchema) validateArguments(v []byte, idx *argIndex) *fieldError {
	if ts.fast != nil {
		return ts.fast.validateArguments(v, idx)
	}
	if decode.DuplicateName(v) {
		return dupMember
	}
	if ts.raw != nil {
		return ts.raw.validate(v)
	}
	return validateLibrary(ts.lib, v)
}

// checkArgumentsIn checks a call's arguments as validateArguments does,
// where their end is not known yet: rest starts with the arguments object
// and runs on to the end of params. It returns the object's length when
// the arguments are valid, idx then filled in; 0 when they are not, or
// when the schema needs the exact object before it can judge (the
// library, an enum, no object type): validateArguments then decides
// (and words the refusal) once params has been walked.
func (ts *toolSchema) checkArgumentsIn(rest []byte, idx *argIndex) int {
	s := ts.fast
	if s == nil || s.never || len(s.enum) > 0 || (s.types != 0 && s.types&tObject == 0) ||
		len(rest) == 0 || rest[0] != '{' {
		return 0
	}
	set := nameSet{idx: idx}
	n, err := s.walkObject(rest, &set)
	if err != nil || n == 0 {
		*idx = argIndex{}
		return 0
	}
	return n
}

// duplicateAnywhere finds a member name repeated in some object of the
// valid JSON value v, returning the object's JSON pointer and the name.
func duplicateAnywhere(v []byte, ptr string) (string, string, bool) {
	switch kindOf(v) {
	case kindObject:
		if name, dup := duplicateName(v); dup {
			return ptr, name, true
		}
		var it decode.Members
		for it.Reset(v); it.Next(); {
			if p, n, dup := duplicateAnywhere(trimWS(it.Value()), ptr+"/"+escapePointer(memberName(&it))); dup {
				return p, n, true
			}
		}
	case kindArray:
		var it decode.Elements
		i := 0
		for it.Reset(v); it.Next(); i++ {
			if p, n, dup := duplicateAnywhere(it.Value(), fmt.Sprintf("%s/%d", ptr, i)); dup {
				return p, n, true
			}
		}
	}
	return "", "", false
}

// SchemaFastPath reports whether schema, a tool's input or output schema,
// is served by the compiled, allocation-free subset (see the package
// documentation) rather than by the JSON Schema library. It says nothing
// about whether the schema registers: AddTool does.
func SchemaFastPath(schema string) bool {
	raw := trimWS([]byte(schema))
	if len(raw) == 0 {
		return true
	}
	if !decode.Valid(raw) {
		return false
	}
	_, err := compileSchema(raw)
	return err == nil
}

// WithLibraryValidation makes the server validate every schema with the
// JSON Schema library's own Validate, never with the compiled subset or
// the raw walk (schemaraw.go). Verdicts are the same (a call passes or is
// -32602 naming a field; the message may word the failure differently),
// except for numbers of more than 400 digits, which only the library
// refuses; the cost differs (the library builds a model of the arguments
// on every call, 35-51 times their bytes for dense arrays). It serves
// comparison and debugging. Default: the compiled subset serves every
// schema it covers, the raw walk every other one it can.
func WithLibraryValidation() Option {
	return func(s *Server) error {
		s.schemaPaths = pathsLibrary
		return nil
	}
}

// onlyObject reports whether the raw type value t is ["object"].
func onlyObject(t []byte) bool {
	var it decode.Elements
	n := 0
	for it.Reset(t); it.Next(); n++ {
		if !decode.StringIs(it.Value(), "object") {
			return false
		}
	}
	return n == 1
}

// libraryError is a schema the JSON Schema library refused.
type libraryError struct {
	which string
	err   error
}

func (e *libraryError) Error() string {
	if l, ok := errors.AsType[*jsonschema.LoadURLError](e.err); ok && errors.Is(l.Err, ErrRemoteRef) {
		return e.which + " schema: " + l.Err.Error()
	}
	return e.which + " schema: " + e.err.Error()
}

func (e *libraryError) Unwrap() []error {
	if l, ok := errors.AsType[*jsonschema.LoadURLError](e.err); ok && errors.Is(l.Err, ErrRemoteRef) {
		return []error{errSchema, l.Err, e.err}
	}
	return []error{errSchema, e.err}
}
