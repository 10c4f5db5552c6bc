package decode

// The contract checks duplicate member names at the levels the server
// routes and validates on, and leaves deeper ones alone: "the last one
// wins". A reader that decodes into Go values merges a repeated member
// into the value the first one filled (sonic and encoding/json reuse a
// struct, a pointer's target, a slice's elements, a map), so it would see
// neither occurrence alone. HasDuplicateNameDeep finds such values and
// AppendLastWins rewrites them to what "the last one wins" means.

// HasDuplicateNameDeep reports whether an object anywhere in the valid
// JSON value v, at any depth, holds a member name twice (names compared
// after unescaping). It walks v once per level of nesting, allocates
// nothing in steady state, and stops at the first repeated name.
func HasDuplicateNameDeep(v []byte) bool {
	i := skipWS(v, 0)
	if i >= len(v) {
		return false
	}
	switch v[i] {
	case '{':
		if DuplicateName(v) {
			return true
		}
		var it Members
		for it.Reset(v); it.Next(); {
			if c := firstByte(it.value); (c == '{' || c == '[') && HasDuplicateNameDeep(it.value) {
				return true
			}
		}
	case '[':
		var it Elements
		for it.Reset(v); it.Next(); {
			if c := it.value[0]; (c == '{' || c == '[') && HasDuplicateNameDeep(it.value) {
				return true
			}
		}
	}
	return false
}

// AppendLastWins appends the valid JSON value v to dst with, in every
// object at any depth, only the last member of each name (compared after
// unescaping), the members kept in their order; whitespace between tokens
// is dropped, and everything else is copied as it is. The result is what
// a reader that keeps the last occurrence of a name sees. It allocates
// for objects that hold a repeated name (a set of their names).
func AppendLastWins(dst, v []byte) []byte {
	i := skipWS(v, 0)
	if i >= len(v) {
		return dst
	}
	switch v[i] {
	case '{':
		// An object that repeats a name: a set of its names' offsets
		// (names.go, at most 16 bytes a member) holds each name's last
		// occurrence. (A map of the names cost 17 times the body for
		// 50,000 distinct names and one repeated, found by review on
		// 2026-12-06.)
		var last *nameSet
		var lastMap map[string]int // objects past a nameSet's reach
		count := 0
		var it Members
		for it.Reset(v); it.Next(); {
			count++
		}
		switch {
		case count <= smallMembers:
			if DuplicateName(v) { // pair by pair, no allocation
				last = getNameSet(v, count)
			}
		case len(v) > maxSetObject:
			if DuplicateName(v) {
				lastMap = map[string]int{}
				k := 0
				for it.Reset(v); it.Next(); k++ {
					lastMap[memberKey(&it)] = k
				}
			}
		default:
			last = getNameSet(v, count) // released below if no name repeats
		}
		if last != nil {
			repeats := false
			for it.Reset(v); it.Next(); {
				if last.setLast(nameOffset(v, it.name)) {
					repeats = true
				}
			}
			if repeats {
				defer last.release()
			} else {
				last.release()
				last = nil
			}
		}
		dst = append(dst, '{')
		k, n := 0, 0
		for it.Reset(v); it.Next(); k++ {
			if last != nil && !last.isLast(nameOffset(v, it.name)) || lastMap != nil && lastMap[memberKey(&it)] != k {
				continue
			}
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = append(dst, '"')
			dst = append(dst, it.name...)
			dst = append(dst, '"', ':')
			dst = AppendLastWins(dst, it.value)
		}
		return append(dst, '}')
	case '[':
		dst = append(dst, '[')
		n := 0
		var it Elements
		for it.Reset(v); it.Next(); {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			dst = AppendLastWins(dst, it.value)
		}
		return append(dst, ']')
	}
	j := len(v)
	for j > i && (v[j-1] == ' ' || v[j-1] == '\t' || v[j-1] == '\r' || v[j-1] == '\n') {
		j--
	}
	return append(dst, v[i:j]...)
}

// memberKey is the unescaped name of the member it stands on.
func memberKey(it *Members) string {
	if !it.esc {
		return string(it.name)
	}
	q := make([]byte, 0, len(it.name)+2)
	q = append(append(append(q, '"'), it.name...), '"')
	return string(AppendUnquoted(nil, q))
}

// firstByte returns the first byte of v after whitespace, or 0.
func firstByte(v []byte) byte {
	if i := skipWS(v, 0); i < len(v) {
		return v[i]
	}
	return 0
}
