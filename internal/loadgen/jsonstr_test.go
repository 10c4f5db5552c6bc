package loadgen

import "testing"

func TestStrEqual(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		eq   bool
	}{
		{`abc`, `abc`, true},
		{`caf\u00e9`, "café", true},
		{`caf\u00E9`, `caf\u00e9`, true},
		{`\/`, `/`, true},
		{`\"q\" \\`, `\u0022q\u0022 \u005c`, true},
		{`\ud83d\ude00`, "😀", true},
		{`\t`, "\\u0009", true},
		{`abc`, `abd`, false},
		{`abc`, `ab`, false},
		{`ab`, `abc`, false},
		{`\u00e9`, `e`, false},
	} {
		if got := strEqual([]byte(tc.a), []byte(tc.b)); got != tc.eq {
			t.Errorf("strEqual(%q, %q) = %v", tc.a, tc.b, got)
		}
	}
	if !strIs([]byte(`\u0069d`), "id") || strIs([]byte(`Id`), "id") || !strIs([]byte(`id`), "id") {
		t.Error("strIs")
	}
}
