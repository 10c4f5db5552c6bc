package fastserver

import (
	"strings"
	"testing"
)

// TestIsJSONType: the one-comparison path for the exact common value
// agrees with the general one around it.
func TestIsJSONType(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                      true,
		"Application/JSON":                      true,
		" application/json ":                    true,
		"application/json;charset=utf-8":        true,
		"application/json; charset=\"UTF-8\"":   true,
		"application/json;;":                    true,
		"application/json; charset=latin1":      false,
		"application/json; charset":             false,
		"application/jsonx":                     false,
		"application/json\x00":                  false,
		"application/jso":                       false,
		"text/json":                             false,
		"":                                      false,
		"application/json-seq":                  false,
		"application/json; boundary=x; q=1":     true,
		"application/json ; charset = utf-8 ":   true,
		"application/json\t;charset=iso-8859-1": false,
		// RFC 9110 §5.6.6 (found by review on 2026-12-05: the parameters
		// were split at every ';', quoted or not, and an empty value
		// passed).
		"application/json; x=":                           false,
		"application/json; =y":                           false,
		"application/json; x":                            false,
		"application/json; x y=1":                        false,
		"application/json; x=\"a;b\"":                    true,
		"application/json; x=\"a;b\"; charset=latin1":    false,
		"application/json; x=\"unterminated":             false,
		"application/json; charset=\"utf\\-8\"":          true,
		"application/json; charset=\"utf-8\\\"\"":        false,
		"application/json; charset=\"\"":                 false,
		"application/json; charset=utf-8x":               false,
		"application/json; charset=utf-":                 false,
		"application/json; charset=utf-8; charset=utf-8": true,
		"application/json; x=1 y":                        false,
		"application/json; x=\"a\" ;; y=2 ;":             true,
		"application/json; x=\"\x01\"":                   false,
	} {
		if got := isJSONType([]byte(ct)); got != want {
			t.Errorf("isJSONType(%q) = %v, want %v", ct, got, want)
		}
	}
}

// TestIsTchar holds the token table to RFC 9110 §5.6.2's tchar, byte by
// byte.
func TestIsTchar(t *testing.T) {
	const tchar = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for c := 0; c < 256; c++ {
		if got, want := isTchar(byte(c)), strings.IndexByte(tchar, byte(c)) >= 0; got != want {
			t.Errorf("isTchar(%#x) = %v, want %v", c, got, want)
		}
	}
}

func BenchmarkIsJSONType(b *testing.B) {
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON; Charset=\"UTF-8\"", "application/json; boundary=x; q=1"} {
		b.Run(ct, func(b *testing.B) {
			v := []byte(ct)
			for b.Loop() {
				if !isJSONType(v) {
					b.Fatal(ct)
				}
			}
		})
	}
}
