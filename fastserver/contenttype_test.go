package fastserver

import "testing"

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
	} {
		if got := isJSONType([]byte(ct)); got != want {
			t.Errorf("isJSONType(%q) = %v, want %v", ct, got, want)
		}
	}
}
