// Package decode decodes JSON-RPC 2.0 messages strictly and without
// allocating: one message per body, as rpcedge's /mcp and /a2a endpoints
// take them, or one message per line of a newline-delimited stream (MCP's
// stdio transport).
//
// # Decoding
//
// A Decoder classifies one body as a request, a notification or invalid,
// and fills a caller-owned Message: the id as the raw bytes that came (so
// 12345678901234567890123 and "caf\u00e9" are echoed exactly), the method
// with escapes resolved, and the params as a raw span. For an invalid body
// it gives the JSON-RPC code, a short reason, the byte offset and the id
// rule of the answer (Message.AnswerID).
//
//	var d decode.Decoder // the zero value uses the defaults
//	var m decode.Message // reuse it: decoding then allocates nothing
//	if err := d.Decode(body, &m); err != nil {
//		answer = decode.AppendError(answer, m.AnswerID(), m.Error.Code, m.Error.Reason, nil)
//	}
//
// The whole body is validated, params included at every depth, against
// RFC 8259 with no leniency: UTF-8 only (no invalid, overlong or
// surrogate-encoded sequences), every \u escape decoding to valid Unicode,
// no byte order mark, no control characters in strings, the number grammar,
// and nothing after the value but space, tab, CR and LF. Member names and
// string values are compared after unescaping and case-sensitively; a
// top-level member name given twice is refused.
//
// # The order of verdicts
//
// The checks follow rows 7 to 10 of rpcedge's wire contract. While the
// body arrives: a first non-whitespace byte '[' (a batch) is refused at
// once; otherwise the first syntax error, depth overflow or ceiling
// crossing in byte order decides. Once the body is complete and valid: not
// an object, a duplicate top-level name, then the envelope (jsonrpc "2.0",
// a string method, an id of an accepted type, not a response). The verdict,
// code and offset, is the same however the body is split into chunks.
//
// # Streaming
//
// Write feeds a body piece by piece and reports a refusal as soon as the
// bytes decide it; Finish decodes what was fed. DecodeReader reads a body
// from an io.Reader and stops reading at the verdict. DecodeBody does the
// same through the Content-Encoding layer (BodyReader): identity, gzip,
// deflate (zlib) and zstd, up to two stacked.
//
// # Reading params
//
// The layers above read members of params without decoding them into Go
// values: Members iterates over an object's members (NextName, Rest and
// TakeValue let a walk of a value, such as a schema check, find its end
// itself), Lookup finds one by name, SkipValue steps over a value,
// DuplicateName finds a repeated name, StringIs compares a string value
// with a text and StringsEqual two string values with each other (escapes
// resolved: "é" and "\u00e9" are equal), AppendUnquoted unescapes. They
// trust their input to be valid JSON, as a decoded Message's Params is (or
// as Valid has said), so they skip by bracket counting and never validate
// again; given anything else their results are unspecified, but they
// never panic or loop. Only AppendUnquoted allocates, growing the slice
// it appends to; DuplicateName allocates for an object of more than 8,192
// members or with an escaped name over 4 KiB (see Decode).
//
// # Speed
//
// On amd64 machines with AVX2 (and BMI1, BMI2, PCLMULQDQ), containers with
// at least 1 KiB ahead of them — params of a large tool call, or any
// container under Valid — are validated by a SIMD stage in Go assembly
// generated with avo (decode/internal/asmgen): stage 1 classifies 64-byte
// blocks into bitmasks and checks UTF-8 (AVX2, or AVX-512 where the CPU
// has AVX-512BW), stage 2 checks strings, escapes, numbers, literals and
// the grammar with bit arithmetic over those masks and walks only the
// brackets. Inside a long string, blocks of plain content (no control
// character, valid UTF-8, escapes of one letter) are skipped by a third
// kernel at a few compares per 32 bytes, the stages' carry set as they
// would have left it: a long text argument is validated at 10–50 GB/s
// (BenchmarkLongString). Blocks are numbered from the start of the body and what
// crosses a block edge is carried in the Decoder, so the stage sees the
// same blocks however the body is split; the scalar scanner keeps the
// envelope (the top-level object's members). The stage never decides a
// refusal: when a block shows anything wrong, the scalar scanner rescans
// from where the container began and gives the verdict, code and offset,
// so they are byte for byte those of the scalar scanner whatever the path.
//
// Elsewhere (other architectures, -tags purego, no AVX2, or
// GODEBUG=cpu.avx2=off) the scalar scanner does all the work: the
// stage's pure-Go twin gives the same verdicts but is slower than it, and
// serves to test the assembly. GODEBUG=cpu.avx512f=off keeps the AVX2
// kernel on an AVX-512 machine.
//
// # Lifetimes
//
// A Message's ID, Method and Params borrow from the body passed to Decode,
// or from the Decoder's buffer after Write, DecodeReader and DecodeBody, or
// from the Framer's buffers: they stay valid until that memory is reused by
// the next decode. Errors returned by a Decoder are *Error values that live
// in the Message or the Decoder, with the same lifetime. Copy what you keep.
//
// Decoders, Messages, BodyReaders and Framers are not safe for concurrent
// use; give each goroutine its own (a sync.Pool works well). Valid,
// Validate and the Append functions are safe for concurrent use.
//
// # Security
//
// Every limit has a safe default and 0 means that default, never
// "unlimited". The body ceiling (Options.MaxBytes, default 1 MiB) applies to
// wire bytes and to decoded bytes, and a Decoder never holds more than the
// ceiling plus one byte of body; the depth limit (Options.MaxDepth, default
// 1000) bounds nesting at one bit of memory per level; duplicate detection
// stays linear in the number of members; a compression bomb is refused
// after at most the ceiling of output; a zstd frame may declare any window
// up to 8 MiB (RFC 9659), and is decoded with the history the ceiling (or
// the frame itself) needs, at most ZstdHistory(ceiling); a body whose
// frames keep needing larger windows (each making the decoder allocate a
// new history) is refused once they would pass three times that. A
// source that returns nothing 100 times in a row gets io.ErrNoProgress,
// compressed or not.
package decode
