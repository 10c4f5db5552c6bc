// Package auth makes rpcedge's endpoints OAuth 2.1 protected resources,
// as MCP's authorization specification (2025-06-18 on) asks of an HTTP
// MCP server, and as an A2A card's security schemes promise: every
// request carries a bearer access token, verified here, and nothing
// reaches a method without one.
//
//	iss, _ := auth.NewIssuer(auth.IssuerConfig{URL: "https://login.example.com"})
//	res, _ := auth.NewResource(iss, auth.ResourceConfig{Resource: "https://agents.example.com/mcp"})
//	m, _ := mcp.New(info, mcp.WithAuth(res))               // tools may add Scopes
//	srv, _ := fastserver.New(cfg, m.Endpoint())
//	srv.HandleGET(res.MetadataPath(), res.ServeMetadata)   // RFC 9728, public
//
// Authorization is opt-in: an endpoint without a Resource answers exactly
// as before. cmd/rpcedge turns it on with -auth-issuer and -auth-audience.
//
// # The row in the contract's table
//
// The token check is row 2a of the wire contract's ordered table
// (fastserver.Endpoint.Authorize): after row 1 (Origin) and row 2 (rate
// limit), before row 3 (Content-Type) and everything after it. The reasons:
//
//   - It is decidable from the request line and the header section alone
//     (RFC 6750 puts the token in the Authorization field; MCP forbids the
//     query string), so it belongs among the header rows, before any byte
//     of the body is read: an unauthenticated client cannot make the server
//     read, decompress, hold in-flight budget for, or parse a body.
//   - Origin stays first: a page on a foreign origin is refused 403 before
//     it learns anything about the resource (not even its challenge) — the
//     DNS-rebinding defence MCP requires does not depend on credentials.
//   - The rate limit stays before it: a flood of bad tokens costs a token
//     of the bucket each and is cut off there, before the one expensive
//     step here (a signature check on a cache miss: tens to hundreds of µs).
//   - Rows 3 to 6 come after it, so that a client without credentials
//     gets the 401 and its challenge (which tells it where to get a token)
//     rather than a 415 or 413 it cannot act on; with a valid token every
//     row from 3 on answers exactly as without authorization, because the
//     row only refuses.
//   - Notifications are refused like requests (401, "id": null): the row
//     is decided before the server can know what the body holds.
//   - A tool's own scopes (mcp.Tool.Scopes) need the body: they are row
//     16a, after the tool is found (an unknown tool is still -32601: there
//     is nothing to authorize) and before its arguments are looked at
//     (403 with the request's id, as rows 10 to 18 answer).
//
// With Expect: 100-continue, fasthttp's expectation hook cannot add a
// WWW-Authenticate field to its refusal, so the row is not decided there:
// the client gets 100 Continue and then the 401 with its challenge (the
// connection is closed after it, as for every header row with a body
// pending).
//
// # Answers
//
// Every refusal carries WWW-Authenticate (RFC 6750 §3) with
// resource_metadata naming the RFC 9728 document of the resource (MCP's
// discovery), and a JSON-RPC error body with "id": null:
//
//	no Authorization, or another scheme     401, no error= (RFC 6750 §3.1), scope= when the endpoint requires scopes
//	Bearer with no token, two tokens,       400 error="invalid_request"
//	  two Authorization lines, bad syntax
//	access_token in the query string        400 error="invalid_request" (never evaluated)
//	a token that fails verification         401 error="invalid_token", scope= as above
//	a valid token without a required scope  403 error="insufficient_scope", scope= naming every scope needed
//	the issuer's keys unreachable           503, Retry-After: 1 (the token could not be judged)
//
// The JSON-RPC codes are -31401 (401, 400) and -31403 (403): JSON-RPC
// leaves codes outside -32768..-32000 to applications, the A2A Go SDK
// uses these, and they tell an authorization refusal from a malformed
// request (-32600) without the status line. offline_access never appears
// in a challenge nor in scopes_supported: a Resource refuses to name it.
//
// # Verifying tokens
//
// A JWT access token (RFC 9068) is verified with github.com/golang-jwt/jwt/v5
// against the issuer's JWKS: the algorithm on an allow-list of asymmetric
// algorithms (alg none and HS* can never be allowed, so an HS256 token
// keyed with the public key fails), the key the kid names (its alg and
// type must fit), typ absent, "JWT", "at+jwt" or "application/at+jwt"
// (other typs, such as logout tokens, are refused), no crit header (RFC
// 7515 §4.1.11: no extension is understood here), iss equal to the
// issuer exactly, aud holding the resource identifier (RFC 8707; one
// trailing slash of difference tolerated, and the configured aliases —
// the demo's origin), exp required, nbf and iat not in the future, each
// with a leeway of 30 s by default and 5 min at most, and no cnf claim:
// a sender-constrained token (RFC 7800; bound to a DPoP key, RFC 9449, or
// a client certificate, RFC 8705) is refused, since this server checks
// neither proof and a stolen one would work here as a bearer token. A
// token for another resource is refused, and a token received is never
// passed on.
// With IntrospectionConfig, opaque tokens are asked about at the RFC 7662
// endpoint (active, iss, aud holding the identifier, exp, no cnf, a
// token_type other than refresh or DPoP); the answer is
// cached at most TTL (1 min by default), so a revoked token is refused at
// most that late. Audiences that name an application id instead of the
// resource (Entra ID v2 without a resource-specific app) are not
// supported: configure the resource's URI as the application id URI.
//
// The issuer's metadata is discovered as MCP lists it (RFC 8414 at the
// path-inserted URL, then OpenID Connect Discovery, inserted and
// appended); its issuer must equal the configured one. The JWKS is
// fetched on first need, again in the background when older than
// KeyRefresh (15 min: a request the token cache answers looks too, at
// most one a second), and when a token names a kid it lacks — at most
// once per UnknownKeyInterval (30 s): the requests that meet the kid
// while that fetch runs wait for it (at most FetchTimeout, 5 s), so a key
// rotation costs no 401s, and those that come between fetches are refused
// at once, so a stream of invented kids costs the issuer one fetch per
// interval and holds a worker no longer than a fetch. After a failed fetch of the metadata or keys, requests start
// no other for a second (with no keys at hand they are answered 503,
// Retry-After: 1), so tokens sent while the issuer is down cost it at
// most one fetch a second. A key that disappears from the JWKS revokes
// every cached token it signed: keys rotate without a restart.
//
// # Speed
//
// A verified token is cached (bounded, 10,000 entries by default), keyed
// by a maphash of its tail, compared byte for byte, expiring with the
// token, its scopes kept as a bitset (ScopeSet): a request carrying a
// known token costs a header parse, a hash, a read-locked map lookup and a
// byte compare, judged at the time the server read when the request
// began (fastserver.Request.Time) — no signature check, no clock read of
// its own and no allocation (pinned by
// TestAllocsCacheHit here and through the whole demo server in
// internal/app). Scope checks are one AND.
//
// # Choices where the issue is silent (MCP authorization, RFC 9700)
//
//   - tools/list lists every tool whatever the token may call: MCP's
//     step-up flow (a 403 naming the scope, the client re-authorizing)
//     only works for a tool the client can see; the list stays one
//     rendered, cacheable byte string; and the list is not the secret,
//     calling the tool is. See package mcp.
//   - /healthz, the agent card, and the metadata documents are public;
//     /metrics needs a valid token for /mcp in cmd/rpcedge once
//     authorization is on (-metrics-public opens it): the counts and
//     method names it exposes are reconnaissance for an attacker, and
//     Prometheus scrapes with its oauth2 client-credentials configuration.
//   - The root metadata document (/.well-known/oauth-protected-resource)
//     describes the origin, as RFC 9728 §3.3 requires of it; tokens whose
//     aud is the origin are accepted on every endpoint of it (clients that
//     discover from the root ask for such tokens), tokens for another
//     endpoint (/a2a at /mcp) or another server are not.
//   - Tokens are accepted only in the Authorization header
//     (bearer_methods_supported ["header"]); a request that also or only
//     carries access_token in the query is refused, since the token has
//     already leaked into logs (RFC 9700 §4.3.2).
//   - Over stdio there is no OAuth (MCP: credentials come from the
//     environment): mcp.Server.StreamEndpoint has no Authorize, and tools'
//     scopes are not checked there.
//   - http:// issuers and endpoints are refused unless on a loopback host.
//
// # Security
//
// Limits: MaxTokenBytes (8 KiB) before any parsing; fetched documents at
// most 1 MiB; FetchTimeout on every fetch; MaxConcurrent introspections
// (16); the cache bounded; only verified tokens ever enter it. Refusals
// decided from the header allocate nothing.
package auth
