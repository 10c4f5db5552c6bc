package sonicmem

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// Member is a member of a struct's JSON object, as encoding/json (and
// sonic, which follows it) finds it.
type Member struct {
	Name   string
	Tagged bool                // the name comes from a json tag
	Index  []int               // the path of field indexes from the struct
	Field  reflect.StructField // the field (its Index is within its own struct)
	Quoted bool                // ",string": a number, bool or string written inside a JSON string
	Opt    bool                // ",omitempty" or ",omitzero": the member may be missing
	// ViaPointer says the member is promoted through an embedded pointer:
	// missing when that pointer is nil.
	ViaPointer bool
}

// membersOf caches Members.
var membersOf sync.Map // reflect.Type → []Member

// Members returns the members of struct type t's JSON object in field
// order, by encoding/json's rules: exported fields, named by their tag or
// their own name ("-" left out); the fields of an embedded struct without
// a tag name promoted to t's, breadth first, a shallower member hiding a
// deeper one of the same name, a tagged one an untagged one at one depth,
// and two of one name at one depth otherwise leaving neither; an embedded
// struct with a tag name, and an embedded non-struct, a member of its
// own. The slice is shared: callers must not change it.
func Members(t reflect.Type) []Member {
	if ms, ok := membersOf.Load(t); ok {
		return ms.([]Member)
	}
	ms := members(t)
	membersOf.Store(t, ms)
	return ms
}

func members(t reflect.Type) []Member {
	type level struct {
		typ    reflect.Type
		index  []int
		viaPtr bool // reached through an embedded pointer
	}
	var found []Member
	next := []level{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, l := range current {
			if visited[l.typ] {
				continue
			}
			visited[l.typ] = true
			for i := range l.typ.NumField() {
				sf := l.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !validTag(name) {
					name = "" // the field's own name
				}
				index := append(l.index[:len(l.index):len(l.index)], i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, level{typ: ft, index: index, viaPtr: l.viaPtr || sf.Type.Kind() == reflect.Pointer})
					}
					continue
				}
				m := Member{Name: name, Tagged: name != "", Index: index, Field: sf, ViaPointer: l.viaPtr}
				if m.Name == "" {
					m.Name = sf.Name
				}
				for o := range strings.SplitSeq(opts, ",") {
					switch o {
					case "omitempty", "omitzero":
						m.Opt = true
					case "string":
						switch ft.Kind() {
						case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
							reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
							reflect.Float32, reflect.Float64, reflect.String:
							m.Quoted = true
						}
					}
				}
				found = append(found, m)
				if count[l.typ] > 1 {
					// The struct is embedded twice at this depth: its
					// members tie with themselves and are dropped below.
					found = append(found, m)
				}
			}
		}
	}
	// Of the members of one name, the shallowest wins, then a tagged one;
	// a tie leaves none.
	slices.SortStableFunc(found, func(a, b Member) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), cmp.Compare(len(a.Index), len(b.Index)),
			boolFirst(a.Tagged, b.Tagged), slices.Compare(a.Index, b.Index))
	})
	out := found[:0]
	for i := 0; i < len(found); {
		j := i + 1
		for j < len(found) && found[j].Name == found[i].Name {
			j++
		}
		if j-i == 1 || len(found[i].Index) != len(found[i+1].Index) || found[i].Tagged != found[i+1].Tagged {
			out = append(out, found[i])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b Member) int { return slices.Compare(a.Index, b.Index) })
	return slices.Clip(out)
}

// boolFirst orders true before false.
func boolFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}
