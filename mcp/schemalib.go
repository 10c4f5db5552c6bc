package mcp

// NOTE: schemas beyond the compiled subset.
//
// Every schema is compiled twice at registration: by
// github.com/santhosh-tekuri/jsonschema/v6 (the library), which checks it
// against its dialect's metaschema and resolves every $ref, and, when it
// stays inside the subset of schema.go, into the allocation-free tree that
// serves calls. A schema outside the subset is judged by the raw walk
// (schemaraw.go) over the library's compiled graph. The library's own
// Validate serves WithLibraryValidation and what the walk cannot read
// (extensions, content assertions, unknown formats: none enabled here):
// the arguments are turned into the library's instance model (maps,
// slices, json.Number: exact numbers) by one walk over the raw bytes, and
// the first failure the library reports is answered -32602 naming the
// field, as the compiled path does.
//
// The library is configured so that nothing is read from outside the
// process: its default loader (local files) is replaced by one that
// refuses every URL, so a $ref resolves only inside the schema, to a
// document the author supplied (Server.AddSchemaDocument) or to the
// metaschemas the library embeds. Draft 2020-12 is the default dialect
// (MCP's); $schema selects another (2019-09, draft-07, -06, -04). format
// asserts nothing under 2020-12 and 2019-09 and is checked under draft-07
// and earlier, the library's default for those drafts (which the compiled
// path does not do, so it leaves such schemas to the library).
//
// Numbers are exact on both paths, but the library reads them as big.Rat,
// whose cost grows with the number's size (1e1000000 takes 70 ms). On the
// library path a number with more than maxLibDigits significant digits or
// a decimal exponent beyond ±maxLibDigits is refused (-32602) before the
// library sees it; the compiled path compares any number in one linear
// pass.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/rpcedge/rpcedge/decode"
)

// maxLibDigits bounds the numbers the library path accepts: significant
// digits, and the magnitude of the decimal exponent.
const maxLibDigits = 400

// ErrRemoteRef is wrapped by the registration error of a schema whose
// $ref names a document that is neither inside the schema nor supplied
// with Server.AddSchemaDocument. Nothing is ever fetched.
var ErrRemoteRef = errors.New("mcp: a $ref names a document that was not supplied (nothing is fetched)")

// refuseLoader is the library's loader: every URL it is asked for is one
// that no supplied document answers.
type refuseLoader struct{}

func (refuseLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("%w: %s (supply it with Server.AddSchemaDocument)", ErrRemoteRef, u)
}

// schemaDoc is a document supplied with AddSchemaDocument.
type schemaDoc struct {
	uri string
	doc any
}

// AddSchemaDocument supplies the JSON Schema document that $refs to uri
// resolve to, for the tools registered after it. rpcedge never fetches a
// schema: a $ref to a document that is neither inside the referring
// schema nor supplied here fails the registration (ErrRemoteRef). uri
// must be absolute and carry no fragment; doc must be valid JSON. A
// document with an $id is also found under that $id.
func (s *Server) AddSchemaDocument(uri, doc string) error {
	if s.frozen {
		return s.fail(fmt.Errorf("mcp: schema document %q added after Endpoint", uri))
	}
	u, err := url.Parse(uri)
	if err != nil || !u.IsAbs() || u.Fragment != "" || strings.HasSuffix(uri, "#") {
		return s.fail(fmt.Errorf("mcp: schema document %q: the URI must be absolute, without a fragment", uri))
	}
	if !decode.Valid([]byte(doc)) {
		return s.fail(fmt.Errorf("mcp: schema document %q is not valid JSON", uri))
	}
	for _, d := range s.schemaDocs {
		if d.uri == uri {
			return s.fail(fmt.Errorf("mcp: schema document %q added twice", uri))
		}
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		return s.fail(fmt.Errorf("mcp: schema document %q: %w", uri, err))
	}
	s.schemaDocs = append(s.schemaDocs, schemaDoc{uri, v})
	return nil
}

// compileLibrary compiles text with the library, at base (the URI that
// relative references resolve against when the schema has no $id), with
// the supplied documents.
func compileLibrary(text []byte, base string, docs []schemaDoc) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	for _, d := range docs {
		if err := c.AddResource(d.uri, d.doc); err != nil {
			return nil, err
		}
	}
	if err := c.AddResource(base, doc); err != nil {
		return nil, err
	}
	return c.Compile(base)
}

// libraryBase is the base URI of a tool's schema (which of "input" or
// "output"): a name under the reserved .invalid domain (RFC 2606), so a
// relative $ref resolves to a URI nobody serves unless the author supplies
// it.
func libraryBase(tool, which string) string {
	return "https://rpcedge.invalid/tools/" + url.PathEscape(tool) + "/" + which + "Schema.json"
}

// validateLibrary checks the raw JSON value v against the library's
// compiled schema.
func validateLibrary(ls *jsonschema.Schema, v []byte) *fieldError {
	inst, ferr := instanceOf(v)
	if ferr != nil {
		return ferr
	}
	err := ls.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &fieldError{msg: "does not match the schema: " + err.Error()}
	}
	return libraryFailure(ve, inst)
}

var printer = message.NewPrinter(language.English)

// libraryFailure turns the library's error tree into one fieldError: its
// first leaf, the instance location rendered as the compiled path renders
// it ("items[2].name").
func libraryFailure(ve *jsonschema.ValidationError, inst any) *fieldError {
	for len(ve.Causes) > 0 {
		if _, ok := ve.ErrorKind.(*kind.PropertyNames); ok {
			break // its causes judge the name, not a value
		}
		ve = ve.Causes[0]
	}
	loc := ve.InstanceLocation
	msg := ve.ErrorKind.LocalizedString(printer)
	switch k := ve.ErrorKind.(type) {
	case *kind.PropertyNames:
		// The library reports propertyNames at the root of the instance
		// (it judges the name as an instance of its own): find the object
		// that holds the name.
		if len(loc) == 0 {
			loc, _ = holderOf(inst, k.Property, nil)
		}
		loc = append(loc[:len(loc):len(loc)], k.Property)
		msg = "is a member name the schema does not allow (propertyNames)"
		if len(ve.Causes) > 0 {
			msg += ": " + ve.Causes[0].ErrorKind.LocalizedString(printer)
		}
	case *kind.Required:
		if len(k.Missing) > 0 {
			loc = append(loc[:len(loc):len(loc)], k.Missing[0])
			msg = "is required"
		}
	case *kind.AdditionalProperties:
		if len(k.Properties) > 0 {
			loc = append(loc[:len(loc):len(loc)], k.Properties[0])
			msg = "is not a member the schema allows"
		}
	case *kind.FalseSchema:
		msg = "is not allowed"
	}
	// The library's messages may quote the value: a refusal repeats at
	// most maxEcho bytes of what the client sent.
	e := &fieldError{msg: clip(msg)}
	// Segments are rendered innermost first (see fieldError.in); an array
	// index is told from a member name by walking the instance.
	segs := make([]string, len(loc))
	cur := inst
	for i, tok := range loc {
		switch c := cur.(type) {
		case []any:
			segs[i] = "[" + tok + "]"
			if n, err := strconv.Atoi(tok); err == nil && n >= 0 && n < len(c) {
				cur = c[n]
			} else {
				cur = nil
			}
		case map[string]any:
			segs[i] = tok
			cur = c[tok]
		default:
			segs[i] = tok
			cur = nil
		}
	}
	for i := len(segs) - 1; i >= 0; i-- {
		e.path = append(e.path, segs[i])
	}
	return e
}

// instanceOf turns the valid raw JSON value v into the library's instance
// model: map[string]any (the last of a repeated member name wins, as
// decode.Lookup and sonic read it), []any, string, json.Number, bool and
// nil. It refuses numbers beyond maxLibDigits, naming where they are.
func instanceOf(v []byte) (any, *fieldError) {
	v = trimWS(v)
	switch kindOf(v) {
	case kindObject:
		m := make(map[string]any)
		var it decode.Members
		for it.Reset(v); it.Next(); {
			name := memberName(&it)
			x, err := instanceOf(it.Value())
			if err != nil {
				return nil, err.in(name)
			}
			m[name] = x
		}
		return m, nil
	case kindArray:
		a := []any{}
		var it decode.Elements
		for it.Reset(v); it.Next(); {
			x, err := instanceOf(it.Value())
			if err != nil {
				return nil, err.in("[" + strconv.Itoa(len(a)) + "]")
			}
			a = append(a, x)
		}
		return a, nil
	case kindString:
		return string(decode.AppendUnquoted(nil, v)), nil
	case kindNumber:
		d := parseDecimal(v)
		if !d.zero && (d.end-d.start > maxLibDigits || d.point > maxLibDigits || d.point < -maxLibDigits) {
			return nil, &fieldError{msg: "is a number beyond what this tool's schema can check (more than " +
				strconv.Itoa(maxLibDigits) + " digits, or a magnitude beyond 1e±" + strconv.Itoa(maxLibDigits) + ")"}
		}
		if len(v) > 64 {
			// The library reads the number's text (big.Rat), in time
			// that grows faster than its length: hand it the same
			// value in at most maxLibDigits digits, however many zeros
			// the text holds (1 followed by a million zeros and
			// e-1000000 took 1.9 s, found by review on 2026-12-05).
			return json.Number(d.appendShort(nil)), nil
		}
		return json.Number(v), nil
	case kindBool:
		return v[0] == 't', nil
	}
	return nil, nil
}

// holderOf returns the location of the first object in inst, depth
// first with member names in order, that has a member called name.
func holderOf(inst any, name string, at []string) ([]string, bool) {
	switch v := inst.(type) {
	case map[string]any:
		if _, ok := v[name]; ok {
			return at, true
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			if loc, ok := holderOf(v[k], name, append(at[:len(at):len(at)], k)); ok {
				return loc, true
			}
		}
	case []any:
		for i, x := range v {
			if loc, ok := holderOf(x, name, append(at[:len(at):len(at)], strconv.Itoa(i))); ok {
				return loc, true
			}
		}
	}
	return nil, false
}
