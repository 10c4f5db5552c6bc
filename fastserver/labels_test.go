package fastserver

import (
	"strings"
	"testing"
)

// TestLastLabels checks that a call's remembered labels always equal what
// the endpoint's table says, whatever order methods and routes come in,
// and that a long method name is looked up but not kept.
func TestLastLabels(t *testing.T) {
	ep := &endpoint{labels: map[string]string{"tools/call": "tools/call", "tools/list": "tools/list", "ping": "ping"}}
	long := strings.Repeat("m", maxRememberedMethod+1)
	ep.labels[long] = long
	var l lastLabels
	for i, name := range []string{"tools/call", "tools/call", "tools/list", "unknown", "tools/call", long, long, "ping", "", "ping"} {
		if got, want := l.method(ep, []byte(name)), ep.labels[name]; got != want {
			t.Errorf("request %d: method(%q) = %q, want %q", i, name, got, want)
		}
		if got, want := l.route(ep, name), ep.labels[name]; got != want {
			t.Errorf("request %d: route(%q) = %q, want %q", i, name, got, want)
		}
		if len(l.name) > maxRememberedMethod {
			t.Fatalf("request %d: kept a %d-byte method name", i, len(l.name))
		}
	}
	// The bytes the call remembered are its own: a client's buffer reused
	// for another method does not change the answer.
	buf := []byte("tools/call")
	l = lastLabels{}
	l.method(ep, buf)
	copy(buf, "tools/list")
	if got := l.method(ep, buf); got != "tools/list" {
		t.Errorf("after the buffer changed: %q, want tools/list", got)
	}
}
