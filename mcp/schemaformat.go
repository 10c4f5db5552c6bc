package mcp

// NOTE: format assertions on raw JSON strings.
//
// Under draft-07 and earlier "format" asserts, and the library's format
// functions allocate in proportion to the string they judge: strings.Split
// on "/", "." or "-" costs 16 bytes a separator (16× a string of
// separators), url.Parse escapes a path into a copy three times its size,
// time.Parse copies and quotes a rejected value, and regexp.Compile costs
// hundreds of times its pattern. A request bounds its memory at a few times
// its body, and the walk may judge one string against one format several
// times, so rawFormat judges the raw JSON string itself: escapes are
// resolved a byte at a time as the judge reads on (uview), nothing is
// copied except into a small fixed buffer, and the verdict is the
// library's, rule for rule (schemaformat_test.go compares the two on
// generated strings).
//
// The formats it leaves to the library (handled false):
//
//   - "uri", "iri", "uri-reference", "iri-reference", "uri-template": the
//     library's verdict is net/url's Parse, whose rules change between Go
//     releases and with GODEBUG (urlstrictcolons in Go 1.26); copying them
//     would drift. They cost up to about 6× the string (url.Parse escaping
//     a path), "uri-template" about 12× (it also splits and unescapes
//     the path).
//   - "regex": the library compiles the pattern with Go's regexp, several
//     hundred times the pattern's size; no bound short of compiling tells
//     Go's verdict. See rawRegexMax.

import (
	"bytes"
	"net/netip"
	"strings"
	"unicode/utf8"
)

// rawRegexMax is the longest "regex" format string (raw JSON bytes) worth
// compiling to judge: regexp.Compile allocates up to ~500× its pattern, so
// a 4 KiB pattern costs about 2 MiB. rawFormat leaves every "regex" string
// to the caller; the caller should refuse a longer one (failing the
// request as too costly to judge, not as an invalid regex, since Go's
// verdict is unknown) rather than compile it.
const rawRegexMax = 4096

// rawFormat judges the raw JSON string v (quotes included, escapes possibly
// present; valid JSON) against the library's built-in format name, exactly
// as the library's format function would judge the unescaped string,
// allocating nothing (or, where unavoidable, at most a small constant,
// independent of len(v)). handled is false for a format it does not
// implement; the caller then calls the library.
func rawFormat(name string, v []byte) (ok, handled bool) {
	if !isString(v) {
		return false, false
	}
	s := newUview(v[1 : len(v)-1])
	switch name {
	case "json-pointer":
		return fmtJSONPointer(s), true
	case "relative-json-pointer":
		return fmtRelJSONPointer(s), true
	case "uuid":
		return fmtUUID(s), true
	case "duration":
		return fmtDuration(s), true
	case "period":
		return fmtPeriod(s), true
	case "ipv4":
		return fmtIPv4(s), true
	case "ipv6":
		return fmtIPv6(s), true
	case "hostname":
		return fmtHostname(s), true
	case "email":
		return fmtEmail(s), true
	case "date":
		return fmtDate(s), true
	case "time":
		return fmtTime(s), true
	case "date-time":
		return fmtDateTime(s), true
	case "semver":
		return fmtSemver(s), true
	}
	return false, false
}

// ucur reads the unescaped bytes of raw JSON string content (no quotes)
// one at a time: plain bytes as they are, an escape as the UTF-8 bytes of
// the character it stands for.
type ucur struct {
	raw    []byte
	pend   [utf8.UTFMax]byte // the rest of an escape's UTF-8 encoding
	pi, pn uint8
}

func (c *ucur) next() byte {
	if c.pi < c.pn {
		b := c.pend[c.pi]
		c.pi++
		return b
	}
	if len(c.raw) == 0 { // only on invalid JSON: never panic
		return 0
	}
	b := c.raw[0]
	if b != '\\' {
		c.raw = c.raw[1:]
		return b
	}
	r, used := unescapeRune(c.raw)
	c.raw = c.raw[used:]
	if r < utf8.RuneSelf && r >= 0 {
		return byte(r)
	}
	c.pn = uint8(utf8.EncodeRune(c.pend[:], r))
	c.pi = 1
	return c.pend[0]
}

// encodedLen is how many bytes utf8.EncodeRune writes for r (3 for
// U+FFFD, which stands in for a surrogate or an out-of-range value).
func encodedLen(r rune) int {
	switch {
	case r >= 0 && r < 0x80:
		return 1
	case r >= 0 && r < 0x800:
		return 2
	case r >= 0x10000 && r <= utf8.MaxRune:
		return 4
	}
	return 3
}

// uview is a window of n unescaped bytes starting at a cursor. It is a
// value: copying it forks the reading, so a judge can look ahead or split
// the string without copying any of it.
type uview struct {
	c ucur
	n int
}

func newUview(raw []byte) uview {
	n := 0
	for rest := raw; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\\')
		if i < 0 {
			n += len(rest)
			break
		}
		n += i
		r, used := unescapeRune(rest[i:])
		n += encodedLen(r)
		rest = rest[i+used:]
	}
	return uview{c: ucur{raw: raw}, n: n}
}

// next reads the next byte; v.n must be positive.
func (v *uview) next() byte {
	v.n--
	return v.c.next()
}

// first returns the first byte, or 0 when v is empty.
func (v uview) first() byte {
	if v.n == 0 {
		return 0
	}
	return v.next()
}

// last returns the last byte, or 0 when v is empty.
func (v uview) last() byte {
	var b byte
	for v.n > 0 {
		b = v.next()
	}
	return b
}

// head is the first k bytes of v (k ≤ v.n).
func (v uview) head(k int) uview {
	v.n = k
	return v
}

// tail is v after its first k bytes (k ≤ v.n).
func (v uview) tail(k int) uview {
	for ; k > 0; k-- {
		v.next()
	}
	return v
}

// index is the offset of the first b in v, or -1.
func (v uview) index(b byte) int {
	for i := 0; v.n > 0; i++ {
		if v.next() == b {
			return i
		}
	}
	return -1
}

// lastIndex is the offset of the last b in v, or -1.
func (v uview) lastIndex(b byte) int {
	j := -1
	for i := 0; v.n > 0; i++ {
		if v.next() == b {
			j = i
		}
	}
	return j
}

// is reports whether v holds exactly s.
func (v uview) is(s string) bool {
	if v.n != len(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if v.next() != s[i] {
			return false
		}
	}
	return true
}

// copyTo copies v into buf, which must hold v.n bytes.
func (v uview) copyTo(buf []byte) []byte {
	buf = buf[:v.n]
	for i := range buf {
		buf[i] = v.next()
	}
	return buf
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

func isHexDigit(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

func isAlnum(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// json-pointer: empty, or "/" then tokens in which every "~" is followed
// by "0" or "1". Every other character is allowed ("/" separates tokens
// and "~" escapes, so the library's range check never refuses one).
func fmtJSONPointer(v uview) bool {
	if v.n == 0 {
		return true
	}
	if v.next() != '/' {
		return false
	}
	for v.n > 0 {
		if v.next() == '~' {
			if v.n == 0 {
				return false
			}
			if b := v.next(); b != '0' && b != '1' {
				return false
			}
		}
	}
	return true
}

// relative-json-pointer: a non-negative integer without a leading zero,
// then "#" or a json-pointer.
func fmtRelJSONPointer(v uview) bool {
	digits := 0
	lead := v.first()
	for v.n > 0 {
		w := v
		if !isDigit(w.next()) {
			break
		}
		v = w
		digits++
	}
	if digits == 0 || digits > 1 && lead == '0' {
		return false
	}
	return v.is("#") || fmtJSONPointer(v)
}

// uuid: five groups of 8, 4, 4, 4 and 12 hex digits joined by "-".
func fmtUUID(v uview) bool {
	if v.n != 36 {
		return false
	}
	for i := 0; i < 36; i++ {
		b := v.next()
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if b != '-' {
				return false
			}
		} else if !isHexDigit(b) {
			return false
		}
	}
	return true
}

// duration: "P", then either digits and "W", or up to two parts split on
// "T" (date units Y M D, then time units H M S), each a run of digits and
// unit with the units in order; the part after a "T" must not be empty.
func fmtDuration(v uview) bool {
	if v.n == 0 || v.next() != 'P' || v.n == 0 {
		return false
	}
	if v.last() == 'W' {
		w := v.head(v.n - 1)
		if w.n == 0 {
			return false
		}
		for w.n > 0 {
			if !isDigit(w.next()) {
				return false
			}
		}
		return true
	}
	units := "YMD"
	part, partLen, digits := 0, 0, 0
	for v.n > 0 {
		b := v.next()
		switch {
		case b == 'T':
			if digits > 0 { // a number with no unit
				return false
			}
			part++
			if part >= 2 {
				return false
			}
			units, partLen = "HMS", 0
			continue
		case isDigit(b):
			digits++
		default:
			if digits == 0 {
				return false
			}
			j := -1
			for k := 0; k < len(units); k++ {
				if units[k] == b {
					j = k
					break
				}
			}
			if j < 0 {
				return false
			}
			units, digits = units[j+1:], 0
		}
		partLen++
	}
	return digits == 0 && (part == 0 || partLen > 0)
}

// period: start "/" end, where one of the two may be a duration (the
// start if it begins with "P", else the end if it does) and the others
// are date-times.
func fmtPeriod(v uview) bool {
	slash := v.index('/')
	if slash < 0 {
		return false
	}
	start, end := v.head(slash), v.tail(slash+1)
	if start.first() == 'P' {
		return fmtDuration(start) && fmtDateTime(end)
	}
	if !fmtDateTime(start) {
		return false
	}
	if end.first() == 'P' {
		return fmtDuration(end)
	}
	return fmtDateTime(end)
}

// ipv4: four groups split on ".", each what strconv.Atoi reads as 0 to
// 255 (so a sign is allowed: "+1", "-0"), and no group longer than one
// byte starting with "0".
func fmtIPv4(v uview) bool {
	groups := 0
	for {
		groups++
		if groups > 4 {
			return false
		}
		dot := v.index('.')
		g := v
		if dot >= 0 {
			g = v.head(dot)
		}
		if !ipv4Group(g) {
			return false
		}
		if dot < 0 {
			break
		}
		v = v.tail(dot + 1)
	}
	return groups == 4
}

func ipv4Group(g uview) bool {
	if g.n == 0 {
		return false
	}
	long := g.n > 1
	b := g.next()
	if long && b == '0' {
		return false
	}
	neg := false
	if b == '+' || b == '-' {
		neg = b == '-'
		if g.n == 0 {
			return false
		}
		b = g.next()
	}
	val := 0
	for {
		if !isDigit(b) {
			return false
		}
		if val <= 255 {
			val = val*10 + int(b-'0')
		}
		if g.n == 0 {
			break
		}
		b = g.next()
	}
	// A larger value is out of range or, past int64, an Atoi error: false
	// either way. "-0" is 0.
	return val <= 255 && (!neg || val == 0)
}

// ipv6Max is the longest IPv6 address net/netip parses without a zone
// (the library refuses a zone): six groups of at most four hex digits and
// a dotted IPv4 tail, "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255".
const ipv6Max = 45

// ipv6: contains ":" and net/netip parses it, without a zone.
func fmtIPv6(v uview) bool {
	if v.n > ipv6Max || v.index(':') < 0 {
		return false
	}
	var buf [ipv6Max]byte
	addr, err := netip.ParseAddr(string(v.copyTo(buf[:])))
	return err == nil && addr.Zone() == ""
}

// hostname: without one trailing ".", at most 253 bytes of labels split on
// "."; each label 1 to 63 letters, digits and hyphens, not starting or
// ending with a hyphen.
func fmtHostname(v uview) bool {
	if v.n > 0 && v.last() == '.' {
		v.n--
	}
	if v.n > 253 {
		return false
	}
	for {
		dot := v.index('.')
		l := v
		if dot >= 0 {
			l = v.head(dot)
		}
		if l.n < 1 || l.n > 63 || l.first() == '-' || l.last() == '-' {
			return false
		}
		for l.n > 0 {
			if b := l.next(); !isAlnum(b) && b != '-' {
				return false
			}
		}
		if dot < 0 {
			return true
		}
		v = v.tail(dot + 1)
	}
}

// email: at most 254 bytes, local part "@" domain split at the last "@".
// The local part, at most 64 bytes, is quoted (no backslash or quote
// inside) or dot-separated atoms; the domain is a bracketed IPv4 address,
// "[IPv6:" address "]", or a hostname.
func fmtEmail(v uview) bool {
	if v.n > 254 {
		return false
	}
	at := v.lastIndex('@')
	if at < 0 {
		return false
	}
	local, domain := v.head(at), v.tail(at+1)
	if local.n > 64 {
		return false
	}
	if local.n > 1 && local.first() == '"' && local.last() == '"' {
		q := local.tail(1).head(local.n - 2)
		for q.n > 0 {
			if b := q.next(); b == '\\' || b == '"' {
				return false
			}
		}
	} else {
		if local.first() == '.' || local.last() == '.' {
			return false
		}
		prev := byte(0)
		for local.n > 0 {
			b := local.next()
			if b == '.' && prev == '.' {
				return false
			}
			prev = b
			if !isAlnum(b) && strings.IndexByte(".!#$%&'*+-/=?^_`{|}~", b) < 0 {
				return false
			}
		}
	}
	if domain.first() == '[' && domain.last() == ']' {
		inner := domain.tail(1).head(domain.n - 2)
		if inner.n >= 5 && inner.head(5).is("IPv6:") {
			return fmtIPv6(inner.tail(5))
		}
		return fmtIPv4(inner)
	}
	return fmtHostname(domain)
}

// date: time.Parse("2006-01-02"): exactly four digits, "-", two digits
// for a month 1 to 12, "-", two digits for a day of that month (proleptic
// Gregorian leap years).
func fmtDate(v uview) bool {
	if v.n != 10 {
		return false
	}
	var b [10]byte
	v.copyTo(b[:])
	for i, c := range b {
		if i == 4 || i == 7 {
			if c != '-' {
				return false
			}
		} else if !isDigit(c) {
			return false
		}
	}
	year := int(b[0]-'0')*1000 + int(b[1]-'0')*100 + int(b[2]-'0')*10 + int(b[3]-'0')
	month := int(b[5]-'0')*10 + int(b[6]-'0')
	day := int(b[8]-'0')*10 + int(b[9]-'0')
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month]
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		days = 29
	}
	return day <= days
}

// atoi2 is strconv.Atoi of a two-byte token: two digits, or a sign and a
// digit.
func atoi2(a, b byte) (int, bool) {
	if !isDigit(b) {
		return 0, false
	}
	switch {
	case a == '+':
		return int(b - '0'), true
	case a == '-':
		return -int(b - '0'), true
	case isDigit(a):
		return int(a-'0')*10 + int(b-'0'), true
	}
	return 0, false
}

// time: hh:mm:ss (each what Atoi reads as non-negative, so "+1" passes),
// an optional fraction ("." and digits), then "z", "Z" or a six-byte
// offset ±hh:mm; a leap second (ss 60) only at 23:59 UTC.
func fmtTime(v uview) bool {
	if v.n < 9 {
		return false
	}
	var t [8]byte
	v.head(8).copyTo(t[:])
	v = v.tail(8)
	if t[2] != ':' || t[5] != ':' {
		return false
	}
	h, ok1 := atoi2(t[0], t[1])
	m, ok2 := atoi2(t[3], t[4])
	s, ok3 := atoi2(t[6], t[7])
	if !ok1 || !ok2 || !ok3 || h < 0 || m < 0 || s < 0 || h > 23 || m > 59 || s > 60 {
		return false
	}
	if v.first() == '.' {
		v.next()
		digits := 0
		for v.n > 0 {
			w := v
			if !isDigit(w.next()) {
				break
			}
			v = w
			digits++
		}
		if digits == 0 {
			return false
		}
	}
	if !v.is("z") && !v.is("Z") {
		if v.n != 6 {
			return false
		}
		var z [6]byte
		v.copyTo(z[:])
		var sign int
		switch z[0] {
		case '+':
			sign = -1
		case '-':
			sign = +1
		default:
			return false
		}
		if z[3] != ':' {
			return false
		}
		zh, ok1 := atoi2(z[1], z[2])
		zm, ok2 := atoi2(z[4], z[5])
		if !ok1 || !ok2 || zh < 0 || zm < 0 || zh > 23 || zm > 59 {
			return false
		}
		hm := h*60 + m + sign*(zh*60+zm)
		if hm < 0 {
			hm += 24 * 60
		}
		h, m = hm/60, hm%60
	}
	return s < 60 || h == 23 && m == 59
}

// date-time: at least 20 bytes, a date, "T" or "t", a time.
func fmtDateTime(v uview) bool {
	if v.n < 20 {
		return false
	}
	if b := v.tail(10).first(); b != 'T' && b != 't' {
		return false
	}
	return fmtDate(v.head(10)) && fmtTime(v.tail(11))
}

// semver: major.minor.patch (digits, no leading zero), then optionally
// "-" and dot-separated pre-release identifiers (letters, digits, hyphens;
// a numeric one without a leading zero), then optionally "+" and
// dot-separated build identifiers; no identifier empty.
func fmtSemver(v uview) bool {
	if plus := v.index('+'); plus >= 0 {
		build := v.tail(plus + 1)
		if build.n == 0 || !semverIDs(build, false) {
			return false
		}
		v = v.head(plus)
	}
	if minus := v.index('-'); minus >= 0 {
		if !semverIDs(v.tail(minus+1), true) {
			return false
		}
		v = v.head(minus)
	}
	parts := 0
	for {
		parts++
		if parts > 3 {
			return false
		}
		dot := v.index('.')
		p := v
		if dot >= 0 {
			p = v.head(dot)
		}
		if p.n == 0 || p.n > 1 && p.first() == '0' {
			return false
		}
		for p.n > 0 {
			if !isDigit(p.next()) {
				return false
			}
		}
		if dot < 0 {
			return parts == 3
		}
		v = v.tail(dot + 1)
	}
}

// semverIDs checks dot-separated identifiers of letters, digits and
// hyphens, none empty; pre adds: a numeric one has no leading zero.
func semverIDs(v uview, pre bool) bool {
	for {
		dot := v.index('.')
		id := v
		if dot >= 0 {
			id = v.head(dot)
		}
		if id.n == 0 {
			return false
		}
		long, lead := id.n > 1, id.first()
		allDigits := true
		for id.n > 0 {
			b := id.next()
			switch {
			case isDigit(b):
			case isAlnum(b) || b == '-':
				allDigits = false
			default:
				return false
			}
		}
		if pre && allDigits && long && lead == '0' {
			return false
		}
		if dot < 0 {
			return true
		}
		v = v.tail(dot + 1)
	}
}
