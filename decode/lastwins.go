package decode

import "slices"

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
// review on 2026-12-06), allocates nothing in steady state but for the
// large objects Decode names, and stops at the first repeated name.
func HasDuplicateNameDeep(v []byte) bool {
	if len(v) > maxLastWins {
		return hasDuplicateNameDeepHuge(v)
	}
	_, dup := dupDeep(v, skipWS(v, 0))
	return dup
}

// maxLastWins is the largest value HasDuplicateNameDeep and
// AppendLastWins index with int32 offsets (an escape is marked by a
// negated offset); larger ones take the paths for huge values (a value of
// 2 to 4 GiB panicked: found by review on 2026-12-07).
const maxLastWins = 1<<31 - 2

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
			if end < i+2 {
				return len(v), false // not valid JSON (a name cut short)
			}
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
				if set.addGrowing(i, v[i+1:end-1], esc) {
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
// a reader that keeps the last occurrence of a name sees. It reads v
// twice, whatever the nesting: once to find, object by object, the
// members a later one of the same name overrides, once to copy the rest
// (walking each object's members and then into each value read a value
// nested d levels deep d times over: 2.8 s for 1 MiB at depth 900, found
// by review on 2026-12-06). Besides dst it allocates, for an object that
// repeats a name, a set of its distinct names (names.go) or, up to
// smallMembers members, the offsets of those overridden.
func AppendLastWins(dst, v []byte) []byte {
	if len(v) > maxLastWins {
		return appendLastWinsHuge(dst, v)
	}
	i := skipWS(v, 0)
	if i >= len(v) {
		return dst
	}
	var lw lastWins
	defer lw.release()
	lw.scan(v, i)
	slices.Sort(lw.drops)
	slices.SortFunc(lw.sets, func(a, b lwSet) int { return int(a.start) - int(b.start) })
	dst, _ = lw.emit(dst, v, i)
	return dst
}

// lastWins is AppendLastWins' state; offsets are in the whole value.
type lastWins struct {
	drops  []int32 // names of overridden members, in objects of few members
	sets   []lwSet // objects of more members that repeat a name
	di, si int     // drops[:di] and sets[:si] are behind emit
}

// lwSet is the set of an object's names, each at its last occurrence.
type lwSet struct {
	start int32 // the object's opening brace
	set   *nameSet
}

// lwName is a member name: its quotes' offsets, the closing one negated
// when the name holds an escape.
type lwName struct{ start, end int32 }

// raw returns the name's content, and whether it holds an escape.
func (n lwName) raw(v []byte) ([]byte, bool) {
	if n.end < 0 {
		return v[n.start+1 : -n.end-1], true
	}
	return v[n.start+1 : n.end-1], false
}

func (lw *lastWins) release() {
	for _, s := range lw.sets {
		s.set.release()
	}
}

// scan reads the value at v[i], recording the overridden members of the
// objects in it, and returns the index just past it. Up to smallMembers
// names of an object are compared pair by pair when it ends; beyond, they
// go to a nameSet that grows as the object goes on.
func (lw *lastWins) scan(v []byte, i int) int {
	if i >= len(v) {
		return i
	}
	switch v[i] {
	case '{':
		start := i
		var small [smallMembers]lwName
		var set *nameSet
		n, repeats := 0, false
		i = skipWS(v, i+1)
		if i < len(v) && v[i] == '}' {
			return i + 1
		}
		for i < len(v) {
			end, esc := skipString(v, i)
			if end < i+2 {
				break // not valid JSON (a name cut short)
			}
			if n < smallMembers {
				small[n] = lwName{int32(i), int32(end)}
				if esc {
					small[n].end = -small[n].end
				}
			} else {
				if set == nil {
					set = getNameSet(v, 4*smallMembers)
					for _, nm := range small {
						repeats = set.setLastGrowing(int(nm.start)) || repeats
					}
				}
				repeats = set.setLastGrowing(i) || repeats
			}
			n++
			i = skipWS(v, end)
			i = lw.scan(v, skipWS(v, i+1))
			i = skipWS(v, i)
			if i >= len(v) || v[i] == '}' {
				i++
				break
			}
			i = skipWS(v, i+1)
		}
		switch {
		case set == nil:
			lw.judge(v, small[:n])
		case repeats:
			lw.sets = append(lw.sets, lwSet{int32(start), set})
		default:
			set.release()
		}
		return i
	case '[':
		i = skipWS(v, i+1)
		if i < len(v) && v[i] == ']' {
			return i + 1
		}
		for i < len(v) {
			j := lw.scan(v, i)
			if j <= i {
				return len(v) // not valid JSON
			}
			i = skipWS(v, j)
			if i >= len(v) || v[i] == ']' {
				return i + 1
			}
			i = skipWS(v, i+1)
		}
		return i
	}
	return SkipValue(v, i)
}

// judge records the members of an object of at most smallMembers (names)
// that a later member of the same name overrides.
func (lw *lastWins) judge(v []byte, names []lwName) {
	for a := 0; a+1 < len(names); a++ {
		ra, ea := names[a].raw(v)
		for _, nb := range names[a+1:] {
			if rb, eb := nb.raw(v); sameName(ra, ea, rb, eb) {
				lw.drops = append(lw.drops, names[a].start)
				break
			}
		}
	}
}

// setOf returns the set of the object at v[start] when scan kept one.
// emit asks in increasing order of start.
func (lw *lastWins) setOf(start int) *nameSet {
	for lw.si < len(lw.sets) && int(lw.sets[lw.si].start) < start {
		lw.si++
	}
	if lw.si < len(lw.sets) && int(lw.sets[lw.si].start) == start {
		return lw.sets[lw.si].set
	}
	return nil
}

// dropped reports whether the member whose name starts at v[off] is
// overridden, in an object of few members. emit asks in increasing order
// of off.
func (lw *lastWins) dropped(off int) bool {
	for lw.di < len(lw.drops) && int(lw.drops[lw.di]) < off {
		lw.di++
	}
	return lw.di < len(lw.drops) && int(lw.drops[lw.di]) == off
}

// emit appends the value at v[i] without the overridden members and
// without white space, and returns the index just past it.
func (lw *lastWins) emit(dst, v []byte, i int) ([]byte, int) {
	if i >= len(v) {
		return dst, i
	}
	switch v[i] {
	case '{':
		set := lw.setOf(i)
		dst = append(dst, '{')
		i = skipWS(v, i+1)
		if i < len(v) && v[i] == '}' {
			return append(dst, '}'), i + 1
		}
		n := 0
		for i < len(v) {
			start := i
			end, _ := skipString(v, i)
			if end <= i {
				break // not valid JSON
			}
			i = skipWS(v, skipWS(v, end)+1)
			if set != nil && !set.isLast(start) || set == nil && lw.dropped(start) {
				i = SkipValue(v, i)
			} else {
				if n > 0 {
					dst = append(dst, ',')
				}
				n++
				dst = append(dst, v[start:end]...)
				dst = append(dst, ':')
				dst, i = lw.emit(dst, v, i)
			}
			i = skipWS(v, i)
			if i >= len(v) || v[i] == '}' {
				return append(dst, '}'), i + 1
			}
			i = skipWS(v, i+1)
		}
		return append(dst, '}'), len(v)
	case '[':
		dst = append(dst, '[')
		i = skipWS(v, i+1)
		if i < len(v) && v[i] == ']' {
			return append(dst, ']'), i + 1
		}
		n := 0
		for i < len(v) {
			if n > 0 {
				dst = append(dst, ',')
			}
			n++
			var j int
			dst, j = lw.emit(dst, v, i)
			if j <= i {
				break // not valid JSON
			}
			i = skipWS(v, j)
			if i >= len(v) || v[i] == ']' {
				return append(dst, ']'), i + 1
			}
			i = skipWS(v, i+1)
		}
		return append(dst, ']'), len(v)
	}
	end := SkipValue(v, i)
	if end < i {
		end = len(v)
	}
	return append(dst, v[i:end]...), end
}

// appendLastWinsHuge is AppendLastWins for a value past what a nameSet
// indexes (4 GiB): object by object, level by level.
func appendLastWinsHuge(dst, v []byte) []byte {
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
		case len(v) > maxSetObject:
			// First, whatever the count: a nameSet's offsets are 32-bit
			// (an object past 4 GiB of at most smallMembers members took
			// one, and its wrapped offsets lost the repeated name: found
			// by review on 2026-12-07).
			if DuplicateName(v) {
				lastMap = map[string]int{}
				k := 0
				for it.Reset(v); it.Next(); k++ {
					lastMap[memberKey(&it)] = k
				}
			}
		case count <= smallMembers:
			if DuplicateName(v) { // pair by pair, no allocation
				last = getNameSet(v, count)
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
			dst = appendLastWinsHuge(dst, it.value)
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
			dst = appendLastWinsHuge(dst, it.value)
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
