package fastserver

import (
	"net/netip"
	"sync"

	"github.com/valyala/fasthttp"
)

// clientStreams counts the streams each client holds, for
// Config.MaxClientStreams. A client is keyed as the rate limit keys it
// (rateLimiter.clientKey). An entry lives while its client holds a
// stream, so the table never holds more than Config.MaxStreams keys.
type clientStreams struct {
	max  int32
	keys *rateLimiter // derives a request's client key; its table unused
	mu   sync.Mutex
	held map[netip.Addr]int32
}

func newClientStreams(max int, keys *rateLimiter) *clientStreams {
	return &clientStreams{max: int32(min(max, 1<<30)), keys: keys, held: make(map[netip.Addr]int32)}
}

// key returns the client key of ctx's request. f is its header snapshot,
// or nil: then one is taken when the forwarding header is to be read.
func (cs *clientStreams) key(ctx *fasthttp.RequestCtx, f *fields) netip.Addr {
	if f == nil && len(cs.keys.trusted) > 0 {
		f = new(fields)
		f.snapshot(&ctx.Request.Header)
	}
	return cs.keys.clientKey(ctx, f)
}

// take reserves one of key's streams, or reports false when key holds
// its share.
func (cs *clientStreams) take(key netip.Addr) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := cs.held[key]
	if n >= cs.max {
		return false
	}
	cs.held[key] = n + 1
	return true
}

// give returns one of key's streams.
func (cs *clientStreams) give(key netip.Addr) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	switch n := cs.held[key]; {
	case n > 1:
		cs.held[key] = n - 1
	case n == 1:
		delete(cs.held, key)
	default:
		panic("fastserver: a client's stream given back twice")
	}
}

// clients returns the number of clients that hold a stream.
func (cs *clientStreams) clients() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.held)
}
