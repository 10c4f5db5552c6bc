//go:build !race

package mcp

import (
	"runtime"
	"strings"
	"testing"
)

// fmtAdversarial are 64 KiB strings built to make the library's format
// functions allocate: runs of the separators it splits on, of characters
// url.Parse escapes, of digits it scans, with some spelled as escapes.
func fmtAdversarial() []string {
	const k = 64 << 10
	var out []string
	for _, unit := range []string{"-", "/", ".", "a", ":", "%", "T", "1", "~0", "é", "{", "@", "+", `\/`, `\u002e`, `\u002D`, `\u00e9`, `\ud83d\ude00`} {
		for _, pre := range []string{"", "/", "P", "PT", "0", "1.2.3-", "1.2.3+", "a@", "12:00:00.", "2020-01-01T00:00:00Z/P"} {
			out = append(out, `"`+pre+strings.Repeat(unit, k/len(unit))+`"`)
		}
	}
	return out
}

// TestRawFormatAllocs: rawFormat allocates nothing on 64 KiB strings (the
// library allocates up to 16× them).
func TestRawFormatAllocs(t *testing.T) {
	advs := fmtAdversarial()
	if testing.Short() {
		advs = advs[:len(advs)/3]
	}
	for _, name := range rawFormatNames {
		worst := 0.0
		for _, a := range advs {
			v := []byte(a)
			if allocs := testing.AllocsPerRun(10, func() { rawFormat(name, v) }); allocs > worst { // 10 runs: a stray allocation of another goroutine (a server a test left) averages out
				worst = allocs
			}
		}
		if worst > 0 {
			t.Errorf("%s: %.0f allocations on a 64 KiB string", name, worst)
		}
	}
	// Short strings that pass through a fixed buffer (ipv6 calls
	// net/netip) allocate a small constant at most.
	for _, s := range []string{`"::1"`, `"ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255"`, `"fe80::1%eth0"`, `"a@[IPv6:::1]"`} {
		for _, name := range []string{"ipv6", "email"} {
			v := []byte(s)
			if allocs := testing.AllocsPerRun(10, func() { rawFormat(name, v) }); allocs > 2 {
				t.Errorf("%s %s: %.0f allocations", name, s, allocs)
			}
		}
	}
}

// TestRawFormatBytes compares bytes allocated per byte of a 64 KiB string:
// the library (after the caller's unescaping, not counted) and rawFormat.
func TestRawFormatBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	alloc := func(f func()) uint64 {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		f()
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	advs := fmtAdversarial()
	for _, name := range rawFormatNames {
		lib := fmtLib(t, name)
		var libWorst, rawWorst float64
		for _, a := range advs {
			v := []byte(a)
			s := string(decodeUnquoted(v))
			l := float64(alloc(func() { lib.Validate(s) })) / float64(len(v))
			r := float64(alloc(func() { rawFormat(name, v) })) / float64(len(v))
			libWorst, rawWorst = max(libWorst, l), max(rawWorst, r)
		}
		t.Logf("%-22s library %6.2f×  rawFormat %6.4f×", name, libWorst, rawWorst)
		if rawWorst > 0.01 {
			t.Errorf("%s: rawFormat allocates %.4f× a 64 KiB string", name, rawWorst)
		}
	}
	// The formats left to the library, for the record.
	for _, name := range []string{"uri", "iri", "uri-reference", "iri-reference", "uri-template"} {
		lib := fmtLib(t, name)
		worst, which := 0.0, ""
		for _, a := range append(advs, fmtURIAdversarial()...) {
			v := []byte(a)
			s := string(decodeUnquoted(v))
			if l := float64(alloc(func() { lib.Validate(s) })) / float64(len(v)); l > worst {
				worst, which = l, a[:min(len(a), 12)]
			}
		}
		t.Logf("%-22s library %6.2f× (%s…), left to the library", name, worst, which)
	}
}

func fmtURIAdversarial() []string {
	const k = 64 << 10
	var out []string
	for _, unit := range []string{"{", "}", "é", " ", "%41", "%", "/{", "/%7B", "[", ":", "@", "?", "#", "<"} {
		for _, pre := range []string{"", "http://h/", "http://", "http://h/?", "http://h/#", "a:", "//", "/", "#"} {
			out = append(out, `"`+pre+strings.Repeat(unit, k/len(unit))+`"`)
		}
	}
	return out
}
