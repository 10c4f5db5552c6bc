package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/rpcedge/rpcedge/decode"
)

// The raw-bytes evaluator (schemaraw.go) and the library must give the
// same verdict on every instance, for every schema the evaluator compiles:
//
//   - TestRawSuite: the official JSON-Schema-Test-Suite's groups (required
//     and optional/), each schema compiled with the library directly (no
//     tool wrapper), every case checked by both; the suite's own verdict
//     is compared too, but only the library is the reference (where it
//     departs from the suite, a known quirk, that is logged).
//   - TestRawMutated: each case's instance mutated at random in the ways a
//     raw-bytes reader can get wrong (numbers and strings spelled another
//     way, whitespace, member order, repeated member names, values taken
//     from the schema, long arrays with duplicates spelled differently),
//     seeded (RPCEDGE_SEED reproduces a run).
//
// For failing instances the field paths of both are compared and only
// logged: the two may report different failures of the same instance.

// rdDrafts are the suite's directories the raw evaluator is compared on,
// with the dialect added to schemas and remotes that name none.
var rdDrafts = []struct{ dir, dialect string }{
	{"draft2020-12", "https://json-schema.org/draft/2020-12/schema"},
	{"draft2019-09", "https://json-schema.org/draft/2019-09/schema"},
	{"draft7", draft7URI},
	{"draft6", "http://json-schema.org/draft-06/schema#"},
	{"draft4", "http://json-schema.org/draft-04/schema#"},
}

type rdCase struct {
	desc  string
	data  []byte
	valid bool
}

// rdGroup is one suite group whose schema both compile.
type rdGroup struct {
	draft, file string // file: "ref", "optional/bignum", ...
	idx         int
	desc        string
	schema      []byte
	ls          *jsonschema.Schema
	raw         *rawSchema
	cases       []rdCase
	pool        *rdPool
}

func (g *rdGroup) String() string {
	return fmt.Sprintf("%s/%s #%d %q", g.draft, g.file, g.idx, g.desc)
}

// rdDraftSet is one draft directory's groups.
type rdDraftSet struct {
	dir                  string
	groups               []*rdGroup // supported by the raw evaluator
	total, optional      int
	refused, unsupported []string // by the library, by compileRaw
	broken               []string // compileRaw failed otherwise
}

var rdDraftCache = map[string]*rdDraftSet{}

// rdLoadDraft compiles every group of one draft directory, or returns
// nil when the suite has no such directory.
func rdLoadDraft(t *testing.T, dir, dialect string) *rdDraftSet {
	t.Helper()
	if ds, ok := rdDraftCache[dir]; ok {
		return ds
	}
	root := filepath.Join(suiteDir, "tests", dir)
	if _, err := os.Stat(root); err != nil {
		rdDraftCache[dir] = nil
		return nil
	}
	// Remotes under a draft's folder get that draft's dialect, those at
	// the top the dialect of the draft under test.
	var docs []schemaDoc
	suiteRemotes(t, func(rel string, b []byte) error {
		first, _, _ := strings.Cut(rel, "/")
		switch {
		case first == "v1" || first == "draft3":
		case strings.HasPrefix(first, "draft"):
			for _, d := range rdDrafts {
				if d.dir == first {
					b = withDialect(b, d.dialect)
				}
			}
		default:
			b = withDialect(b, dialect)
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err != nil {
			return fmt.Errorf("%s: %w", rel, err)
		}
		docs = append(docs, schemaDoc{"http://localhost:1234/" + rel, doc})
		return nil
	})
	var files []string
	for _, pat := range []string{"*.json", "optional/*.json", "optional/format/*.json"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Fatalf("no suite files in %s", root)
	}
	ds := &rdDraftSet{dir: dir}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var groups []suiteGroup
		if err := json.Unmarshal(b, &groups); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rel, _ := filepath.Rel(root, f)
		file := strings.TrimSuffix(filepath.ToSlash(rel), ".json")
		for i, sg := range groups {
			ds.total++
			if strings.HasPrefix(file, "optional/") {
				ds.optional++
			}
			schema := []byte(sg.Schema)
			if dir != "draft2020-12" {
				schema = withDialect(schema, dialect)
			}
			label := fmt.Sprintf("%s #%d %q", file, i, sg.Description)
			base := "https://suite.invalid/" + dir + "/" + file + "-" + strconv.Itoa(i) + ".json"
			ls, err := compileLibrary(schema, base, docs)
			if err != nil {
				ds.refused = append(ds.refused, label+": "+rdFirstLine(err.Error()))
				continue
			}
			raw, err := rdCompileRaw(ls)
			switch {
			case errors.Is(err, errRawUnsupported):
				ds.unsupported = append(ds.unsupported, label+": "+rdFirstLine(err.Error()))
				continue
			case err != nil:
				ds.broken = append(ds.broken, label+": "+err.Error())
				continue
			case raw == nil:
				ds.broken = append(ds.broken, label+": compileRaw returned nil and no error")
				continue
			}
			g := &rdGroup{draft: dir, file: file, idx: i, desc: sg.Description, schema: schema, ls: ls, raw: raw}
			for _, tc := range sg.Tests {
				g.cases = append(g.cases, rdCase{tc.Description, []byte(tc.Data), tc.Valid})
			}
			ds.groups = append(ds.groups, g)
		}
	}
	rdDraftCache[dir] = ds
	return ds
}

func rdFirstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// rdCompileRaw is compileRaw with a panic turned into an error.
func rdCompileRaw(ls *jsonschema.Schema) (r *rawSchema, err error) {
	defer func() {
		if p := recover(); p != nil {
			r, err = nil, fmt.Errorf("compileRaw panicked: %v", p)
		}
	}()
	return compileRaw(ls)
}

// rdWatch panics the test binary, naming the instance, when one check
// runs for longer than rdHang: a hung evaluator would otherwise be
// reported by the test timeout only, naming nothing.
type rdWatch struct {
	cur  atomic.Pointer[rdWatchItem]
	stop chan struct{}
}

type rdWatchItem struct {
	who   string
	g     *rdGroup
	data  []byte
	start time.Time
}

const rdHang = 20 * time.Second

func rdStartWatch(t *testing.T) *rdWatch {
	w := &rdWatch{stop: make(chan struct{})}
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
				if it := w.cur.Load(); it != nil && time.Since(it.start) > rdHang {
					panic(fmt.Sprintf("%s has run for %v on %s, instance %.2000s", it.who, time.Since(it.start), it.g, it.data))
				}
			}
		}
	}()
	t.Cleanup(func() { close(w.stop) })
	return w
}

// rawVerdicts runs both paths on the trimmed valid instance v; pnc is
// the raw evaluator's panic, if it panicked.
func (w *rdWatch) verdicts(g *rdGroup, v []byte) (lib, raw *fieldError, pnc string) {
	w.cur.Store(&rdWatchItem{"the library", g, v, time.Now()})
	lib = validateLibrary(g.ls, v)
	w.cur.Store(&rdWatchItem{"raw.validate", g, v, time.Now()})
	raw, pnc = rdValidateRaw(g.raw, v)
	w.cur.Store(nil)
	return lib, raw, pnc
}

func rdValidateRaw(r *rawSchema, v []byte) (fe *fieldError, pnc string) {
	defer func() {
		if p := recover(); p != nil {
			fe, pnc = nil, fmt.Sprint(p)
		}
	}()
	return r.validate(v), ""
}

func rdVerdict(e *fieldError, pnc string) string {
	switch {
	case pnc != "":
		return "PANIC: " + pnc
	case e == nil:
		return "valid"
	}
	return "invalid (" + e.field("arguments") + " " + e.msg + ")"
}

// rdPathSensible reports whether the failure's path names a place in the
// instance: every segment but the last exists, and the last is an index
// of an array or a name of an object (a required member may be absent).
func rdPathSensible(v []byte, e *fieldError) bool {
	cur, ferr := instanceOf(v)
	if ferr != nil {
		return true
	}
	for i := len(e.path) - 1; i >= 0; i-- {
		seg := e.path[i]
		if strings.HasPrefix(seg, "[") && strings.HasSuffix(seg, "]") {
			a, ok := cur.([]any)
			n, err := strconv.Atoi(seg[1 : len(seg)-1])
			if !ok || err != nil || n < 0 || n >= len(a) {
				return false
			}
			cur = a[n]
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		x, has := m[seg]
		if !has && i > 0 {
			return false
		}
		cur = x
	}
	return true
}

// rdPaths counts and logs the failures whose rendered paths differ.
type rdPaths struct {
	both, differ, refines, unexplained, senseless int
	logged                                        map[string]bool
	lines                                         []string
}

func (p *rdPaths) compare(g *rdGroup, v []byte, lib, raw *fieldError) {
	if lib == nil || raw == nil {
		return
	}
	p.both++
	lf, rf := lib.field("arguments"), raw.field("arguments")
	if !rdPathSensible(v, raw) {
		p.senseless++
		p.note(g, "raw path names no place in the instance", v, lf, rf+" "+raw.msg)
	}
	if lf == rf {
		return
	}
	p.differ++
	// The library's first failure depends on map order (its causes
	// come from maps): a path is unexplained only when no node of the
	// library's error tree is at it.
	fields := rdLibraryFields(g.ls, v)
	switch {
	case slices.Contains(fields, rf):
	case slices.ContainsFunc(fields, func(f string) bool {
		return strings.HasPrefix(rf, f) && (rf[len(f)] == '.' || rf[len(f)] == '[')
	}):
		// Deeper than a failure of the library's: the member or item
		// the library's message names (dependencies, additionalItems).
		p.refines++
		p.note(g, "raw path is below the library's failure", v, lf, rf+" "+raw.msg)
	default:
		p.unexplained++
		p.note(g, "raw path is at no failure of the library's", v, lf, rf+" "+raw.msg)
	}
}

// rdLibraryFields renders the location of every node of the library's
// error tree for v as libraryFailure renders a failure.
func rdLibraryFields(ls *jsonschema.Schema, v []byte) []string {
	inst, ferr := instanceOf(v)
	if ferr != nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(ls.Validate(inst), &ve) {
		return nil
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		c := *e
		if _, ok := e.ErrorKind.(*kind.PropertyNames); !ok {
			c.Causes = nil
		}
		out = append(out, libraryFailure(&c, inst).field("arguments"))
		switch k := e.ErrorKind.(type) {
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				c.ErrorKind = &kind.AdditionalProperties{Properties: []string{p}}
				out = append(out, libraryFailure(&c, inst).field("arguments"))
			}
		case *kind.Required:
			for _, p := range k.Missing {
				c.ErrorKind = &kind.Required{Missing: []string{p}}
				out = append(out, libraryFailure(&c, inst).field("arguments"))
			}
		}
		for _, k := range e.Causes {
			walk(k)
		}
	}
	walk(ve)
	return out
}

func (p *rdPaths) note(g *rdGroup, what string, v []byte, lf, rf string) {
	if p.logged == nil {
		p.logged = map[string]bool{}
	}
	key := g.String() + what
	if p.logged[key] || len(p.lines) >= 30 {
		return
	}
	p.logged[key] = true
	p.lines = append(p.lines, fmt.Sprintf("%s: %s: instance %.200s: library %s, raw %s", g, what, v, lf, rf))
}

func (p *rdPaths) log(t *testing.T) {
	t.Logf("failure paths (both invalid: %d): %d differ from the library's first failure: %d at another failure of the library's error tree, "+
		"%d below one (naming the member or item), %d elsewhere; %d name no place in the instance (logged, not failed)",
		p.both, p.differ, p.differ-p.refines-p.unexplained, p.refines, p.unexplained, p.senseless)
	for _, l := range p.lines {
		t.Log("  " + l)
	}
}

func TestRawSuite(t *testing.T) {
	if _, err := os.Stat(suiteDir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the suite is missing: %v", err)
		}
		t.Skipf("the suite is missing (../shared beside the repository): %v", err)
	}
	w := rdStartWatch(t)
	var paths rdPaths
	for _, d := range rdDrafts {
		ds := rdLoadDraft(t, d.dir, d.dialect)
		if ds == nil {
			t.Logf("%s: not in the suite", d.dir)
			continue
		}
		rdReportDraft(t, ds)
		var cases, agree, disagree, panics, quirks, quirksOpt, quirkRawSuite, big, notJSON, rawSuite int
		quirkFiles := map[string]int{}
		for _, g := range ds.groups {
			for _, tc := range g.cases {
				cases++
				v := trimWS(tc.data)
				if !decode.Valid(v) {
					notJSON++
					continue
				}
				if _, ferr := instanceOf(v); ferr != nil {
					big++
					continue
				}
				lib, raw, pnc := w.verdicts(g, v)
				libOK, rawOK := lib == nil, raw == nil && pnc == ""
				if rawOK == tc.valid && pnc == "" {
					rawSuite++
				}
				if libOK != tc.valid {
					quirks++
					if strings.HasPrefix(g.file, "optional/") {
						quirksOpt++
					}
					if rawOK == tc.valid && pnc == "" {
						quirkRawSuite++
					}
					quirkFiles[g.file]++
					if !strings.HasPrefix(g.file, "optional/") {
						t.Logf("library quirk: %s / %q: suite says valid=%v, library %s, raw %s; data %.300s",
							g, tc.desc, tc.valid, rdVerdict(lib, ""), rdVerdict(raw, pnc), v)
					}
				}
				switch {
				case pnc != "":
					panics++
					t.Errorf("%s / %q: raw.validate panicked: %s\nschema %s\ndata %.500s", g, tc.desc, pnc, g.schema, v)
				case rawOK != libOK:
					disagree++
					t.Errorf("%s / %q (suite valid=%v): library %s, raw %s\nschema %s\ndata %.500s",
						g, tc.desc, tc.valid, rdVerdict(lib, ""), rdVerdict(raw, ""), g.schema, v)
				default:
					agree++
				}
				paths.compare(g, v, lib, raw)
			}
		}
		t.Logf("%s: %d cases of the supported groups: %d agree with the library, %d disagree, %d panics; %d agree with the suite; "+
			"%d library quirks (suite ≠ library; %d of them in optional/; raw sides with the suite in %d); %d skipped (numbers beyond the library's bound), %d not valid JSON",
			d.dir, cases, agree, disagree, panics, rawSuite, quirks, quirksOpt, quirkRawSuite, big, notJSON)
		if len(quirkFiles) > 0 {
			var fs []string
			for _, f := range slices.Sorted(maps.Keys(quirkFiles)) {
				fs = append(fs, f+" "+strconv.Itoa(quirkFiles[f]))
			}
			t.Logf("%s: library quirks by file: %s", d.dir, strings.Join(fs, ", "))
		}
	}
	paths.log(t)
}

// rdReportDraft logs a draft's groups and fails on compileRaw errors
// that are not errRawUnsupported.
func rdReportDraft(t *testing.T, ds *rdDraftSet) {
	t.Helper()
	opt := 0
	for _, g := range ds.groups {
		if strings.HasPrefix(g.file, "optional/") {
			opt++
		}
	}
	t.Logf("%s: %d groups (%d of them optional/): %d supported (%d optional/), %d unsupported (errRawUnsupported), %d refused by the library, %d compileRaw errors",
		ds.dir, ds.total, ds.optional, len(ds.groups), opt, len(ds.unsupported), len(ds.refused), len(ds.broken))
	if testing.Verbose() {
		for _, u := range ds.unsupported {
			t.Logf("  unsupported: %s", u)
		}
		for _, u := range ds.refused {
			t.Logf("  refused by the library: %s", u)
		}
	}
	for _, b := range ds.broken {
		t.Errorf("%s: compileRaw: %s", ds.dir, b)
	}
}

// ---- mutated instances ----

// rdVal is a JSON value as written: scalars keep their text, objects their
// member names' text (escapes and repeats kept) in order.
type rdVal struct {
	k     byte // kindObject, kindArray, kindString, kindNumber, kindBool, kindNull
	text  string
	names []string
	kids  []*rdVal
}

func rdParse(v []byte) *rdVal {
	v = trimWS(v)
	switch kindOf(v) {
	case kindObject:
		n := &rdVal{k: kindObject}
		var it decode.Members
		for it.Reset(v); it.Next(); {
			n.names = append(n.names, `"`+string(it.Name())+`"`)
			n.kids = append(n.kids, rdParse(it.Value()))
		}
		return n
	case kindArray:
		n := &rdVal{k: kindArray}
		var it decode.Elements
		for it.Reset(v); it.Next(); {
			n.kids = append(n.kids, rdParse(it.Value()))
		}
		return n
	}
	return &rdVal{k: kindOf(v), text: string(v)}
}

func rdMust(s string) *rdVal { return rdParse([]byte(s)) }

func (n *rdVal) clone() *rdVal {
	c := &rdVal{k: n.k, text: n.text, names: slices.Clone(n.names)}
	if n.kids != nil {
		c.kids = make([]*rdVal, len(n.kids))
		for i, k := range n.kids {
			c.kids[i] = k.clone()
		}
	}
	return c
}

// rdWriter writes a rdVal, with whitespace between tokens at the rate ws.
type rdWriter struct {
	r  *rand.Rand
	ws float64
	b  []byte
}

func (w *rdWriter) space() {
	if w.ws > 0 && w.r.Float64() < w.ws {
		w.b = append(w.b, []string{" ", "\n", "\t", "\r\n", "  ", " \t\r\n "}[w.r.IntN(6)]...)
	}
}

func (w *rdWriter) write(n *rdVal) {
	switch n.k {
	case kindObject:
		w.b = append(w.b, '{')
		for i, k := range n.kids {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.space()
			w.b = append(w.b, n.names[i]...)
			w.space()
			w.b = append(w.b, ':')
			w.space()
			w.write(k)
			w.space()
		}
		if len(n.kids) == 0 {
			w.space()
		}
		w.b = append(w.b, '}')
	case kindArray:
		w.b = append(w.b, '[')
		for i, k := range n.kids {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.space()
			w.write(k)
			w.space()
		}
		if len(n.kids) == 0 {
			w.space()
		}
		w.b = append(w.b, ']')
	default:
		w.b = append(w.b, n.text...)
	}
}

func rdText(n *rdVal) []byte {
	w := rdWriter{}
	w.write(n)
	return w.b
}

// rdPool holds values taken from a group's schema and cases.
type rdPool struct {
	values  []*rdVal // const, enum, default, examples values, and the cases' data and their parts
	names   []string // member names (JSON string text) the schema mentions
	numbers []string // numbers of numeric keywords and values
	strs    []string // strings (JSON text)
	seen    map[string]bool
}

var rdGenericValues = []string{`null`, `true`, `false`, `0`, `1`, `-1`, `1.5`, `""`, `"a"`, `[]`, `{}`, `[1]`, `{"a":1}`, `[null]`, `{"":0}`}

var rdEdgeNumbers = []string{
	"0", "-0", "1", "-1", "1.0", "0.1", "0.30000000000000004", "1.0000000000000000001", "0.9999999999999999999",
	"9007199254740992", "9007199254740993", "-9007199254740993", "18446744073709551616", "-9223372036854775809",
	"1e308", "1.7976931348623157e308", "1e309", "-1e309", "5e-324", "1e-330", "1e39", "123456789012345678901234567890",
	"2.5", "3", "1e2", "100.0", "0.0075", "1e-2",
}

var rdNameEscapes = []string{`"a"`, `"b"`, `"\u0061"`, `""`, `"é"`, `"\u00e9"`, `"😀"`, `"\ud83d\ude00"`, `"a\"b"`, `"__proto__"`, `"length"`, `"constructor"`}

func rdNewPool(g *rdGroup) *rdPool {
	p := &rdPool{seen: map[string]bool{}}
	p.addSchema(g.schema, 0)
	for _, tc := range g.cases {
		if decode.Valid(tc.data) {
			p.addValue(trimWS(tc.data), 0)
		}
	}
	return p
}

func (p *rdPool) addName(s string) {
	if !p.seen["n"+s] {
		p.seen["n"+s] = true
		p.names = append(p.names, s)
	}
}

func (p *rdPool) addValue(v []byte, depth int) {
	v = trimWS(v)
	if len(v) > 4096 || depth > 6 || !decode.Valid(v) {
		return
	}
	if !p.seen["v"+string(v)] {
		p.seen["v"+string(v)] = true
		p.values = append(p.values, rdParse(v))
	}
	switch kindOf(v) {
	case kindNumber:
		p.numbers = append(p.numbers, string(v))
	case kindString:
		p.strs = append(p.strs, string(v))
	case kindObject:
		var it decode.Members
		for it.Reset(v); it.Next(); {
			p.addName(`"` + string(it.Name()) + `"`)
			p.addValue(it.Value(), depth+1)
		}
	case kindArray:
		var it decode.Elements
		for it.Reset(v); it.Next(); {
			p.addValue(it.Value(), depth+1)
		}
	}
}

// addSchema walks a schema for its values, member names and numbers.
func (p *rdPool) addSchema(v []byte, depth int) {
	if depth > 40 {
		return
	}
	switch kindOf(v) {
	case kindArray:
		var it decode.Elements
		for it.Reset(v); it.Next(); {
			p.addSchema(it.Value(), depth+1)
		}
	case kindObject:
		var it decode.Members
		for it.Reset(v); it.Next(); {
			val := it.Value()
			switch name := string(decode.AppendUnquoted(nil, []byte(`"`+string(it.Name())+`"`))); name {
			case "const", "default":
				p.addValue(val, 0)
				continue
			case "enum", "examples":
				var el decode.Elements
				for el.Reset(val); el.Next(); {
					p.addValue(el.Value(), 0)
				}
				continue
			case "required":
				var el decode.Elements
				for el.Reset(val); el.Next(); {
					if kindOf(el.Value()) == kindString {
						p.addName(string(el.Value()))
					}
				}
				continue
			case "properties", "patternProperties", "dependentRequired", "dependentSchemas", "dependencies":
				var m decode.Members
				for m.Reset(val); m.Next(); {
					p.addName(`"` + string(m.Name()) + `"`)
					if kindOf(m.Value()) == kindArray { // dependentRequired, dependencies
						var el decode.Elements
						for el.Reset(m.Value()); el.Next(); {
							if kindOf(el.Value()) == kindString {
								p.addName(string(el.Value()))
							}
						}
					}
				}
			case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
				"minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties", "minContains", "maxContains":
				if kindOf(val) == kindNumber {
					p.numbers = append(p.numbers, string(val))
				}
			}
			p.addSchema(val, depth+1)
		}
	}
}

// rdMutator changes instances.
type rdMutator struct {
	r    *rand.Rand
	pool *rdPool
}

func (m *rdMutator) pick(s []string) string { return s[m.r.IntN(len(s))] }

// slots returns the addresses of every value of the tree, root first.
func rdSlots(root **rdVal) []**rdVal {
	out := []**rdVal{root}
	for i := 0; i < len(out); i++ {
		n := *out[i]
		for j := range n.kids {
			out = append(out, &n.kids[j])
		}
	}
	return out
}

func rdSlotsOf(all []**rdVal, k byte) []**rdVal {
	var out []**rdVal
	for _, s := range all {
		if (*s).k == k {
			out = append(out, s)
		}
	}
	return out
}

// respellNumber writes the same number another way.
func (m *rdMutator) respellNumber(s string) string {
	d := parseDecimal([]byte(s))
	if d.zero {
		return m.pick([]string{"0", "-0", "0.0", "-0.0", "0e0", "0E+5", "-0e-3", "0.000", "0e400", "-0.0E-0"})
	}
	digits := make([]byte, 0, d.end-d.start+4)
	for i := d.start; i < d.end; i++ {
		digits = append(digits, d.digit(i))
	}
	// value = 0.digits × 10^point
	exp := d.point - int64(len(digits)) // value = digits × 10^exp
	pad := m.r.IntN(4)
	if m.r.IntN(10) == 0 { // past 64 bytes, where the library is handed a shorter spelling
		pad = 40 + m.r.IntN(100)
	}
	for range pad {
		digits = append(digits, '0')
		exp--
	}
	var b []byte
	if d.neg {
		b = append(b, '-')
	}
	var e int64
	if p := m.r.IntN(len(digits) + 2); p == 0 || p > len(digits) && m.r.IntN(2) == 0 {
		z := m.r.IntN(3)
		if m.r.IntN(10) == 0 {
			z = 40 + m.r.IntN(100)
		}
		b = append(b, "0."...)
		b = append(b, strings.Repeat("0", z)...)
		b = append(b, digits...)
		e = exp + int64(z+len(digits))
	} else {
		p = min(p, len(digits))
		b = append(b, digits[:p]...)
		if p < len(digits) {
			b = append(b, '.')
			b = append(b, digits[p:]...)
		}
		e = exp + int64(len(digits)-p)
	}
	if e != 0 || m.r.IntN(4) == 0 {
		b = append(b, m.pick([]string{"e", "E"})...)
		switch {
		case e > 0 && m.r.IntN(2) == 0:
			b = append(b, '+')
		case e == 0:
			b = append(b, m.pick([]string{"", "+", "-"})...)
		}
		b = strconv.AppendInt(b, e, 10)
	}
	return string(b)
}

// changeNumber writes a different number, near or far.
func (m *rdMutator) changeNumber(s string) string {
	switch m.r.IntN(6) {
	case 0:
		if strings.HasPrefix(s, "-") {
			return s[1:]
		}
		return "-" + s
	case 1: // a hair away: beyond float64's precision
		mant, exp, hasExp := strings.Cut(s, "e")
		if !hasExp {
			mant, exp, hasExp = strings.Cut(s, "E")
		}
		if !strings.Contains(mant, ".") {
			mant += "."
			mant += "0000000000000000000"
		}
		mant += "1"
		if hasExp {
			return mant + "e" + exp
		}
		return mant
	case 2:
		if len(m.pool.numbers) > 0 {
			return m.respellNumber(m.pick(m.pool.numbers))
		}
		return m.pick(rdEdgeNumbers)
	case 3:
		return m.pick(rdEdgeNumbers)
	case 4: // ×10 or ÷10
		if strings.ContainsAny(s, "eE") {
			return s[:strings.IndexAny(s, "eE")]
		}
		return s + m.pick([]string{"e1", "e-1", "E+2", "e-0"})
	default:
		return strconv.Itoa(m.r.IntN(21) - 10)
	}
}

// quoteRandom writes s as a JSON string, escaping at the rate p.
func (m *rdMutator) quoteRandom(s string, p float64) string {
	var b strings.Builder
	b.WriteByte('"')
	hex := func(r rune) {
		if m.r.IntN(2) == 0 {
			fmt.Fprintf(&b, `\u%04x`, r)
		} else {
			fmt.Fprintf(&b, `\u%04X`, r)
		}
	}
	for _, r := range s {
		esc := m.r.Float64() < p
		switch {
		case r == '"':
			if esc {
				hex(r)
			} else {
				b.WriteString(`\"`)
			}
		case r == '\\':
			if esc {
				hex(r)
			} else {
				b.WriteString(`\\`)
			}
		case r < 0x20:
			short := map[rune]string{'\b': `\b`, '\f': `\f`, '\n': `\n`, '\r': `\r`, '\t': `\t`}[r]
			if short != "" && !esc {
				b.WriteString(short)
			} else {
				hex(r)
			}
		case r == '/' && esc && m.r.IntN(2) == 0:
			b.WriteString(`\/`)
		case !esc:
			b.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			hex(0xD800 + r>>10)
			hex(0xDC00 + r&0x3FF)
		default:
			hex(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func rdUnquote(s string) string { return string(decode.AppendUnquoted(nil, []byte(s))) }

func (m *rdMutator) respellString(s string) string {
	return m.quoteRandom(rdUnquote(s), []float64{0.2, 0.5, 1}[m.r.IntN(3)])
}

// changeString writes a different string.
func (m *rdMutator) changeString(s string) string {
	u := rdUnquote(s)
	switch m.r.IntN(7) {
	case 0:
		u += m.pick([]string{"a", "é", "😀", "\x00", " ", "1", "\u2028"})
	case 1:
		if u != "" {
			_, n := utf8.DecodeLastRuneInString(u)
			u = u[:len(u)-n]
		}
	case 2:
		u = ""
	case 3:
		if len(m.pool.strs) > 0 {
			return m.respellString(m.pick(m.pool.strs))
		}
		u = "x"
	case 4:
		u = strings.ToUpper(u)
	case 5:
		if len(m.pool.names) > 0 {
			return m.respellString(m.pick(m.pool.names))
		}
		u = "a"
	default:
		u = m.pick([]string{"😀", "😀😀", "é", "2020-01-01", "1", "-1", "true", "null", "#/a", "a\u0000b"}) + u
	}
	return m.quoteRandom(u, 0.3)
}

// respellDeep writes every part of n another way, at the rate p, the
// value kept: numbers, strings, names, member order.
func (m *rdMutator) respellDeep(n *rdVal, p float64) {
	switch n.k {
	case kindNumber:
		if m.r.Float64() < p {
			n.text = m.respellNumber(n.text)
		}
	case kindString:
		if m.r.Float64() < p {
			n.text = m.respellString(n.text)
		}
	case kindObject:
		for i := range n.names {
			if m.r.Float64() < p {
				n.names[i] = m.respellString(n.names[i])
			}
		}
		if m.r.Float64() < p {
			m.reorder(n)
		}
	}
	for _, k := range n.kids {
		m.respellDeep(k, p)
	}
}

// reorder shuffles an object's members; a repeated name keeps its
// last occurrence last, so the value the instance means stays.
func (m *rdMutator) reorder(n *rdVal) {
	idx := make([]int, len(n.kids))
	for i := range idx {
		idx[i] = i
	}
	m.r.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
	// Keep the relative order of members sharing a name.
	byName := map[string][]int{}
	for i, nm := range n.names {
		u := rdUnquote(nm)
		byName[u] = append(byName[u], i)
	}
	used := map[string]int{}
	order := make([]int, len(idx))
	for i, j := range idx {
		u := rdUnquote(n.names[j])
		order[i] = byName[u][used[u]]
		used[u]++
	}
	names, kids := make([]string, len(order)), make([]*rdVal, len(order))
	for i, j := range order {
		names[i], kids[i] = n.names[j], n.kids[j]
	}
	n.names, n.kids = names, kids
}

// value returns a value from the pool, or a generic one.
func (m *rdMutator) value() *rdVal {
	if len(m.pool.values) > 0 && m.r.IntN(3) > 0 {
		v := m.pick2(m.pool.values).clone()
		if m.r.IntN(2) == 0 {
			m.respellDeep(v, 0.5)
		}
		return v
	}
	return rdMust(m.pick(rdGenericValues))
}

func (m *rdMutator) pick2(s []*rdVal) *rdVal { return s[m.r.IntN(len(s))] }

func (m *rdMutator) name() string {
	if len(m.pool.names) > 0 && m.r.IntN(4) > 0 {
		return m.respellString(m.pick(m.pool.names))
	}
	return m.pick(rdNameEscapes)
}

// longArray returns an array of 2..45 elements (mostly more than 20, where
// the library hashes for uniqueItems), often with one duplicate spelled
// differently.
func (m *rdMutator) longArray(near *rdVal) *rdVal {
	n := 21 + m.r.IntN(25)
	if m.r.IntN(4) == 0 {
		n = 2 + m.r.IntN(8)
	}
	a := &rdVal{k: kindArray}
	style := m.r.IntN(8)
	for i := range n {
		var e *rdVal
		switch style {
		case 0:
			e = rdMust(strconv.Itoa(i))
		case 1:
			e = rdMust(fmt.Sprintf(`{"a":%d,"b":"x%d","c":[%d]}`, i, i, i%3))
		case 2:
			e = rdMust(m.quoteRandom("s"+strconv.Itoa(i)+"é", 0.3))
		case 3:
			if near != nil && m.r.IntN(3) == 0 {
				e = near.clone()
			} else {
				e = m.value()
			}
		case 4: // near duplicates, then distinct numbers
			pairs := []string{`1`, `true`, `0`, `false`, `null`, `"1"`, `[]`, `{}`, `{"a":[1]}`, `{"a":1}`,
				`1.0000000000000000001`, `0.1`, `0.1000000000000000001`, `[1,2]`, `[2,1]`, `{"a":1,"b":null}`, `""`, `"\u0000"`,
				`9007199254740993`, `9007199254740992`, `1e309`, `1e308`, `[[1]]`, `[1]`}
			if i < len(pairs) {
				e = rdMust(pairs[i])
			} else {
				e = rdMust(strconv.Itoa(1000 + i))
			}
		case 5:
			e = rdMust(fmt.Sprintf(`[%d,%d]`, i, i+1))
		case 7: // objects of many members (compared through a map), one value apart
			var ms []string
			for k := range 12 + i%30 {
				ms = append(ms, fmt.Sprintf(`"k%d":%d`, k, k))
			}
			ms = append(ms, fmt.Sprintf(`"v":%d`, i))
			e = rdMust("{" + strings.Join(ms, ",") + "}")
		default:
			e = rdMust(m.pick([]string{"1", "2", "3", `"a"`, "null"}))
		}
		a.kids = append(a.kids, e)
	}
	if style != 4 && style != 6 && style != 7 {
		m.r.Shuffle(len(a.kids), func(i, j int) { a.kids[i], a.kids[j] = a.kids[j], a.kids[i] })
	}
	if m.r.IntN(5) < 3 {
		d := a.kids[m.r.IntN(len(a.kids))].clone()
		m.respellDeep(d, 1)
		a.kids = slices.Insert(a.kids, m.r.IntN(len(a.kids)+1), d)
	}
	if m.r.IntN(3) == 0 {
		m.respellDeep(a, 0.3)
	}
	return a
}

// mutate changes the tree at root once.
func (m *rdMutator) mutate(root **rdVal) {
	all := rdSlots(root)
	s := all[m.r.IntN(len(all))]
	pickKind := func(k byte) **rdVal {
		ks := rdSlotsOf(all, k)
		if len(ks) == 0 {
			return nil
		}
		return ks[m.r.IntN(len(ks))]
	}
	switch m.r.IntN(22) {
	case 0, 1, 2: // the same value written another way
		m.respellDeep(*s, []float64{0.3, 0.7, 1}[m.r.IntN(3)])
	case 3:
		if n := pickKind(kindNumber); n != nil {
			(*n).text = m.respellNumber((*n).text)
			return
		}
		m.respellDeep(*s, 1)
	case 4:
		if n := pickKind(kindNumber); n != nil {
			(*n).text = m.changeNumber((*n).text)
			return
		}
		*s = rdMust(m.pick(rdEdgeNumbers))
	case 5:
		if n := pickKind(kindString); n != nil {
			(*n).text = m.changeString((*n).text)
			return
		}
		*s = rdMust(m.changeString(`""`))
	case 6: // a member name repeated: before (the old value stays) or after (the new one wins)
		o := pickKind(kindObject)
		if o == nil || len((*o).kids) == 0 {
			*s = &rdVal{k: kindObject, names: []string{`"a"`, `"\u0061"`}, kids: []*rdVal{m.value(), m.value()}}
			return
		}
		n := *o
		i := m.r.IntN(len(n.kids))
		name := m.respellString(n.names[i])
		var v *rdVal
		if m.r.IntN(2) == 0 {
			v = n.kids[i].clone()
			m.respellDeep(v, 0.5)
		} else {
			v = m.value()
		}
		at := i + 1
		if m.r.IntN(2) == 0 {
			at = i
		}
		n.names = slices.Insert(n.names, at, name)
		n.kids = slices.Insert(n.kids, at, v)
	case 7:
		if o := pickKind(kindObject); o != nil {
			m.reorder(*o)
		}
	case 8: // drop a member
		if o := pickKind(kindObject); o != nil && len((*o).kids) > 0 {
			n := *o
			i := m.r.IntN(len(n.kids))
			n.names = slices.Delete(n.names, i, i+1)
			n.kids = slices.Delete(n.kids, i, i+1)
		}
	case 9: // add a member
		o := pickKind(kindObject)
		if o == nil {
			o = s
			*o = &rdVal{k: kindObject}
		}
		n := *o
		at := m.r.IntN(len(n.kids) + 1)
		n.names = slices.Insert(n.names, at, m.name())
		n.kids = slices.Insert(n.kids, at, m.value())
	case 10: // drop an element
		if a := pickKind(kindArray); a != nil && len((*a).kids) > 0 {
			i := m.r.IntN(len((*a).kids))
			(*a).kids = slices.Delete((*a).kids, i, i+1)
		}
	case 11: // add an element: a copy of one, or a value
		a := pickKind(kindArray)
		if a == nil {
			a = s
			*a = &rdVal{k: kindArray, kids: []*rdVal{(*s).clone()}}
		}
		n := *a
		var v *rdVal
		if len(n.kids) > 0 && m.r.IntN(2) == 0 {
			v = n.kids[m.r.IntN(len(n.kids))].clone()
			m.respellDeep(v, 0.8)
		} else {
			v = m.value()
		}
		n.kids = slices.Insert(n.kids, m.r.IntN(len(n.kids)+1), v)
	case 12, 13: // a value from the schema or the cases
		*s = m.value()
	case 14:
		*s = rdMust(m.pick(rdGenericValues))
	case 15: // wrapped
		if m.r.IntN(2) == 0 {
			*s = &rdVal{k: kindArray, kids: []*rdVal{*s}}
		} else {
			*s = &rdVal{k: kindObject, names: []string{m.name()}, kids: []*rdVal{*s}}
		}
	case 16: // unwrapped
		if len((*s).kids) > 0 {
			*s = (*s).kids[m.r.IntN(len((*s).kids))]
		}
	case 17, 18:
		var near *rdVal
		if len((*s).kids) > 0 {
			near = (*s).kids[0]
		}
		*s = m.longArray(near)
	case 20: // deep: wrapped again and again, in one member name or in arrays
		name, arr := m.name(), m.r.IntN(3) == 0
		v := *s
		for range 2 + m.r.IntN([]int{10, 60, 400}[m.r.IntN(3)]) {
			if arr {
				v = &rdVal{k: kindArray, kids: []*rdVal{v}}
			} else {
				v = &rdVal{k: kindObject, names: []string{name}, kids: []*rdVal{v}}
			}
		}
		*s = v
	case 21: // wide: many members or elements from the pool
		n := 30 + m.r.IntN(300)
		if m.r.IntN(2) == 0 {
			o := &rdVal{k: kindObject}
			for range n {
				o.names = append(o.names, m.name())
				o.kids = append(o.kids, m.value())
			}
			*s = o
		} else {
			a := &rdVal{k: kindArray}
			for range n {
				a.kids = append(a.kids, m.value())
			}
			*s = a
		}
	default: // a long array inside an array already there
		if a := pickKind(kindArray); a != nil {
			var near *rdVal
			if len((*a).kids) > 0 {
				near = (*a).kids[0]
			}
			*a = m.longArray(near)
		} else {
			*s = m.longArray(*s)
		}
	}
}

// rdDiff is one group's disagreements.
type rdDiff struct {
	g        *rdGroup
	n        int
	first    []byte
	min      []byte
	lib, raw string
	minLib   string
	minRaw   string
	caseDesc string
}

// disagrees reports whether the two paths differ on the tree n; text is
// what was checked.
func (w *rdWatch) disagrees(g *rdGroup, n *rdVal) (bool, []byte) {
	text := rdText(n)
	if !decode.Valid(text) {
		return false, text
	}
	if _, ferr := instanceOf(text); ferr != nil {
		return false, text
	}
	lib, raw, pnc := w.verdicts(g, text)
	return pnc != "" || (lib == nil) != (raw == nil), text
}

// shrink removes members and elements and hoists values while the
// disagreement stays.
func (w *rdWatch) shrink(g *rdGroup, n *rdVal) *rdVal {
	best := n.clone()
	for evals := 0; evals < 400; {
		improved := false
		all := rdSlots(&best)
		var cands []*rdVal
		for si := range all {
			// Each candidate is built on a fresh copy, found again by
			// its index in the slot order.
			node := *all[si]
			for i := range node.kids {
				c := best.clone()
				cs := rdSlots(&c)
				cn := *cs[si]
				if cn.k == kindObject {
					cn.names = slices.Delete(cn.names, i, i+1)
				}
				cn.kids = slices.Delete(cn.kids, i, i+1)
				cands = append(cands, c)
				c2 := best.clone()
				cs2 := rdSlots(&c2)
				*cs2[si] = (*cs2[si]).kids[i]
				cands = append(cands, c2)
			}
			// A scalar written plainly, names unescaped.
			if plain := rdPlain(node); plain != nil {
				c := best.clone()
				cs := rdSlots(&c)
				*cs[si] = plain
				cands = append(cands, c)
			}
		}
		for _, c := range cands {
			evals++
			if bad, _ := w.disagrees(g, c); bad {
				best, improved = c, true
				break
			}
			if evals >= 400 {
				break
			}
		}
		if !improved {
			break
		}
	}
	return best
}

// rdPlain returns n's scalar or member names written the plainest way,
// or nil when they are already.
func rdPlain(n *rdVal) *rdVal {
	c := &rdVal{k: n.k, text: n.text, names: slices.Clone(n.names), kids: n.kids}
	switch n.k {
	case kindString:
		c.text = string(decode.AppendString(nil, rdUnquote(n.text)))
	case kindNumber:
		d := parseDecimal([]byte(n.text))
		r, ok := new(big.Rat).SetString(n.text)
		prec := int64(d.end-d.start) - d.point
		if !ok || prec > 60 || d.point > 60 {
			return nil
		}
		c.text = r.FloatString(int(max(prec, 0)))
	case kindObject:
		for i, nm := range c.names {
			c.names[i] = string(decode.AppendString(nil, rdUnquote(nm)))
		}
	}
	if c.text == n.text && slices.Equal(c.names, n.names) {
		return nil
	}
	return c
}

func rdSeed(t *testing.T) uint64 {
	if s := os.Getenv("RPCEDGE_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("RPCEDGE_SEED=%q: %v", s, err)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

func TestRawMutated(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race: it checks verdicts or time per step, not concurrency; the plain run covers it")
	}
	if _, err := os.Stat(suiteDir); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the suite is missing: %v", err)
		}
		t.Skipf("the suite is missing (../shared beside the repository): %v", err)
	}
	seed := rdSeed(t)
	t.Logf("seed %d (RPCEDGE_SEED=%d reproduces the run)", seed, seed)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	budget := 12 * time.Second
	if testing.Short() {
		budget = 2 * time.Second
	}
	w := rdStartWatch(t)

	type unit struct {
		g    *rdGroup
		c    int
		tree *rdVal
	}
	var units []unit
	for _, d := range rdDrafts {
		ds := rdLoadDraft(t, d.dir, d.dialect)
		if ds == nil {
			continue
		}
		if len(ds.broken) > 0 {
			t.Errorf("%s: %d groups compileRaw refused with an error other than errRawUnsupported (TestRawSuite lists them)", d.dir, len(ds.broken))
		}
		for _, g := range ds.groups {
			if g.pool == nil {
				g.pool = rdNewPool(g)
			}
			for i, tc := range g.cases {
				if decode.Valid(tc.data) {
					units = append(units, unit{g, i, rdParse(tc.data)})
				}
			}
		}
	}
	if len(units) == 0 {
		t.Fatal("no supported group")
	}

	// Shuffled, so that a run cut short samples every draft and keyword.
	r.Shuffle(len(units), func(i, j int) { units[i], units[j] = units[j], units[i] })
	start := time.Now()
	deadline := start.Add(budget)
	perCase := 20
	if testing.Short() {
		perCase = 4
	}
	var checked, notJSON, big, libValid, rounds int
	var paths rdPaths
	diffs := map[*rdGroup]*rdDiff{}
	var order []*rdGroup
	perUnit := make([]int, len(units))
	out := false
	for !out {
		for ui, u := range units {
			if time.Now().After(deadline) && (rounds > 0 || testing.Short()) {
				out = true
				break
			}
			m := &rdMutator{r: r, pool: u.g.pool}
			for range perCase {
				tree := u.tree.clone()
				for range 1 + r.IntN(3) {
					m.mutate(&tree)
				}
				wr := rdWriter{r: r, ws: []float64{0, 0, 0.1, 0.5}[r.IntN(4)]}
				if r.IntN(4) == 0 {
					wr.space()
				}
				wr.write(tree)
				wr.space()
				text := wr.b
				if !decode.Valid(text) {
					notJSON++
					continue
				}
				text = trimWS(text)
				if _, ferr := instanceOf(text); ferr != nil {
					big++
					continue
				}
				checked++
				perUnit[ui]++
				lib, raw, pnc := w.verdicts(u.g, text)
				if lib == nil {
					libValid++
				}
				if pnc == "" && (lib == nil) == (raw == nil) {
					paths.compare(u.g, text, lib, raw)
					continue
				}
				d := diffs[u.g]
				if d == nil {
					d = &rdDiff{g: u.g, first: slices.Clone(text), lib: rdVerdict(lib, ""), raw: rdVerdict(raw, pnc), caseDesc: u.g.cases[u.c].desc}
					diffs[u.g] = d
					order = append(order, u.g)
					min := w.shrink(u.g, rdParse(text))
					d.min = rdText(min)
					ml, mr, mp := w.verdicts(u.g, d.min)
					d.minLib, d.minRaw = rdVerdict(ml, ""), rdVerdict(mr, mp)
				}
				d.n++
			}
		}
		rounds++
	}
	fewest := perCase * rounds
	for _, n := range perUnit {
		fewest = min(fewest, n)
	}
	t.Logf("%d suite cases of %d supported groups mutated in %d rounds of %d (at least %d checked per case) in %v: %d instances checked (library: %d valid, %d invalid), "+
		"%d skipped (numbers beyond the library's bound), %d generated instances not valid JSON; %d groups disagree",
		len(units), rdCountGroups(units, func(u unit) *rdGroup { return u.g }), rounds, perCase, fewest, time.Since(start).Round(time.Millisecond),
		checked, libValid, checked-libValid, big, notJSON, len(diffs))
	if notJSON > 0 {
		t.Errorf("the generator wrote %d instances that are not valid JSON", notJSON)
	}
	for _, g := range order {
		d := diffs[g]
		t.Errorf("%s: %d mutated instances disagree (seed %d); first, from case %q: library %s, raw %s\n  instance %.600s\n  shrunk:  %.600s\n  shrunk verdicts: library %s, raw %s\n  schema %.1500s",
			g, d.n, seed, d.caseDesc, d.lib, d.raw, d.first, d.min, d.minLib, d.minRaw, g.schema)
	}
	paths.log(t)
}

func rdCountGroups[U any](us []U, g func(U) *rdGroup) int {
	seen := map[*rdGroup]bool{}
	for _, u := range us {
		seen[g(u)] = true
	}
	return len(seen)
}

// TestRawGenerator checks the mutator's equivalences against the library:
// a number or string written another way is the same value.
func TestRawGenerator(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	m := &rdMutator{r: r, pool: &rdPool{}}
	for _, s := range append(slices.Clone(rdEdgeNumbers), "12.5e-3", "-0.001", "1E+2", "100", "7e0") {
		want, _ := instanceOf([]byte(s))
		for range 50 {
			o := m.respellNumber(s)
			if !decode.Valid([]byte(o)) {
				t.Fatalf("%s respelled as %s: not JSON", s, o)
			}
			got, _ := instanceOf([]byte(o))
			if !rdLibEqual(t, want, got) {
				t.Fatalf("%s respelled as %s: a different number", s, o)
			}
		}
	}
	for _, s := range []string{`""`, `"a"`, `"é😀\n\"\\/\u0000"`, `"\u2028x"`} {
		for range 50 {
			o := m.respellString(s)
			if !decode.Valid([]byte(o)) || rdUnquote(o) != rdUnquote(s) {
				t.Fatalf("%s respelled as %s", s, o)
			}
		}
	}
}

// rdLibEqual compares two instances with the library's own const.
func rdLibEqual(t *testing.T, a, b any) bool {
	t.Helper()
	doc := map[string]any{"const": a}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("https://suite.invalid/eq.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("https://suite.invalid/eq.json")
	if err != nil {
		t.Fatal(err)
	}
	return s.Validate(b) == nil
}
