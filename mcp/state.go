package mcp

// NOTE: requestState (MCP 2026-07-28, SEP-2322).
//
// A request that needs input from the client is answered with an
// input_required result: the input requests and a requestState that the
// client sends back, unchanged, with its inputResponses. The server keeps
// nothing between rounds, so any instance of a fleet that shares the key
// can take the next one. The state carries what the next round needs: the
// answers of earlier rounds (a handler is run again from the start each
// round and finds them where it asks), the handler's own state (SetState),
// what it is bound to (the method, the tool or prompt name and, under
// WithAuth, a hash of the token's issuer, subject and client) and when it
// expires:
//
//	state = base64url(body) "." base64url(HMAC-SHA256(key, body))
//	body  = {"v":1,"b":"<method> <name>[ <holder>]","x":<expiry, unix ms>,"a":{answers},"u":<handler state>}
//
// A state that does not verify (tampered, another key), has expired, is
// bound to another method, name or token holder, or is longer than the
// limit is refused with -32602. The body is readable by the client: it holds the
// client's own answers and whatever the handler puts in SetState, which
// therefore must hold no secret.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Defaults of the requestState options.
const (
	defaultStateTTL = 10 * time.Minute
	defaultStateMax = 64 << 10
	minStateKey     = 32
)

// WithStateKey sets the HMAC-SHA256 key that protects requestState (at
// least 32 bytes). Every instance that may take another's next round must
// have the same key. Default: 32 random bytes drawn by New, so a state is
// good only on the process that issued it.
func WithStateKey(key []byte) Option {
	return func(s *Server) error {
		if len(key) < minStateKey {
			return fmt.Errorf("mcp: a state key needs at least %d bytes, got %d", minStateKey, len(key))
		}
		s.states.key = append([]byte(nil), key...)
		return nil
	}
}

// WithStateTTL sets how long a requestState stays good after it is
// issued. Default 10 minutes.
func WithStateTTL(d time.Duration) Option {
	return func(s *Server) error {
		if d <= 0 {
			return errors.New("mcp: a state TTL must be positive")
		}
		s.states.ttl = d
		return nil
	}
}

// WithStateLimit sets the largest requestState, in bytes, the server
// issues: a round whose answers and handler state would make a longer one
// fails with -32603. Default 64 KiB.
func WithStateLimit(n int) Option {
	return func(s *Server) error {
		if n < 256 {
			return errors.New("mcp: a state limit below 256 bytes leaves no room")
		}
		s.states.max = n
		return nil
	}
}

type stateCodec struct {
	key []byte
	ttl time.Duration
	max int
}

func (c *stateCodec) generateKey() error {
	c.key = make([]byte, minStateKey)
	_, err := rand.Read(c.key)
	return err
}

// stateData is a verified state.
type stateData struct {
	answers []byte // a JSON object: input key → the client's response
	user    []byte // the handler's state, raw JSON; nil when none
}

var (
	errStateInvalid = fastserver.InvalidParams("requestState", "invalid requestState: it fails verification (altered, or issued by another server)")
	errStateExpired = fastserver.InvalidParams("requestState", "invalid requestState: it has expired")
	errStateBinding = fastserver.InvalidParams("requestState", "invalid requestState: it was issued for another request")
	errStateType    = fastserver.InvalidParams("requestState", "requestState must be a string")
)

var b64url = base64.RawURLEncoding

// randomID returns 128 random bits, base64url: the ids of sessions and
// tasks. (crypto/rand.Read never fails since Go 1.24.)
func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return b64url.EncodeToString(b[:])
}

// encode issues the state of a round bound to binding.
func (c *stateCodec) encode(binding string, answers, user []byte, now time.Time) (string, error) {
	body := make([]byte, 0, 64+len(binding)+len(answers)+len(user))
	body = append(body, `{"v":1,"b":`...)
	body = decode.AppendString(body, binding)
	body = append(body, `,"x":`...)
	body = strconv.AppendInt(body, now.Add(c.ttl).UnixMilli(), 10)
	body = append(body, `,"a":`...)
	if len(answers) == 0 {
		answers = emptyObject
	}
	body = append(body, answers...)
	if user != nil {
		body = append(body, `,"u":`...)
		body = append(body, user...)
	}
	body = append(body, '}')
	n := b64url.EncodedLen(len(body)) + 1 + b64url.EncodedLen(sha256.Size)
	if n > c.max {
		return "", fmt.Errorf("mcp: the requestState would take %d bytes, over the limit of %d", n, c.max)
	}
	mac := hmac.New(sha256.New, c.key)
	mac.Write(body)
	out := make([]byte, 0, n)
	out = b64url.AppendEncode(out, body)
	out = append(out, '.')
	out = b64url.AppendEncode(out, mac.Sum(nil))
	return string(out), nil
}

// decode verifies the raw JSON string v and returns what it holds.
func (c *stateCodec) decode(v []byte, binding string, now time.Time) (stateData, *fastserver.Error) {
	if !isString(v) {
		return stateData{}, errStateType
	}
	tok := decode.AppendUnquoted(nil, v)
	dot := -1
	for i := len(tok) - 1; i >= 0; i-- {
		if tok[i] == '.' {
			dot = i
			break
		}
	}
	if dot < 0 || len(tok) > 2*c.max {
		return stateData{}, errStateInvalid
	}
	body, err := b64url.AppendDecode(nil, tok[:dot])
	if err != nil {
		return stateData{}, errStateInvalid
	}
	sum, err := b64url.AppendDecode(nil, tok[dot+1:])
	if err != nil {
		return stateData{}, errStateInvalid
	}
	mac := hmac.New(sha256.New, c.key)
	mac.Write(body)
	if !hmac.Equal(sum, mac.Sum(nil)) {
		return stateData{}, errStateInvalid
	}
	// Issued by this key: the body is ours, but check it anyway.
	if !decode.Valid(body) || kindOf(body) != kindObject {
		return stateData{}, errStateInvalid
	}
	if ver, _ := decode.Lookup(body, "v"); string(ver) != "1" {
		return stateData{}, errStateInvalid
	}
	if b, _ := decode.Lookup(body, "b"); !decode.StringIs(b, binding) {
		return stateData{}, errStateBinding
	}
	x, _ := decode.Lookup(body, "x")
	exp, err := strconv.ParseInt(string(x), 10, 64)
	if err != nil || now.UnixMilli() > exp {
		return stateData{}, errStateExpired
	}
	var d stateData
	d.answers, _ = decode.Lookup(body, "a")
	d.user, _ = decode.Lookup(body, "u")
	return d, nil
}
