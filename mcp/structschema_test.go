package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/rpcedge/rpcedge/internal/sonicmem"
)

// The shapes of embedding and tags where encoding/json's members differ
// from Go's field promotion, which the schema generator follows.
type (
	EmbBase struct {
		ID   string `json:"id"`
		Note string `json:"note,omitempty"`
	}
	EmbLevel      int
	embUnexported struct {
		Hidden string `json:"hidden"`
	}
	EmbA struct {
		X string `json:"x"`
		Y int    `json:"y"`
	}
	EmbB struct {
		X string `json:"x"`
		Z int    `json:"z"`
	}
	EmbUntagged struct{ T string }
	EmbTagged   struct {
		U string `json:"T"`
	}

	namedEmbed struct {
		EmbBase `json:"base"`
		Extra   string `json:"extra"`
	}
	namedPtrEmbed struct {
		*EmbBase `json:"base,omitempty"`
		Extra    string `json:"extra"`
	}
	nonStructEmbed struct {
		EmbLevel
		Q string `json:"q"`
	}
	unexportedEmbed struct {
		embUnexported
		Q string
	}
	taggedWins struct {
		EmbUntagged
		EmbTagged
	}
	quotedArgs struct {
		N int     `json:"n,string"`
		B bool    `json:"b,string"`
		P *int64  `json:"p,string"`
		F float64 `json:"f,string,omitempty"`
		S string  `json:"s,string"`
		//lint:ignore SA5008 ",string" on a slice is what this test is about
		L []string `json:"l,string"` // ",string" applies to scalars only
	}
	dashArgs struct {
		//lint:ignore SA5008 the JSON name "-" is what this test is about
		D    string `json:"-,"`
		Skip string `json:"-"`
		Keep string `json:"keep"`
	}
	deepNamed struct {
		Outer struct {
			namedEmbed
		} `json:"outer"`
		List []namedEmbed `json:"list"`
	}
)

// shapeCase is a value of a type, that type's schema and a tool echoing it.
type shapeCase struct {
	v      any
	schema func(input bool) ([]byte, error)
	add    func(*Server) error
}

func shape[T any](v T) shapeCase {
	return shapeCase{v, inferSchemaFor[T], func(s *Server) error {
		return AddTool(s, Tool{Name: "echo"}, func(_ context.Context, _ *Call, in T) (T, error) { return in, nil })
	}}
}

// embeddedCases are one value of each shape, filled so that encoding/json
// writes every member but those omitempty leaves out.
func embeddedCases() []shapeCase {
	p := int64(-12)
	return []shapeCase{
		shape(namedEmbed{EmbBase: EmbBase{ID: "b1", Note: "n"}, Extra: "e"}),
		shape(namedPtrEmbed{EmbBase: &EmbBase{ID: "b2"}, Extra: "e2"}),
		shape(namedPtrEmbed{Extra: "no base"}),
		shape(nonStructEmbed{EmbLevel: 3, Q: "q"}),
		shape(unexportedEmbed{embUnexported: embUnexported{Hidden: "h"}, Q: "q2"}),
		built([]reflect.StructField{ // a tie: neither "x" is a member
			{Name: "EmbA", Type: reflect.TypeFor[EmbA](), Anonymous: true},
			{Name: "EmbB", Type: reflect.TypeFor[EmbB](), Anonymous: true},
		}, EmbA{X: "ax", Y: 1}, EmbB{X: "bx", Z: 2}),
		built([]reflect.StructField{ // the shallower "x" hides EmbA's
			{Name: "EmbA", Type: reflect.TypeFor[EmbA](), Anonymous: true},
			{Name: "Other", Type: reflect.TypeFor[[]int](), Tag: `json:"x"`},
		}, EmbA{X: "hidden", Y: 4}, []int{1, 2}),
		shape(taggedWins{EmbUntagged: EmbUntagged{T: "untagged"}, EmbTagged: EmbTagged{U: "tagged"}}),
		shape(quotedArgs{N: 42, B: true, P: &p, F: 2.5, S: `say "hi"`, L: []string{"a"}}),
		shape(quotedArgs{N: -1, S: ""}),
		shape(dashArgs{D: "dash", Skip: "gone", Keep: "k"}),
		shape(deepNamed{List: []namedEmbed{{EmbBase: EmbBase{ID: "l"}, Extra: "x"}}}),
	}
}

// built is a struct of fields built at run time, as vet refuses a json
// name given twice, holding values; it has no tool (a type parameter needs
// a type written out).
func built(fields []reflect.StructField, values ...any) shapeCase {
	typ := reflect.StructOf(fields)
	v := reflect.New(typ).Elem()
	for i, x := range values {
		v.Field(i).Set(reflect.ValueOf(x))
	}
	return shapeCase{v.Interface(), func(input bool) ([]byte, error) { return inferSchemaType(typ, input) }, nil}
}

// TestTypedSchemaMembers: a typed tool's schemas have the members
// encoding/json (and sonic) read and write, however structs are embedded
// and tagged: the arguments encoding/json writes for a value are accepted
// and reach the handler as that value, and the handler's result, the same
// value, is answered whole. Until 2026-12-07 the generator's walk followed
// Go's promotion: an embedded struct with a json name was left out (and
// its fields required at its parent), an embedded non-struct was left
// out, ",string" fields were described by their kind — each such call was
// refused -32602.
func TestTypedSchemaMembers(t *testing.T) {
	for i, c := range embeddedCases() {
		typ := reflect.TypeOf(c.v)
		t.Run(fmt.Sprintf("%d-%T", i, c.v), func(t *testing.T) {
			args, err := json.Marshal(c.v)
			if err != nil {
				t.Fatal(err)
			}
			schema, err := c.schema(true)
			if err != nil {
				t.Fatalf("schema: %v", err)
			}
			// The schema's members are what encoding/json writes.
			var written map[string]any
			json.Unmarshal(args, &written)
			var js struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if err := json.Unmarshal(schema, &js); err != nil {
				t.Fatal(err)
			}
			for k := range written {
				if _, ok := js.Properties[k]; !ok {
					t.Errorf("member %q written by encoding/json is not in the schema %s", k, schema)
				}
			}
			for _, k := range js.Required {
				if _, ok := written[k]; !ok {
					t.Errorf("the schema requires %q, which encoding/json does not write: %s", k, schema)
				}
			}

			if c.add == nil {
				return
			}
			// The tool: the value arrives whole and is answered whole.
			s, err := New(Info{Name: "typed", Version: "1"})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.add(s); err != nil {
				t.Fatalf("AddTool: %v", err)
			}
			a := exchange(t, s.Endpoint(), nil, call(`"name":"echo","arguments":`+string(args)))
			if a.Code != 0 {
				t.Fatalf("arguments %s: %+v (schema %s)", args, a, schema)
			}
			var res struct {
				Structured json.RawMessage `json:"structuredContent"`
			}
			json.Unmarshal(a.Result, &res)
			// Compared through encoding/json: a member it drops (a tie) is
			// carried by nothing.
			got, want := reflect.New(typ), reflect.New(typ)
			if err := json.Unmarshal(res.Structured, got.Interface()); err != nil {
				t.Fatalf("structuredContent %s: %v", res.Structured, err)
			}
			json.Unmarshal(args, want.Interface())
			if !reflect.DeepEqual(got.Elem().Interface(), want.Elem().Interface()) {
				t.Errorf("arguments %s came back as %s", args, res.Structured)
			}
		})
	}
}

// plainArgs has no shape where encoding/json and Go's promotion differ.
type plainArgs struct {
	EmbA
	When    time.Time            `json:"when" jsonschema:"when it happened"`
	Maybe   *time.Time           `json:"maybe,omitempty"`
	Grid    map[string][]int     `json:"grid"`
	Rows    []struct{ A, B int } `json:"rows,omitempty"`
	Ptr     *item                `json:"ptr"`
	Arr     [2]uint8             `json:"arr"`
	Any     any                  `json:"any"`
	Raw     json.RawMessage      `json:"raw,omitempty"`
	Bytes   []byte               `json:"bytes"`
	Untyped string
}

// TestTypedSchemaParity: where Go's promotion and encoding/json agree, a
// typed tool's schema is the generator's own (the official SDK's) byte
// for byte, for the inputs and outputs of the package's tests.
func TestTypedSchemaParity(t *testing.T) {
	check := func(name string, mine func(bool) ([]byte, error), typ reflect.Type) {
		t.Helper()
		for _, input := range []bool{true, false} {
			got, err := mine(input)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			js, err := jsonschema.ForType(typ, &jsonschema.ForOptions{TypeSchemas: codecSchemasRef(typ, input)})
			if err != nil {
				t.Fatalf("%s: the generator: %v", name, err)
			}
			nullableMaps(js, true)
			if input {
				headerTags(typ, js)
			}
			want, _ := js.MarshalJSON()
			if string(got) != string(want) {
				t.Errorf("%s (input %v):\n got %s\nwant %s", name, input, got, want)
			}
		}
	}
	check("addIn", inferSchemaFor[addIn], reflect.TypeFor[addIn]())
	check("sizes", inferSchemaFor[sizes], reflect.TypeFor[sizes]())
	check("lookupOut", inferSchemaFor[lookupOut], reflect.TypeFor[lookupOut]())
	check("bytesIn", inferSchemaFor[bytesIn], reflect.TypeFor[bytesIn]())
	check("bytesOut", inferSchemaFor[bytesOut], reflect.TypeFor[bytesOut]())
	check("lastIn", inferSchemaFor[lastIn], reflect.TypeFor[lastIn]())
	check("plainArgs", inferSchemaFor[plainArgs], reflect.TypeFor[plainArgs]())
}

// TestMembersLikeEncodingJSON: sonicmem.Members names the members
// encoding/json writes, in its order, for every shape above.
func TestMembersLikeEncodingJSON(t *testing.T) {
	cases := append(embeddedCases(), shape(plainArgs{Ptr: &item{}}))
	for _, c := range cases {
		b, _ := json.Marshal(c.v)
		var order []string
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.Token() // {
		for dec.More() {
			k, _ := dec.Token()
			order = append(order, k.(string))
			var skip json.RawMessage
			dec.Decode(&skip)
		}
		var names []string
		for _, f := range sonicmem.Members(reflect.TypeOf(c.v)) {
			if !f.Opt || slices.Contains(order, f.Name) {
				names = append(names, f.Name)
			}
		}
		if !slices.Equal(names, order) {
			t.Errorf("%T: Members %q, encoding/json writes %q", c.v, names, order)
		}
	}
}

// TestTypedQuotedRefusals: a ",string" field takes its value written in a
// string and nothing else — a bare number, a string that does not hold
// one, a number past the field's range are -32602 — and a pointer takes
// null.
func TestTypedQuotedRefusals(t *testing.T) {
	s, err := New(Info{Name: "typed", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var got quotedArgs
	if err := AddTool(s, Tool{Name: "q"}, func(_ context.Context, _ *Call, in quotedArgs) (string, error) {
		got = in
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	ep := s.Endpoint()
	base := `"b":"false","s":"\"\"","l":null,"p":`
	for _, tc := range []struct {
		args string
		ok   bool
	}{
		{`{"n":"7",` + base + `null}`, true},
		{`{"n":"-8",` + base + `"9","f":"0.5"}`, true},
		{`{"n":7,` + base + `null}`, false},
		{`{"n":"seven",` + base + `null}`, false},
		{`{"n":"1e2",` + base + `null}`, false},
		{`{"n":"99999999999999999999",` + base + `null}`, false},
		{`{"n":"1",` + base + `9}`, false},
		{`{"n":"1","b":"yes","s":"\"\"","l":null,"p":null}`, false},
		{`{"n":"1","b":true,"s":"\"\"","l":null,"p":null}`, false},
		{`{"n":"1","b":"true","s":"plain","l":null,"p":null}`, false},
	} {
		got = quotedArgs{N: 12345}
		a := exchange(t, ep, nil, call(`"name":"q","arguments":`+tc.args))
		switch {
		case tc.ok && a.Code != 0:
			t.Errorf("%s: %+v, want it answered", tc.args, a)
		case !tc.ok && a.Code != -32602:
			t.Errorf("%s: %+v (handler got %+v), want -32602", tc.args, a, got)
		}
	}
}

// codecSchemasRef is the generator's view, the reference of
// TestTypedSchemaParity: typeSchemas and the schema of each type under t
// (by Go's fields) whose JSON its methods write or read, and no struct
// described by its members.
func codecSchemasRef(t reflect.Type, input bool) map[reflect.Type]*jsonschema.Schema {
	m := maps.Clone(typeSchemas)
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if seen[t] {
			return
		}
		seen[t] = true
		if _, ok := m[t]; ok || generatorTypes[t] {
			return
		}
		if s := codecSchema(t, input); s != nil {
			m[t] = s
			return
		}
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				if f := t.Field(i); f.IsExported() || f.Anonymous {
					walk(f.Type)
				}
			}
		case reflect.Slice, reflect.Array, reflect.Map:
			walk(t.Elem())
		}
	}
	walk(t)
	return m
}
