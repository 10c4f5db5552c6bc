package mcp

// Review 6 (second, hostile review) of e28fdea: typed tools' schemas
// built per struct from sonicmem.Members. The findings failed on that
// commit and guard the fixes made the same day (2026-12-07); the tests
// marked GUARD checked a claim and found it holding, and stay for their
// coverage.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/encoder"
)

// r6echo registers an echo tool for T on a new server and calls it with
// args; it returns the answer, or ok false when AddTool refused T.
func r6echo[T any](t *testing.T, args string) (a answer, ok bool) {
	t.Helper()
	s, err := New(Info{Name: "typed", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := AddTool(s, Tool{Name: "echo"}, func(_ context.Context, _ *Call, in T) (T, error) { return in, nil }); err != nil {
		t.Logf("AddTool refused %T: %v", *new(T), err)
		return answer{}, false
	}
	return exchange(t, s.Endpoint(), nil, call(`"name":"echo","arguments":`+args)), true
}

// r6result registers a tool answering v (whatever its arguments) on a new
// server and calls it; ok is false when AddTool refused T.
func r6result[T any](t *testing.T, v T) (a answer, ok bool) {
	t.Helper()
	s, err := New(Info{Name: "typed", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := AddTool(s, Tool{Name: "out"}, func(context.Context, *Call, struct{}) (T, error) { return v, nil }); err != nil {
		t.Logf("AddTool refused %T: %v", v, err)
		return answer{}, false
	}
	return exchange(t, s.Endpoint(), nil, call(`"name":"out","arguments":{}`)), true
}

// r6written is what sonic writes for v with the typed tools' options:
// the JSON a typed tool answers, and so arguments its clients take from
// it.
func r6written(t *testing.T, v any) string {
	t.Helper()
	var b []byte
	if err := encoder.EncodeInto(&b, v, resultOptions); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A scalar type that writes and reads its own JSON (an object).
type R6Money int

func (m R6Money) MarshalJSON() ([]byte, error) {
	return []byte(`{"cents":` + strconv.Itoa(int(m)) + `}`), nil
}

func (m *R6Money) UnmarshalJSON(b []byte) error {
	var v struct {
		Cents int `json:"cents"`
	}
	err := json.Unmarshal(b, &v)
	*m = R6Money(v.Cents)
	return err
}

type r6QuotedMoney struct {
	Price R6Money `json:"price,string"`
	Name  string  `json:"name"`
}

// TestReview6QuotedMarshaler — FINDING (e28fdea, a regression).
//
// AddTool's doc: a struct's members "are those encoding/json and sonic
// read and write … a ",string" field is a string"; ToolHandlerFor: a nil
// error answers Out as structuredContent. encoding/json and sonic ignore
// ",string" on a type with its own MarshalJSON (encode.go: a marshaler's
// encoder never quotes), and write its JSON — here an object — yet
// structSchemas (mcp/structschema.go:67, quotedType) describes every
// member sonicmem.Members marks Quoted as {"type":"string"}: every call
// of such a tool is answered 500 (the result breaks its own output
// schema), and the arguments encoding/json or sonic write for an In are
// refused -32602. Until e28fdea AddTool refused such a field at
// registration (stringOption), naming it.
//
// Fix: Members (internal/sonicmem/members.go:101-106) or structSchemas should
// not take ",string" for a type that writes or reads its own JSON or text
// (codecSchemas has an entry for it, or sonicmem.Implements): describe it
// by its codec schema, or refuse it at registration as before.
func TestReview6QuotedMarshaler(t *testing.T) {
	v := r6QuotedMoney{Price: 250, Name: "pen"}
	written := r6written(t, v)
	if !strings.Contains(written, `"price":{"cents":250}`) {
		t.Fatalf("sonic wrote %s: the premise (MarshalJSON's object, unquoted) does not hold", written)
	}
	if a, ok := r6result(t, v); ok && a.Code != 0 {
		t.Errorf("a result of %s: %+v; want it answered (sonic wrote it, the output schema must describe it)", written, a)
	}
	if a, ok := r6echo[r6QuotedMoney](t, written); ok && a.Code != 0 {
		t.Errorf("arguments %s (what the tool itself writes): %+v; want them taken", written, a)
	}
}

// A scalar type that writes and reads itself as text.
type R6Grade int

func (g R6Grade) MarshalText() ([]byte, error) { return []byte("g" + strconv.Itoa(int(g))), nil }

func (g *R6Grade) UnmarshalText(b []byte) error {
	if len(b) < 2 || b[0] != 'g' {
		return fmt.Errorf("grade %q", b)
	}
	n, err := strconv.Atoi(string(b[1:]))
	*g = R6Grade(n)
	return err
}

type (
	r6QuotedLevel struct {
		Level slog.Level `json:"level,string"`
	}
	r6QuotedGrade struct {
		Grade R6Grade `json:"grade,string"`
	}
)

// TestReview6QuotedSelfDecoding — FINDING (e28fdea, a regression).
//
// TestTypedSchemaMembers's claim: "the arguments encoding/json writes for
// a value are accepted and reach the handler as that value"; AddTool: "a
// ",string" field is a string". For a ",string" field of a type that
// decodes itself the inferred schema says "string", but sonic (which
// decodes the arguments) reads no string the way the type writes it:
// a slog.Level written "WARN" is refused whatever string is sent
// ("WARN", "\"WARN\"", "4": -32602), and a TextUnmarshaler written
// "g3" is refused (sonic reads the int "3" instead, bypassing
// UnmarshalText, where encoding/json wants "\"g3\""). Such a tool
// registers and can never take back what it answers. Until e28fdea AddTool
// refused such a field at registration.
//
// Fix: as TestReview6QuotedMarshaler: a ",string" field of a type that
// decodes itself has no schema that describes what sonic reads; refuse it
// at registration (or give it the codec schema and no ",string").
func TestReview6QuotedSelfDecoding(t *testing.T) {
	t.Run("slog.Level", func(t *testing.T) {
		v := r6QuotedLevel{Level: slog.LevelWarn}
		written := r6written(t, v)
		a, ok := r6echo[r6QuotedLevel](t, written)
		if !ok {
			return // refused at registration: fine
		}
		if a.Code != 0 {
			t.Errorf("arguments %s (what the tool writes): %+v; want them taken", written, a)
		}
		var tried []string
		for _, s := range []string{`"WARN"`, `"\"WARN\""`, `"4"`, `"warn"`} {
			if a, _ := r6echo[r6QuotedLevel](t, `{"level":`+s+`}`); a.Code == 0 {
				return
			}
			tried = append(tried, s)
		}
		t.Errorf("no string the schema allows is taken for a slog.Level \",string\" field (tried %s): the tool can never be called", strings.Join(tried, ", "))
	})
	t.Run("TextUnmarshaler", func(t *testing.T) {
		v := r6QuotedGrade{Grade: 3}
		written := r6written(t, v)
		a, ok := r6echo[r6QuotedGrade](t, written)
		if !ok {
			return
		}
		if a.Code != 0 {
			t.Errorf("arguments %s (what the tool writes): %+v; want them taken", written, a)
			return
		}
		if !strings.Contains(string(a.Result), `"structuredContent":`+written) {
			t.Errorf("arguments %s came back as %s", written, a.Result)
		}
	})
}

type (
	R6Audit struct {
		By string `json:"by"`
	}
	r6Record struct {
		*R6Audit
		ID int `json:"id"`
	}
)

// TestReview6EmbeddedNilPointer — FINDING (not new in e28fdea: the
// generator required them too; but e28fdea's AddTool doc now claims the
// members are "those encoding/json and sonic read and write", and
// TestTypedSchemaMembers that a handler's result "is answered whole").
//
// encoding/json and sonic leave out the members promoted from an embedded
// pointer to a struct when it is nil ({"id":1} for r6Record{ID: 1}), yet
// structSchemas (mcp/structschema.go:85) requires every member that is
// not omitempty/omitzero, "by" included: such a result is answered 500
// (it breaks its own output schema), and those arguments are refused.
//
// Fix: Members should say a member is reached through an embedded pointer
// (its Index crosses a pointer), and structSchemas leave such members out
// of "required".
func TestReview6EmbeddedNilPointer(t *testing.T) {
	v := r6Record{ID: 1}
	written := r6written(t, v)
	if written != `{"id":1}` {
		t.Fatalf("sonic wrote %s: the premise does not hold", written)
	}
	if a, ok := r6result(t, v); ok && a.Code != 0 {
		t.Errorf("a result of %s: %+v; want it answered", written, a)
	}
	if a, ok := r6echo[r6Record](t, written); ok && a.Code != 0 {
		t.Errorf("arguments %s: %+v; want them taken (sonic decodes them)", written, a)
	}
	// Inside a map too: each value is such a struct.
	m := map[string]r6Record{"a": {ID: 2}}
	if a, ok := r6result(t, struct {
		M map[string]r6Record `json:"m"`
	}{m}); ok && a.Code != 0 {
		t.Errorf("a map of them: %+v; want it answered", a)
	}
}

// A type whose text methods have pointer receivers.
type R6Tag int

func (p *R6Tag) MarshalText() ([]byte, error) { return []byte("tag" + strconv.Itoa(int(*p))), nil }

type r6Tagged struct {
	Tag  R6Tag  `json:"tag"`
	Note string `json:"note"`
}

// TestReview6PointerTextMarshalerByValue — FINDING (not new in e28fdea:
// codecSchemas, 3f06c12).
//
// codecSchemas' doc: the schema of a type whose methods write its JSON is
// "the schema of that JSON". An output type's MarshalText with a pointer
// receiver is called only for an addressable value (a slice element, a
// field reached through a pointer); a struct field of an Out returned by
// value is not addressable, and encoding/json and sonic write it by its
// kind (here a number). codecSchema (mcp/typed.go:316, sonicmem.Implements,
// which also takes *T's methods) describes it as a string: every call
// is answered 500.
//
// Fix: for an output, take a pointer-receiver method's schema only where
// the value is addressable, or describe such a type as either (anyOf the
// method's schema and its kind's), or {}.
func TestReview6PointerTextMarshalerByValue(t *testing.T) {
	v := r6Tagged{Tag: 7, Note: "n"}
	written := r6written(t, v)
	if !strings.Contains(written, `"tag":7`) {
		t.Fatalf("sonic wrote %s: the premise does not hold", written)
	}
	if a, ok := r6result(t, v); ok && a.Code != 0 {
		t.Errorf("a result of %s: %+v; want it answered", written, a)
	}
}

// Shapes checked and found right (GUARD).
type (
	r6inner struct {
		X int `json:"x"`
	}
	r6UnexpPtr struct { // sonic allocates the unexported embedded pointer (encoding/json refuses)
		*r6inner
		Y int `json:"y"`
	}
	r6UnexpTagged struct {
		r6inner `json:"in"`
		Y       int `json:"y"`
	}
	r6UnexpPtrTagged struct {
		*r6inner `json:"in"`
		Y        int `json:"y"`
	}
	R6Gen[T any] struct {
		V T `json:"v"`
	}
	r6GenEmbed struct {
		R6Gen[int]
		W string `json:"w"`
	}
	r6Names struct {
		A string `json:"名前"`
		//lint:ignore SA5008 an invalid name is what this test is about
		B string `json:"a'b"` // invalid: the field's name
		//lint:ignore SA5008 the JSON name "-" is what this test is about
		C string `json:"-,"`
		D string `json:"x y"`
		//lint:ignore SA5008 an invalid name is what this test is about
		E string `json:"a\\b"` // invalid
	}
	R6Cyc1 struct {
		*R6Cyc2
		A int `json:"a"`
	}
	R6Cyc2 struct {
		*R6Cyc1
		B int `json:"b"`
	}
	R6Named  int
	r6Quoted struct {
		N R6Named `json:"n,string"`
		U uint8   `json:"u,string"`
		P *int    `json:"p,string"`
		//lint:ignore SA5008 ",string" on a double pointer is what this test is about
		PP **int   `json:"pp,string"` // not a scalar after one pointer: not quoted
		Z  r6inner `json:"z,omitzero"`
	}
	r6Maps struct {
		M map[string]r6UnexpTagged `json:"m"`
		L []r6GenEmbed             `json:"l"`
	}
)

// TestReview6MemberShapesGuard — GUARD: for each shape the arguments
// sonic writes for a value are taken and come back whole.
func TestReview6MemberShapesGuard(t *testing.T) {
	two, seven := 2, 7
	pseven := &seven
	cases := []struct {
		v    any
		echo func(t *testing.T, args string) (answer, bool)
	}{
		{r6UnexpPtr{r6inner: &r6inner{X: 1}, Y: 2}, r6echo[r6UnexpPtr]},
		{r6UnexpTagged{r6inner: r6inner{X: 1}, Y: 2}, r6echo[r6UnexpTagged]},
		{r6UnexpPtrTagged{r6inner: &r6inner{X: 1}, Y: 2}, r6echo[r6UnexpPtrTagged]},
		{r6UnexpPtrTagged{Y: 2}, r6echo[r6UnexpPtrTagged]},
		{r6GenEmbed{R6Gen: R6Gen[int]{V: 1}, W: "w"}, r6echo[r6GenEmbed]},
		{r6Names{A: "a", B: "b", C: "c", D: "d", E: "e"}, r6echo[r6Names]},
		{R6Cyc1{R6Cyc2: &R6Cyc2{B: 2}, A: 1}, r6echo[R6Cyc1]},
		{r6Quoted{N: -5, U: 255, P: &two, PP: &pseven, Z: r6inner{X: 1}}, r6echo[r6Quoted]},
		{r6Quoted{}, r6echo[r6Quoted]},
		{r6Maps{M: map[string]r6UnexpTagged{"k": {r6inner{3}, 4}}, L: []r6GenEmbed{{R6Gen[int]{5}, "x"}}}, r6echo[r6Maps]},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%d-%T", i, c.v), func(t *testing.T) {
			args := r6written(t, c.v)
			a, ok := c.echo(t, args)
			if !ok {
				t.Fatalf("AddTool refused %T", c.v)
			}
			if a.Code != 0 {
				t.Fatalf("arguments %s: %+v", args, a)
			}
			var res struct {
				Structured json.RawMessage `json:"structuredContent"`
			}
			json.Unmarshal(a.Result, &res)
			got, want := reflect.New(reflect.TypeOf(c.v)), reflect.New(reflect.TypeOf(c.v))
			if err := sonic.Unmarshal(res.Structured, got.Interface()); err != nil {
				t.Fatalf("structuredContent %s: %v", res.Structured, err)
			}
			sonic.Unmarshal([]byte(args), want.Interface())
			if r6written(t, got.Elem().Interface()) != r6written(t, want.Elem().Interface()) {
				t.Errorf("arguments %s came back as %s", args, res.Structured)
			}
		})
	}
}

type r6QuotedHeader struct {
	N    int    `json:"n,string" mcpheader:"N"`
	Flag bool   `json:"flag,string" mcpheader:"Flag"`
	Q    string `json:"q"`
}

// TestReview6QuotedHeaderGuard — GUARD: a ",string" field with an
// mcpheader tag is annotated on its string schema; the header carries the
// string, and a call whose header disagrees is refused.
func TestReview6QuotedHeaderGuard(t *testing.T) {
	s, err := New(Info{Name: "typed", Version: "1"})
	if err != nil {
		t.Fatal(err)
	}
	var got r6QuotedHeader
	if err := AddTool(s, Tool{Name: "h"}, func(_ context.Context, _ *Call, in r6QuotedHeader) (string, error) {
		got = in
		return "ok", nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := len(s.toolIndex["h"].headers); n != 2 {
		t.Fatalf("%d annotations, want 2", n)
	}
	ep := s.Endpoint()
	body := call(`"name":"h","arguments":{"n":"42","flag":"true","q":"x"},` + meta26)
	if a := exchange(t, ep, append(v26("tools/call", HeaderName, "h"), "Mcp-Param-N", "42", "Mcp-Param-Flag", "true"), body); a.Code != 0 || got.N != 42 || !got.Flag {
		t.Errorf("mirrored call: %+v, handler saw %+v", a, got)
	}
	if a := exchange(t, ep, append(v26("tools/call", HeaderName, "h"), "Mcp-Param-N", "43", "Mcp-Param-Flag", "true"), body); a.Code != CodeHeaderMismatch {
		t.Errorf("a header that disagrees: %+v, want %d", a, CodeHeaderMismatch)
	}
}
