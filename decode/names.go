package decode

import (
	"hash/maphash"
	"math/bits"
	"sync"
)

// NOTE: finding a repeated member name in little memory.
//
// An object of many members of a few bytes each ("a1":0,) is the cheapest
// way to make a server index something large: a slice header per name and
// a span per member cost 24 to 64 bytes for 7 bytes of body, and growing
// them by appending doubles that (issue 18). The set here holds no copy of
// a name and no slice: a slot is 4 bytes, the offset of a name's opening
// quote in the object and, in the bits the offset leaves, bits of the
// name's hash (nameSet.table), and the table, sized once from a count of the
// members, has 2 to 4 slots per name. It costs at most 16 bytes a member,
// under 3 per body byte (a member takes at least 6: "a":0,). Names are
// hashed and compared after unescaping, through two scratch buffers.

// nameSet is a set of member names of one object, by offset.
type nameSet struct {
	obj []byte
	// table holds, for a name, offset+1 of its opening quote in its low
	// fpShift bits (0 is an empty slot) and bits of the name's hash in
	// the others: a probe that meets another name compares the names
	// only when those bits agree, without reading the object (11 or 12
	// bits for an object of about 1 MiB; none past 2 GiB). Reading each
	// probed name from the object was most of the cost of an object of
	// many members.
	table   []uint32
	offMask uint32   // the offset's bits of a slot
	fpShift uint     // the offset's width: where the hash's bits start
	spare   []uint32 // the table before the last growth, reused by the next
	mask    uint64
	seed    maphash.Seed
	sa, sb  []byte // unescaped names
	count   int    // names addGrowing inserted
}

var nameSets = sync.Pool{New: func() any { return &nameSet{seed: maphash.MakeSeed()} }}

const (
	// keepNameSlots is the largest table a pooled set keeps (64 KiB, its
	// spare as much): larger ones are dropped after their object, so that
	// the pool does not hold the memory of the largest objects ever
	// checked (Decode's doc).
	keepNameSlots = 1 << 14
	// keepNameScratch is the largest scratch buffer a pooled set keeps.
	keepNameScratch = 4 << 10
)

// maxSetObject is the largest object a nameSet indexes: offsets are
// 32-bit.
const maxSetObject = 1<<32 - 2

// getNameSet returns a set for the names of obj (at most maxSetObject
// bytes), which has about n members.
func getNameSet(obj []byte, n int) *nameSet {
	s := nameSets.Get().(*nameSet)
	size := 64
	for size < 2*n {
		size <<= 1
	}
	if cap(s.table) < size && cap(s.spare) >= size {
		s.table, s.spare = s.spare, s.table
	}
	if cap(s.table) < size {
		s.table = make([]uint32, size)
	} else {
		s.table = s.table[:size]
		clear(s.table)
	}
	s.mask = uint64(size - 1)
	s.obj = obj
	s.count = 0
	s.fpShift = uint(bits.Len(uint(len(obj)))) // offset+1 <= len(obj)
	s.offMask = uint32(1<<s.fpShift - 1)
	return s
}

// release returns s to the pool.
func (s *nameSet) release() {
	s.obj = nil
	if cap(s.table) > keepNameSlots {
		s.table = nil
	}
	if cap(s.spare) > keepNameSlots {
		s.spare = nil
	}
	if cap(s.sa) > keepNameScratch {
		s.sa = nil
	}
	if cap(s.sb) > keepNameScratch {
		s.sb = nil
	}
	nameSets.Put(s)
}

// add inserts the name whose opening quote is at obj[off] and reports
// whether an equal name (after unescaping) was added before. The table
// must have room: at most half of it is filled when n was the count.
func (s *nameSet) add(off int) bool {
	raw, esc := s.name(off)
	return s.addName(off, raw, esc)
}

// addName is add for a caller that has read the name: raw is its content
// (escapes kept) and esc says whether it has escapes, so that the name is
// not scanned again.
func (s *nameSet) addName(off int, raw []byte, esc bool) bool {
	h, found, entry := s.findName(off, raw, esc)
	if !found {
		s.table[h] = entry
	}
	return found
}

// addGrowing is addName for a set whose object is still being read: when
// the table is half full it doubles, its names inserted again.
func (s *nameSet) addGrowing(off int, raw []byte, esc bool) bool {
	s.grow()
	if s.addName(off, raw, esc) {
		return true
	}
	s.count++
	return false
}

// setLastGrowing is setLast for a set whose object is still being read,
// growing as addGrowing does: it holds each name once, whatever the
// times it repeats.
func (s *nameSet) setLastGrowing(off int) bool {
	s.grow()
	if s.setLast(off) {
		return true
	}
	s.count++
	return false
}

// grow doubles the table when it is half full, its names inserted again.
func (s *nameSet) grow() {
	if s.count*2 < len(s.table) {
		return
	}
	// The table and the spare trade places, so that a set reused for
	// objects of the same size grows without allocating once both have
	// grown (found by review on 2026-12-07: every growth allocated).
	old := s.table
	if n := 2 * len(old); cap(s.spare) >= n {
		s.table = s.spare[:n]
		clear(s.table)
	} else {
		s.table = make([]uint32, n)
	}
	s.spare = old
	s.mask = uint64(len(s.table) - 1)
	for _, j := range old {
		if j != 0 {
			h, _, _ := s.find(int(j&s.offMask) - 1)
			s.table[h] = j
		}
	}
}

// setLast records the name whose opening quote is at obj[off] as the
// latest occurrence of its name (inserting it, or replacing an equal
// name's offset), and reports whether it replaced one.
func (s *nameSet) setLast(off int) bool {
	h, found, entry := s.find(off)
	s.table[h] = entry
	return found
}

// isLast reports whether the name at obj[off] is the latest occurrence
// setLast recorded for its name.
func (s *nameSet) isLast(off int) bool {
	h, found, _ := s.find(off)
	return found && s.table[h]&s.offMask == uint32(off+1)
}

// find returns the slot of the name whose opening quote is at obj[off]:
// the slot of an equal name (found), or the empty slot where it goes; and
// the table entry of this name at off.
func (s *nameSet) find(off int) (uint64, bool, uint32) {
	key, esc := s.name(off)
	return s.findName(off, key, esc)
}

// findName is find for a caller that has read the name at off: key is its
// content (escapes kept), esc whether it has escapes.
func (s *nameSet) findName(off int, key []byte, esc bool) (uint64, bool, uint32) {
	if esc {
		s.sa = appendUnescaped(s.sa[:0], key)
		key = s.sa
	}
	hash := maphash.Bytes(s.seed, key)
	fp := uint32(hash>>32) << s.fpShift // 0 when the shift is 32
	entry := fp | uint32(off+1)
	h := hash & s.mask
	for {
		j := s.table[h]
		if j == 0 {
			return h, false, entry
		}
		if j&^s.offMask != fp {
			h = (h + 1) & s.mask
			continue // another name: its hash differs
		}
		other, oesc := s.name(int(j&s.offMask) - 1)
		if oesc {
			s.sb = appendUnescaped(s.sb[:0], other)
			other = s.sb
		}
		if string(key) == string(other) {
			return h, true, entry
		}
		h = (h + 1) & s.mask
	}
}

// name returns the content of the string at obj[off] (escapes kept) and
// whether it has escapes.
func (s *nameSet) name(off int) ([]byte, bool) {
	end, esc := skipString(s.obj, off)
	return s.obj[off+1 : end-1], esc
}

// nameOffset returns where the opening quote of name, the current name
// of a Members iteration over obj, is in obj.
func nameOffset(obj, name []byte) int { return cap(obj) - cap(name) - 1 }
