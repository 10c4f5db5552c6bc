package fuzz

// FuzzAnswers: AppendResult and AppendError write, for any id, code,
// message and data, one valid JSON object (decode.Valid, encoding/json,
// valid UTF-8) that a client decodes back to what went in: the id bytes
// (equal after compaction; empty is null), the code, the message with
// each byte that does not begin a valid UTF-8 sequence replaced by one
// U+FFFD (AppendString's documented rule, the one of utf8.DecodeRune and
// encoding/json), and the data or result. AppendString's output is also
// byte for byte what encoding/json writes with SetEscapeHTML(false), as
// its documentation says. Ids come from decoding a request (what the
// server echoes) and, raw, from any valid JSON number, string or null.

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/decode"
)

// replaceInvalid is AppendString's documented rule: every byte that does
// not begin a valid, shortest-form, non-surrogate UTF-8 sequence becomes
// one U+FFFD.
func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

func compact(tb testing.TB, raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		tb.Fatalf("compact %q: %v", raw, err)
	}
	return b.String()
}

// topNames returns the member names of the object obj, in order, as the
// reference reads them.
func topNames(obj []byte) []string {
	members, ok := refMembers(obj)
	if !ok {
		return nil
	}
	var names []string
	for _, m := range members {
		names = append(names, m.name)
	}
	return names
}

type wireError struct {
	Code    *int            `json:"code"`
	Message *string         `json:"message"`
	Data    json.RawMessage `json:"data"`
}

type wireAnswer struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *wireError      `json:"error"`
}

func FuzzAnswers(f *testing.F) {
	ids := []string{`1`, `"a"`, `null`, `12345678901234567890123`, `1e400`, `"caf\u00e9"`, `-0.0`, ` 7 `, `"\ud83d\ude00"`, `true`, `{}`, `x`, ``}
	msgs := []string{"", "internal error", "caf\xc3\xa9", "\xff", "\xed\xa0\x80", "\xe2\x82", "a\u2028b\u2029", "<>&\"\\\x00\x1f\x7f", "\xf4\x90\x80\x80", "\xc0\xaf", strings.Repeat("é\x80", 20)}
	datas := []string{``, `{"supported":["1.0","0.3"],"requested":"2"}`, `null`, `[1, 2 ,{"a" :"b"}]`, `"\u00e9"`, `{`, `1e400`}
	codes := []int{decode.CodeParseError, decode.CodeInvalidRequest, -32020, 0, 1 << 62, -1 << 63}
	for i := range 3 * len(msgs) {
		f.Add([]byte(ids[i%len(ids)]), codes[i%len(codes)], msgs[i%len(msgs)], []byte(datas[i%len(datas)]))
	}
	var d decode.Decoder
	var m decode.Message
	f.Fuzz(func(t *testing.T, idSrc []byte, code int, msg string, dataSrc []byte) {
		// The ids: none, the id of a request that carries idSrc, and
		// idSrc itself when it is a JSON number, string or null.
		idList := [][]byte{nil, {}}
		req := append(append([]byte(`{"jsonrpc":"2.0","method":"m","id":`), idSrc...), '}')
		if d.Decode(req, &m) == nil && m.Kind == decode.KindRequest {
			idList = append(idList, bytes.Clone(m.ID))
		}
		if decode.Valid(idSrc) {
			switch c := idSrc[firstNonWS(idSrc)]; {
			case c == '"', c == 'n', c == '-', '0' <= c && c <= '9':
				idList = append(idList, idSrc)
			}
		}
		var data []byte
		if decode.Valid(dataSrc) {
			data = dataSrc
		}

		// AppendString against encoding/json.
		var enc bytes.Buffer
		je := json.NewEncoder(&enc)
		je.SetEscapeHTML(false)
		if err := je.Encode(msg); err != nil {
			t.Fatal(err)
		}
		if got, want := string(decode.AppendString(nil, msg)), strings.TrimSuffix(enc.String(), "\n"); got != want {
			t.Fatalf("AppendString(%q) = %s, encoding/json writes %s", msg, got, want)
		}

		prefix := []byte("prefix")
		for _, id := range idList {
			wantID := "null"
			if len(id) > 0 {
				wantID = compact(t, id)
			}
			// A success answer, with data (or nothing: null) as the result.
			out := decode.AppendResult(bytes.Clone(prefix), id, data)
			a := checkAnswer(t, out, prefix, []string{"jsonrpc", "id", "result"}, wantID, &d, &m)
			wantResult := "null"
			if len(data) > 0 {
				wantResult = compact(t, data)
			}
			if a.Error != nil || compact(t, a.Result) != wantResult {
				t.Fatalf("AppendResult(%q, %q) = %s: result %s, want %s", id, data, out, a.Result, wantResult)
			}

			// An error answer.
			out = decode.AppendError(bytes.Clone(prefix), id, code, msg, data)
			names := []string{"jsonrpc", "id", "error"}
			a = checkAnswer(t, out, prefix, names, wantID, &d, &m)
			if a.Error == nil || a.Result != nil {
				t.Fatalf("AppendError(%q, %d, %q, %q) = %s: no error member", id, code, msg, data, out)
			}
			e := a.Error
			if e.Code == nil || *e.Code != code || e.Message == nil || *e.Message != replaceInvalid(msg) {
				t.Fatalf("AppendError(%q, %d, %q, %q) = %s: error %+v, want code %d, message %q", id, code, msg, data, out, e, code, replaceInvalid(msg))
			}
			var errObj []byte
			members, _ := refMembers(out[len(prefix):])
			for _, m := range members {
				if m.name == "error" {
					errObj = m.value
				}
			}
			wantNames := []string{"code", "message"}
			if len(data) > 0 {
				wantNames = append(wantNames, "data")
				if e.Data == nil || compact(t, e.Data) != compact(t, data) {
					t.Fatalf("AppendError(%q, %d, %q, %q) = %s: data %s", id, code, msg, data, out, e.Data)
				}
			}
			if got := topNames(errObj); strings.Join(got, ",") != strings.Join(wantNames, ",") {
				t.Fatalf("AppendError(...) = %s: error members %q, want %q", out, got, wantNames)
			}
		}
	})
}

// checkAnswer checks what every answer must be and decodes it.
func checkAnswer(t *testing.T, out, prefix []byte, names []string, wantID string, d *decode.Decoder, m *decode.Message) wireAnswer {
	t.Helper()
	if !bytes.HasPrefix(out, prefix) {
		t.Fatalf("%q: dst's bytes not kept", out)
	}
	ans := out[len(prefix):]
	if !decode.Valid(ans) || !json.Valid(ans) || !utf8.Valid(ans) {
		t.Fatalf("%s: not valid JSON in valid UTF-8 (decode.Valid %v, encoding/json %v, utf8 %v)", ans, decode.Valid(ans), json.Valid(ans), utf8.Valid(ans))
	}
	if got := topNames(ans); strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("%s: members %q, want %q", ans, got, names)
	}
	var a wireAnswer
	if err := json.Unmarshal(ans, &a); err != nil {
		t.Fatalf("%s: %v", ans, err)
	}
	if a.JSONRPC != "2.0" || compact(t, a.ID) != wantID {
		t.Fatalf("%s: jsonrpc %q, id %s, want id %s", ans, a.JSONRPC, a.ID, wantID)
	}
	// rpcedge's own decoder sees a response: refused, with the id read
	// back exactly as written.
	if err := d.SetOptions(decode.Options{MaxBytes: int64(len(ans)) + 1}); err != nil {
		t.Fatal(err)
	}
	err := d.Decode(ans, m)
	if !errors.Is(err, decode.ErrEnvelope) || compact(t, m.ID) != wantID {
		t.Fatalf("%s: decoded as %v, id %q", ans, err, m.ID)
	}
	return a
}
