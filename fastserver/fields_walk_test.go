package fastserver

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// snapshotByLines is the snapshot's walk written with nextLine, line by
// line: the reference for the one-pass walk of fields.snapshot.
func snapshotByLines(raw []byte) (val [numFields][]byte, lines [numFields]uint8, folded bool) {
	for rest := raw; len(rest) > 0; {
		name, value, next, ok := nextLine(rest)
		rest = next
		if !ok {
			folded = true
			continue
		}
		i := lookupField(name)
		if i == numFields {
			continue
		}
		if val[i] == nil {
			val[i] = value
		}
		if lines[i] < 255 {
			lines[i]++
		}
	}
	return val, lines, folded
}

// TestSnapshotWalk compares the one-pass walk with the line-by-line one
// on header sections made of table fields, other fields, folded lines,
// lines without a colon, bare LFs, stray CRs, spaces and tabs around
// values, and a missing final line end; one fields serves them all, reset
// between them.
func TestSnapshotWalk(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2))
	pieces := []string{
		"Content-Type: application/json", "content-length:12", "Mcp-Name: \techo \t", "MCP-Method:",
		"Host: x", "User-Agent: a:b", " folded", "\tfolded", "nocolon", ":novalue", "X-\r: y",
		"Origin: http://a", "Accept-Encoding:gzip\r", "A2A-Version: 1.0", "Expect: 100-continue",
		// Near misses of the first-letter lookup: a table name as a
		// prefix, a longer or shorter name, another name of the same
		// length and first letter, other cases, no letter first.
		"CONTENT-TYPE:text/plain", "Content-Types: x", "Content-Type-X: y", "content-typ: a",
		"Contentxtype: q", "Originx: q", "Acceptx:", "Mcp-Names: n", "aCCEPT-eNCODING: br",
		"A: a", "Z: z", "-: dash", "~x: y", "0rigin: o",
		// Names that are not tokens: white space before the colon,
		// inside the name, separators, a byte from 0x80.
		"Content-Length : 2", "X-Trace\t: 1", "X Trace: 1", "X(T): 1", "Caf\xc3\xa9: x", "Origin\x00: o",
	}
	ends := []string{"\r\n", "\n", "\r\n", "\r\n"}
	var f fields
	for n := range 5000 {
		var b bytes.Buffer
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			b.WriteString(ends[rng.IntN(len(ends))])
		}
		switch n % 4 {
		case 0:
			b.WriteString("\r\n")
		case 1:
			b.WriteString("\n")
		case 2:
			b.WriteString(pieces[rng.IntN(len(pieces))]) // no final line end
		}
		raw := b.Bytes()
		// One fields for every section, as a server reuses it: reset
		// must forget every field of the previous one.
		f.reset()
		f.raw = raw
		f.walk(raw)
		wantVal, wantLines, wantFolded := snapshotByLines(raw)
		var lines [numFields]uint8
		for i := range lines {
			lines[i] = uint8(f.count(field(i)))
		}
		if got := f.folded || f.badName; got != wantFolded || lines != wantLines {
			t.Fatalf("%q: malformed %v lines %v, want %v %v", raw, got, lines, wantFolded, wantLines)
		}
		for i := range wantVal {
			if wantLines[i] == 1 && (!bytes.Equal(f.get(field(i)), wantVal[i]) || (f.get(field(i)) == nil) != (wantVal[i] == nil)) {
				t.Fatalf("%q: field %s = %q, want %q", raw, fieldNames[i], f.get(field(i)), wantVal[i])
			}
		}
	}
}
