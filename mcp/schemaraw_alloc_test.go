//go:build !race

package mcp

import (
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// TestRawAllocs pins what the raw walk allocates once warm, over every
// suite case it serves: nothing for a valid instance, unless the instance
// repeats a member name (rewritten once, last occurrence winning), the
// schema asserts a format (the library's format functions take a Go
// string) or uniqueItems compares two objects of many members (a map of
// one's members).
func TestRawAllocs(t *testing.T) {
	for _, d := range []struct{ dir, dialect string }{{"draft2020-12", ""}, {"draft7", draft7URI}} {
		cases, _ := rawSuiteCases(t, d.dir, d.dialect)
		checked := 0
		for _, c := range cases {
			if !c.valid || decode.HasDuplicateNameDeep(c.data) || strings.Contains(string(c.schema), `"format"`) {
				continue
			}
			checked++
			if n := testing.AllocsPerRun(20, func() { c.rs.validate(c.data) }); n != 0 {
				t.Errorf("%s: %s: %.0f allocations", c.name, c.data, n)
			}
		}
		t.Logf("%s: %d valid cases checked", d.dir, checked)
		if checked < 300 {
			t.Errorf("%s: only %d cases checked", d.dir, checked)
		}
	}
}
