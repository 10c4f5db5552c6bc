package mcp

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// rawFormatNames are the formats rawFormat judges itself.
var rawFormatNames = []string{
	"json-pointer", "relative-json-pointer", "uuid", "duration", "period",
	"ipv4", "ipv6", "hostname", "email", "date", "time", "date-time", "semver",
}

// fmtLib is the library's own format, as a draft-07 schema compiles it.
func fmtLib(t testing.TB, name string) *jsonschema.Format {
	t.Helper()
	s, err := compileLibrary([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","format":"`+name+`"}`), "https://x.invalid/s.json", nil)
	if err != nil || s.Format == nil {
		t.Fatalf("format %s: %v (format %v)", name, err, s)
	}
	return s.Format
}

func TestRawFormatHandled(t *testing.T) {
	for _, name := range rawFormatNames {
		if _, handled := rawFormat(name, []byte(`""`)); !handled {
			t.Errorf("%s: not handled", name)
		}
	}
	for _, name := range []string{"regex", "uri", "iri", "uri-reference", "iri-reference", "uri-template", "color", ""} {
		if _, handled := rawFormat(name, []byte(`"x"`)); handled {
			t.Errorf("%s: handled", name)
		}
	}
	if _, handled := rawFormat("uuid", []byte(`12`)); handled {
		t.Errorf("a number: handled")
	}
}

// fmtSuiteStrings collects the string instances of the test suite's
// optional format files: by format (file name), and all of them.
func fmtSuiteStrings(t testing.TB) (map[string][]string, []string) {
	by := map[string][]string{}
	var all []string
	for _, draft := range []string{"draft7", "draft2020-12"} {
		dir := filepath.Join(suiteDir, "tests", draft, "optional", "format")
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		for _, f := range files {
			text, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			var groups []struct {
				Tests []struct {
					Data any `json:"data"`
				} `json:"tests"`
			}
			if json.Unmarshal(text, &groups) != nil {
				continue
			}
			name := strings.TrimSuffix(filepath.Base(f), ".json")
			for _, g := range groups {
				for _, c := range g.Tests {
					if s, ok := c.Data.(string); ok {
						by[name] = append(by[name], s)
						all = append(all, s)
					}
				}
			}
		}
	}
	if len(all) == 0 {
		t.Log("test suite not found: generated strings only")
	}
	if len(all) == 0 && os.Getenv("CI") == "true" {
		t.Fatalf("no format strings in %s: the suite is missing", suiteDir)
	}
	return by, all
}

// fmtExtraSeeds are valid (or nearly valid) strings for formats the suite
// lacks or covers thinly, including the library's odd corners.
var fmtExtraSeeds = map[string][]string{
	"json-pointer":          {"", "/", "/a~0b~1c", "/é/ü", "//", "/~01"},
	"relative-json-pointer": {"0", "0#", "1/a", "10/a~1b", "0/", "123#"},
	"uuid":                  {"2eb8aa08-aa98-11ea-b4aa-73b441d16380", "2EB8AA08-AA98-11EA-B4AA-73B441D16380", "00000000-0000-0000-0000-000000000000"},
	"duration":              {"P4DT12H30M5S", "P1Y2M3D", "PT1H", "P4W", "PT0S", "P1D", "P1Y", "PT36H", "P0D", "P2Y3M", "PT1M1S"},
	"period":                {"2007-03-01T13:00:00Z/2008-05-11T15:30:00Z", "2007-03-01T13:00:00Z/P1Y2M10DT2H30M", "P1Y2M10DT2H30M/2008-05-11T15:30:00Z", "P1W/2008-05-11T15:30:00+01:00"},
	"ipv4":                  {"192.168.0.1", "0.0.0.0", "255.255.255.255", "+1.2.3.4", "-0.1.2.3", "+0255.1.1.1", "1.2.3.+000000000000000000000000000000004"},
	"ipv6":                  {"::1", "::", "1:2:3:4:5:6:7:8", "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", "fe80::1%eth0", "::ffff:1.2.3.4", "1::", "1:2:3:4:5:6:7::"},
	"hostname":              {"www.example.com", "a", "a.", "xn--4gbwdl.xn--wgbh1c", "a-b.c-d", strings.Repeat("a", 63) + ".com"},
	"email":                 {"joe.bloggs@example.com", `"joe bloggs"@example.com`, "joe@[127.0.0.1]", "joe@[IPv6:::1]", "@example.com", "a.b@c", "te~st@example.com"},
	"date":                  {"1963-06-19", "2020-02-29", "2000-02-29", "1900-02-28", "0000-02-29", "2021-12-31"},
	"time":                  {"08:30:06Z", "08:30:06.283185Z", "23:59:60Z", "23:59:60+00:00", "15:59:60-08:00", "+1:+2:+3Z", "-0:00:00z", "08:30:06+05:30", "00:00:60-23:59", "12:00:00.000000000000001+00:00"},
	"date-time":             {"1963-06-19T08:30:06.283185Z", "1963-06-19t08:30:06z", "1990-12-31T15:59:60-08:00", "2020-02-29T00:00:00+00:00"},
	"semver":                {"1.2.3", "0.0.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-0.3.7", "1.0.0-x.7.z.92", "1.0.0+20130313144700", "1.0.0-beta+exp.sha.5114f85", "1.0.0+21AF26D3----117B344092BD", "1.0.0-x-y-z.--"},
}

// fmtAlphabet is what the generator mixes for each format: the characters
// that steer its rules, plus a few that do not.
var fmtAlphabet = map[string][]string{
	"json-pointer":          {"/", "~", "0", "1", "2", "a", "é", "~0", "~1", "#", "%", " ", "\"", "\\", "\x7f", "\x00", "😀"},
	"relative-json-pointer": {"0", "1", "9", "#", "/", "~", "~0", "~1", "a", "-", "+", "é"},
	"uuid":                  {"0", "9", "a", "f", "A", "F", "g", "-", "é", "ffff", "0000"},
	"duration":              {"P", "T", "W", "Y", "M", "D", "H", "S", "0", "1", "9", "12", "x", "p", "t", "é", "-", "."},
	"period":                {"/", "P", "T", "1D", "2H", "W", "2007-03-01T13:00:00Z", "2008-05-11", "T15:30:00", "Z", "+01:00", "1", "-"},
	"ipv4":                  {".", "0", "1", "2", "5", "9", "25", "255", "256", "+", "-", "00", "a", " ", "é", "1."},
	"ipv6":                  {":", "::", "0", "1", "f", "F", "ffff", "g", ".", "1.2.3.4", "%", "%eth0", "[", "]", " ", "00000", "é"},
	"hostname":              {"a", "z", "0", "-", ".", "ab", "é", "_", "xn--", "A", " ", strings.Repeat("b", 30)},
	"email":                 {"a", "@", ".", "..", "\"", "\\", "[", "]", "IPv6:", "::1", "127.0.0.1", "-", "é", "!", "~", " ", "(", "com", strings.Repeat("c", 20)},
	"date":                  {"0", "1", "2", "9", "-", "02", "29", "2020", "13", "00", "31", "+", " ", "é"},
	"time":                  {"0", "1", "2", "5", "9", ":", ".", "Z", "z", "+", "-", "23", "59", "60", "24", " ", "é", "00:00"},
	"date-time":             {"0", "1", "2", "-", ":", "T", "t", "Z", "z", "+", ".", "2020-02-29", "23:59:60", "00:00", "é", " "},
	"semver":                {"0", "1", "9", "01", ".", "-", "+", "a", "Z", "--", "..", "é", "_", " "},
}

// fmtTemplate builds a string in the format's shape with random fields,
// so that the narrow rules (days of a month, leap seconds, ranges) are hit
// often.
func fmtTemplate(r *rand.Rand, name string) string {
	num := func(w, hi int) string {
		switch r.IntN(12) {
		case 0:
			return "+" + fmt.Sprint(r.IntN(10))
		case 1:
			return "-" + fmt.Sprint(r.IntN(10))
		}
		return fmt.Sprintf("%0*d", w, r.IntN(hi))
	}
	date := func() string {
		y := []int{0, 1900, 2000, 2020, 2021, 2100, 2400, 9999}[r.IntN(8)]
		if r.IntN(2) == 0 {
			y = r.IntN(10000)
		}
		return fmt.Sprintf("%04d-%02d-%02d", y, r.IntN(14), r.IntN(33))
	}
	tm := func() string {
		s := num(2, 25) + ":" + num(2, 61) + ":" + num(2, 62)
		if r.IntN(3) == 0 {
			s += "." + strings.Repeat("5", r.IntN(4))
		}
		switch r.IntN(4) {
		case 0:
			s += "Z"
		case 1:
			s += "z"
		default:
			s += []string{"+", "-"}[r.IntN(2)] + num(2, 25) + ":" + num(2, 61)
		}
		return s
	}
	dur := func() string {
		s := "P"
		for _, u := range []string{"Y", "M", "D", "T", "H", "M", "S"} {
			if r.IntN(3) == 0 {
				if u == "T" {
					s += "T"
				} else {
					s += fmt.Sprint(r.IntN(100)) + u
				}
			}
		}
		return s
	}
	switch name {
	case "date":
		return date()
	case "time":
		return tm()
	case "date-time":
		return date() + []string{"T", "t"}[r.IntN(2)] + tm()
	case "duration":
		return dur()
	case "period":
		dt := date() + "T" + tm()
		switch r.IntN(3) {
		case 0:
			return dur() + "/" + dt
		case 1:
			return dt + "/" + dur()
		}
		return dt + "/" + date() + "T" + tm()
	case "ipv4":
		g := func() string {
			if r.IntN(8) == 0 {
				return []string{"+", "-", "0", "+00", ""}[r.IntN(5)] + fmt.Sprint(r.IntN(300))
			}
			return fmt.Sprint(r.IntN(300))
		}
		return g() + "." + g() + "." + g() + "." + g()
	case "uuid":
		const hex = "0123456789abcdefABCDEF"
		b := make([]byte, 36)
		for i := range b {
			b[i] = hex[r.IntN(len(hex))]
		}
		for _, i := range []int{8, 13, 18, 23} {
			b[i] = '-'
		}
		return string(b)
	case "semver":
		id := func() string {
			return []string{"0", "1", "01", "alpha", "x-y", "9", "00", "a1"}[r.IntN(8)]
		}
		s := fmt.Sprint(r.IntN(3)) + "." + fmt.Sprint(r.IntN(12)) + "." + []string{"0", "1", "01", "10"}[r.IntN(4)]
		if r.IntN(2) == 0 {
			s += "-" + id()
			for r.IntN(2) == 0 {
				s += "." + id()
			}
		}
		if r.IntN(2) == 0 {
			s += "+" + id()
			for r.IntN(2) == 0 {
				s += "." + id()
			}
		}
		return s
	case "hostname":
		var b strings.Builder
		for n := 1 + r.IntN(6); n > 0; n-- {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			l := []int{1, 2, 5, 62, 63, 64}[r.IntN(6)]
			b.WriteString(strings.Repeat(string("abc-0"[r.IntN(5)]), l))
		}
		if r.IntN(4) == 0 {
			b.WriteByte('.')
		}
		return b.String()
	case "email":
		local := strings.Repeat("a", []int{0, 1, 10, 63, 64, 65}[r.IntN(6)])
		dom := fmtTemplate(r, "hostname")
		switch r.IntN(4) {
		case 0:
			dom = "[" + fmtTemplate(r, "ipv4") + "]"
		case 1:
			dom = "[IPv6:" + []string{"::1", "1:2:3:4:5:6:7:8", "::ffff:1.2.3.4", "fe80::1%x", "1.2.3.4"}[r.IntN(5)] + "]"
		}
		return local + "@" + dom
	case "ipv6":
		var b strings.Builder
		for n := r.IntN(9); n > 0; n-- {
			b.WriteString([]string{"0", "ffff", "1", "a:", ":", "::", "12345"}[r.IntN(7)])
			b.WriteByte(':')
		}
		if r.IntN(3) == 0 {
			b.WriteString(fmtTemplate(r, "ipv4"))
		} else {
			b.WriteString("1")
		}
		return b.String()
	case "json-pointer", "relative-json-pointer":
		var b strings.Builder
		if name == "relative-json-pointer" {
			b.WriteString(fmt.Sprint(r.IntN(20)))
		}
		for n := r.IntN(5); n > 0; n-- {
			b.WriteString("/" + []string{"a", "~0", "~1", "", "é"}[r.IntN(5)])
		}
		return b.String()
	}
	return ""
}

// fmtMutate applies one to three random edits to s.
func fmtMutate(r *rand.Rand, s string, alpha []string) string {
	for n := 1 + r.IntN(3); n > 0; n-- {
		i := 0
		if len(s) > 0 {
			i = r.IntN(len(s) + 1)
		}
		switch r.IntN(5) {
		case 0: // insert
			s = s[:i] + alpha[r.IntN(len(alpha))] + s[i:]
		case 1: // delete a byte
			if i < len(s) {
				s = s[:i] + s[i+1:]
			}
		case 2: // replace a byte
			if i < len(s) {
				s = s[:i] + alpha[r.IntN(len(alpha))] + s[i+1:]
			}
		case 3: // repeat a piece
			j := i + r.IntN(len(s)-i+1)
			s = s[:j] + s[i:j] + s[j:]
		case 4: // cut
			if r.IntN(2) == 0 {
				s = s[:i]
			} else {
				s = s[i:]
			}
		}
	}
	if !utf8.ValidString(s) { // a byte edit split a character
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// fmtQuote writes s as a JSON string, each character spelled at random:
// as itself, as \uXXXX (a surrogate pair beyond the BMP) or as a short
// escape where JSON has one.
func fmtQuote(r *rand.Rand, s string, escapes int) []byte {
	b := []byte{'"'}
	for _, c := range s {
		must := c < 0x20 || c == '"' || c == '\\'
		if !must && (escapes == 0 || r.IntN(escapes) != 0) {
			b = utf8.AppendRune(b, c)
			continue
		}
		switch {
		case c == '"' && r.IntN(2) == 0:
			b = append(b, `\"`...)
		case c == '\\' && r.IntN(2) == 0:
			b = append(b, `\\`...)
		case c == '/' && r.IntN(2) == 0:
			b = append(b, `\/`...)
		case c == '\n' && r.IntN(2) == 0:
			b = append(b, `\n`...)
		case c >= 0x10000:
			c -= 0x10000
			b = fmt.Appendf(b, `\u%04X\u%04x`, 0xD800+(c>>10), 0xDC00+(c&0x3FF))
		default:
			f := `\u%04x`
			if r.IntN(2) == 0 {
				f = `\u%04X`
			}
			b = fmt.Appendf(b, f, c)
		}
	}
	return append(b, '"')
}

func TestRawFormatDifferential(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race: it checks verdicts or time per step, not concurrency; the plain run covers it")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RAWFORMAT_SEED"); s != "" {
		fmt.Sscan(s, &seed)
	}
	t.Logf("seed %d (RAWFORMAT_SEED=%d to repeat)", seed, seed)
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	bySuite, allSuite := fmtSuiteStrings(t)
	n := 20000
	if testing.Short() {
		n = 8000
	}
	for _, name := range rawFormatNames {
		lib := fmtLib(t, name)
		alpha := fmtAlphabet[name]
		seeds := append(append([]string(nil), fmtExtraSeeds[name]...), bySuite[name]...)
		valid, fails := 0, 0
		check := func(s string, raw []byte) {
			if got := string(decode.AppendUnquoted(nil, raw)); got != s {
				t.Fatalf("test quoting: %q unquotes to %q", raw, got)
			}
			want := lib.Validate(s) == nil
			got, handled := rawFormat(name, raw)
			if !handled || got != want {
				fails++
				if fails <= 10 {
					t.Errorf("%s %s: rawFormat %v (handled %v), library %v (%v)", name, raw, got, handled, want, lib.Validate(s))
				}
			}
			if want {
				valid++
			}
		}
		// Every seed, as is and escaped throughout.
		for _, s := range append(append([]string(nil), seeds...), allSuite...) {
			check(s, fmtQuote(r, s, 0))
			check(s, fmtQuote(r, s, 1))
		}
		for i := 0; i < n; i++ {
			var s string
			switch k := r.IntN(10); {
			case k < 3: // a mix of the characters that matter
				var b strings.Builder
				for m := r.IntN(30); m > 0; m-- {
					b.WriteString(alpha[r.IntN(len(alpha))])
				}
				s = b.String()
			case k < 6:
				s = fmtTemplate(r, name)
				if r.IntN(3) == 0 {
					s = fmtMutate(r, s, alpha)
				}
			case k < 9:
				s = fmtMutate(r, seeds[r.IntN(len(seeds))], alpha)
			default: // long: past the bounds some formats have
				s = seeds[r.IntN(len(seeds))]
				for len(s) < 40+r.IntN(400) {
					s += alpha[r.IntN(len(alpha))]
				}
				if r.IntN(2) == 0 {
					s = fmtMutate(r, s, alpha)
				}
			}
			check(s, fmtQuote(r, s, []int{0, 0, 1, 2, 5}[r.IntN(5)]))
		}
		t.Logf("%-22s %d strings, %d valid", name, n+2*(len(seeds)+len(allSuite)), valid)
		if valid < 100 {
			t.Errorf("%s: only %d valid strings generated", name, valid)
		}
	}
}

// TestRawFormatLong judges long strings, valid and not, a few megabytes in
// all, against the library.
func TestRawFormatLong(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race: it checks verdicts or time per step, not concurrency; the plain run covers it")
	}
	const k = 1 << 16
	cases := map[string][]string{
		"json-pointer":          {strings.Repeat("/a", k), strings.Repeat("/~0", k), strings.Repeat("/~", k), strings.Repeat("/", k)},
		"relative-json-pointer": {strings.Repeat("1", k) + "#", "1" + strings.Repeat("/~1", k), strings.Repeat("0", k)},
		"duration":              {"P" + strings.Repeat("1", k) + "W", "PT" + strings.Repeat("9", k) + "S", "P" + strings.Repeat("T", k)},
		"period":                {"P" + strings.Repeat("1", k) + "D/2008-05-11T15:30:00Z", "2008-05-11T15:30:00Z/PT" + strings.Repeat("1", k) + "H", "P" + strings.Repeat("T", k) + "/"},
		"ipv4":                  {"+" + strings.Repeat("0", k) + "1.2.3.4", "1.2.3." + strings.Repeat("9", k), strings.Repeat(".", k)},
		"time":                  {"12:00:00." + strings.Repeat("0", k) + "Z", "12:00:00." + strings.Repeat("0", k) + "+01:00", "12:00:00." + strings.Repeat("0", k) + "x"},
		"date-time":             {"2020-02-29T12:00:00." + strings.Repeat("1", k) + "z"},
		"semver":                {"1.2.3-" + strings.Repeat("a.", k) + "b+" + strings.Repeat("c.", k) + "d", "1.2.3-" + strings.Repeat(".", k), strings.Repeat("1.", k)},
		"hostname":              {strings.Repeat("a.", k), strings.Repeat("a", k)},
		"email":                 {strings.Repeat("a", k) + "@b", "a@" + strings.Repeat("b.", k)},
		"ipv6":                  {strings.Repeat(":", k), "::1%" + strings.Repeat("a", k)},
		"uuid":                  {strings.Repeat("-", k)},
		"date":                  {strings.Repeat("2", k)},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for name, ss := range cases {
		lib := fmtLib(t, name)
		for _, s := range ss {
			want := lib.Validate(s) == nil
			for _, esc := range []int{0, 3} {
				if got, _ := rawFormat(name, fmtQuote(r, s, esc)); got != want {
					t.Errorf("%s %.40q… (%d bytes, escapes 1/%d): rawFormat %v, library %v", name, s, len(s), esc, got, want)
				}
			}
		}
	}
}

func decodeUnquoted(v []byte) []byte { return decode.AppendUnquoted(nil, v) }

// FuzzRawFormat: for every format rawFormat judges itself, its verdict on
// any string, written as JSON with or without escapes, is the library's.
func FuzzRawFormat(f *testing.F) {
	libs := make(map[string]*jsonschema.Format)
	for _, name := range rawFormatNames {
		libs[name] = fmtLib(f, name)
	}
	for i, s := range []string{"", "/a~0b", "0/x", "123e4567-e89b-12d3-a456-426614174000", "P1Y2M3DT4H5M6S",
		"2000-01-01T00:00:00Z/P1D", "192.168.0.1", "+01.2.3.4", "::1", "a.example.com.", "a@b.c",
		"2024-02-29", "23:59:60Z", "1963-06-19T08:30:06.28123+01:00", "1.2.3-alpha+001"} {
		f.Add(uint8(i), s, false)
		f.Add(uint8(i), s, true)
	}
	f.Fuzz(func(t *testing.T, which uint8, s string, escape bool) {
		if !utf8.ValidString(s) || len(s) > 1<<12 {
			return
		}
		name := rawFormatNames[int(which)%len(rawFormatNames)]
		var q []byte
		if escape {
			// Every byte below 0x80 as \u00XX, the rest as they are.
			q = append(q, '"')
			for _, r := range s {
				if r < 0x80 {
					q = fmt.Appendf(q, `\u%04x`, r)
				} else {
					q = utf8.AppendRune(q, r)
				}
			}
			q = append(q, '"')
		} else {
			q = decode.AppendString(nil, s)
		}
		ok, handled := rawFormat(name, q)
		if !handled {
			t.Fatalf("%s: not handled", name)
		}
		if want := libs[name].Validate(s) == nil; ok != want {
			t.Fatalf("format %s, %q (%s): raw %v, library %v", name, s, q, ok, want)
		}
	})
}
