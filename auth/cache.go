package auth

import (
	"bytes"
	"hash/maphash"
	"sync"
)

// NOTE: the verified-token cache.
//
// A request that carries a token seen before costs no signature check:
// the token is hashed with maphash (a per-process random seed) — its
// length and its last 64 bytes, which for a JWT are its signature, so
// that the hash costs the same for a 300-byte token and an 8 KiB one —
// the hash picks one of 16 shards and an entry in its map, and the entry
// is taken only when its stored token equals the one sent, byte for
// byte, and it has not expired. Two valid tokens with one hash only
// displace each other; an attacker cannot make valid tokens. Entries expire with their token (exp, or
// for an introspected token the earlier of exp and the introspection
// TTL); a key removed from the issuer's JWKS revokes every entry it
// signed. Each shard is bounded: inserting into a full one first drops
// the expired entries, then an arbitrary eighth of the rest. A hit takes
// one read lock and allocates nothing; only valid tokens are ever
// inserted, so an attacker cannot fill it with garbage.

const cacheShards = 16

type cacheEntry struct {
	token []byte
	exp   int64 // unix nanoseconds
	tok   *Token
	key   *jwk // the signing key; nil for an introspected token
}

type cacheShard struct {
	mu sync.RWMutex
	m  map[uint64]*cacheEntry
	_  [40]byte // keep shards on their own cache lines
}

type tokenCache struct {
	seed   maphash.Seed
	max    int // entries per shard
	shards [cacheShards]cacheShard
}

func newTokenCache(size int) *tokenCache {
	c := &tokenCache{seed: maphash.MakeSeed(), max: max(1, size/cacheShards)}
	for i := range c.shards {
		c.shards[i].m = make(map[uint64]*cacheEntry)
	}
	return c
}

// hashTail is how many trailing bytes of a token are hashed.
const hashTail = 64

func (c *tokenCache) hash(token []byte) uint64 {
	tail := token
	if len(tail) > hashTail {
		tail = tail[len(tail)-hashTail:]
	}
	return maphash.Bytes(c.seed, tail) ^ uint64(len(token))*0x9e3779b97f4a7c15
}

// get returns the cached Token for token, or nil.
func (c *tokenCache) get(token []byte, now int64) *Token {
	h := c.hash(token)
	sh := &c.shards[h%cacheShards]
	sh.mu.RLock()
	e := sh.m[h]
	sh.mu.RUnlock()
	if e == nil || now >= e.exp || !bytes.Equal(e.token, token) || (e.key != nil && e.key.revoked.Load()) {
		return nil
	}
	return e.tok
}

// put caches tok for token until exp.
func (c *tokenCache) put(token []byte, exp, now int64, tok *Token, key *jwk) {
	if exp <= now {
		return
	}
	h := c.hash(token)
	e := &cacheEntry{token: bytes.Clone(token), exp: exp, tok: tok, key: key}
	sh := &c.shards[h%cacheShards]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if _, ok := sh.m[h]; !ok && len(sh.m) >= c.max {
		for k, old := range sh.m {
			if now >= old.exp || (old.key != nil && old.key.revoked.Load()) {
				delete(sh.m, k)
			}
		}
		if len(sh.m) >= c.max {
			drop := max(1, c.max/8)
			for k := range sh.m {
				delete(sh.m, k)
				if drop--; drop == 0 {
					break
				}
			}
		}
	}
	sh.m[h] = e
}

// len returns the number of entries.
func (c *tokenCache) len() int {
	n := 0
	for i := range c.shards {
		sh := &c.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}
