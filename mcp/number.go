package mcp

// NOTE: numbers are compared as decimals.
//
// JSON numbers are decimal text of any length: 12345678901234567890123,
// 1e400 and 0.1 have no exact float64. Schema bounds (minimum, maximum),
// the integer type and enum equality are therefore decided on the decimal
// text itself: a number is read as sign, significant digits and the
// position of the decimal point, and two numbers compare digit by digit.
// Nothing is converted to float64 and nothing is allocated.
//
// Exponents are saturated at ±2^50 (a 1 MiB body cannot hold a number
// whose value needs more), so numbers are compared exactly unless both
// carry exponents beyond that bound.

import "strconv"

const maxExp = 1 << 50

// decimal is a JSON number read without conversion: its value is
// ±0.D × 10^point, where D is the run of significant digits (no leading or
// trailing zeros) of the digits ip followed by fp.
type decimal struct {
	ip, fp     []byte // digits before and after the '.'
	start, end int    // D is the virtual ip+fp from start to end
	point      int64
	neg        bool
	zero       bool
	// saturated says the exponent was beyond ±maxExp and was cut to it:
	// the value is not the text's (comparisons of two such numbers are
	// not exact).
	saturated bool
}

// parseDecimal reads the valid JSON number v.
func parseDecimal(v []byte) decimal {
	var d decimal
	i := 0
	if i < len(v) && v[i] == '-' {
		d.neg = true
		i++
	}
	j := i
	for j < len(v) && v[j] >= '0' && v[j] <= '9' {
		j++
	}
	d.ip = v[i:j]
	i = j
	if i < len(v) && v[i] == '.' {
		i++
		j = i
		for j < len(v) && v[j] >= '0' && v[j] <= '9' {
			j++
		}
		d.fp = v[i:j]
		i = j
	}
	var exp int64
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		eneg := false
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			eneg = v[i] == '-'
			i++
		}
		for ; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
			if exp < maxExp {
				exp = exp*10 + int64(v[i]-'0')
			} else {
				d.saturated = true
			}
		}
		if exp > maxExp {
			exp, d.saturated = maxExp, true
		}
		if eneg {
			exp = -exp
		}
	}
	n := len(d.ip) + len(d.fp)
	d.start, d.end = 0, n
	for d.start < n && d.digit(d.start) == '0' {
		d.start++
	}
	for d.end > d.start && d.digit(d.end-1) == '0' {
		d.end--
	}
	d.zero = d.start == d.end
	d.point = int64(len(d.ip)) + exp - int64(d.start)
	return d
}

// appendShort appends d's value as a JSON number of its significant
// digits alone: 0, or ±0.De±point.
func (d *decimal) appendShort(dst []byte) []byte {
	if d.zero {
		return append(dst, '0')
	}
	if d.neg {
		dst = append(dst, '-')
	}
	dst = append(dst, "0."...)
	for i := d.start; i < d.end; i++ {
		dst = append(dst, d.digit(i))
	}
	dst = append(dst, 'e')
	return strconv.AppendInt(dst, d.point, 10)
}

// digit returns the i-th digit of ip+fp.
func (d *decimal) digit(i int) byte {
	if i < len(d.ip) {
		return d.ip[i]
	}
	return d.fp[i-len(d.ip)]
}

// sign returns -1, 0 or +1.
func (d *decimal) sign() int {
	switch {
	case d.zero:
		return 0
	case d.neg:
		return -1
	}
	return 1
}

// isInteger reports whether the number has no fractional part: 1.0, 1e2
// and 1.5e1 are integers, as JSON Schema counts them.
func (d *decimal) isInteger() bool {
	return d.zero || int64(d.end-d.start) <= d.point
}

// compareDecimals returns -1, 0 or +1 as a is less than, equal to or
// greater than b.
func compareDecimals(a, b *decimal) int {
	sa, sb := a.sign(), b.sign()
	if sa != sb {
		if sa < sb {
			return -1
		}
		return 1
	}
	if sa == 0 {
		return 0
	}
	m := compareMagnitudes(a, b)
	if sa < 0 {
		return -m
	}
	return m
}

func compareMagnitudes(a, b *decimal) int {
	if a.point != b.point {
		if a.point > b.point {
			return 1
		}
		return -1
	}
	i, j := a.start, b.start
	for i < a.end && j < b.end {
		x, y := a.digit(i), b.digit(j)
		if x != y {
			if x > y {
				return 1
			}
			return -1
		}
		i++
		j++
	}
	switch {
	case i < a.end:
		return 1
	case j < b.end:
		return -1
	}
	return 0
}

// compareNumbers compares two valid raw JSON numbers exactly.
func compareNumbers(a, b []byte) int {
	da, db := parseDecimal(a), parseDecimal(b)
	return compareDecimals(&da, &db)
}
