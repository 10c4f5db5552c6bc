package mcp

import (
	"fmt"
	"maps"
	"reflect"
	"regexp"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/rpcedge/rpcedge/internal/sonicmem"
)

// descriptionPrefix is what a `jsonschema` tag must not begin with
// (reserved by the generator for keywords).
var descriptionPrefix = regexp.MustCompile("^[^ \t\n]*=")

// typeSchemasOf returns the schemas the generator is given for t, an
// input or output type, in one walk over the types under t: typeSchemas;
// for each type (not the generator's own) whose JSON its methods write or
// read, the schema of that JSON (codecSchema); and for every other struct
// type, its properties the members encoding/json reads and writes
// (sonicmem.Members), so that the generator describes each struct by
// them. The generator's own struct walk follows Go's field promotion
// instead: an embedded struct with a json name lost its member and lent
// the embedded fields to its parent, required; an embedded non-struct
// was left out; a ",string" field was described by its kind, not as the
// string it is written as (found on 2026-12-07: every call with such an
// argument was refused). Everything else is described as the generator
// describes it: a property's schema is the generator's for its type, a
// `jsonschema` tag is its description, a member is required unless it is
// omitempty or omitzero (or promoted through an embedded pointer, which
// may be nil), and no other member is allowed. A ",string" field of a
// type that writes or reads its own JSON or text is an error (sonic and
// encoding/json differ on it). A type that contains itself is an error,
// as it is for the generator.
func typeSchemasOf(t reflect.Type, input bool) (map[reflect.Type]*jsonschema.Schema, error) {
	m := maps.Clone(typeSchemas)
	open := map[reflect.Type]bool{}
	var walk func(t reflect.Type) error
	walk = func(t reflect.Type) error {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if _, ok := m[t]; ok || generatorTypes[t] {
			return nil
		}
		if s := codecSchema(t, input); s != nil {
			m[t] = s
			return nil
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			return walk(t.Elem())
		case reflect.Struct:
		default:
			return nil
		}
		if open[t] {
			return fmt.Errorf("cycle detected for type %v", t)
		}
		open[t] = true
		defer delete(open, t)
		fields := sonicmem.Members(t)
		for _, f := range fields {
			if err := walk(f.Field.Type); err != nil {
				return err
			}
		}
		s := &jsonschema.Schema{
			Type:                 "object",
			Properties:           make(map[string]*jsonschema.Schema, len(fields)),
			AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
		}
		for _, f := range fields {
			ft := f.Field.Type
			if f.Quoted {
				if et := derefOnce(ft); codesItself(et) {
					// sonic and encoding/json each read such a field
					// their own way (a slog.Level ",string" takes no
					// string at all): no schema describes it.
					return fmt.Errorf("field %s.%s: the json \",string\" option on %v, which writes and reads its own JSON or text, is read differently by sonic and encoding/json: drop the option or give the tool its schema", t, f.Field.Name, et)
				}
				ft = quotedType(ft)
			}
			fs, err := jsonschema.ForType(ft, &jsonschema.ForOptions{TypeSchemas: m})
			if err != nil {
				return fmt.Errorf("field %s.%s: %w", t, f.Field.Name, err)
			}
			if d, ok := f.Field.Tag.Lookup("jsonschema"); ok {
				if d == "" {
					return fmt.Errorf("empty jsonschema tag on struct field %s.%s", t, f.Field.Name)
				}
				if descriptionPrefix.MatchString(d) {
					return fmt.Errorf("tag must not begin with 'WORD=': %q", d)
				}
				fs.Description = d
			}
			s.Properties[f.Name] = fs
			s.PropertyOrder = append(s.PropertyOrder, f.Name)
			// A member promoted through an embedded pointer is left out
			// when the pointer is nil (found by review on 2026-12-07:
			// required, so such a result broke its own schema).
			if !f.Opt && !f.ViaPointer {
				s.Required = append(s.Required, f.Name)
			}
		}
		m[t] = s
		return nil
	}
	if err := walk(t); err != nil {
		return nil, err
	}
	return m, nil
}

// derefOnce is t's element when t is a pointer, as encoding/json looks
// through one pointer for ",string".
func derefOnce(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// quotedType is the type whose schema describes a ",string" field of type
// t: a string, or a pointer to one (null allowed) for a pointer.
func quotedType(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return reflect.TypeFor[*string]()
	}
	return reflect.TypeFor[string]()
}
