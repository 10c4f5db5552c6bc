package mcp

// NOTE: the header rules (rows 11 and 12 of the wire contract, §4).
//
// checkHeaders runs for every valid message, notifications included,
// before the method is routed. It reads three headers and, for requests
// under 2026-07-28, params._meta, in one pass over params, allocating
// nothing unless it refuses with -32022 (whose data echoes the requested
// version). For a tools/call request that pass is the one serveToolsCall
// needs too: it is made into a pooled Call that Request.Memo hands over.
//
//   - MCP-Protocol-Version absent: 2025-03-26, _meta not consulted. Present
//     and not served: 400 / -32022.
//   - Under 2026-07-28 every request carries
//     params._meta["io.modelcontextprotocol/protocolVersion"] equal to the
//     header (a missing params or _meta, a _meta or key given twice, a
//     value that is not that string: 400 / -32020), Mcp-Method, and for
//     tools/call and prompts/get Mcp-Name (params.name), for
//     resources/read Mcp-Name (params.uri), and on a server with tasks for
//     tasks/get, tasks/update and tasks/cancel Mcp-Name (params.taskId,
//     SEP-2663).
//   - Under every version a present Mcp-Method or Mcp-Name must match the
//     body; Mcp-Name is ignored on methods that name nothing. A body whose
//     source field is absent, duplicated or not a string disagrees with a
//     present Mcp-Name. Either header in more than one line disagrees,
//     whatever the lines combine into (a uri "a, b" and the lines "a" and
//     "b": an intermediary reading one line would see "a").
//   - Notifications are judged by their headers alone: only a present,
//     disagreeing header refuses them.
//   - Mcp-Method and Mcp-Name values of the form =?base64?…?= (markers in
//     lower case, standard alphabet, padding required) are decoded first;
//     a value that does not decode disagrees. Comparison is exact.
//   - For a tools/call, the Mcp-Param headers of the arguments the tool's
//     input schema marks with x-mcp-header (paramheaders.go).

import (
	"bytes"
	"encoding/base64"
	"sync/atomic"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Error codes MCP defines.
const (
	// CodeHeaderMismatch (-32020) refuses a request whose headers are
	// missing or disagree with its body; HTTP status 400.
	CodeHeaderMismatch = -32020
	// CodeUnsupportedVersion (-32022) refuses a protocol version the
	// server does not serve; HTTP status 400, data
	// {"supported":[…],"requested":"…"}.
	CodeUnsupportedVersion = -32022
	// CodeMissingCapability (-32021) refuses a request whose handling needs
	// a client capability that the request's clientCapabilities does not
	// declare (MCP 2026-07-28); HTTP status 400, data
	// {"requiredCapabilities":{"<capability>":{}}}.
	CodeMissingCapability = -32021
)

// Header names, as SEP-2243 and MCP 2026-07-28 spell them. Header names
// compare case-insensitively.
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
)

// Their keys, looked up once (fastserver.HeaderKey).
var (
	keyProtocolVersion = fastserver.NewHeaderKey(HeaderProtocolVersion)
	keyMethod          = fastserver.NewHeaderKey(HeaderMethod)
	keyName            = fastserver.NewHeaderKey(HeaderName)
)

// Keys of params._meta that MCP 2026-07-28 defines.
const (
	metaVersionKey      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities"
	metaLogLevelKey     = "io.modelcontextprotocol/logLevel"
	metaServerInfoKey   = "io.modelcontextprotocol/serverInfo"
)

// metaInvalid refuses, with 400 / -32602 (SEP-2575, as the conformance
// suite checks it), a 2026-07-28 request whose params._meta lacks what
// every request must carry.
func metaInvalid(field, msg string) *fastserver.Error {
	e := fastserver.InvalidParams(field, msg)
	e.Status = 400
	return e
}

func mismatch(msg, header string) *fastserver.Error {
	return &fastserver.Error{
		Status:  400,
		Code:    CodeHeaderMismatch,
		Message: msg,
		Data:    []byte(`{"header":"` + header + `"}`),
	}
}

// The row-12 refusals. They are shared and must not be modified.
var (
	errMethodMissing  = mismatch("header mismatch: the Mcp-Method header is required", HeaderMethod)
	errMethodDiffers  = mismatch("header mismatch: Mcp-Method does not match the method", HeaderMethod)
	errMethodLines    = mismatch("header mismatch: Mcp-Method is given in more than one line", HeaderMethod)
	errNameLines      = mismatch("header mismatch: Mcp-Name is given in more than one line", HeaderName)
	errNameMissing    = mismatch("header mismatch: the Mcp-Name header is required for this method", HeaderName)
	errNameDiffers    = mismatch("header mismatch: Mcp-Name does not match params.name", HeaderName)
	errURIDiffers     = mismatch("header mismatch: Mcp-Name does not match params.uri", HeaderName)
	errTaskIDDiffers  = mismatch("header mismatch: Mcp-Name does not match params.taskId", HeaderName)
	errMetaDiffers    = mismatch("header mismatch: MCP-Protocol-Version does not match params._meta[\""+metaVersionKey+"\"]", HeaderProtocolVersion)
	errMetaDuplicated = mismatch("header mismatch: params._meta or its protocol version key appears twice", HeaderProtocolVersion)

	errParamsMissing       = metaInvalid("params", "params with _meta is required under 2026-07-28")
	errMetaMissing         = metaInvalid("_meta", "params._meta is required under 2026-07-28")
	errMetaVersionMissing  = metaInvalid("_meta."+metaVersionKey, "params._meta[\""+metaVersionKey+"\"] is required")
	errMetaCapsMissing     = metaInvalid("_meta."+metaCapabilitiesKey, "params._meta[\""+metaCapabilitiesKey+"\"] is required")
	errMetaCapsNotObject   = metaInvalid("_meta."+metaCapabilitiesKey, "params._meta[\""+metaCapabilitiesKey+"\"] must be an object")
	errMetaVersionNotValid = metaInvalid("_meta."+metaVersionKey, "params._meta[\""+metaVersionKey+"\"] must be a string")
)

// unsupportedVersion builds the -32022 refusal for the requested value.
func unsupportedVersion(requested []byte) *fastserver.Error {
	data := make([]byte, 0, 96+len(requested))
	data = append(data, `{"supported":[`...)
	for i, v := range Versions() {
		if i > 0 {
			data = append(data, ',')
		}
		data = decode.AppendString(data, v.String())
	}
	data = append(data, `],"requested":`...)
	data = decode.AppendString(data, requested)
	data = append(data, '}')
	return &fastserver.Error{Status: 400, Code: CodeUnsupportedVersion, Message: "Unsupported protocol version", Data: data}
}

// nameSource says which params member a method's Mcp-Name mirrors.
type nameSource uint8

const (
	noName   nameSource = iota
	byName              // params.name
	byURI               // params.uri
	byTaskID            // params.taskId (tasks/get, tasks/update, tasks/cancel)
)

func nameSourceOf(method []byte) nameSource {
	switch string(method) {
	case "tools/call", "prompts/get":
		return byName
	case "resources/read":
		return byURI
	case "tasks/get", "tasks/update", "tasks/cancel":
		return byTaskID
	}
	return noName
}

// checkHeaders decides rows 11 and 12 for the message of r and stores the
// version in use in r.Version. The walk over the params of a
// tools/call request is the one serveToolsCall needs (targetX, checking
// the arguments against the schema of the tool of s they name): it is
// made here, into a Call left in r.Memo for serveToolsCall, so that
// params is walked once.
func checkHeaders(r *fastserver.Request, s *Server) *fastserver.Error {
	m := r.Msg
	v := Version20250326
	hv := r.HeaderOf(keyProtocolVersion)
	if hv != nil {
		var ok bool
		if v, ok = ParseVersion(hv); !ok {
			return unsupportedVersion(hv)
		}
	}
	r.Version = int(v)
	// 2026-07-28 takes a client's disconnect for the request's
	// cancellation; 2025-xx says it is not one (fastserver.ErrClientGone).
	r.GoneCancels = v >= Version20260728
	isRequest := m.Kind == decode.KindRequest
	strict := isRequest && v.Stateless()

	if mh, lines := r.HeaderLines(keyMethod); mh != nil {
		if lines > 1 {
			return errMethodLines
		}
		if !headerCarries(mh, m.Method, false) {
			return errMethodDiffers
		}
	} else if strict {
		return errMethodMissing
	}

	src := nameSourceOf(m.Method)
	if src == byTaskID && (s.tasks == nil || !v.Stateless()) {
		src = noName // no tasks methods here: the method is unknown
	}
	nh, lines := r.HeaderLines(keyName)
	if nh != nil && src == noName {
		nh = nil // a method without a name: the header is ignored
	}
	if nh != nil && lines > 1 {
		return errNameLines
	}
	if isRequest && string(m.Method) == "tools/call" {
		c := getCall(r)
		c.walk(m, s)
		if strict || nh != nil {
			if e := judgeParams(strict, src, hv, nh, &c.w.xp.seen); e != nil {
				c.release()
				return e
			}
		}
		if t := c.headerTool(s); t != nil {
			var idx *argIndex
			if t == c.checked {
				idx = &c.idx // filled by t's schema check in the walk
			}
			if e := checkParamHeaders(r, t, c.w.args, idx, strict); e != nil {
				c.release()
				return e
			}
		}
		r.Memo = c
		return nil
	}
	if !strict && nh == nil {
		return nil
	}

	// One pass over params: the name source and _meta.
	var (
		p    paramsSeen
		it   decode.Members
		want = "name"
	)
	switch src {
	case byURI:
		want = "uri"
	case byTaskID:
		want = "taskId"
	}
	if m.ParamsType == decode.ParamsObject {
		p.object = true
		for it.Reset(m.Params); it.Next(); {
			switch {
			case src != noName && it.NameIs(want):
				p.src = it.Value()
				p.srcN++
			case strict && it.NameIs("_meta"):
				p.meta = it.Value()
				p.metaN++
			}
		}
	}
	return judgeParams(strict, src, hv, nh, &p)
}

// paramsSeen is what a walk over params found for the header rules: the
// member Mcp-Name mirrors (the last one, and how many) and _meta (the
// same); object says params is an object (else nothing was walked).
type paramsSeen struct {
	object      bool // params is an object
	src, meta   []byte
	srcN, metaN int
}

// judgeParams is the part of row 12 that reads params: under 2026-07-28
// (strict) _meta and its keys, then Mcp-Name (nh, nil when absent or
// ignored) against the member it mirrors.
func judgeParams(strict bool, src nameSource, hv, nh []byte, p *paramsSeen) *fastserver.Error {
	errSrc := errNameDiffers
	switch src {
	case byURI:
		errSrc = errURIDiffers
	case byTaskID:
		errSrc = errTaskIDDiffers
	}
	if strict {
		switch {
		case p.metaN > 1:
			return errMetaDuplicated
		case !p.object:
			return errParamsMissing
		case p.metaN == 0 || kindOf(p.meta) != kindObject:
			return errMetaMissing
		}
		var val, caps []byte
		var n, capsN int
		var it decode.Members
		for it.Reset(p.meta); it.Next(); {
			switch {
			case it.NameIs(metaVersionKey):
				val = it.Value()
				n++
			case it.NameIs(metaCapabilitiesKey):
				caps = it.Value()
				capsN++
			}
		}
		switch {
		case n > 1:
			return errMetaDuplicated
		case n == 0:
			return errMetaVersionMissing
		case !isString(val):
			return errMetaVersionNotValid
		case !decode.StringIs(val, hv):
			return errMetaDiffers
		case capsN == 0 || kindOf(caps) != kindObject:
			// Given twice, the last one counts: the contract checks
			// duplicates in params, not deeper (the protocol version
			// key excepted, above), and Lookup, which the capability
			// checks read it with, returns the last.
			return capsRefusal(caps, capsN)
		}
		if src != noName && nh == nil {
			return errNameMissing
		}
	}
	if nh != nil {
		if p.srcN != 1 || !isString(p.src) {
			return errSrc
		}
		if !headerCarries(nh, p.src, true) {
			return errSrc
		}
	}
	return nil
}

// capsRefusal judges _meta's clientCapabilities under 2026-07-28, the
// last of its n occurrences caps: required, and an object.
func capsRefusal(caps []byte, n int) *fastserver.Error {
	switch {
	case n == 0:
		return errMetaCapsMissing
	case kindOf(caps) != kindObject:
		return errMetaCapsNotObject
	}
	return nil
}

// The base64 sentinel of SEP-2243: =?base64?<standard base64>?=.
const (
	b64Prefix = "=?base64?"
	b64Suffix = "?="
)

// b64 decodes sentinel payloads: the standard alphabet, padding required,
// non-canonical trailing bits refused.
var b64 = base64.StdEncoding.Strict()

// headerCarries reports whether the header h carries want: the method's
// bytes, or (jsonString) the text of a raw JSON string. Only a sentinel
// needs headerValue's buffer, so a plain value costs no zeroed array.
func headerCarries(h, want []byte, jsonString bool) bool {
	if !isSentinel(h) {
		return valueIs(h, want, jsonString)
	}
	var buf [256]byte
	v, ok := headerValue(h, &buf)
	return ok && valueIs(v, want, jsonString)
}

// valueIs is headerCarries' comparison of a header's value v.
func valueIs(v, want []byte, jsonString bool) bool {
	if jsonString {
		return decode.StringIs(want, v)
	}
	return bytes.Equal(v, want)
}

// isSentinel reports whether h has the form of the base64 sentinel.
func isSentinel(h []byte) bool {
	return len(h) >= len(b64Prefix)+len(b64Suffix) &&
		string(h[:len(b64Prefix)]) == b64Prefix && string(h[len(h)-len(b64Suffix):]) == b64Suffix
}

// headerValue returns the value a header carries: the header itself, or
// the decoded payload when it has the base64 sentinel, decoded into buf
// when it fits. ok is false for a sentinel whose payload does not decode.
func headerValue(h []byte, buf *[256]byte) (value []byte, ok bool) {
	if !isSentinel(h) {
		return h, true
	}
	payload := h[len(b64Prefix) : len(h)-len(b64Suffix)]
	dst := buf[:]
	if n := b64.DecodedLen(len(payload)); n > len(dst) {
		dst = make([]byte, n)
	}
	n, err := b64.Decode(dst, payload)
	if err != nil {
		return nil, false
	}
	return dst[:n], true
}

// errMetaStream refuses, on a stream, a _meta whose version cannot be
// read.
var errMetaStream = fastserver.InvalidParams("_meta", "params._meta must name the protocol version once, as a string")

// checkStream is check for streams without headers: the version comes
// from params._meta, else it is the one the stream's initialize
// negotiated, else 2025-03-26. A 2025-xx request finds the stream's
// session (cur, begun by its initialize: serveStreamInitialize) in
// Request.Memo (streamSessionOf).
func checkStream(r *fastserver.Request, cur *atomic.Pointer[session]) *fastserver.Error {
	ss := cur.Load()
	e := checkStreamVersion(r, ss)
	if e == nil && ss != nil && r.Msg.Kind == decode.KindRequest && !RequestVersion(r).Stateless() {
		r.Memo = ss
	}
	return e
}

// streamSessionOf returns the session of the stream a 2025-xx request
// came on (checkStream), or nil: none over HTTP, none before the
// stream's initialize.
func streamSessionOf(r *fastserver.Request) *session {
	ss, _ := r.Memo.(*session)
	return ss
}

// checkStreamVersion sets r's version for checkStream: ss's, when the
// stream has one and _meta names none.
func checkStreamVersion(r *fastserver.Request, ss *session) *fastserver.Error {
	reclaim(r)
	m := r.Msg
	r.Version = int(Version20250326)
	if ss != nil {
		r.Version = int(ss.version)
	}
	if m.Kind != decode.KindRequest || m.ParamsType != decode.ParamsObject {
		return nil
	}
	meta, n := decode.Lookup(m.Params, "_meta")
	switch {
	case n > 1:
		return errMetaStream
	case n == 0 || kindOf(meta) != kindObject:
		return nil
	}
	val, n := decode.Lookup(meta, metaVersionKey)
	switch {
	case n == 0:
		return nil
	case n > 1 || !isString(val):
		return errMetaStream
	}
	for _, v := range Versions() {
		if decode.StringIs(val, v.String()) {
			r.Version = int(v)
			if v.Stateless() {
				// Required under 2026-07-28, as over HTTP (judgeParams;
				// found by review on 2026-12-07: stdio served a request
				// without them, or with a string).
				return capsRefusal(decode.Lookup(meta, metaCapabilitiesKey))
			}
			return nil
		}
	}
	return unsupportedVersion(decode.AppendUnquoted(nil, val))
}
