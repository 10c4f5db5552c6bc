package fastserver

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// combineByLines is combine written with nextLine, line by line: the
// reference for combine's match on the name and its colon.
func combineByLines(raw []byte, name string) ([]byte, int) {
	var out []byte
	lines := 0
	for rest := raw; len(rest) > 0; {
		n, v, next, ok := nextLine(rest)
		rest = next
		if ok && n == nil {
			break
		}
		if !ok || !equalFoldASCII(n, name) {
			continue
		}
		if lines > 0 {
			out = append(out, ", "...)
		}
		lines++
		out = append(out, v...)
	}
	if lines == 0 {
		return nil, 0
	}
	if out == nil {
		return empty, lines
	}
	return out, lines
}

// TestCombineByLines compares combine with the line-by-line reference
// for names of table fields and others, on sections of repeated, folded,
// malformed and near-miss lines, with values surrounded by spaces and
// tabs and with and without a final line end; one fields serves them all,
// its buffer growing across lookups as a request's does.
func TestCombineByLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pieces := []string{
		"Mcp-Param-Region: eu", "mcp-param-region:\t us \t", "MCP-PARAM-REGION:", "Mcp-Param-Region :x",
		"Mcp-Param-Regions: no", "Mcp-Param-Regio: no", " Mcp-Param-Region: folded", "\tfolded",
		"Mcp-Param-Region:=?base64?ZXU=?=", "Mcp-Param-Region: a, b", "X-Trace: 1", "X-Trace\t: 2",
		"Origin: http://a", "origin:http://b", "Content-Type: application/json", "nocolon", ":novalue",
		"Mcp-Param-Region", "Mcp-Param-Region\r: x", "Caf\xc3\xa9: x", "A: a", "a:b",
	}
	names := []string{"Mcp-Param-Region", "mcp-param-region", "X-Trace", "Origin", "Content-Type", "A", "Absent", "Mcp-Param-Regio"}
	ends := []string{"\r\n", "\n", "\r\n"}
	var f fields
	for n := range 5000 {
		var b bytes.Buffer
		for range rng.IntN(8) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
			b.WriteString(ends[rng.IntN(len(ends))])
		}
		switch n % 3 {
		case 0:
			b.WriteString("\r\n")
			b.WriteString(pieces[rng.IntN(len(pieces))]) // after the section: not a field
		case 1:
			b.WriteString("\n")
		}
		raw := b.Bytes()
		f.reset()
		f.raw = raw
		for _, name := range names {
			got, n := f.combine(name)
			want, wantN := combineByLines(raw, name)
			if !bytes.Equal(got, want) || (got == nil) != (want == nil) || n != wantN {
				t.Fatalf("%q: combine(%q) = %q in %d lines, want %q in %d", raw, name, got, n, want, wantN)
			}
		}
	}
}
