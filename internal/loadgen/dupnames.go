package loadgen

// NOTE: duplicate member names at any depth of an answer. An answer whose
// object holds a name twice has no single meaning: a reader that keeps the
// last member sees another answer than one that keeps the first. The
// question is decode.HasDuplicateNameDeep's, and the tests check this walk
// against it; the walk is loadgen's own because it is on every answer's
// path. HasDuplicateNameDeep walks each object twice (its names, then its
// values) and each nested value again from its parent, about 0.6 µs for
// an echo call's answer; this one goes through decode.Members once per
// object, descending into a nested object in place (NextName and Rest)
// rather than skipping it first, and compares the names as they come.

import (
	"github.com/rpcedge/rpcedge/decode"
)

// maxNamesCompared is how many names of one object are compared pair by
// pair; an object with more is handed to decode.DuplicateName, which
// hashes them.
const maxNamesCompared = 16

// hasDuplicateName reports whether an object anywhere in the valid JSON
// value v, at any depth, holds a member name twice, names compared after
// unescaping. It allocates nothing.
func hasDuplicateName(v []byte) bool {
	i := skipWS(v, 0)
	if i >= len(v) {
		return false
	}
	switch v[i] {
	case '{':
		dup, _ := objectDuplicate(v[i:])
		return dup
	case '[':
		return arrayDuplicate(v[i:])
	}
	return false
}

// objectDuplicate walks the object at the start of obj (which may go on
// after it) and reports whether it, or an object inside it, holds a name
// twice; when not, it also returns the object's length.
func objectDuplicate(obj []byte) (dup bool, n int) {
	var names [maxNamesCompared][]byte // quoted, as on the wire
	var escaped [maxNamesCompared]bool
	k := 0
	var it decode.Members
	for it.Reset(obj); it.NextName(); {
		name := it.Name()
		at := cap(obj) - cap(name) // the name's offset in obj
		quoted := obj[at-1 : at+len(name)+1]
		switch {
		case k < maxNamesCompared:
			esc := it.NameEscaped()
			for j := 0; j < k; j++ {
				if !esc && !escaped[j] && string(quoted) == string(names[j]) ||
					(esc || escaped[j]) && decode.StringsEqual(quoted, names[j]) {
					return true, 0
				}
			}
			names[k], escaped[k] = quoted, esc
			k++
		case k == maxNamesCompared:
			if decode.DuplicateName(obj) {
				return true, 0
			}
			k++ // no more comparisons: DuplicateName saw every name
		}
		rest := it.Rest()
		if len(rest) == 0 {
			break
		}
		switch rest[0] {
		case '{':
			dup, n := objectDuplicate(rest)
			if dup {
				return true, 0
			}
			if !it.TakeValue(n) {
				return false, 0
			}
		case '[':
			if it.TakeValue(0) && arrayDuplicate(it.Value()) {
				return true, 0
			}
		}
	}
	return false, it.End()
}

// arrayDuplicate reports whether an object inside the array arr holds a
// name twice.
func arrayDuplicate(arr []byte) bool {
	var it decode.Elements
	for it.Reset(arr); it.Next(); {
		switch v := it.Value(); v[0] {
		case '{':
			if dup, _ := objectDuplicate(v); dup {
				return true
			}
		case '[':
			if arrayDuplicate(v) {
				return true
			}
		}
	}
	return false
}
