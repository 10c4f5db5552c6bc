package app

import (
	"os"
	"strings"
	"testing"
)

func TestTaskIDPrefix(t *testing.T) {
	host, _ := os.Hostname()
	for _, c := range []struct {
		instance string
		fleet    bool
		want     string
	}{
		{"", false, ""},
		{"edge-1", false, "edge-1."},
		{"edge-1", true, "edge-1."},
		{"a.b/c d", false, "a-b-c-d."},
		{"é", false, "--."},
		{strings.Repeat("x", 80), false, strings.Repeat("x", 63) + "."},
	} {
		if got := taskIDPrefix(c.instance, c.fleet); got != c.want {
			t.Errorf("taskIDPrefix(%q, %v) = %q, want %q", c.instance, c.fleet, got, c.want)
		}
	}
	if got := taskIDPrefix("", true); host != "" && !strings.HasSuffix(got, ".") {
		t.Errorf("with -redis and no -instance: %q", got)
	}
}
