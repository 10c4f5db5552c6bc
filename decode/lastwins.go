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
// after unescaping). It reads every byte of v once, whatever the nesting
// (checking each object and then walking into its members read a deep
// value once per level: 1,000 levels over 530 KB took 0.85 s, found by
// review on 2026-12-06), allocates nothing in steady state, and stops at
// the first repeated name.
func HasDuplicateNameDeep(v []byte) bool {
	if len(v) > maxSetObject {
		return hasDuplicateNameDeepHuge(v)
	}
	_, dup := dupDeep(v, skipWS(v, 0))
	return dup
}

// dupDeep reads the value at v[i] and returns the index just past it and
// whether an object in it repeats a name. Up to smallMembers names of an
// object are compared pair by pair; beyond, they go to a nameSet that
// grows as the object goes on.
func dupDeep(v []byte, i int) (int, bool) {
	if i >= len(v) {
		return i, false
	}
	switch v[i] {
	case '{':
		type name struct{ start, end int32 } // the quotes' offsets
		var names [smallMembers]name
		var escs uint32 // bit k: names[k] holds an escape
		var set *nameSet
		defer func() {
			if set != nil {
				set.release()
			}
		}()
		n := 0
		i = skipWS(v, i+1)
		if i < len(v) && v[i] == '}' {
			return i + 1, false
		}
		for i < len(v) {
			end, esc := skipString(v, i)
			switch {
			case n < smallMembers:
				raw := v[i+1 : end-1]
				for k := range n {
					if sameName(raw, esc, v[names[k].start+1:names[k].end-1], escs&(1<<k) != 0) {
						return end, true
					}
				}
				names[n] = name{int32(i), int32(end)}
				if esc {
					escs |= 1 << n
				}
			default:
				if set == nil {
					set = getNameSet(v, 4*smallMembers)
					for k := range n {
						set.add(int(names[k].start))
					}
					set.count = n
				}
				if set.addGrowing(i) {
					return end, true
				}
			}
			n++
			i = skipWS(v, end)
			i = skipWS(v, i+1) // past the colon
			var dup bool
			if i, dup = dupDeep(v, i); dup {
				return i, true
			}
			i = skipWS(v, i)
			if i >= len(v) || v[i] == '}' {
				return i + 1, false
			}
			i = skipWS(v, i+1) // past the comma
		}
		return i, false
	case '[':
		i = skipWS(v, i+1)
		if i < len(v) && v[i] == ']' {
			return i + 1, false
		}
		for i < len(v) {
			var dup bool
			if i, dup = dupDeep(v, i); dup {
				return i, true
			}
			i = skipWS(v, i)
			if i >= len(v) || v[i] == ']' {
				return i + 1, false
			}
			i = skipWS(v, i+1)
		}
		return i, false
	}
	return SkipValue(v, i), false
}

// hasDuplicateNameDeepHuge is HasDuplicateNameDeep for a value past what
// a nameSet indexes (4 GiB): object by object, level by level.
func hasDuplicateNameDeepHuge(v []byte) bool {
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
			if c := firstByte(it.value); (c == '{' || c == '[') && hasDuplicateNameDeepHuge(it.value) {
				return true
			}
		}
	case '[':
		var it Elements
		for it.Reset(v); it.Next(); {
			if c := it.value[0]; (c == '{' || c == '[') && hasDuplicateNameDeepHuge(it.value) {
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
