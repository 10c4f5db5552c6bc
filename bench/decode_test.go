// Package bench compares rpcedge's decoder side by side with the Go JSON
// libraries it is measured against. It is a module of its own so that the
// peers never enter the main module's dependencies.
//
// Every candidate does the same task on the same bytes: validate the whole
// body, find jsonrpc, id, method and params, check that jsonrpc is "2.0",
// and return the method (unescaped), the raw id bytes and the raw params
// bytes. Each candidate's answers are checked against encoding/json's for
// every input before it is timed.
package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/buger/jsonparser"
	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/ast"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	goccy "github.com/goccy/go-json"
	"github.com/minio/simdjson-go"
	asmutf8 "github.com/segmentio/asm/utf8"
	"github.com/valyala/fastjson"

	"github.com/rpcedge/rpcedge/decode"
)

// fixtureDir holds the shared fixtures: /work/main/bench → /work/shared.
const fixtureDir = "../../shared/testdata/bench/"

// fixtureNames are the fixtures, in the order the benchmarks run them.
var fixtureNames = []string{"small", "notification", "16k", "1m"}

// variantsPerFixture is how many different bodies each fixture is turned
// into; the timed loop cycles through them. 1m gets 4 (4 MiB, inside the
// 32 MiB L3 the way a freshly received body would be) rather than 64
// (64 MiB, which would measure DRAM bandwidth under the other processes on
// the machine); a 1 MiB body is too long for any branch history or cache
// to key on it anyway. BENCH_1M_VARIANTS=n overrides it.
func variantsPerFixture(name string) int {
	if name == "1m" {
		if n, err := strconv.Atoi(os.Getenv("BENCH_1M_VARIANTS")); err == nil && n > 0 {
			return n
		}
		return 4
	}
	return 64
}

// fixture is one fixture's variants and what every candidate must find in
// each of them.
type fixture struct {
	name   string
	bodies [][]byte
	want   []expect
	avg    int64 // average body length, for SetBytes
}

// expect is what encoding/json finds in a variant.
type expect struct {
	method string
	id     []byte // nil when absent
	params []byte // nil when absent
}

var (
	fixturesOnce sync.Once
	fixturesAll  []*fixture
	fixturesErr  error
)

// loadFixtures builds the variants once per process. It skips tb when the
// shared fixtures are not there.
func loadFixtures(tb testing.TB) []*fixture {
	tb.Helper()
	fixturesOnce.Do(func() { fixturesAll, fixturesErr = buildFixtures() })
	if errors.Is(fixturesErr, fs.ErrNotExist) {
		tb.Skipf("benchmark fixtures absent (%v): they are read from %s relative to bench/, i.e. /work/shared/testdata/bench when the repo is /work/main", fixturesErr, fixtureDir)
	}
	if fixturesErr != nil {
		tb.Fatal(fixturesErr)
	}
	return fixturesAll
}

func buildFixtures() ([]*fixture, error) {
	var out []*fixture
	for fi, name := range fixtureNames {
		orig, err := os.ReadFile(fixtureDir + name + ".json")
		if err != nil {
			return nil, err
		}
		rng := rand.New(rand.NewPCG(uint64(fi)+1, 0x7270636564676521))
		n := variantsPerFixture(name)
		f := &fixture{name: name}
		var total int64
		for i := range n {
			var body []byte
			if name == "notification" {
				body = notificationVariant(i)
			} else {
				body, err = messageVariant(name, orig, rng, i)
				if err != nil {
					return nil, fmt.Errorf("%s variant %d: %w", name, i, err)
				}
			}
			// Every variant must stay valid under the strictest reading
			// (jsontext: UTF-8, escapes, duplicate names at every level).
			if !jsontext.Value(body).IsValid() {
				return nil, fmt.Errorf("%s variant %d is not strictly valid JSON: %.200q", name, i, body)
			}
			w, err := reference(body)
			if err != nil {
				return nil, fmt.Errorf("%s variant %d: reference decode: %w", name, i, err)
			}
			f.bodies = append(f.bodies, body)
			f.want = append(f.want, w)
			total += int64(len(body))
		}
		f.avg = total / int64(n)
		out = append(out, f)
	}
	return out, nil
}

// reference finds what every candidate must find, with encoding/json.
func reference(body []byte) (expect, error) {
	var e envelopeV1
	if err := json.Unmarshal(body, &e); err != nil {
		return expect{}, err
	}
	if e.JSONRPC != "2.0" || e.Method == "" {
		return expect{}, fmt.Errorf("not a JSON-RPC 2.0 message: %+v", e)
	}
	return expect{method: e.Method, id: e.ID, params: e.Params}, nil
}

// notificationMethods are real MCP notifications; the variants cycle
// through them.
var notificationMethods = []string{
	"notifications/initialized",
	"notifications/cancelled",
	"notifications/progress",
	"notifications/message",
	"notifications/roots/list_changed",
	"notifications/tools/list_changed",
	"notifications/resources/updated",
	"notifications/prompts/list_changed",
}

// notificationVariant varies the method name (8), the member order (2) and
// the spacing after ':' and ',' (4): 64 different bodies of 45 to 67 bytes.
func notificationVariant(i int) []byte {
	method := notificationMethods[i%8]
	colon, comma := ":", ","
	if i/16%2 == 1 {
		colon = ": "
	}
	if i/32%2 == 1 {
		comma = ", "
	}
	v := `"jsonrpc"` + colon + `"2.0"`
	m := `"method"` + colon + strconv.Quote(method)
	if i/8%2 == 1 {
		return []byte("{" + m + comma + v + "}")
	}
	return []byte("{" + v + comma + m + "}")
}

// variantID returns the raw id for variant i: small and large integers,
// plain strings and strings with a \u escape, of different lengths.
func variantID(rng *rand.Rand, i int) string {
	switch i % 4 {
	case 0:
		return strconv.Itoa(i + 1)
	case 1:
		return strconv.FormatUint(rng.Uint64N(1<<53), 10)
	case 2:
		return fmt.Sprintf(`"req-%x"`, rng.Uint32())
	default:
		return fmt.Sprintf(`"req-%04x-\u00e9"`, rng.Uint32N(1<<16))
	}
}

// messageVariant replaces the top-level id of a tools/call fixture and
// varies its text: small gets a new random ASCII text whose length makes
// up for the id's, so the body stays within ±10 bytes of the original's
// 271 (the original text has 180 characters); 16k and 1m get about one lowercase
// letter in 16 of their params' string values changed to another one
// (lengths, escapes, non-ASCII and member names untouched).
func messageVariant(name string, orig []byte, rng *rand.Rand, i int) ([]byte, error) {
	idStart, idEnd, err := topID(orig)
	if err != nil {
		return nil, err
	}
	var body []byte
	body = append(body, orig[:idStart]...)
	body = append(body, variantID(rng, i)...)
	body = append(body, orig[idEnd:]...)

	p := bytes.Index(body, []byte(`"params":`))
	if p < 0 {
		return nil, errors.New(`no "params":`)
	}
	if name == "small" {
		const key = `"text":"`
		t := bytes.Index(body[p:], []byte(key))
		if t < 0 {
			return nil, errors.New(`no "text":`)
		}
		start := p + t + len(key)
		end := start + bytes.IndexByte(body[start:], '"')
		// Keep the body's length within ±10 bytes of the original's
		// whatever the id's length.
		grown := len(body) - len(orig) // by the new id
		text := randomText(rng, 170-grown+rng.IntN(21))
		body = append(body[:start:start], append([]byte(text), body[end:]...)...)
		return body, nil
	}
	mutateStringValues(body[p+len(`"params":`):], rng)
	return body, nil
}

// topID returns where the value of the first "id" member starts and ends;
// in the fixtures it is the top-level id, before params.
func topID(b []byte) (start, end int, err error) {
	const key = `"id":`
	k := bytes.Index(b, []byte(key))
	p := bytes.Index(b, []byte(`"params":`))
	if k < 0 || (p >= 0 && k > p) {
		return 0, 0, errors.New("no top-level id before params")
	}
	start = k + len(key)
	end = start
	if b[start] == '"' {
		end++
		for b[end] != '"' {
			if b[end] == '\\' {
				end++
			}
			end++
		}
		return start, end + 1, nil
	}
	for b[end] != ',' && b[end] != '}' {
		end++
	}
	return start, end, nil
}

const textChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789,.!?-'"

// randomText returns n printable ASCII characters in word-like runs.
func randomText(rng *rand.Rand, n int) string {
	var sb strings.Builder
	for sb.Len() < n {
		if sb.Len() > 0 && sb.Len() < n-1 && rng.IntN(6) == 0 {
			sb.WriteByte(' ')
			continue
		}
		sb.WriteByte(textChars[rng.IntN(len(textChars))])
	}
	return sb.String()
}

// mutateStringValues changes about one in 16 lowercase ASCII letters in
// the string values of b to another lowercase letter, in place. Member
// names, escape sequences and everything outside strings stay as they
// are, so b stays valid and keeps its length.
func mutateStringValues(b []byte, rng *rand.Rand) {
	var letters []int
	for i := 0; i < len(b); i++ {
		if b[i] != '"' {
			continue
		}
		letters = letters[:0]
		i++
		for b[i] != '"' {
			switch c := b[i]; {
			case c == '\\':
				if b[i+1] == 'u' {
					i += 4
				}
				i++
			case c >= 'a' && c <= 'z':
				letters = append(letters, i)
			}
			i++
		}
		// i is at the closing quote: a name if a ':' follows.
		j := i + 1
		for j < len(b) && (b[j] == ' ' || b[j] == '\n' || b[j] == '\r' || b[j] == '\t') {
			j++
		}
		if j < len(b) && b[j] == ':' {
			continue
		}
		for _, k := range letters {
			if rng.IntN(16) == 0 {
				b[k] = 'a' + byte((int(b[k]-'a')+1+rng.IntN(25))%26)
			}
		}
	}
}

// result is what a candidate found. It borrows from the body or from the
// candidate's own buffers until the candidate's next call.
type result struct {
	method  []byte // unescaped, for candidates that give bytes
	methodS string // unescaped, for candidates that give a string
	id      []byte // raw; nil when absent
	params  []byte // raw; nil when absent
	// fastjson keeps no raw bytes: its id is re-encoded (so compared by
	// meaning) and its params are the parsed value.
	fastjson bool
	fjParams *fastjson.Value
	// simdjson-go keeps no raw bytes either: id and params are
	// re-encoded from its tape, so they are checked by value.
	byValue bool
	sum     uint64 // floor-byteloop's sum
}

func (r *result) methodString() string {
	if r.methodS != "" {
		return r.methodS
	}
	return string(r.method)
}

// decodeFunc is one candidate with its reusable state.
type decodeFunc func(body []byte, r *result) error

type candidate struct {
	name  string
	floor bool // extracts nothing: not checked, not in the strictness table
	new   func() decodeFunc
}

var (
	errVersion  = errors.New("bench: jsonrpc is not \"2.0\"")
	errInvalid  = errors.New("bench: invalid JSON")
	errNotObj   = errors.New("bench: not an object")
	errTrailing = errors.New("bench: data after the top-level value")
)

// envelopeV1 is the struct that encoding/json, sonic and goccy fill.
type envelopeV1 struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// reset clears e for the next body, keeping the raw buffers' capacity.
func (e *envelopeV1) reset() {
	e.JSONRPC, e.Method = "", ""
	e.ID, e.Params = e.ID[:0], e.Params[:0]
}

func (e *envelopeV1) fill(r *result) error {
	if e.JSONRPC != "2.0" {
		return errVersion
	}
	r.methodS, r.id, r.params = e.Method, nilIfEmpty(e.ID), nilIfEmpty(e.Params)
	return nil
}

// envelopeV2 is the struct that json v2 fills.
type envelopeV2 struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      jsontext.Value `json:"id"`
	Method  string         `json:"method"`
	Params  jsontext.Value `json:"params"`
}

func nilIfEmpty(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}

// isV2 reports whether the raw JSON value v (quotes included) is "2.0".
func isV2(v []byte) bool {
	if string(v) == `"2.0"` {
		return true
	}
	if len(v) > 32 || bytes.IndexByte(v, '\\') < 0 {
		return false
	}
	var tmp [32]byte
	u, err := jsontext.AppendUnquote(tmp[:0], v)
	return err == nil && string(u) == "2.0"
}

// rawValue returns the raw bytes of the value jsonparser reported as
// value of type t ending at offset end of body: strings lose their quotes
// in jsonparser.
func rawValue(body, value []byte, t jsonparser.ValueType, end int) []byte {
	start := end - len(value)
	if t == jsonparser.String {
		start -= 2
	}
	if start < 0 || end > len(body) {
		return nil
	}
	return body[start:end]
}

var candidates = []candidate{
	{name: "rpcedge", new: func() decodeFunc {
		var d decode.Decoder
		if err := d.SetOptions(decode.Options{MaxBytes: 2 << 20}); err != nil {
			panic(err)
		}
		var m decode.Message
		return func(body []byte, r *result) error {
			if err := d.Decode(body, &m); err != nil {
				return err
			}
			r.method, r.id, r.params = m.Method, m.ID, m.Params
			return nil
		}
	}},
	{name: "encoding-json-v1", new: func() decodeFunc {
		var e envelopeV1
		return func(body []byte, r *result) error {
			e.reset()
			if err := json.Unmarshal(body, &e); err != nil {
				return err
			}
			return e.fill(r)
		}
	}},
	{name: "json-v2", new: func() decodeFunc {
		var e envelopeV2
		return func(body []byte, r *result) error {
			e.JSONRPC, e.Method = "", ""
			e.ID, e.Params = e.ID[:0], e.Params[:0]
			if err := jsonv2.Unmarshal(body, &e); err != nil {
				return err
			}
			if e.JSONRPC != "2.0" {
				return errVersion
			}
			r.methodS, r.id, r.params = e.Method, nilIfEmpty(e.ID), nilIfEmpty(e.Params)
			return nil
		}
	}},
	{name: "jsontext-walk", new: func() decodeFunc {
		var (
			dec    jsontext.Decoder
			bb     bytes.Buffer
			names  []byte
			method []byte
		)
		return func(body []byte, r *result) error {
			// With a bytes.Buffer the decoder reads body in place, so the
			// values it returns stay valid after later reads.
			bb = *bytes.NewBuffer(body)
			dec.Reset(&bb)
			tok, err := dec.ReadToken()
			if err != nil {
				return err
			}
			if tok.Kind() != '{' {
				return errNotObj
			}
			var version []byte
			for dec.PeekKind() == '"' {
				name, err := dec.ReadValue()
				if err != nil {
					return err
				}
				n := name[1 : len(name)-1]
				if bytes.IndexByte(n, '\\') >= 0 {
					names, _ = jsontext.AppendUnquote(names[:0], name)
					n = names
				}
				v, err := dec.ReadValue()
				if err != nil {
					return err
				}
				switch string(n) {
				case "jsonrpc":
					version = v
				case "id":
					r.id = v
				case "method":
					if v.Kind() == '"' {
						if bytes.IndexByte(v, '\\') >= 0 {
							method, _ = jsontext.AppendUnquote(method[:0], v)
							r.method = method
						} else {
							r.method = v[1 : len(v)-1]
						}
					}
				case "params":
					r.params = v
				}
			}
			if _, err := dec.ReadToken(); err != nil { // '}'
				return err
			}
			if _, err := dec.ReadToken(); err != io.EOF {
				if err == nil {
					err = errTrailing
				}
				return err
			}
			if !isV2(version) {
				return errVersion
			}
			return nil
		}
	}},
	{name: "sonic", new: func() decodeFunc {
		var e envelopeV1
		return func(body []byte, r *result) error {
			e.reset()
			if err := sonic.Unmarshal(body, &e); err != nil {
				return err
			}
			return e.fill(r)
		}
	}},
	{name: "sonic-valid-search", new: func() decodeFunc {
		return func(body []byte, r *result) error {
			if !sonic.Valid(body) {
				return errInvalid
			}
			s := ast.NewSearcher(unsafe.String(unsafe.SliceData(body), len(body)))
			// The body was just validated: skip re-validating on each search.
			s.ValidateJSON = false
			n, err := s.GetByPath("jsonrpc")
			if err != nil {
				return err
			}
			if v, err := n.String(); err != nil || n.TypeSafe() != ast.V_STRING || v != "2.0" {
				return errVersion
			}
			n, err = s.GetByPath("id")
			switch {
			case err == nil:
				raw, err := n.Raw()
				if err != nil {
					return err
				}
				r.id = unsafe.Slice(unsafe.StringData(raw), len(raw))
			case !errors.Is(err, ast.ErrNotExist):
				return err
			}
			n, err = s.GetByPath("method")
			if err != nil {
				return err
			}
			if n.TypeSafe() == ast.V_STRING {
				if r.methodS, err = n.String(); err != nil {
					return err
				}
			}
			n, err = s.GetByPath("params")
			switch {
			case err == nil:
				raw, err := n.Raw()
				if err != nil {
					return err
				}
				r.params = unsafe.Slice(unsafe.StringData(raw), len(raw))
			case !errors.Is(err, ast.ErrNotExist):
				return err
			}
			return nil
		}
	}},
	{name: "fastjson", new: func() decodeFunc {
		var (
			p     fastjson.Parser
			idBuf []byte
		)
		return func(body []byte, r *result) error {
			v, err := p.ParseBytes(body)
			if err != nil {
				return err
			}
			if string(v.GetStringBytes("jsonrpc")) != "2.0" {
				return errVersion
			}
			r.fastjson = true
			r.method = v.GetStringBytes("method")
			if id := v.Get("id"); id != nil {
				idBuf = id.MarshalTo(idBuf[:0])
				r.id = idBuf
			}
			r.fjParams = v.Get("params")
			return nil
		}
	}},
	{name: "goccy", new: func() decodeFunc {
		var e envelopeV1
		return func(body []byte, r *result) error {
			e.reset()
			if err := goccy.Unmarshal(body, &e); err != nil {
				return err
			}
			return e.fill(r)
		}
	}},
	{name: "jsonparser", new: func() decodeFunc { return newJSONParser(false) }},
	{name: "jsonparser+valid", new: func() decodeFunc { return newJSONParser(true) }},
	{name: "simdjson-go", new: newSimdjson},
	{name: "simdjson-go-parse", floor: true, new: func() decodeFunc {
		// Parse alone, nothing extracted: simdjson-go's own speed, without
		// the re-encoding its API needs for raw id and params.
		var pj *simdjson.ParsedJson
		return func(body []byte, r *result) error {
			var err error
			pj, err = simdjson.Parse(body, pj, simdjson.WithCopyStrings(false))
			return err
		}
	}},
	{name: "floor-utf8", floor: true, new: func() decodeFunc {
		return func(body []byte, r *result) error {
			if !utf8.Valid(body) {
				return errInvalid
			}
			return nil
		}
	}},
	{name: "floor-asm-utf8", floor: true, new: func() decodeFunc {
		return func(body []byte, r *result) error {
			if !asmutf8.Valid(body) {
				return errInvalid
			}
			return nil
		}
	}},
	{name: "floor-byteloop", floor: true, new: func() decodeFunc {
		return func(body []byte, r *result) error {
			var s uint64
			for _, c := range body {
				s += uint64(c)
			}
			r.sum = s
			return nil
		}
	}},
}

// newSimdjson is minio/simdjson-go: Parse into a reused ParsedJson (its
// stage 1 in assembly, a tape built by stage 2), then the top-level
// object's members. It does not validate UTF-8 and needs the whole body in
// memory; its id and params are re-encoded from the tape into reused
// buffers (the tape keeps no raw bytes), which costs it on 1m.
func newSimdjson() decodeFunc {
	var (
		pj            *simdjson.ParsedJson
		iter, elem    simdjson.Iter
		obj           simdjson.Object
		idBuf, params []byte
		method        []byte
	)
	return func(body []byte, r *result) error {
		var err error
		if pj, err = simdjson.Parse(body, pj, simdjson.WithCopyStrings(false)); err != nil {
			return err
		}
		iter = pj.Iter()
		iter.Advance()
		_, root, err := iter.Root(&elem)
		if err != nil {
			return err
		}
		o, err := root.Object(&obj)
		if err != nil {
			return errNotObj
		}
		var version []byte
		r.byValue = true
		for {
			name, t, err := o.NextElementBytes(&elem)
			if err != nil {
				return err
			}
			if t == simdjson.TypeNone {
				break
			}
			switch string(name) {
			case "jsonrpc":
				if t == simdjson.TypeString {
					version, _ = elem.StringBytes()
				}
			case "id":
				idBuf, err = elem.MarshalJSONBuffer(idBuf[:0])
				if err != nil {
					return err
				}
				r.id = idBuf
			case "method":
				if t == simdjson.TypeString {
					b, err := elem.StringBytes()
					if err != nil {
						return err
					}
					method = append(method[:0], b...)
					r.method = method
				}
			case "params":
				params, err = elem.MarshalJSONBuffer(params[:0])
				if err != nil {
					return err
				}
				r.params = params
			}
		}
		if string(version) != "2.0" {
			return errVersion
		}
		return nil
	}
}

// newJSONParser is jsonparser.ObjectEach over the top level, which checks
// only what it walks; with valid it is preceded by encoding/json.Valid.
func newJSONParser(valid bool) decodeFunc {
	buf := make([]byte, 0, 256) // unescaped method
	return func(body []byte, r *result) error {
		if valid && !json.Valid(body) {
			return errInvalid
		}
		var version []byte
		err := jsonparser.ObjectEach(body, func(key, value []byte, t jsonparser.ValueType, end int) error {
			switch string(key) {
			case "jsonrpc":
				version = rawValue(body, value, t, end)
			case "id":
				r.id = rawValue(body, value, t, end)
			case "method":
				if t == jsonparser.String {
					u, err := jsonparser.Unescape(value, buf[:cap(buf)])
					if err != nil {
						return err
					}
					r.method = u
				}
			case "params":
				r.params = rawValue(body, value, t, end)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if !isV2(version) {
			return errVersion
		}
		return nil
	}
}

// checkCandidate runs fn on every variant of f and fails tb unless it found
// the method, id and params that encoding/json finds.
func checkCandidate(tb testing.TB, c candidate, fn decodeFunc, f *fixture) {
	tb.Helper()
	for i, body := range f.bodies {
		var r result
		if err := fn(body, &r); err != nil {
			tb.Fatalf("%s/%s variant %d: %v", c.name, f.name, i, err)
		}
		if c.floor {
			continue
		}
		w := f.want[i]
		if got := r.methodString(); got != w.method {
			tb.Fatalf("%s/%s variant %d: method %q, want %q", c.name, f.name, i, got, w.method)
		}
		if r.byValue {
			if got := r.methodString(); got != w.method {
				tb.Fatalf("%s/%s variant %d: method %q, want %q", c.name, f.name, i, got, w.method)
			}
			if !sameJSONFloat(r.id, w.id) || !sameJSONFloat(r.params, w.params) {
				tb.Fatalf("%s/%s variant %d: id or params differ from encoding/json's by value", c.name, f.name, i)
			}
			continue
		}
		if r.fastjson {
			if !sameJSON(r.id, w.id) {
				tb.Fatalf("%s/%s variant %d: id %s, want %s", c.name, f.name, i, r.id, w.id)
			}
			var params []byte
			if r.fjParams != nil {
				params = r.fjParams.MarshalTo(nil)
			}
			if !sameJSON(params, w.params) {
				tb.Fatalf("%s/%s variant %d: params differ from encoding/json's (%d vs %d bytes)", c.name, f.name, i, len(params), len(w.params))
			}
			continue
		}
		if !bytes.Equal(r.id, w.id) || (r.id == nil) != (w.id == nil) {
			tb.Fatalf("%s/%s variant %d: id %q, want %q", c.name, f.name, i, r.id, w.id)
		}
		if !bytes.Equal(r.params, w.params) || (r.params == nil) != (w.params == nil) {
			tb.Fatalf("%s/%s variant %d: params differ from encoding/json's (%d vs %d bytes)", c.name, f.name, i, len(r.params), len(w.params))
		}
	}
}

// sameJSON reports whether a and b (nil meaning absent) encode the same
// value, numbers compared by their text.
func sameJSON(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var va, vb any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if da.Decode(&va) != nil || db.Decode(&vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// sameJSONFloat is sameJSON with numbers compared as float64: simdjson-go
// re-encodes 9.700E+20 as 9.7e+20.
func sameJSONFloat(a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// TestCandidates checks every candidate on every variant of every fixture,
// so that a plain `go test` proves the benchmarks compare like with like.
func TestCandidates(t *testing.T) {
	fixtures := loadFixtures(t)
	for _, c := range candidates {
		t.Run(c.name, func(t *testing.T) {
			for _, f := range fixtures {
				checkCandidate(t, c, c.new(), f)
			}
		})
	}
}

// TestVariants checks that the variants differ from each other.
func TestVariants(t *testing.T) {
	for _, f := range loadFixtures(t) {
		seen := map[string]bool{}
		for _, b := range f.bodies {
			seen[string(b)] = true
		}
		if len(seen) != len(f.bodies) {
			t.Errorf("%s: %d distinct bodies out of %d", f.name, len(seen), len(f.bodies))
		}
		t.Logf("%s: %d variants, average %d bytes", f.name, len(f.bodies), f.avg)
	}
}

// BenchmarkDecode times every candidate on every fixture, cycling through
// the fixture's variants; SetBytes is their average length.
func BenchmarkDecode(b *testing.B) {
	fixtures := loadFixtures(b)
	for _, c := range candidates {
		b.Run(c.name, func(b *testing.B) {
			for _, f := range fixtures {
				b.Run(f.name, func(b *testing.B) {
					fn := c.new()
					checkCandidate(b, c, fn, f) // also warms fn's buffers
					bodies := f.bodies
					var r result
					b.SetBytes(f.avg)
					b.ReportAllocs()
					i := 0
					cpu0 := processCPU()
					for b.Loop() {
						if err := fn(bodies[i%len(bodies)], &r); err != nil {
							b.Fatal(err)
						}
						i++
					}
					reportCPU(b, processCPU()-cpu0, f.avg)
				})
			}
		})
	}
}

// processCPU returns the CPU time the whole test process has used: user
// plus system, every thread (so the garbage collector's work counts).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU adds cpu-ns/op and cpu-MB/s: the process's CPU time per
// operation, which, unlike ns/op, does not grow when other processes on a
// busy machine take the core away.
func reportCPU(b *testing.B, cpu time.Duration, bytesPerOp int64) {
	if b.N == 0 || cpu <= 0 {
		return
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(bytesPerOp)*float64(b.N)/cpu.Seconds()/1e6, "cpu-MB/s")
}
