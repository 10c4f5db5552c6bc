package a2a

import (
	"bytes"
	"encoding/base64"
	"iter"

	"github.com/rpcedge/rpcedge/decode"
)

// NOTE: a request's parts stay in their JSON form.
//
// A Part is 144 bytes and the smallest part on the wire is 11
// ({"text":""}): decoded into a []Part, a 1 MiB message of empty parts
// held over 13 MB of structs, a label and a copy each, before an agent
// copied them again (issue 18: 65× the body). So a request's parts are
// never decoded into a slice. readMessage validates the parts array in
// place (viewPart: member values as raw JSON, no allocation) and the
// Message keeps one copy of the array's bytes; Parts yields a Part at a
// time, decoded as it is reached; the encoder writes the raw member
// values back (appendPartView) without decoding them; OfKind is a view
// over the same bytes, so an agent that echoes the text parts copies
// nothing. The decoded form of a message thus costs about its size, and
// the contract's bound (§3: at most 8× the body) holds with room to spare.
//
// Parts an agent builds (PartsOf) are held as the []Part it gave.

// Parts is the content of a Message or an Artifact: a read-only sequence
// of parts. The zero value is empty.
//
// Parts made with PartsOf hold the Part values given. The parts of a
// client's message (Call.Message.Parts) are held as the JSON the client
// sent, validated and copied out of the request (it costs their bytes,
// not a Part each); All decodes each Part as it is reached. Parts is
// cheap to copy (a few words) and may be kept and shared: a Reply may
// carry Call.Message.Parts, or a view of it (OfKind), without copying
// anything. Parts is safe for concurrent reads; nothing in it may be
// modified.
type Parts struct {
	list []Part  // parts given as values (PartsOf)
	raw  []byte  // or a JSON array of parts in the shape of ver, validated
	ver  Version // the shape of raw
	n    int     // the number of parts (of kind, when kind is set)
	kind PartKind
	buf  *sharedBuf[Part] // holds list when grown by appendParts
}

// PartsOf returns the Parts holding ps, in order. ps is kept, not
// copied: do not modify it afterwards.
func PartsOf(ps ...Part) Parts { return Parts{list: ps, n: len(ps)} }

// Len returns the number of parts.
func (ps Parts) Len() int { return ps.n }

// All yields each part with its index, in order. For the parts of a
// client's message each Part is decoded as it is reached: its strings
// and Raw are new on each call (its Data and Metadata borrow from ps and
// must not be modified).
func (ps Parts) All() iter.Seq2[int, Part] {
	return func(yield func(int, Part) bool) {
		i := 0
		ps.each(func(p *Part, pv partView) bool {
			var part Part
			if p != nil {
				part = *p
			} else {
				part = pv.part()
			}
			ok := yield(i, part)
			i++
			return ok
		})
	}
}

// OfKind returns the parts of kind k, in order: a view over the same
// parts, which copies nothing (it walks them once to count).
func (ps Parts) OfKind(k PartKind) Parts {
	v := ps
	v.kind, v.n = k, 0
	v.each(func(*Part, partView) bool { v.n++; return true })
	return v
}

// Slice returns the parts as a new slice. It costs a Part (144 bytes)
// per part: prefer All.
func (ps Parts) Slice() []Part {
	out := make([]Part, 0, ps.n)
	for _, p := range ps.All() {
		out = append(out, p)
	}
	return out
}

// each calls f for each part (of ps.kind, when set) until f returns
// false: with the Part for a list, with p nil and its view for raw JSON.
func (ps Parts) each(f func(p *Part, pv partView) bool) {
	if ps.raw == nil {
		for i := range ps.list {
			if p := &ps.list[i]; ps.kind == 0 || p.Kind == ps.kind {
				if !f(p, partView{}) {
					return
				}
			}
		}
		return
	}
	eachElement(ps.raw, func(_ int, e []byte) bool {
		pv, _ := viewPart(e, ps.ver)
		if ps.kind != 0 && pv.kind != ps.kind {
			return true
		}
		return f(nil, pv) // by value: a pointer would escape, a partView per part
	})
}

// appendParts returns ps followed by more, for an artifact built in
// chunks: in the room after ps when ps was made so and nothing else took
// it, so that a chunk costs its own parts, not all before it.
func (ps Parts) appendParts(more Parts) Parts {
	have, b := ps.list, ps.buf
	if ps.raw != nil || ps.kind != 0 {
		have, b = ps.Slice(), nil
	}
	add := more.list
	if more.raw != nil || more.kind != 0 {
		add = more.Slice()
	}
	list, b := appendShared(b, have, add...)
	return Parts{list: list, n: len(list), buf: b}
}

// size estimates the memory ps holds, for the task store's budget.
func (ps Parts) size() int64 {
	if ps.raw != nil {
		return 64 + int64(len(ps.raw))
	}
	var n int64
	if ps.buf.holds(ps.list) {
		n += int64(len(ps.buf.items)-len(ps.list)) * partSlot
	}
	for i := range ps.list {
		p := &ps.list[i]
		n += 160 + int64(len(p.Text)+len(p.Raw)+len(p.URL)+len(p.Data)+len(p.Filename)+len(p.MediaType)+len(p.Metadata))
	}
	return n
}

// partView is a part of a request as raw JSON member values, whatever the
// shape it came in: nil for a member absent or null.
type partView struct {
	kind                                  PartKind
	text, raw, url, data, name, media, md []byte
}

// partError says what is wrong with a part: member is the path below the
// part ("" for the part itself, ".text", ".file.uri", …), msg the rest of
// the sentence (" must be a string"). The zero value means no error.
type partError struct{ member, msg string }

// value returns v, or nil when v is null.
func value(v []byte) []byte {
	if isNull(v) {
		return nil
	}
	return v
}

// viewPart reads the part v in the shape of ver, checking what readPart
// used to check, in the same order, without allocating (but for a base64
// value, which is decoded once to be checked).
func viewPart(v []byte, ver Version) (partView, partError) {
	if ver == Version03 {
		return viewPart03(v)
	}
	var pv partView
	if v[0] != '{' {
		return pv, partError{"", " must be an object"}
	}
	var it decode.Members
	for it.Reset(v); it.Next(); {
		val := value(it.Value())
		switch {
		case it.NameIs("text"):
			pv.text = val
		case it.NameIs("raw"):
			pv.raw = val
		case it.NameIs("url"):
			pv.url = val
		case it.NameIs("data"):
			// A google.protobuf.Value: ProtoJSON reads null as the
			// value null (NULL_VALUE), not as absent, for this type
			// alone (found by review on 2026-12-07).
			pv.data = it.Value()
		case it.NameIs("filename"):
			pv.name = val
		case it.NameIs("mediaType"):
			pv.media = val
		case it.NameIs("metadata"):
			pv.md = val
		}
	}
	n := 0
	for _, c := range [...][]byte{pv.text, pv.raw, pv.url, pv.data} {
		if c != nil {
			n++
		}
	}
	if n != 1 {
		return pv, partError{"", " must have exactly one of text, raw, url, data"}
	}
	switch {
	case pv.text != nil:
		pv.kind = PartText
		if pv.text[0] != '"' {
			return pv, partError{".text", " must be a string"}
		}
	case pv.raw != nil:
		pv.kind = PartFile
		if !validBase64(pv.raw) {
			return pv, partError{".raw", " must be a base64 string"}
		}
	case pv.url != nil:
		pv.kind = PartFile
		if len(pv.url) <= 2 || pv.url[0] != '"' {
			return pv, partError{".url", " must be a non-empty string"}
		}
	default:
		pv.kind = PartData
	}
	if pv.name != nil && pv.name[0] != '"' {
		return pv, partError{".filename", " must be a string"}
	}
	if pv.media != nil && pv.media[0] != '"' {
		return pv, partError{".mediaType", " must be a string"}
	}
	if pv.md != nil && pv.md[0] != '{' {
		return pv, partError{".metadata", " must be an object"}
	}
	return pv, partError{}
}

// viewPart03 is viewPart for a 0.3 part: kind "text" with text, "file"
// with file {bytes or uri, name, mimeType}, or "data" with a data object;
// optional metadata.
func viewPart03(v []byte) (partView, partError) {
	var pv partView
	if v[0] != '{' {
		return pv, partError{"", " must be an object"}
	}
	var kind, text, file, data []byte
	var it decode.Members
	for it.Reset(v); it.Next(); {
		val := it.Value()
		switch {
		case it.NameIs("kind"):
			kind = val
		case it.NameIs("text"):
			text = val
		case it.NameIs("file"):
			file = val
		case it.NameIs("data"):
			data = val
		case it.NameIs("metadata"):
			pv.md = value(val)
		}
	}
	switch {
	case kind == nil:
		return pv, partError{".kind", " is required"}
	case decode.StringIs(kind, "text"):
		pv.kind = PartText
		if text == nil || text[0] != '"' {
			return pv, partError{".text", " must be a string"}
		}
		pv.text = text
	case decode.StringIs(kind, "file"):
		pv.kind = PartFile
		if e := viewFile03(&pv, file); e.msg != "" {
			return pv, e
		}
	case decode.StringIs(kind, "data"):
		pv.kind = PartData
		if data == nil || data[0] != '{' {
			return pv, partError{".data", " must be an object"}
		}
		pv.data = data
	default:
		return pv, partError{".kind", ` must be "text", "file" or "data"`}
	}
	if pv.md != nil && pv.md[0] != '{' {
		return pv, partError{".metadata", " must be an object"}
	}
	return pv, partError{}
}

func viewFile03(pv *partView, v []byte) partError {
	if v == nil || v[0] != '{' {
		return partError{".file", " must be an object"}
	}
	var it decode.Members
	for it.Reset(v); it.Next(); {
		val := value(it.Value())
		switch {
		case it.NameIs("bytes"):
			pv.raw = val
		case it.NameIs("uri"):
			pv.url = val
		case it.NameIs("name"):
			pv.name = val
		case it.NameIs("mimeType"):
			pv.media = val
		}
	}
	if (pv.raw != nil) == (pv.url != nil) {
		return partError{".file", " must have exactly one of bytes, uri"}
	}
	if pv.raw != nil {
		if !validBase64(pv.raw) {
			return partError{".file.bytes", " must be a base64 string"}
		}
	} else if len(pv.url) <= 2 || pv.url[0] != '"' {
		return partError{".file.uri", " must be a non-empty string"}
	}
	if pv.name != nil && pv.name[0] != '"' {
		return partError{".file.name", " must be a string"}
	}
	if pv.media != nil && pv.media[0] != '"' {
		return partError{".file.mimeType", " must be a string"}
	}
	return partError{}
}

// part decodes the view into a Part: strings and Raw are new, Data and
// Metadata borrow from the view's bytes (capped, so an append copies).
func (pv *partView) part() Part {
	p := Part{Kind: pv.kind}
	switch {
	case pv.text != nil:
		p.Text, _ = unquote(pv.text)
	case pv.raw != nil:
		p.Raw, _ = decodeBase64(pv.raw)
	case pv.url != nil:
		p.URL, _ = unquote(pv.url)
	case pv.data != nil:
		p.Data = pv.data[:len(pv.data):len(pv.data)]
	}
	if pv.name != nil {
		p.Filename, _ = unquote(pv.name)
	}
	if pv.media != nil {
		p.MediaType, _ = unquote(pv.media)
	}
	if pv.md != nil {
		p.Metadata = pv.md[:len(pv.md):len(pv.md)]
	}
	return p
}

// base64s are the encodings a base64 value may use, tried in order
// (ProtoJSON accepts standard and URL-safe, padded or not).
var base64s = [...]*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding}

// decodeBase64 decodes the raw JSON string v in any of base64s. The
// result is never nil when ok.
func decodeBase64(v []byte) (b []byte, ok bool) {
	if len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	s := v[1 : len(v)-1]
	if bytes.IndexByte(s, '\\') >= 0 {
		s = decode.AppendUnquoted(nil, v)
	}
	buf := make([]byte, base64.StdEncoding.DecodedLen(len(s))+3)
	for _, enc := range base64s {
		if n, err := enc.Decode(buf, s); err == nil {
			return buf[:n:n], true
		}
	}
	return nil, false
}

// validBase64 reports whether the raw JSON string v is base64 in one of
// base64s. A value in the standard alphabet, padded, is checked without
// allocating; another is decoded once.
func validBase64(v []byte) bool {
	if isStdBase64(v) {
		return true
	}
	_, ok := decodeBase64(v)
	return ok
}

// isStdBase64 reports whether the raw JSON string v holds padded standard
// base64 with no escapes and no line breaks: the form written back as it
// is.
func isStdBase64(v []byte) bool {
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	s := v[1 : len(v)-1]
	if len(s)%4 != 0 {
		return false
	}
	pad := 0
	if len(s) > 0 && s[len(s)-1] == '=' {
		pad = 1
		if s[len(s)-2] == '=' {
			pad = 2
		}
	}
	body := s[:len(s)-pad]
	for _, c := range body {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	if pad == 0 {
		return true
	}
	// The bits the padding drops must be zero: the canonical form, which
	// decoding and encoding again would give back unchanged.
	last := base64Digit(body[len(body)-1])
	if pad == 2 {
		return last&0x0f == 0
	}
	return last&0x03 == 0
}

// base64Digit returns the value of c, a digit of the standard alphabet.
func base64Digit(c byte) byte {
	switch {
	case c >= 'A' && c <= 'Z':
		return c - 'A'
	case c >= 'a' && c <= 'z':
		return c - 'a' + 26
	case c >= '0' && c <= '9':
		return c - '0' + 52
	case c == '+':
		return 62
	}
	return 63
}

// appendPartView10 appends the raw part pv in the 1.0 shape: member values
// are written as they came (valid JSON, validated), base64 in the
// standard alphabet, padded.
func appendPartView10(dst []byte, pv *partView) []byte {
	switch pv.kind {
	case PartFile:
		if pv.raw != nil {
			dst = append(dst, `{"raw":`...)
			dst = appendBase64(dst, pv.raw)
		} else {
			dst = append(dst, `{"url":`...)
			dst = append(dst, pv.url...)
		}
	case PartData:
		dst = append(dst, `{"data":`...)
		dst = append(dst, pv.data...)
	default:
		dst = append(dst, `{"text":`...)
		dst = append(dst, pv.text...)
	}
	if len(pv.name) > 2 {
		dst = append(dst, `,"filename":`...)
		dst = append(dst, pv.name...)
	}
	if len(pv.media) > 2 {
		dst = append(dst, `,"mediaType":`...)
		dst = append(dst, pv.media...)
	}
	if pv.md != nil {
		dst = append(dst, `,"metadata":`...)
		dst = append(dst, pv.md...)
	}
	return append(dst, '}')
}

// appendPartView03 appends the raw part pv in the 0.3 shape.
func appendPartView03(dst []byte, pv *partView) []byte {
	switch pv.kind {
	case PartFile:
		dst = append(dst, `{"kind":"file","file":{`...)
		if len(pv.name) > 2 {
			dst = append(dst, `"name":`...)
			dst = append(dst, pv.name...)
			dst = append(dst, ',')
		}
		if len(pv.media) > 2 {
			dst = append(dst, `"mimeType":`...)
			dst = append(dst, pv.media...)
			dst = append(dst, ',')
		}
		if pv.raw != nil {
			dst = append(dst, `"bytes":`...)
			dst = appendBase64(dst, pv.raw)
		} else {
			dst = append(dst, `"uri":`...)
			dst = append(dst, pv.url...)
		}
		dst = append(dst, '}')
	case PartData:
		dst = append(dst, `{"kind":"data","data":`...)
		if isObject(pv.data) {
			dst = append(dst, pv.data...)
		} else {
			dst = append(dst, `{"value":`...)
			dst = append(dst, pv.data...)
			dst = append(dst, '}')
		}
	default:
		dst = append(dst, `{"kind":"text","text":`...)
		dst = append(dst, pv.text...)
	}
	if pv.md != nil {
		dst = append(dst, `,"metadata":`...)
		dst = append(dst, pv.md...)
	}
	return append(dst, '}')
}

// appendBase64 appends the validated base64 string v as a JSON string in
// the standard alphabet, padded: as it is when it already is, else
// decoded and encoded again.
func appendBase64(dst, v []byte) []byte {
	if isStdBase64(v) {
		return append(dst, v...)
	}
	b, _ := decodeBase64(v)
	dst = append(dst, '"')
	dst = base64.StdEncoding.AppendEncode(dst, b)
	return append(dst, '"')
}
