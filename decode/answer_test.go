package decode

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// answerIDs are the request ids answers must echo verbatim; nil is an id
// that is absent or refused, written as null.
var answerIDs = []struct {
	name string
	raw  []byte
	want string // as written in the answer
}{
	{"one", []byte(`1`), `1`},
	{"minus zero", []byte(`-0`), `-0`},
	{"beyond int64", []byte(`12345678901234567890123`), `12345678901234567890123`},
	{"beyond float64", []byte(`1e400`), `1e400`},
	{"escaped string", []byte(`"caf\u00e9"`), `"caf\u00e9"`},
	{"escaped quote", []byte(`"x\"y"`), `"x\"y"`},
	{"null", []byte(`null`), `null`},
	{"nil", nil, `null`},
	{"empty", []byte{}, `null`},
}

// answerCodes are the JSON-RPC codes the contract answers with.
var answerCodes = []int{
	CodeParseError, CodeInvalidRequest, CodeMethodNotFound, CodeInvalidParams, CodeInternalError,
	-32020, -32022, -32004, -32009,
}

// answerMessages are error messages and how AppendString must write them.
var answerMessages = []struct {
	name string
	msg  string
	want string // the JSON string literal, quotes included
}{
	{"empty", "", `""`},
	{"plain", "Method not found", `"Method not found"`},
	{"quotes", `say "hi"`, `"say \"hi\""`},
	{"backslashes", `C:\dir\`, `"C:\\dir\\"`},
	{"short escapes", "\b\f\n\r\t", `"\b\f\n\r\t"`},
	{"every control character", allControls(), `"\u0000\u0001\u0002\u0003\u0004\u0005\u0006\u0007` +
		`\b\t\n\u000b\f\r\u000e\u000f\u0010\u0011\u0012\u0013\u0014\u0015\u0016\u0017` +
		`\u0018\u0019\u001a\u001b\u001c\u001d\u001e\u001f"`},
	{"DEL and HTML as is", "\x7f<a href='x'>&amp;</a>", "\"\x7f<a href='x'>&amp;</a>\""},
	{"slash as is", "tools/call", `"tools/call"`},
	{"lone 0xff", "a\xffb", `"a\ufffdb"`},
	{"truncated 3-byte sequence", "a\xe2\x82b", `"a\ufffd\ufffdb"`},
	{"truncated at the end", "ab\xe2\x82", `"ab\ufffd\ufffd"`},
	{"surrogate ED A0 80", "a\xed\xa0\x80b", `"a\ufffd\ufffd\ufffdb"`},
	{"overlong C0 80", "a\xc0\x80b", `"a\ufffd\ufffdb"`},
	{"overlong E0 80 80", "\xe0\x80\x80", `"\ufffd\ufffd\ufffd"`},
	{"above U+10FFFF", "\xf4\x90\x80\x80", `"\ufffd\ufffd\ufffd\ufffd"`},
	{"stray continuation", "\x80", `"\ufffd"`},
	{"F5 lead", "\xf5\x80\x80\x80", `"\ufffd\ufffd\ufffd\ufffd"`},
	{"U+2028", "a\u2028b", `"a\u2028b"`},
	{"U+2029", "\u2029", `"\u2029"`},
	{"near U+2028", "\u2027\u202a", "\"\u2027\u202a\""},
	{"emoji", "ok 👍🏽", "\"ok 👍🏽\""},
	{"non-ASCII", "café ✓ 日本語 \U0010ffff", "\"café ✓ 日本語 \U0010ffff\""},
	{"U+FFFD itself", "\ufffd", "\"\ufffd\""},
	{"long plain", strings.Repeat("abcdefgh", 9) + "xyz", `"` + strings.Repeat("abcdefgh", 9) + `xyz"`},
	{"special in every lane", "1234567\"12345678\\123456\n", `"1234567\"12345678\\123456\n"`},
	{"specials after a plain word", "abcdefgh\x00abcdefgh\xff", `"abcdefgh\u0000abcdefgh\ufffd"`},
	{"invalid run of 9", strings.Repeat("\xff", 9), `"` + strings.Repeat(`\ufffd`, 9) + `"`},
}

// testErrorData are the values of an error's data member; nil is absent.
var testErrorData = [][]byte{
	nil,
	[]byte(`{"supported":["a"],"requested":"b"}`),
}

func allControls() string {
	b := make([]byte, 0x20)
	for i := range b {
		b[i] = byte(i)
	}
	return string(b)
}

// wireAnswer is a JSON-RPC answer as a client decodes it.
type wireAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// validPerByte is s with every byte that does not begin a valid UTF-8
// sequence replaced by U+FFFD, one per byte: what ranging over a string
// yields, and what AppendString promises.
func validPerByte(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

// encodingJSONString is encoding/json's encoding of s without HTML escaping, the
// reference AppendString must match byte for byte.
func encodingJSONString(t testing.TB, s string) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// checkAppendString checks everything AppendString promises for s.
func checkAppendString(t testing.TB, s string) {
	t.Helper()
	out := AppendString(nil, s)
	if got := AppendString(nil, []byte(s)); !bytes.Equal(got, out) {
		t.Fatalf("AppendString(%q): string gives %s, []byte gives %s", s, out, got)
	}
	if !json.Valid(out) || !utf8.Valid(out) {
		t.Fatalf("AppendString(%q) = %s: not valid JSON in valid UTF-8", s, out)
	}
	if want := encodingJSONString(t, s); string(out) != want {
		t.Fatalf("AppendString(%q) = %s, encoding/json gives %s", s, out, want)
	}
	var back string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("AppendString(%q) = %s: %v", s, out, err)
	}
	if want := validPerByte(s); back != want {
		t.Fatalf("AppendString(%q) decodes to %q, want %q", s, back, want)
	}
	if bytes.Contains(out, []byte("\u2028")) || bytes.Contains(out, []byte("\u2029")) {
		t.Fatalf("AppendString(%q) = %s: raw U+2028 or U+2029", s, out)
	}
}

func TestAppendString(t *testing.T) {
	for _, tc := range answerMessages {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(AppendString(nil, tc.msg)); got != tc.want {
				t.Errorf("AppendString(%q) = %s, want %s", tc.msg, got, tc.want)
			}
			checkAppendString(t, tc.msg)
		})
	}
}

func TestAppendStringAppends(t *testing.T) {
	type text string
	type raw []byte
	dst := []byte("prefix:")
	dst = AppendString(dst, text("a\"b"))
	dst = AppendString(dst, raw("\n"))
	dst = AppendString(dst, "")
	if want := `prefix:"a\"b""\n"""`; string(dst) != want {
		t.Errorf("got %s, want %s", dst, want)
	}
}

// TestAppendStringReplacement pins the replacement rule: one U+FFFD per byte
// that does not begin a valid sequence (utf8.DecodeRune, encoding/json),
// which agrees with strings.ToValidUTF8 (one U+FFFD per run of invalid
// bytes) only where each run is one byte long.
func TestAppendStringReplacement(t *testing.T) {
	for _, tc := range []struct {
		in            string
		n             int  // U+FFFD written
		sameAsToValid bool // strings.ToValidUTF8 gives the same string
	}{
		{"a\xffb", 1, true},
		{"\x80", 1, true},
		{"a\xe2\x82b", 2, false},              // maximal subpart would be 1
		{"a\xed\xa0\x80b", 3, false},          // surrogate: maximal subparts are 3
		{"a\xc0\x80b", 2, false},              // overlong
		{"\xff\xfe", 2, false},                // one run, two bytes
		{"\xff\u00e9\xff", 2, true},           // runs of one, separated
		{"\xf0\x9f\x91", 3, false},            // emoji cut short
		{"\xf0\x9f\x91\x8d", 0, true},         // the emoji whole
		{"\xe2\x80\xa8", 0, true},             // U+2028 is valid, only escaped
		{"\xef\xbf\xbd", 0, true},             // U+FFFD itself is valid
		{"\xed\x9f\xbf\xee\x80\x80", 0, true}, // U+D7FF U+E000 around the surrogates
	} {
		out := AppendString(nil, tc.in)
		if got := bytes.Count(out, []byte(`\ufffd`)); got != tc.n {
			t.Errorf("AppendString(%q) = %s: %d replacements, want %d", tc.in, out, got, tc.n)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("AppendString(%q) = %s: %v", tc.in, out, err)
		}
		if back != validPerByte(tc.in) {
			t.Errorf("AppendString(%q) decodes to %q, want %q", tc.in, back, validPerByte(tc.in))
		}
		if same := back == strings.ToValidUTF8(tc.in, "\uFFFD"); same != tc.sameAsToValid {
			t.Errorf("AppendString(%q) decodes to %q; same as strings.ToValidUTF8: %v, want %v",
				tc.in, back, same, tc.sameAsToValid)
		}
	}
}

// carePieces are the byte sequences AppendString must take care of: each
// escape, each kind of valid and invalid UTF-8, U+2028 and its neighbours.
var carePieces = []string{
	`"`, `\`, "\x00", "\x1f", "\n", "\t", "\x7f", "\u2028", "\u2029", "\u2027", "\u202a",
	"é", "日", "👍", "\U0010ffff", "\ufffd", "\ud7ff", "\ue000",
	"\xe2\x80", "\xed\xa0\x80", "\xc0\x80", "\xe0\x80\x80", "\xf0\x80\x80\x80",
	"\xf4\x90\x80\x80", "\xf5", "\xff", "\x80", "\xbf", "\xf0\x9f\x91",
	// Both sides of every boundary of the UTF-8 table.
	"\xc1\x80", "\xc2\x80", "\xe0\x9f\x80", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xed\xa0\x80",
	"\xf0\x8f\xbf\xbf", "\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xdf\xbf", "\xef\xbf\xbf",
}

// TestAppendStringRandom checks AppendString against encoding/json on
// random byte strings, biased towards the bytes that need care.
func TestAppendStringRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(2026, 12))
	buf := make([]byte, 0, 128)
	for range 5000 {
		buf = buf[:0]
		n := rng.IntN(48)
		for range n {
			switch rng.IntN(4) {
			case 0: // any byte
				buf = append(buf, byte(rng.UintN(256)))
			case 1: // a piece that needs care
				buf = append(buf, carePieces[rng.IntN(len(carePieces))]...)
			default: // plain ASCII, so runs and the 8-byte path are exercised
				buf = append(buf, byte(' '+rng.IntN(95)))
			}
		}
		checkAppendString(t, string(buf))
	}
}

// TestAppendStringUTF8Table runs every lead byte against every second
// byte from 0x7f, followed by continuation and other bytes, through AppendString
// and compares it with a reference written from unicode/utf8: a valid
// sequence is copied (U+2028 and U+2029 escaped), each byte of an invalid
// one is \ufffd, as encoding/json writes it. The boundaries of the
// decoder's table (overlong forms, surrogates, past U+10FFFF) are lookup
// entries, not branches, so coverage-guided fuzzing does not steer
// towards them: this walks all of them.
func TestAppendStringUTF8Table(t *testing.T) {
	tails := []byte{0x41, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0}
	var seq, want []byte
	for b0 := 0x80; b0 <= 0xff; b0++ {
		for b1 := 0x7f; b1 <= 0xff; b1++ { // 0x7f: ASCII after a lead byte
			for _, b2 := range tails {
				for _, b3 := range tails {
					seq = append(seq[:0], byte(b0), byte(b1), b2, b3)
					want = appendStringReference(want[:0], seq)
					if got := AppendString(nil, seq); !bytes.Equal(got, want) {
						t.Fatalf("AppendString(%q) = %s, want %s", seq, got, want)
					}
				}
			}
		}
	}
}

// appendStringReference is AppendString for input without ASCII
// controls, quotes or backslashes, from unicode/utf8.
func appendStringReference(dst, s []byte) []byte {
	dst = append(dst, '"')
	for len(s) > 0 {
		r, n := utf8.DecodeRune(s)
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, `\ufffd`...)
		case r == 0x2028:
			dst = append(dst, `\u2028`...)
		case r == 0x2029:
			dst = append(dst, `\u2029`...)
		default:
			dst = append(dst, s[:n]...)
		}
		s = s[n:]
	}
	return append(dst, '"')
}

// TestAppendStringPositions puts each piece that needs care at every offset
// in and around a word, with plain text before and after it, so that every
// lane of the 8-byte scan, the padded tail and sequences that straddle two
// words are all exercised.
func TestAppendStringPositions(t *testing.T) {
	for _, piece := range carePieces {
		for pre := range 25 {
			for post := range 18 {
				checkAppendString(t, strings.Repeat("a", pre)+piece+strings.Repeat("b", post))
			}
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, tc := range answerMessages {
		f.Add(tc.msg)
	}
	for _, piece := range carePieces {
		f.Add("1234567" + piece + "x")
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkAppendString(t, s)
	})
}

func TestAppendResult(t *testing.T) {
	for _, id := range answerIDs {
		for _, tc := range []struct {
			result []byte
			want   string
		}{
			{[]byte(`{"content":[{"type":"text","text":"hi"}]}`), `{"content":[{"type":"text","text":"hi"}]}`},
			{[]byte(`"caf\u00e9"`), `"caf\u00e9"`},
			{[]byte(`12345678901234567890123`), `12345678901234567890123`},
			{[]byte(`null`), `null`},
			{[]byte{}, `null`},
			{nil, `null`},
		} {
			out := AppendResult(nil, id.raw, tc.result)
			want := `{"jsonrpc":"2.0","id":` + id.want + `,"result":` + tc.want + `}`
			if string(out) != want {
				t.Errorf("AppendResult(%q, %q) = %s, want %s", id.raw, tc.result, out, want)
				continue
			}
			var a wireAnswer
			if err := json.Unmarshal(out, &a); err != nil || !json.Valid(out) {
				t.Fatalf("AppendResult(%q, %q) = %s: %v", id.raw, tc.result, out, err)
			}
			if a.JSONRPC != "2.0" || string(a.ID) != id.want || string(a.Result) != tc.want || a.Error != nil {
				t.Errorf("AppendResult(%q, %q) = %s decodes to %+v", id.raw, tc.result, out, a)
			}
		}
	}
}

func TestAppendError(t *testing.T) {
	for _, id := range answerIDs {
		for _, code := range answerCodes {
			for _, m := range answerMessages {
				for _, data := range testErrorData {
					out := AppendError(nil, id.raw, code, m.msg, data)
					want := `{"jsonrpc":"2.0","id":` + id.want + `,"error":{"code":` +
						strconv.Itoa(code) + `,"message":` + m.want
					if data != nil {
						want += `,"data":` + string(data)
					}
					want += `}}`
					if string(out) != want {
						t.Fatalf("AppendError(%q, %d, %q, %q) = %s, want %s", id.raw, code, m.msg, data, out, want)
					}
					checkErrorAnswer(t, out, id.want, code, m.msg, data)
				}
			}
		}
	}
}

// checkErrorAnswer decodes an error answer as a client would and compares
// it with what went in.
func checkErrorAnswer(t *testing.T, out []byte, id string, code int, msg string, data []byte) {
	t.Helper()
	if !json.Valid(out) || !utf8.Valid(out) {
		t.Fatalf("%s: not valid JSON in valid UTF-8", out)
	}
	var a wireAnswer
	if err := json.Unmarshal(out, &a); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if a.JSONRPC != "2.0" || string(a.ID) != id || a.Result != nil || a.Error == nil {
		t.Fatalf("%s decodes to %+v", out, a)
	}
	wantMsg := msg
	if !utf8.ValidString(msg) {
		wantMsg = validPerByte(msg)
	}
	if a.Error.Code != code || a.Error.Message != wantMsg || !bytes.Equal(a.Error.Data, data) {
		t.Fatalf("%s decodes to code %d, message %q, data %s; want %d, %q, %s",
			out, a.Error.Code, a.Error.Message, a.Error.Data, code, wantMsg, data)
	}
}

func TestAppendErrorData(t *testing.T) {
	// Empty data is absent; any other data is verbatim, null included.
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{nil, `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"m"}}`},
		{[]byte{}, `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"m"}}`},
		{[]byte(`null`), `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"m","data":null}}`},
		{[]byte(`[1,2]`), `{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"m","data":[1,2]}}`},
	} {
		if got := string(AppendError(nil, []byte("7"), CodeMethodNotFound, "m", tc.data)); got != tc.want {
			t.Errorf("data %q: got %s, want %s", tc.data, got, tc.want)
		}
	}
}

func TestAppendErrorCodes(t *testing.T) {
	// Codes outside the JSON-RPC ranges are written as they are.
	for _, code := range []int{0, 1, -1, 32767, -9223372036854775808} {
		out := AppendError(nil, nil, code, "", nil)
		want := `{"jsonrpc":"2.0","id":null,"error":{"code":` + strconv.Itoa(code) + `,"message":""}}`
		if string(out) != want {
			t.Errorf("code %d: got %s, want %s", code, out, want)
		}
	}
}

func TestAppendAnswersKeepDst(t *testing.T) {
	// The encoders append: dst's bytes stay, and a dst with room is reused.
	dst := make([]byte, 3, 256)
	copy(dst, "ab\n")
	out := AppendResult(dst, []byte("1"), []byte("true"))
	out = append(out, '\n')
	out = AppendError(out, []byte(`"x"`), CodeInternalError, "boom", nil)
	want := "ab\n" + `{"jsonrpc":"2.0","id":1,"result":true}` + "\n" +
		`{"jsonrpc":"2.0","id":"x","error":{"code":-32603,"message":"boom"}}`
	if string(out) != want {
		t.Errorf("got %s, want %s", out, want)
	}
	if &out[0] != &dst[0] {
		t.Error("a dst with room was not reused")
	}
}
