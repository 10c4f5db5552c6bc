package decode

import "sync"

var scanners = sync.Pool{New: func() any { return new(scanner) }}

// Valid reports whether data is one JSON text under RFC 8259, strictly:
// valid UTF-8 with no overlong or surrogate-encoded sequences, every \u
// escape pairing into valid Unicode, no byte order mark, no control
// characters in strings, the number grammar, and nothing after the value
// but space, tab, CR and LF. Unlike a Decoder it accepts any top-level
// value, arrays included, applies no ceiling and no depth limit (nesting
// costs one bit of memory per level), and does not look at duplicate names.
//
// Valid is safe for concurrent use and allocates nothing in steady state.
func Valid(data []byte) bool {
	s := scanners.Get().(*scanner)
	s.reset(noLimit, false)
	ok := s.run(data, true) == scanDone
	scanners.Put(s)
	return ok
}

// Validate is Valid with a reason: it returns nil for valid JSON and
// otherwise an *Error wrapping ErrSyntax with the offset of the first byte
// that cannot continue a valid text (len(data) when data ends too early).
// It allocates only the returned error.
func Validate(data []byte) error {
	s := scanners.Get().(*scanner)
	s.reset(noLimit, false)
	var err error
	if s.run(data, true) != scanDone {
		err = &Error{Err: s.errKind, Code: CodeParseError, Offset: int64(s.errOff), Reason: s.errReason}
	}
	scanners.Put(s)
	return err
}
