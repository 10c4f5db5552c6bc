package mcp

import (
	"encoding/json"
	"math/big"
	"strings"
	"testing"
)

// TestLibraryNumbersShort: the library path is handed a number in its
// significant digits alone, however many zeros its text holds, with the
// same value: its cost follows the digits that matter, not the text
// (1 followed by a million zeros and e-1000000 cost 1.9 s of big.Rat
// parsing, found by review on 2026-12-05).
func TestLibraryNumbersShort(t *testing.T) {
	zeros := strings.Repeat("0", 100000)
	for _, tc := range []struct{ text, value string }{
		{"1" + zeros + "e-100000", "1"},
		{"-1" + zeros + "e-100001", "-1/10"},
		{"1." + zeros[:300] + "1", "1" + zeros[:300] + "1/1" + zeros[:301]},
		{"0." + zeros + "25e100003", "250"},
		{"0." + zeros, "0"},
		{"-0." + zeros + "e-5", "0"},
		{"12345678901234567890123456789012345678901234567890123456789012345678901234567890", "12345678901234567890123456789012345678901234567890123456789012345678901234567890"},
		{"7", "7"},
	} {
		inst, fe := instanceOf([]byte(tc.text))
		if fe != nil {
			t.Fatalf("%.30s…: %s", tc.text, fe.msg)
		}
		n, ok := inst.(json.Number)
		if !ok || len(n) > maxLibDigits+32 {
			t.Errorf("%.30s… (%d bytes): handed to the library as %T of %d bytes", tc.text, len(tc.text), inst, len(n))
			continue
		}
		got, ok1 := new(big.Rat).SetString(string(n))
		want, ok2 := new(big.Rat).SetString(tc.value)
		if !ok1 || !ok2 || got.Cmp(want) != 0 {
			t.Errorf("%.30s…: %s, want the value %.40s", tc.text, n, tc.value)
		}
	}
}
