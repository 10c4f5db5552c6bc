package decode_test

// The public corpora in /work/shared/testdata: JSONTestSuite, JSON_checker,
// nativejson-benchmark's round-trip files and the Big List of Naughty
// Strings, through Valid/Validate and through the Decoder.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// testdataDir is the shared test data, relative to this package's
// directory (/work/main/decode -> /work/shared/testdata).
const testdataDir = "../../shared/testdata"

type corpusFile struct {
	name string
	data []byte
}

// loadCorpus reads the files of testdata/dir matching glob, sorted by
// name. It returns ok=false when the directory is absent.
func loadCorpus(tb testing.TB, dir, glob string) (files []corpusFile, ok bool) {
	tb.Helper()
	root := filepath.Join(testdataDir, dir)
	if _, err := os.Stat(root); err != nil {
		return nil, false
	}
	names, err := filepath.Glob(filepath.Join(root, glob))
	if err != nil {
		tb.Fatal(err)
	}
	slices.Sort(names)
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		files = append(files, corpusFile{filepath.Base(n), b})
	}
	if len(files) == 0 {
		tb.Fatalf("no %s in %s", glob, root)
	}
	return files, true
}

// mustCorpus is loadCorpus that skips the test when the corpus is absent.
func mustCorpus(t *testing.T, dir, glob string) []corpusFile {
	t.Helper()
	files, ok := loadCorpus(t, dir, glob)
	if !ok {
		t.Skipf("corpus %s not found: the shared test data (%s) is not checked out beside this repository", dir, filepath.Join(testdataDir, dir))
	}
	return files
}

// iDecision is this package's verdict on one of JSONTestSuite's
// implementation-defined files, and why. off is Validate's offset for a
// rejected file.
type iDecision struct {
	accept bool
	off    int64
	why    string
}

const (
	whyNumber    = "no range limits on numbers: only the RFC 8259 grammar is checked, values stay raw bytes"
	whySurrogate = "an unpaired surrogate escape: the contract makes it a syntax error (every string must decode to valid Unicode)"
	whyUTF8      = "invalid UTF-8: RFC 8259 requires UTF-8 and the contract refuses invalid or overlong sequences"
	whyUTF16     = "UTF-16 text: only UTF-8 is accepted"
	whyBOM       = "a byte order mark: the contract lists it as a syntax error"
)

var iDecisions = map[string]iDecision{
	"i_number_double_huge_neg_exp.json":                   {true, 0, whyNumber},
	"i_number_huge_exp.json":                              {true, 0, whyNumber},
	"i_number_neg_int_huge_exp.json":                      {true, 0, whyNumber},
	"i_number_pos_double_huge_exp.json":                   {true, 0, whyNumber},
	"i_number_real_neg_overflow.json":                     {true, 0, whyNumber},
	"i_number_real_pos_overflow.json":                     {true, 0, whyNumber},
	"i_number_real_underflow.json":                        {true, 0, whyNumber},
	"i_number_too_big_neg_int.json":                       {true, 0, whyNumber},
	"i_number_too_big_pos_int.json":                       {true, 0, whyNumber},
	"i_number_very_big_negative_int.json":                 {true, 0, whyNumber},
	"i_object_key_lone_2nd_surrogate.json":                {false, 5, whySurrogate + " (a low surrogate first, in a name)"},
	"i_string_1st_surrogate_but_2nd_missing.json":         {false, 8, whySurrogate},
	"i_string_1st_valid_surrogate_2nd_invalid.json":       {false, 10, whySurrogate + " (\\u1234 cannot follow \\uD888)"},
	"i_string_UTF-16LE_with_BOM.json":                     {false, 0, whyUTF16 + "; " + whyBOM},
	"i_string_UTF-8_invalid_sequence.json":                {false, 7, whyUTF8 + " (0xFA cannot start a sequence)"},
	"i_string_UTF8_surrogate_U+D800.json":                 {false, 3, whyUTF8 + " (a surrogate encoded in UTF-8)"},
	"i_string_incomplete_surrogate_and_escape_valid.json": {false, 9, whySurrogate},
	"i_string_incomplete_surrogate_pair.json":             {false, 5, whySurrogate + " (\\uDd1e is a low surrogate)"},
	"i_string_incomplete_surrogates_escape_valid.json":    {false, 11, whySurrogate},
	"i_string_invalid_lonely_surrogate.json":              {false, 8, whySurrogate},
	"i_string_invalid_surrogate.json":                     {false, 8, whySurrogate},
	"i_string_invalid_utf-8.json":                         {false, 2, whyUTF8},
	"i_string_inverted_surrogates_U+1D11E.json":           {false, 5, whySurrogate + " (the low surrogate first)"},
	"i_string_iso_latin_1.json":                           {false, 3, whyUTF8 + " (Latin-1 é: a lead byte followed by the quote)"},
	"i_string_lone_second_surrogate.json":                 {false, 5, whySurrogate},
	"i_string_lone_utf8_continuation_byte.json":           {false, 2, whyUTF8},
	"i_string_not_in_unicode_range.json":                  {false, 3, whyUTF8 + " (above U+10FFFF)"},
	"i_string_overlong_sequence_2_bytes.json":             {false, 2, whyUTF8 + " (overlong)"},
	"i_string_overlong_sequence_6_bytes.json":             {false, 2, whyUTF8 + " (6-byte sequences do not exist)"},
	"i_string_overlong_sequence_6_bytes_null.json":        {false, 2, whyUTF8 + " (6-byte sequences do not exist)"},
	"i_string_truncated-utf-8.json":                       {false, 3, whyUTF8},
	"i_string_utf16BE_no_BOM.json":                        {false, 0, whyUTF16},
	"i_string_utf16LE_no_BOM.json":                        {false, 1, whyUTF16},
	"i_structure_500_nested_arrays.json":                  {true, 0, "Valid has no depth limit (a Decoder refuses the array as a batch anyway)"},
	"i_structure_UTF-8_BOM_empty_object.json":             {false, 0, whyBOM},
}

// leadByte returns the offset and value of the first non-whitespace byte.
func leadByte(b []byte) (int, byte) {
	for i, c := range b {
		if !isWS(c) {
			return i, c
		}
	}
	return len(b), 0
}

// topLevelDuplicate reports, with encoding/json, whether a valid JSON
// object has a top-level name twice.
func topLevelDuplicate(tb testing.TB, b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		tb.Fatal(err)
	}
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			tb.Fatal(err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			tb.Fatal(err)
		}
		if seen[k.(string)] {
			return true
		}
		seen[k.(string)] = true
	}
	return false
}

// trimWS trims JSON whitespace.
func trimWS(b []byte) []byte { return bytes.Trim(b, " \t\r\n") }

// corpusExpect is the Decoder's verdict on a corpus file, by the
// contract's order: a batch first, then syntax, then (for a valid text)
// not-an-object, duplicates and the envelope. None of the corpora's files
// is a JSON-RPC request, and none nests past 1000 levels outside a batch.
func corpusExpect(tb testing.TB, b []byte, valid bool) (int64, error) {
	at, c := leadByte(b)
	switch {
	case c == '[':
		return int64(at), decode.ErrBatch
	case !valid:
		var e *decode.Error
		if !errors.As(decode.Validate(b), &e) {
			tb.Fatalf("an invalid file passes Validate")
		}
		return e.Offset, decode.ErrSyntax
	case c != '{':
		return -1, decode.ErrNotObject
	case topLevelDuplicate(tb, b):
		return -1, decode.ErrDuplicateName
	}
	return -1, decode.ErrEnvelope
}

func TestJSONTestSuite(t *testing.T) {
	files := mustCorpus(t, "jsontestsuite", "*.json")
	counts := map[byte]int{}
	seenI := map[string]bool{}
	var d decode.Decoder
	wrap := newDecoder(t, decode.Options{MaxBytes: 4 * mib})
	for _, f := range files {
		kind := f.name[0]
		counts[kind]++
		var valid bool
		switch kind {
		case 'y':
			valid = true
		case 'n':
			valid = false
		case 'i':
			dec, ok := iDecisions[f.name]
			if !ok {
				t.Errorf("%s: no decision pinned for this implementation-defined file", f.name)
				continue
			}
			seenI[f.name] = true
			valid = dec.accept
			if !dec.accept {
				var e *decode.Error
				if err := decode.Validate(f.data); !errors.As(err, &e) || e.Offset != dec.off {
					t.Errorf("%s: Validate = %v, want a syntax error at %d: %s", f.name, err, dec.off, dec.why)
				}
			}
		default:
			t.Fatalf("unexpected file %s", f.name)
		}
		// Valid and Validate, and the model.
		if got := decode.Valid(f.data); got != valid {
			t.Errorf("%s: Valid = %v, want %v", f.name, got, valid)
		}
		if err := decode.Validate(f.data); (err == nil) != valid {
			t.Errorf("%s: Validate = %v", f.name, err)
		}
		checkValid(t, f.data)

		// The Decoder, by the contract's order.
		wantOff, wantErr := corpusExpect(t, f.data, valid)
		got := checkRef(t, &d, f.data, decode.Options{})
		if got.Err != wantErr || (wantOff >= 0 && got.Offset != wantOff) || got.Code != codeOf(wantErr) || (wantErr != decode.ErrEnvelope && got.AnswerID != "null") {
			t.Errorf("%s: Decode = %v, want %v at %d", f.name, got, wantErr, wantOff)
		}

		// The same text as the params of a request.
		body := append([]byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":`), f.data...)
		body = append(body, '}')
		got = checkRef(t, wrap, body, decode.Options{MaxBytes: 4 * mib})
		if valid {
			if got.Err != nil || got.Params != string(trimWS(f.data)) {
				t.Errorf("%s as params: %v", f.name, got)
			}
		} else if got.Err == nil {
			t.Errorf("%s as params: accepted", f.name)
		}
	}
	if counts['y'] != 95 || counts['n'] != 188 || counts['i'] != 35 {
		t.Errorf("file counts y/n/i = %d/%d/%d, want 95/188/35 (see the corpus README)", counts['y'], counts['n'], counts['i'])
	}
	for name := range iDecisions {
		if !seenI[name] {
			t.Errorf("decision pinned for %s, which is not in the corpus", name)
		}
	}
}

func TestJSONChecker(t *testing.T) {
	files := mustCorpus(t, "json-checker", "*.json")
	var d decode.Decoder
	n := 0
	for _, f := range files {
		var valid bool
		switch {
		case strings.HasPrefix(f.name, "pass"):
			valid = true
		case f.name == "fail1.json":
			// A bare top-level string: RFC 8259 allows any value.
			if _, c := leadByte(f.data); c != '"' {
				t.Errorf("fail1.json is not a top-level string: %q", f.data)
			}
			valid = true
		case f.name == "fail18.json":
			// 20 nested arrays: within every depth limit here.
			if !bytes.HasPrefix(f.data, []byte(strings.Repeat("[", 20)+`"`)) || bytes.Count(f.data, []byte("[")) != 20 {
				t.Errorf("fail18.json is not 20 nested arrays: %q", f.data)
			}
			valid = true
		case strings.HasPrefix(f.name, "fail"):
			valid = false
		default:
			t.Fatalf("unexpected file %s", f.name)
		}
		n++
		if got := decode.Valid(f.data); got != valid {
			t.Errorf("%s: Valid = %v, want %v", f.name, got, valid)
		}
		checkValid(t, f.data)
		wantOff, wantErr := corpusExpect(t, f.data, valid)
		got := checkRef(t, &d, f.data, decode.Options{})
		if got.Err != wantErr || (wantOff >= 0 && got.Offset != wantOff) {
			t.Errorf("%s: Decode = %v, want %v at %d", f.name, got, wantErr, wantOff)
		}
	}
	if n != 36 {
		t.Errorf("%d files, want 36", n)
	}
}

func TestNativeJSONRoundtrip(t *testing.T) {
	files := mustCorpus(t, "nativejson-roundtrip", "*.json")
	var d decode.Decoder
	var m decode.Message
	for _, f := range files {
		if !decode.Valid(f.data) {
			t.Errorf("%s: not valid: %q", f.name, f.data)
		}
		checkValid(t, f.data)
		// As params, the bytes come back verbatim.
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":` + string(f.data) + `}`)
		if err := d.Decode(body, &m); err != nil || !bytes.Equal(m.Params, f.data) {
			t.Errorf("%s as params: %v, params %q", f.name, err, m.Params)
		}
		// A scalar inside [...] as the id: verbatim, never through a float.
		inner := bytes.TrimSuffix(bytes.TrimPrefix(f.data, []byte("[")), []byte("]"))
		if len(inner) == 0 || bytes.ContainsAny(inner, "[]{},") {
			continue
		}
		body = []byte(`{"jsonrpc":"2.0","id":` + string(inner) + `,"method":"m"}`)
		err := d.Decode(body, &m)
		ty := refIDType(inner)
		if !policyAccepts(0, ty) {
			if !errors.Is(err, decode.ErrEnvelope) {
				t.Errorf("%s: id %s: %v, want ErrEnvelope", f.name, inner, err)
			}
			continue
		}
		if err != nil || !bytes.Equal(m.ID, inner) || !bytes.Equal(m.AnswerID(), inner) || m.IDType != ty {
			t.Errorf("%s: id %s: %v, ID %q (%v)", f.name, inner, err, m.ID, m.IDType)
		}
	}
}

// blnsStrings returns the Big List of Naughty Strings.
func blnsStrings(t *testing.T) []string {
	files := mustCorpus(t, "blns", "blns.json")
	var list []string
	if err := json.Unmarshal(files[0].data, &list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 515 {
		t.Errorf("%d strings, want 515", len(list))
	}
	return list
}

func TestBLNS(t *testing.T) {
	list := blnsStrings(t)
	g := newGen(5)
	var d decode.Decoder
	var m decode.Message
	for _, s := range list {
		marshaled, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, enc := range []string{string(marshaled), g.quote(s), rawQuote(s)} {
			var want string // what encoding/json makes of these bytes
			if err := json.Unmarshal([]byte(enc), &want); err != nil {
				t.Fatalf("%s: %v", enc, err)
			}
			// As the method.
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":` + enc + `}`)
			if err := d.Decode(body, &m); err != nil || string(m.Method) != want {
				t.Errorf("method %s: %v, Method %q, want %q", enc, err, m.Method, want)
			}
			checkRef(t, &d, body, decode.Options{})
			// As the id.
			body = []byte(`{"jsonrpc":"2.0","id":` + enc + `,"method":"m"}`)
			if err := d.Decode(body, &m); err != nil || string(m.ID) != enc || string(m.AnswerID()) != enc || m.IDType != decode.IDString {
				t.Errorf("id %s: %v, ID %q", enc, err, m.ID)
			}
			// As a param value, a param name and a top-level name.
			params := `{"text":` + enc + `,` + enc + `:1}`
			body = []byte(`{"jsonrpc":"2.0","id":2,"method":"m","params":` + params + `,` + enc + `:[` + enc + `]}`)
			if err := d.Decode(body, &m); err != nil || string(m.Params) != params || m.ParamsType != decode.ParamsObject {
				t.Errorf("param %s: %v, Params %q", enc, err, m.Params)
			}
			checkRef(t, &d, body, decode.Options{})
			checkValid(t, body)
		}
	}
}

// rawQuote quotes s escaping only what JSON requires.
func rawQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[c>>4])
			b.WriteByte("0123456789abcdef"[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// TestBLNSBase64 puts the raw bytes of blns.base64.json's strings, some
// of them not UTF-8, into a request unescaped, and compares the verdict
// with the model.
func TestBLNSBase64(t *testing.T) {
	files := mustCorpus(t, "blns", "blns.base64.json")
	var list []string
	if err := json.Unmarshal(files[0].data, &list); err != nil {
		t.Fatal(err)
	}
	var d decode.Decoder
	for _, s := range list {
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			continue // upstream has a few entries that are not base64
		}
		for _, body := range [][]byte{
			[]byte(`{"jsonrpc":"2.0","id":1,"method":"` + string(raw) + `"}`),
			[]byte(`{"jsonrpc":"2.0","id":"` + string(raw) + `","method":"m"}`),
			append(raw, `{"jsonrpc":"2.0","method":"m"}`...),
			raw,
		} {
			checkRef(t, &d, body, decode.Options{})
			checkValid(t, body)
		}
	}
}

// TestCorpusFilesWhole decodes the corpora's container files themselves
// (the BLNS list is a top-level array: a batch).
func TestCorpusFilesWhole(t *testing.T) {
	files := mustCorpus(t, "blns", "*.json")
	var d decode.Decoder
	for _, f := range files {
		if !decode.Valid(f.data) {
			t.Errorf("%s is not valid JSON", f.name)
		}
		if v := decodeOnce(t, &d, f.data); v.Err != decode.ErrBatch {
			t.Errorf("%s: %v, want ErrBatch", f.name, v)
		}
	}
}
