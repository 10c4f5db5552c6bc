package fastserver

import (
	"strings"
	"testing"
)

// TestLookupField: every table field is found in its own, lower and
// upper case, as a string and as bytes; a near miss and other names are
// not.
func TestLookupField(t *testing.T) {
	for f := field(0); f < numFields; f++ {
		for _, n := range []string{fieldNames[f], strings.ToLower(fieldNames[f]), strings.ToUpper(fieldNames[f])} {
			if g := lookupField(n); g != f {
				t.Errorf("%s: %d, want %d", n, g, f)
			}
			if g := lookupField([]byte(n)); g != f {
				t.Errorf("[]byte %s: %d, want %d", n, g, f)
			}
		}
		n := fieldNames[f][:len(fieldNames[f])-1] + "~"
		if g := lookupField(n); g != numFields {
			t.Errorf("%s: %d, want none", n, g)
		}
	}
	if lookupField("") != numFields || lookupField("Host") != numFields {
		t.Error("not in the table")
	}
}

// TestLookupEmptyName: no field is named "": the empty line that ends the
// header section is not one (lookup used to report it present and empty).
func TestLookupEmptyName(t *testing.T) {
	var f fields
	f.snapshot(readHeader(t, "POST /rpc HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n\r\n"))
	if v, _ := f.lookup(""); v != nil {
		t.Errorf(`lookup(""): %q, want nil`, v)
	}
	if v, _ := f.lookup("x-a"); string(v) != "1" {
		t.Errorf(`lookup("x-a"): %q, want "1"`, v)
	}
}

// TestLookupFieldEveryByte: changing any one byte of a table name to any
// other value finds the field only when the byte is a letter and the new
// value is the same letter in the other case: a compare that ignores the
// case bit (0x20) must do so at letters only, so that '-' (0x2d) never
// matches '\r' (0x0d), nor a digit anything but itself.
func TestLookupFieldEveryByte(t *testing.T) {
	for f := field(0); f < numFields; f++ {
		name := []byte(fieldNames[f])
		for i := range name {
			orig := name[i]
			lower := orig | 0x20
			letter := lower >= 'a' && lower <= 'z'
			for v := range 256 {
				name[i] = byte(v)
				want := numFields
				if byte(v) == orig || (letter && byte(v)|0x20 == lower) {
					want = f
				}
				if g := lookupField(name); g != want {
					t.Errorf("%q (byte %d of %s set to %#x): %d, want %d", name, i, fieldNames[f], v, g, want)
				}
				if g := lookupField(string(name)); g != want {
					t.Errorf("string %q: %d, want %d", name, g, want)
				}
			}
			name[i] = orig
		}
	}
}
