//go:build !race

package decode_test

// Zero allocations once warm: Decode, Write/Finish in any chunking,
// DecodeReader and Valid, for valid messages and for every refusal.

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

// allocInput is one body and the options to decode it under.
type allocInput struct {
	name string
	body []byte
	opts decode.Options
}

// allocInputs gathers the JSONTestSuite y_ files (as they are and as the
// params of a request), the contract table (every refusal included), the
// bench fixtures and generated bodies.
func allocInputs(tb testing.TB) []allocInput {
	var in []allocInput
	if files, ok := loadCorpus(tb, "jsontestsuite", "y_*.json"); ok {
		for _, f := range files {
			in = append(in, allocInput{"y/" + f.name, f.data, decode.Options{}})
			body := append([]byte(`{"jsonrpc":"2.0","id":"a-1","method":"m","params":`), f.data...)
			in = append(in, allocInput{"y/params/" + f.name, append(body, '}'), decode.Options{}})
		}
	}
	for _, tc := range contractCases() {
		in = append(in, allocInput{"contract/" + tc.name, []byte(tc.body), tc.opts})
	}
	for _, f := range benchFixtures(tb) {
		in = append(in, allocInput{"bench/" + f.name, f.data, decode.Options{MaxBytes: 2 * mib}})
	}
	for i, b := range generatedBodies(123, 300) {
		in = append(in, allocInput{fmt.Sprintf("generated/%d", i), b, decode.Options{IDs: decode.IDsMCP}})
	}
	return in
}

// allocRuns is how many runs AllocsPerRun averages for a body of n bytes.
func allocRuns(n int) int {
	switch {
	case n > 256<<10:
		return 2
	case n > 16<<10:
		return 5
	}
	return 20
}

// writeChunks feeds body to d in pieces of size bytes.
func writeChunks(d *decode.Decoder, body []byte, size int) {
	for len(body) > 0 {
		n := min(size, len(body))
		if _, err := d.Write(body[:n]); err != nil {
			return
		}
		body = body[n:]
	}
}

func TestDecodeAllocs(t *testing.T) {
	var m decode.Message
	rd := bytes.NewReader(nil)
	for _, in := range allocInputs(t) {
		d := newDecoder(t, in.opts)
		body := in.body
		runs := allocRuns(len(body))
		for _, c := range []struct {
			how string
			f   func()
		}{
			{"Decode", func() { d.Decode(body, &m) }},
			{"Write 4 KiB pieces", func() { d.Reset(); writeChunks(d, body, 4<<10); d.Finish(&m) }},
			{"Write 7-byte pieces", func() { d.Reset(); writeChunks(d, body, 7); d.Finish(&m) }},
			{"DecodeReader", func() { rd.Reset(body); d.DecodeReader(rd, &m) }},
			{"DecodeBody identity", func() { rd.Reset(body); d.DecodeBody(rd, decode.Encoding{}, &m) }},
		} {
			if c.how == "Write 7-byte pieces" && len(body) > 64<<10 && testing.Short() {
				continue
			}
			if n := testing.AllocsPerRun(runs, c.f); n != 0 {
				t.Errorf("%s (%d bytes, %+v): %s: %v allocations per run, want 0", in.name, len(body), in.opts, c.how, n)
			}
		}
	}
}

// TestDecodeAllocsMixed decodes every input in turn with one warm Decoder
// per option set, as a server reusing its decoders would.
func TestDecodeAllocsMixed(t *testing.T) {
	inputs := allocInputs(t)
	decoders := map[decode.Options]*decode.Decoder{}
	for _, in := range inputs {
		if decoders[in.opts] == nil {
			decoders[in.opts] = newDecoder(t, in.opts)
		}
	}
	var m decode.Message
	rd := bytes.NewReader(nil)
	all := func() {
		for _, in := range inputs {
			d := decoders[in.opts]
			d.Decode(in.body, &m)
			d.Reset()
			writeChunks(d, in.body, 4<<10)
			d.Finish(&m)
		}
	}
	if n := testing.AllocsPerRun(2, all); n != 0 {
		t.Errorf("%v allocations per pass over %d inputs, want 0", n, len(inputs))
	}
	reader := func() {
		for _, in := range inputs {
			rd.Reset(in.body)
			decoders[in.opts].DecodeReader(rd, &m)
		}
	}
	if n := testing.AllocsPerRun(2, reader); n != 0 {
		t.Errorf("DecodeReader: %v allocations per pass over %d inputs, want 0", n, len(inputs))
	}
}

// TestDecodeReaderCeilingAllocs reads bodies that end within 512 bytes of
// the ceiling, or pass it. The Decoder's buffer has reached its final
// size (the ceiling plus one byte) after the first body; reading the
// same bodies again must not allocate.
func TestDecodeReaderCeilingAllocs(t *testing.T) {
	var m decode.Message
	rd := bytes.NewReader(nil)
	for _, c := range []struct {
		maxBytes int64
		body     string
	}{
		{0, `{"jsonrpc":"2.0","method":"m","params":"` + strings.Repeat("x", mib-100) + `"}`},
		{0, strings.Repeat(" ", mib+1)},
		{40, `{"jsonrpc":"2.0","method":"m"}`},
		{40, `{"jsonrpc":"2.0","method":"m","params":{"a":1}}`},
		{600, `{"jsonrpc":"2.0","method":"m","params":"` + strings.Repeat("x", 500) + `"}`},
	} {
		d := newDecoder(t, decode.Options{MaxBytes: c.maxBytes})
		body := []byte(c.body)
		n := testing.AllocsPerRun(3, func() { rd.Reset(body); d.DecodeReader(rd, &m) })
		if n != 0 {
			t.Errorf("DecodeReader of %d bytes with MaxBytes %d: %v allocations per run, want 0", len(body), c.maxBytes, n)
		}
	}
}

func TestValidAllocs(t *testing.T) {
	for _, in := range allocInputs(t) {
		body := in.body
		if n := testing.AllocsPerRun(allocRuns(len(body)), func() { decode.Valid(body) }); n != 0 {
			t.Errorf("Valid(%s): %v allocations per run, want 0", in.name, n)
		}
		if !decode.Valid(body) {
			continue
		}
		if n := testing.AllocsPerRun(allocRuns(len(body)), func() { decode.Validate(body) }); n != 0 {
			t.Errorf("Validate(%s), valid: %v allocations per run, want 0", in.name, n)
		}
	}
	deep := []byte(nested("[", "]", 100000, ""))
	if n := testing.AllocsPerRun(5, func() { decode.Valid(deep) }); n != 0 {
		t.Errorf("Valid(100000 nested arrays): %v allocations per run, want 0", n)
	}
}

// TestAnswerIDAllocs: reading a verdict costs nothing either.
func TestAnswerIDAllocs(t *testing.T) {
	var d decode.Decoder
	var m decode.Message
	body := []byte(`{"jsonrpc":"2.0","id":"x","result":1}`)
	n := testing.AllocsPerRun(20, func() {
		d.Decode(body, &m)
		_ = m.AnswerID()
		_ = m.Error.HTTPStatus()
	})
	if n != 0 {
		t.Errorf("%v allocations per run", n)
	}
}
