package decode

import (
	"errors"
	"strconv"
)

// JSON-RPC 2.0 error codes used by this package and by the layers above it.
const (
	CodeParseError     = -32700 // the body is not valid JSON
	CodeInvalidRequest = -32600 // valid JSON, wrong shape; also batches, depth and the ceiling
	CodeMethodNotFound = -32601 // the method (or tool, resource, prompt) does not exist
	CodeInvalidParams  = -32602 // the method exists; the arguments are wrong
	CodeInternalError  = -32603 // the server failed for its own reasons
)

// Sentinel errors. Every error returned by this package is an *Error whose
// Err is one of these, so callers tell failures apart with errors.Is.
var (
	// ErrSyntax reports input that is not RFC 8259 JSON: invalid or
	// overlong UTF-8, an unpaired surrogate escape, a control character in
	// a string, a bad escape or number, a byte order mark, trailing bytes,
	// an empty body. JSON-RPC code -32700.
	ErrSyntax = errors.New("decode: invalid JSON")

	// ErrBatch reports a body whose first non-whitespace byte is '[': a
	// JSON-RPC batch, which rpcedge refuses. JSON-RPC code -32600.
	ErrBatch = errors.New("decode: batch requests are not accepted")

	// ErrDepth reports nesting deeper than the decoder's depth limit.
	// JSON-RPC code -32600.
	ErrDepth = errors.New("decode: nesting too deep")

	// ErrTooLarge reports a body (wire or decoded bytes) longer than the
	// ceiling. JSON-RPC code -32600, HTTP status 413.
	ErrTooLarge = errors.New("decode: body exceeds the size ceiling")

	// ErrNotObject reports a complete, valid JSON text that is not an
	// object. JSON-RPC code -32600.
	ErrNotObject = errors.New("decode: message is not a JSON object")

	// ErrDuplicateName reports a top-level member name that appears twice,
	// compared after unescaping. JSON-RPC code -32600.
	ErrDuplicateName = errors.New("decode: duplicate top-level member name")

	// ErrEnvelope reports a valid object that is not a JSON-RPC 2.0 request
	// or notification: jsonrpc missing or not "2.0", method missing or not
	// a string, an id of a type the endpoint does not accept, or a
	// response-shaped message. JSON-RPC code -32600.
	ErrEnvelope = errors.New("decode: invalid JSON-RPC envelope")

	// ErrEncoding reports a Content-Encoding this package does not decode,
	// or more codings stacked than it allows. JSON-RPC code -32600, HTTP
	// status 415.
	ErrEncoding = errors.New("decode: unsupported content encoding")

	// ErrCorrupt reports a compressed body whose stream is broken. It is a
	// syntax error for the contract: JSON-RPC code -32700.
	ErrCorrupt = errors.New("decode: corrupt compressed body")
)

// Error describes why a body or message was refused. It always wraps one of
// the package's sentinel errors (see Unwrap).
//
// Errors returned by a Decoder point into memory owned by the Decoder or by
// the Message being filled, so that refusing costs no allocation: the value
// stays valid until the next call that resets or reuses that Decoder or
// Message. Copy the struct (e := *err) to keep it longer.
type Error struct {
	// Err is the sentinel error (ErrSyntax, ErrDepth, ...).
	Err error
	// Code is the JSON-RPC error code of the refusal.
	Code int
	// Offset is the byte offset, in the decoded body, at which the failure
	// was detected: the first byte that cannot continue a valid message
	// (len(body) for a body that ends too early; the opening quote of the
	// first name that repeats an earlier one for ErrDuplicateName; the
	// ceiling for ErrTooLarge when the decoded bytes pass it). A refusal
	// of a compressed body by its wire bytes (ErrTooLarge past the wire
	// ceiling, ErrCorrupt) or by a zstd frame's header has the number of
	// bytes decoded before it, as BodyReader reports it.
	Offset int64
	// Reason is a short, static, human-readable explanation.
	Reason string
	// EchoID reports the contract's id rule for the answer: true when the
	// answer must carry the request's id (the message was known to be a
	// well-formed object with an id of an accepted type), false when it
	// must carry null.
	EchoID bool
}

// Error returns a description such as
// "decode: invalid JSON at byte 12: invalid UTF-8".
func (e *Error) Error() string {
	msg := "decode: error"
	if e.Err != nil {
		msg = e.Err.Error()
	}
	b := make([]byte, 0, len(msg)+len(e.Reason)+32)
	b = append(b, msg...)
	b = append(b, " at byte "...)
	b = strconv.AppendInt(b, e.Offset, 10)
	if e.Reason != "" {
		b = append(b, ": "...)
		b = append(b, e.Reason...)
	}
	return string(b)
}

// Unwrap returns the sentinel error.
func (e *Error) Unwrap() error { return e.Err }

// HTTPStatus returns the HTTP status the wire contract gives this refusal:
// 413 for ErrTooLarge, 415 for ErrEncoding, 400 otherwise.
func (e *Error) HTTPStatus() int {
	switch e.Err {
	case ErrTooLarge:
		return 413
	case ErrEncoding:
		return 415
	}
	return 400
}

func (e *Error) set(err error, code int, off int64, reason string) {
	*e = Error{Err: err, Code: code, Offset: off, Reason: reason}
}

// errBadCount is returned for a reader that returned a count outside
// 0..len(p), which io.Reader forbids (as bufio's errNegativeRead).
var errBadCount = errors.New("decode: reader returned an invalid count")
