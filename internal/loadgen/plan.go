package loadgen

import (
	"bytes"
	"compress/flate"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"

	"github.com/rpcedge/rpcedge/decode"
)

// plan is everything a run precomputes: the request templates of each
// shape and the mix. It is read-only once built and shared by all
// connections.
type plan struct {
	cfg   Config
	tgt   target
	cum   [numMixShapes]uint64 // cumulative weights
	total uint64
	v2026 bool
	meta  string // `"_meta":{…}` under 2026-07-28, else ""

	// head[s] is the request head of shape s up to and including
	// "Content-Length: ".
	head [numShapes][]byte

	// The custom body around its id.
	customPre, customPost []byte
	// With Config.BodyGzip: customPre deflated and sync-flushed (not
	// final, byte-aligned), customPost deflated as the final blocks, and
	// the CRC-32 of customPre (gzipBody).
	gzPre, gzPost []byte
	crcPre        uint32
}

const (
	metaKey         = "io.modelcontextprotocol/protocolVersion"
	capabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
)

func newPlan(c Config) (*plan, error) {
	tgt, err := parseTarget(c.URL)
	if err != nil {
		return nil, err
	}
	p := &plan{cfg: c, tgt: tgt, v2026: c.MCPVersion == stateless2026}
	if p.v2026 {
		p.meta = `"_meta":{"` + metaKey + `":"` + c.MCPVersion + `","` + capabilitiesKey + `":{}}`
	}
	var t uint64
	for i, w := range c.Mix {
		t += uint64(w)
		p.cum[i] = t
	}
	p.total = t
	if c.Body == nil && t == 0 {
		return nil, errors.New("loadgen: -mix: every weight is 0")
	}

	var customMethod, customName string
	if c.Body != nil {
		if customMethod, customName, err = p.parseCustom(c.Body); err != nil {
			return nil, err
		}
		if c.BodyGzip {
			p.deflateCustom()
		}
	}
	for s := Shape(0); s < numShapes; s++ {
		var mcp []string
		if c.MCPVersion != "" {
			mcp = append(mcp, "MCP-Protocol-Version: "+c.MCPVersion)
			method, name := "", ""
			switch s {
			case ShapeCall:
				method, name = "tools/call", "echo"
			case ShapeUnknown:
				method = unknownMethod
			case ShapeBadParams:
				method = "tools/call"
				if p.v2026 {
					name = "echo"
				}
			case ShapeCustom:
				method, name = customMethod, customName
			}
			if method != "" {
				mcp = append(mcp, "Mcp-Method: "+headerValue(method))
			}
			if name != "" {
				mcp = append(mcp, "Mcp-Name: "+headerValue(name))
			}
		}
		if s == ShapeCustom && c.Events > 0 {
			mcp = append(mcp, "Accept: application/json, text/event-stream")
		}
		if s == ShapeCustom && c.BodyGzip {
			mcp = append(mcp, "Content-Encoding: gzip")
		}
		p.head[s] = p.appendHead(nil, mcp)
	}
	return p, nil
}

const unknownMethod = "loadgen/no-such-method"

// headerValue returns v as an MCP header value: as is when it is printable
// ASCII, else in the =?base64?…?= form SEP-2243 defines.
func headerValue(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?="
		}
	}
	return v
}

func (p *plan) appendHead(dst []byte, mcp []string) []byte {
	hasHost, hasCT := false, false
	for _, h := range p.cfg.Headers {
		hasHost = hasHost || strings.EqualFold(h.Name, "Host")
		hasCT = hasCT || strings.EqualFold(h.Name, "Content-Type")
	}
	dst = append(dst, "POST "...)
	dst = append(dst, p.tgt.path...)
	dst = append(dst, " HTTP/1.1\r\n"...)
	if !hasHost {
		dst = append(dst, "Host: "...)
		dst = append(dst, p.tgt.host...)
		dst = append(dst, "\r\n"...)
	}
	if !hasCT {
		dst = append(dst, "Content-Type: application/json\r\n"...)
	}
	for _, h := range mcp {
		dst = append(dst, h...)
		dst = append(dst, "\r\n"...)
	}
	for _, h := range p.cfg.Headers {
		dst = append(dst, h.Name...)
		dst = append(dst, ": "...)
		dst = append(dst, h.Value...)
		dst = append(dst, "\r\n"...)
	}
	return append(dst, "Content-Length: "...)
}

// parseCustom splits the custom body around its id and returns the method
// and the target name for the MCP headers.
func (p *plan) parseCustom(body []byte) (method, name string, err error) {
	what := "loadgen: -body"
	if p.cfg.BodyName != "" {
		what += " " + p.cfg.BodyName
	}
	if err := decode.Validate(body); err != nil {
		return "", "", fmt.Errorf("%s: not valid JSON: %v", what, err)
	}
	start := skipWS(body, 0)
	if body[start] != '{' {
		return "", "", fmt.Errorf("%s: want one JSON-RPC request object, not %.20q", what, body[start:decode.SkipValue(body, start)])
	}
	idStart, idEnd := -1, -1
	var it decode.Members
	for it.Reset(body); it.Next(); {
		val := it.Value()
		if it.NameIs("id") {
			if idStart >= 0 {
				return "", "", fmt.Errorf("%s: the member id appears twice", what)
			}
			idStart = cap(body) - cap(val)
			idEnd = idStart + len(val)
		}
	}
	var msg struct {
		Method *string `json:"method"`
		Params *struct {
			Name *string                    `json:"name"`
			URI  *string                    `json:"uri"`
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Method == nil {
		return "", "", fmt.Errorf("%s: want a JSON-RPC request with a string method and params, if any, an object", what)
	}
	method = *msg.Method
	if msg.Params != nil {
		switch method {
		case "tools/call", "prompts/get":
			if msg.Params.Name != nil {
				name = *msg.Params.Name
			}
		case "resources/read":
			if msg.Params.URI != nil {
				name = *msg.Params.URI
			}
		}
	}
	if p.v2026 {
		var v string
		if msg.Params == nil || json.Unmarshal(msg.Params.Meta[metaKey], &v) != nil || v != p.cfg.MCPVersion {
			return "", "", fmt.Errorf("%s: under -mcp-version %s the body must carry params._meta[%q] = %q", what, p.cfg.MCPVersion, metaKey, p.cfg.MCPVersion)
		}
	}
	if idStart >= 0 {
		p.customPre = append([]byte(nil), body[:idStart]...)
		p.customPost = append([]byte(nil), body[idEnd:]...)
	} else {
		p.customPre = append(append([]byte(nil), body[:start+1]...), `"id":`...)
		rest := body[start+1:]
		if skipWS(rest, 0) < len(rest) && rest[skipWS(rest, 0)] == '}' {
			p.customPost = append([]byte(nil), rest...)
		} else {
			p.customPost = append([]byte{','}, rest...)
		}
	}
	return method, name, nil
}

// expectation is what the answer to one request must be.
type expectation struct {
	shape  Shape
	status int
	code   int  // the error code wanted; 0 wants a result
	idNull bool // the answer's id must be null
	echo   bool // the result must echo text
	events int  // a streamed answer of this many notifications, then the response (Config.Events)
	a2a    bool // the events are A2A stream responses, the last one ending the stream (Config.A2A)
	idLen  uint8
	id     [32]byte // the id sent, as JSON
	// text is the text sent as the JSON string it was sent as, quotes
	// included; its array is the expectation's own, reused from one
	// request to the next.
	text []byte
}

func (e *expectation) idBytes() []byte   { return e.id[:e.idLen] }
func (e *expectation) textBytes() []byte { return e.text }

var expectByShape = [numShapes]struct {
	status, code int
	idNull, echo bool
}{
	ShapeCall:      {200, 0, false, true},
	ShapeNotify:    {202, 0, false, false},
	ShapeUnknown:   {404, -32601, false, false},
	ShapeBadParams: {200, -32602, false, false},
	ShapeParse:     {400, -32700, true, false},
	ShapeBatch:     {400, -32600, true, false},
	ShapeCustom:    {200, 0, false, false},
}

// textVariants vary the echoed text beyond its counter, as raw JSON
// string contents: escapes and non-ASCII text must come back as the same
// characters (in whatever correct JSON spelling).
var textVariants = [...]string{
	"",
	` caf\u00e9`,
	` \"q\" \\ \/ \t`,
	" ünï ✓",
	` \ud83d\ude00 emoji`,
	" plain text of some length to vary the size",
	"",
	"!",
}

// generator builds requests. It is not safe for concurrent use; each
// engine worker owns one. Ids are unique across the generators of a run:
// generator i of n issues counters i+1, i+1+n, i+1+2n, …
type generator struct {
	p      *plan
	n      uint64 // the next counter
	stride uint64
	rng    uint64
	body   []byte
}

func newGenerator(p *plan, i, n int, seed uint64) *generator {
	g := &generator{p: p, n: uint64(i) + 1, stride: uint64(n), rng: seed*0x9E3779B97F4A7C15 + uint64(i) + 1}
	if g.rng == 0 {
		g.rng = 1
	}
	g.body = make([]byte, 0, 512+p.cfg.TextSize+len(p.customPre)+len(p.customPost))
	return g
}

func (g *generator) rand() uint64 {
	// xorshift64*
	x := g.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	g.rng = x
	return x * 2685821657736338717
}

func (g *generator) pick() Shape {
	if g.p.cfg.Body != nil {
		return ShapeCustom
	}
	r := g.rand() % g.p.total
	for i, c := range g.p.cum {
		if r < c {
			return Shape(i)
		}
	}
	return ShapeCall
}

// build writes the next request into wire (reusing its storage) and its
// expectation into e, and returns the wire bytes.
func (g *generator) build(wire []byte, e *expectation) []byte {
	p := g.p
	s := g.pick()
	n := g.n
	g.n += g.stride
	ex := &expectByShape[s]
	e.shape, e.status, e.code, e.idNull, e.echo = s, ex.status, ex.code, ex.idNull, ex.echo
	e.events, e.a2a = 0, false
	if s == ShapeCustom {
		e.events, e.a2a = p.cfg.Events, p.cfg.A2A
	}
	e.idLen, e.text = 0, e.text[:0]

	b := g.body[:0]
	switch s {
	case ShapeCall, ShapeParse, ShapeBatch:
		if s == ShapeBatch {
			b = append(b, '[')
		}
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = g.appendID(b, n, e)
		b = append(b, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"`...)
		b = g.appendText(b, n, e)
		b = append(b, `"}`...)
		if p.meta != "" {
			b = append(b, ',')
			b = append(b, p.meta...)
		}
		if s == ShapeParse {
			b = append(b, ',')
		}
		b = append(b, "}}"...)
		if s == ShapeBatch {
			b = append(b, ']')
		}
	case ShapeNotify:
		b = append(b, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`...)
		b = strconv.AppendUint(b, n, 10)
		b = append(b, `,"reason":"loadgen"}}`...)
	case ShapeUnknown:
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = g.appendID(b, n, e)
		b = append(b, `,"method":"`+unknownMethod+`","params":{`...)
		b = append(b, p.meta...)
		b = append(b, "}}"...)
	case ShapeBadParams:
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = g.appendID(b, n, e)
		if p.v2026 {
			b = append(b, `,"method":"tools/call","params":{"name":"echo","arguments":{"text":`...)
			b = strconv.AppendUint(b, n, 10)
			b = append(b, "},"...)
			b = append(b, p.meta...)
			b = append(b, "}}"...)
		} else {
			b = append(b, `,"method":"tools/call","params":["echo","`...)
			b = g.appendText(b, n, e)
			b = append(b, `"]}`...)
		}
	case ShapeCustom:
		if p.gzPre != nil {
			b = g.gzipBody(b, n, e)
			break
		}
		b = append(b, p.customPre...)
		b = g.appendID(b, n, e)
		b = append(b, p.customPost...)
	}
	g.body = b

	wire = append(wire[:0], p.head[s]...)
	wire = strconv.AppendInt(wire, int64(len(b)), 10)
	wire = append(wire, "\r\n\r\n"...)
	return append(wire, b...)
}

// appendID appends the id of counter n: an integer for even counters, a
// string for odd ones (MCP accepts both), and records it in e.
func (g *generator) appendID(b []byte, n uint64, e *expectation) []byte {
	s := len(b)
	if n&1 == 0 {
		b = strconv.AppendUint(b, n, 10)
	} else {
		b = append(b, `"lg-`...)
		b = strconv.AppendUint(b, n, 10)
		b = append(b, '"')
	}
	e.idLen = uint8(copy(e.id[:], b[s:]))
	return b
}

// appendText appends the varying text of counter n, padded to
// Config.TextSize, and records it in e.
func (g *generator) appendText(b []byte, n uint64, e *expectation) []byte {
	s := len(b)
	b = append(b, "lg "...)
	b = strconv.AppendUint(b, n, 16)
	b = append(b, textVariants[g.rand()%uint64(len(textVariants))]...)
	if pad := g.p.cfg.TextSize - (len(b) - s); pad > 0 {
		b = appendFiller(b, int(n%uint64(len(filler))), pad)
	}
	e.text = append(append(append(e.text[:0], '"'), b[s:]...), '"')
	return b
}

// filler pads texts to Config.TextSize: plain words (the size sweep's
// sentence), which a JSON string holds as they are.
const filler = " The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs!!"

// appendFiller appends n bytes of filler repeated, starting at offset at.
func appendFiller(b []byte, at, n int) []byte {
	for n > 0 {
		k := min(n, len(filler)-at)
		b = append(b, filler[at:at+k]...)
		n -= k
		at = 0
	}
	return b
}

// gzipHeader is a gzip member's header: deflate, no flags, no time, no
// operating system named (RFC 1952 §2.3).
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// deflateCustom compresses the custom body's parts around its id once
// (Config.BodyGzip): customPre sync-flushed, so that it ends on a byte
// boundary and not as the last block, and customPost as a stream of its
// own whose last block is final. A deflate stream may go on from a
// flushed one: the blocks are read in order, and customPost's back
// references stay within its own bytes.
func (p *plan) deflateCustom() {
	var pre, post bytes.Buffer
	zw, _ := flate.NewWriter(&pre, flate.BestCompression) // the level is valid
	zw.Write(p.customPre)
	zw.Flush()
	zw.Reset(&post)
	zw.Write(p.customPost)
	zw.Close()
	p.gzPre, p.gzPost = pre.Bytes(), post.Bytes()
	p.crcPre = crc32.ChecksumIEEE(p.customPre)
}

// gzipBody appends the custom body of counter n as one gzip member: the
// header, customPre's blocks, the id in a stored block (its header byte
// 0: not final, stored, the rest of the byte padding; then LEN and its
// complement), customPost's blocks, and the trailer (RFC 1951 §3.2.4,
// RFC 1952 §2.2).
func (g *generator) gzipBody(b []byte, n uint64, e *expectation) []byte {
	p := g.p
	b = append(b, gzipHeader...)
	b = append(b, p.gzPre...)
	at := len(b)
	b = append(b, 0, 0, 0, 0, 0)
	b = g.appendID(b, n, e)
	id := b[at+5:]
	binary.LittleEndian.PutUint16(b[at+1:], uint16(len(id)))
	binary.LittleEndian.PutUint16(b[at+3:], ^uint16(len(id)))
	crc := crc32.Update(p.crcPre, crc32.IEEETable, id)
	crc = crc32.Update(crc, crc32.IEEETable, p.customPost)
	size := len(p.customPre) + len(id) + len(p.customPost)
	b = append(b, p.gzPost...)
	b = binary.LittleEndian.AppendUint32(b, crc)
	return binary.LittleEndian.AppendUint32(b, uint32(size))
}
