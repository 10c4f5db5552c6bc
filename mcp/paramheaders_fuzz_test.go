package mcp

import (
	"encoding/base64"
	"encoding/json"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// jsonNumber is RFC 8259's number grammar, for the reference below.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// refCarries is the Mcp-Param comparison written independently of
// paramheaders.go: encoding/json for the body value, encoding/base64 for
// the sentinel, math/big for numbers. ok is false when the reference
// cannot decide cheaply (an exponent past 10^4).
func refCarries(header []byte, body string) (carried, ok bool) {
	for _, c := range header {
		if (c < 0x20 && c != '\t') || c > 0x7e {
			return false, true // refused as invalid before any comparison
		}
	}
	h := string(header)
	if len(h) >= len("=?base64??=") && strings.HasPrefix(h, "=?base64?") && strings.HasSuffix(h, "?=") {
		b, err := base64.StdEncoding.Strict().DecodeString(h[len("=?base64?") : len(h)-len("?=")])
		if err != nil {
			return false, true
		}
		h = string(b)
	}
	var v any
	d := json.NewDecoder(strings.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return false, false
	}
	switch v := v.(type) {
	case string:
		return h == v, true
	case bool:
		return h == strconv.FormatBool(v), true
	case json.Number:
		if !jsonNumber.MatchString(h) {
			return false, true
		}
		for _, s := range []string{h, string(v)} {
			if i := strings.IndexAny(s, "eE"); i >= 0 {
				if e, err := strconv.Atoi(strings.TrimLeft(s[i+1:], "+-")); err != nil || e > 10000 {
					return false, false
				}
			}
		}
		a, _ := new(big.Rat).SetString(h)
		b, _ := new(big.Rat).SetString(string(v))
		return a.Cmp(b) == 0, true
	}
	return false, true // an object, an array or null: nothing to carry
}

// FuzzParamHeaderCarries: for any header bytes and any JSON value of an
// annotated argument, the check of a mirrored header agrees with the
// independent reference: what it refuses as invalid, how it decodes the
// base64 sentinel, and how it compares strings, numbers and booleans.
func FuzzParamHeaderCarries(f *testing.F) {
	for _, s := range [][2]string{
		{"us-west1", `"us-west1"`}, {"=?base64?WsO8cmljaA==?=", `"Zürich"`}, {"=?base64?SGVsbG8?=", `"Hello"`},
		{"42", `42.0`}, {"4.2e1", `42`}, {"042", `42`}, {"-0", `0`}, {"1e400", `1E+400`}, {"true", `true`},
		{"True", `true`}, {"", `""`}, {"a\tb", `"a\tb"`}, {"caf\xc3\xa9", `"café"`}, {"null", `null`},
		{"=?base64??=", `""`}, {"=?base64?abc?=", `"=?base64?abc?="`}, {"x", `{"a":1}`}, {"1", `[1]`},
	} {
		f.Add([]byte(s[0]), s[1])
	}
	f.Fuzz(func(t *testing.T, header []byte, body string) {
		if !json.Valid([]byte(body)) || !utf8.ValidString(body) {
			return // the decoder refuses such bodies before any check (row 7b)
		}
		want, ok := refCarries(header, body)
		if !ok {
			return
		}
		v := []byte(strings.TrimSpace(body))
		got := visibleASCII(header)
		if got {
			h := header
			if isSentinel(h) {
				var buf [256]byte
				h, got = headerValue(h, &buf)
			}
			got = got && carries(h, v)
		}
		if got != want {
			t.Fatalf("header %q, value %s: carried %v, reference %v", header, body, got, want)
		}
	})
}
