package fuzz

// FuzzDecodeDifferential: for any input, decode's verdict equals the one
// the contract gives, computed with the strict reference (see the NOTE in
// reference_test.go for the reference and the deliberate differences).

import (
	"bytes"
	"errors"
	"testing"

	"github.com/rpcedge/rpcedge/decode"
)

func FuzzDecodeDifferential(f *testing.F) {
	for _, b := range contractBodies() {
		addSeed(f, []byte(b))
	}
	for _, b := range corpusTexts(f) {
		addSeed(f, b)
		addSeed(f, asParams(b))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkValid(t, in)
		checkMembers(t, in)
		// Three decoders: the defaults; MCP's id policy with a ceiling
		// inside the body; a small depth limit drawn from the input.
		configs := []decode.Options{
			{},
			{IDs: decode.IDsMCP, MaxBytes: int64(len(in)/2 + 1)},
			{MaxDepth: 1 + len(in)%5},
		}
		var d decode.Decoder
		var m decode.Message
		for _, opts := range configs {
			if err := d.SetOptions(opts); err != nil {
				t.Fatal(err)
			}
			err := d.Decode(in, &m)
			checkVerdict(t, in, opts, &m, err, expect(in, opts))
		}
	})
}

// checkValid compares Valid and Validate with the reference.
func checkValid(t *testing.T, in []byte) {
	t.Helper()
	if maxDepth(in) >= refDepthLimit {
		return // past the reference's fixed limit: it cannot judge
	}
	st := refScan(in)
	want := st == refComplete
	if got := decode.Valid(in); got != want {
		t.Fatalf("Valid(%q) = %v, reference says %v", in, got, want)
	}
	err := decode.Validate(in)
	if (err == nil) != want {
		t.Fatalf("Validate(%q) = %v, reference says valid = %v", in, err, want)
	}
	if err == nil {
		return
	}
	var de *decode.Error
	if !errors.As(err, &de) || de.Err != decode.ErrSyntax || de.Code != decode.CodeParseError {
		t.Fatalf("Validate(%q) = %#v, want an *Error wrapping ErrSyntax with code -32700", in, err)
	}
	if want := refLongestPrefix(in); int(de.Offset) != want {
		t.Fatalf("Validate(%q): offset %d, the reference puts the first failing byte at %d", in, de.Offset, want)
	}
}

// checkVerdict compares a Decoder's verdict on in with want.
func checkVerdict(t *testing.T, in []byte, opts decode.Options, m *decode.Message, err error, want expected) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("options %+v, input %q:\n\tgot  err=%v kind=%v id=%q (%v) method=%q params=%q (%v) answerID=%q\n\twant err=%v code=%d offset %d dups=%v kind=%v id=%q (%v) method=%q params=%q (%v) echo=%v\n\t"+format,
			append([]any{opts, in, err, m.Kind, m.ID, m.IDType, m.Method, m.Params, m.ParamsType, m.AnswerID(),
				want.err, want.code, want.off, want.dupOffs, want.kind, want.id, want.idType, want.method, want.params, want.paramsType, want.echo}, args...)...)
	}
	if want.err == nil {
		if err != nil {
			fail("refused a valid message")
		}
		if m.Kind != want.kind || !bytes.Equal(m.ID, want.id) || m.IDType != want.idType ||
			!bytes.Equal(m.Method, want.method) || !bytes.Equal(m.Params, want.params) || m.ParamsType != want.paramsType {
			fail("message differs")
		}
		if (m.ID == nil) != (want.id == nil) || (m.Params == nil) != (want.params == nil) {
			fail("absent and empty told apart wrongly")
		}
		if m.Error != (decode.Error{}) {
			fail("Message.Error set on a valid message: %+v", m.Error)
		}
		wantAnswer := want.id
		if wantAnswer == nil {
			wantAnswer = []byte("null")
		}
		if !bytes.Equal(m.AnswerID(), wantAnswer) {
			fail("AnswerID")
		}
		return
	}
	var de *decode.Error
	if !errors.As(err, &de) {
		fail("want an *Error")
	}
	if de != &m.Error {
		fail("the error is not Message.Error")
	}
	if m.Kind != decode.KindInvalid {
		fail("Kind of a refused message")
	}
	if !errors.Is(err, want.err) || de.Code != want.code {
		fail("sentinel or code differs (%v, %d)", de.Err, de.Code)
	}
	if de.Reason == "" {
		fail("no reason")
	}
	off := int(de.Offset)
	if want.err == decode.ErrDuplicateName {
		found := false
		for _, o := range want.dupOffs {
			found = found || o == off
		}
		if !found {
			fail("offset %d is not the quote of a repeated name", off)
		}
	} else if off != want.off {
		fail("offset %d", off)
	}
	wantAnswer := []byte("null")
	if want.echo {
		wantAnswer = want.id
	}
	if de.EchoID != want.echo || !bytes.Equal(m.AnswerID(), wantAnswer) {
		fail("id rule: EchoID=%v AnswerID=%q", de.EchoID, m.AnswerID())
	}
	if want.err == decode.ErrEnvelope {
		// What could be read is read: the id decides the answer's id.
		if !bytes.Equal(m.ID, want.id) || m.IDType != want.idType {
			fail("id of an invalid envelope")
		}
	}
}

// checkMembers compares the raw-object walkers (Members, Lookup,
// DuplicateName), which the server uses on params, with the reference's
// reading of a valid object: names unescaped, values raw, in order; a
// name's last value and its count; duplicates after unescaping.
func checkMembers(t *testing.T, in []byte) {
	t.Helper()
	if maxDepth(in) >= refDepthLimit || refScan(in) != refComplete {
		return
	}
	members, ok := refMembers(in)
	if !ok {
		return
	}
	var it decode.Members
	i := 0
	for it.Reset(in); it.Next(); i++ {
		if i >= len(members) {
			t.Fatalf("Members(%q): more members than the reference's %d", in, len(members))
		}
		name := unquote(append(append([]byte{'"'}, it.Name()...), '"'))
		if string(name) != members[i].name || !bytes.Equal(it.Value(), members[i].value) || !it.NameIs(members[i].name) {
			t.Fatalf("Members(%q) #%d: %q = %q, reference %q = %q", in, i, name, it.Value(), members[i].name, members[i].value)
		}
	}
	if i != len(members) {
		t.Fatalf("Members(%q): %d members, reference %d", in, i, len(members))
	}
	count := map[string]int{}
	last := map[string][]byte{}
	for _, m := range members {
		count[m.name]++
		last[m.name] = m.value
	}
	dup := false
	for name, n := range count {
		dup = dup || n > 1
		v, c := decode.Lookup(in, name)
		if c != n || !bytes.Equal(v, last[name]) {
			t.Fatalf("Lookup(%q, %q) = %q, %d; reference %q, %d", in, name, v, c, last[name], n)
		}
	}
	if got := decode.DuplicateName(in); got != dup {
		t.Fatalf("DuplicateName(%q) = %v, reference %v", in, got, dup)
	}
}
