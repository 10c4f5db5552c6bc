package auth

import "bytes"

// credential is what an Authorization field value holds for this
// resource server.
type credential uint8

const (
	credNone      credential = iota // absent, empty, or another scheme
	credBearer                      // Bearer and a well-formed token68
	credMalformed                   // Bearer, but not one well-formed token
)

// bearerToken reads an Authorization field value (all of its lines
// combined with ", ", as the server's header snapshot gives it). The
// scheme is case-insensitive (RFC 9110 §11.1); one or more spaces
// separate it from the token, which must be one token68 (RFC 9110
// §11.2; RFC 6750 §2.1: b64token). Two lines combine into a value with a
// comma, which no token68 holds: malformed. It allocates nothing; token
// borrows from v. The token68 syntax is left to the caller (isToken68),
// which checks it only for a token not in the cache.
func bearerToken(v []byte) (token []byte, c credential) {
	if len(v) == 0 {
		return nil, credNone
	}
	sp := bytes.IndexByte(v, ' ')
	scheme := v
	if sp >= 0 {
		scheme = v[:sp]
	}
	if !equalFold(scheme, "bearer") {
		// Another scheme (Basic, DPoP, …): no credentials this server
		// takes (RFC 6750 §3.1: answered without an error code). A value
		// that starts "Bearer," is malformed below, not another scheme.
		if len(scheme) > 6 && equalFold(scheme[:6], "bearer") && scheme[6] == ',' {
			return nil, credMalformed
		}
		return nil, credNone
	}
	if sp < 0 {
		return nil, credMalformed // "Bearer" alone
	}
	t := v[sp+1:]
	for len(t) > 0 && t[0] == ' ' {
		t = t[1:]
	}
	if len(t) == 0 {
		return nil, credMalformed
	}
	// Not checked yet: whether t is one token68. The cache holds only
	// verified tokens, so a t equal to a cached one is one; the caller
	// checks isToken68 on a cache miss, before anything else.
	return t, credBearer
}

// isToken68 reports whether t is token68: 1*( ALPHA / DIGIT / "-" / "." /
// "_" / "~" / "+" / "/" ) *"=".
func isToken68(t []byte) bool {
	if len(t) == 0 {
		return false
	}
	i := 0
	for ; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~' || c == '+' || c == '/') {
			break
		}
	}
	if i == 0 {
		return false
	}
	for ; i < len(t); i++ {
		if t[i] != '=' {
			return false
		}
	}
	return true
}

// equalFold compares ASCII b with lower-case s, case-insensitively.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// nameFold reports whether the query parameter name p, its percent
// escapes and '+' resolved, is s (lower case) in any case: a client may
// escape any byte of a name (%61ccess_token), and a server behind the
// resource, or the client's library, reads it unescaped. A malformed
// escape is taken as it is written.
func nameFold(p []byte, s string) bool {
	j := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '%' && i+2 < len(p) && unhex(p[i+1]) >= 0 && unhex(p[i+2]) >= 0 {
			c = byte(unhex(p[i+1])<<4 | unhex(p[i+2]))
			i += 2
		} else if c == '+' {
			c = ' '
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if j >= len(s) || c != s[j] {
			return false
		}
		j++
	}
	return j == len(s)
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// queryToken reports whether a request-target carries an access_token
// query parameter (RFC 6750 §2.3), which this server never accepts.
func queryToken(uri []byte) bool {
	q := bytes.IndexByte(uri, '?')
	if q < 0 {
		return false
	}
	rest := uri[q+1:]
	if h := bytes.IndexByte(rest, '#'); h >= 0 {
		rest = rest[:h]
	}
	for len(rest) > 0 {
		p := rest
		if i := bytes.IndexByte(rest, '&'); i >= 0 {
			p, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		if i := bytes.IndexByte(p, '='); i >= 0 {
			p = p[:i]
		}
		if nameFold(p, "access_token") {
			return true
		}
	}
	return false
}
