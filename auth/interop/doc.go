// Package interop proves rpcedge's OAuth 2.1 resource server (package
// auth) against real parts, in a module of its own so that the main
// module stays lean:
//
//   - a real authorization server on loopback: the OpenID Provider of
//     github.com/zitadel/oidc/v3's example, whose storage is wrapped (as
//     a deployment configures one) to issue RS256 JWT access tokens to
//     the client-credentials client, with aud set from the RFC 8707
//     resource parameter (or the client's default resource), a scope
//     claim, and — on request — opaque tokens it introspects (RFC 7662);
//     every token is minted and signed by the provider itself;
//   - cmd/rpcedge, built and run with -auth-issuer and -auth-audience;
//   - the official MCP Go SDK client (its client-credentials OAuth
//     handler: discovery from the 401's resource_metadata, RFC 8414 /
//     OIDC discovery, the token, the calls) and the MCP TypeScript SDK
//     client (its ClientCredentialsProvider, same flow), calling tools;
//   - the attacks of issue #14, each answered as RFC 6750 and the wire
//     contract say, none reaching a tool;
//   - the JWT libraries measured side by side (jwtlib_test.go).
//
// In CI (CI=true) a missing Node.js or npm fails the test instead of
// skipping it.
package interop
