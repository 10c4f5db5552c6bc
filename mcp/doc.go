// Package mcp serves the Model Context Protocol over rpcedge's JSON-RPC
// server: tools, resources and prompts on POST /mcp, statelessly, with
// the header checks of MCP 2026-07-28 and SEP-2243, following rpcedge's
// wire contract (§4).
//
//	s, err := mcp.New(mcp.Info{Name: "example", Version: "1.0.0"})
//	s.AddTool(mcp.Tool{
//		Name:        "echo",
//		InputSchema: `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
//		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
//			return c.AddTextJSON(c.Arg("text"))
//		}),
//	})
//	endpoint := s.Endpoint() // a *fastserver.Endpoint for "/mcp"
//
// # Versions
//
// Four protocol versions are served: 2026-07-28 (stateless: every request
// carries its version, client identity and capabilities in params._meta;
// results carry resultType and _meta) and the earlier 2025-11-25,
// 2025-06-18 and 2025-03-26, served in stateless JSON-response mode: no
// Mcp-Session-Id is ever issued, initialize is answered but remembers
// nothing, notifications/initialized is accepted (202) and has no effect,
// and no stream (GET, SSE) is offered.
//
// The MCP-Protocol-Version header names the version of each request; a
// request without it is 2025-03-26 (the header did not exist before
// 2025-06-18). The version is stored in fastserver.Request.Version
// (read it with RequestVersion).
//
// Methods by version; any other method, or one outside its versions, is
// 404 / -32601:
//
//	method                                  2026-07-28   earlier versions
//	server/discover                         yes          yes
//	initialize, ping                        -            yes
//	notifications/initialized (notif.)      -            yes
//	tools/list, tools/call                  yes          yes
//	resources/list, resources/read          yes          yes
//	prompts/list, prompts/get               yes          yes
//
// notifications/initialized sent with an id is a request to an unknown
// method: 404. initialize answers with the version the client asks for
// when it is served and earlier than 2026-07-28, else with 2025-11-25;
// it never fails. server/discover answers MCP 2026-07-28's
// DiscoverResult under every version: resultType, supportedVersions
// (newest first), capabilities, serverInfo (at the top level, as the
// discovery page shows it, and in _meta as 2026-07-28's schema puts it),
// instructions, ttlMs and cacheScope.
//
// Results under 2026-07-28 carry "resultType":"complete" and
// _meta["io.modelcontextprotocol/serverInfo"]; list results,
// resources/read and server/discover carry ttlMs and cacheScope (see
// WithCache; five minutes and public by default). Results under earlier
// versions have their own version's shape: no resultType, no _meta, no
// caching hint, and no title members under 2025-03-26.
//
// Lists come in registration order, on one page: no nextCursor is ever
// returned, so a request carrying a cursor is refused with -32602.
//
// # Header rules
//
// The endpoint's Check decides rows 11 and 12 of the contract for every
// valid message, notifications included:
//
//   - MCP-Protocol-Version naming a version not served: 400 / -32022 with
//     data {"supported":[…],"requested":"…"}.
//   - Under 2026-07-28 every request must carry
//     params._meta["io.modelcontextprotocol/protocolVersion"] equal to the
//     header, an Mcp-Method header equal to the method, and for
//     tools/call and prompts/get an Mcp-Name header equal to params.name,
//     for resources/read equal to params.uri. Missing params, missing
//     _meta, a _meta or protocol version key given twice, or a different
//     value: 400 / -32020.
//   - Under earlier versions Mcp-Method and Mcp-Name are optional, but a
//     present one must match the body: else 400 / -32020.
//   - A present Mcp-Name disagrees with a body whose source field
//     (params.name or params.uri) is absent, given twice or not a string;
//     without the header such a body goes on to -32602. Mcp-Name on a
//     method that names nothing (tools/list, …) is ignored.
//   - Notifications are judged by their headers alone (_meta is not
//     read): only a present header that disagrees refuses one.
//   - Mcp-Method and Mcp-Name values of the form =?base64?…?= are
//     decoded before the comparison: the markers in lower case exactly, as
//     MCP 2026-07-28 requires; the payload standard base64 with padding,
//     canonical; a payload that does not decode disagrees. Other values
//     are compared as they are: exactly, case-sensitively
//     ("TOOLS/CALL" is not "tools/call"). HTTP surrounding whitespace is
//     already trimmed by the HTTP layer.
//
// The -32020 answers carry data {"header":"<the header at fault>"}.
//
// # Streams
//
// StreamEndpoint serves the same methods over newline-delimited streams
// (MCP's stdio transport, fastserver.ServeLines), where there are no
// headers: a request's version is the one its
// params._meta["io.modelcontextprotocol/protocolVersion"] names, as MCP
// 2026-07-28 defines for stdio, and 2025-03-26 when it names none; a
// version not served is -32022.
//
// # Tools and their schemas
//
// A tool is registered with a JSON Schema for its arguments (and,
// optionally, one for its structuredContent), compiled at registration.
// Every valid JSON Schema registers: draft 2020-12 by default (MCP's),
// another dialect when $schema names it (2019-09, draft-07, -06, -04).
// What MCP requires of both schemas is checked too: the root has
// "type": "object". A schema that is not valid for its dialect's
// metaschema, repeats a member name, or has a $ref that resolves to no
// document registered with AddSchemaDocument fails the registration:
// nothing is ever fetched (ErrRemoteRef), neither from the network nor
// from files.
//
// Two validators serve calls, with the same verdicts:
//
//   - The compiled subset checks the raw argument bytes and allocates
//     nothing for a valid call. It covers what Go's schema generators
//     write for plain structs: type (a name or a list), properties,
//     required, additionalProperties (a boolean or a schema), enum, items
//     (one schema for every element), minimum and maximum, minLength and
//     maxLength, pattern (Go's regexp, as the library uses), boolean
//     schemas, and the annotations (title,
//     description, default, examples, deprecated, readOnly, writeOnly,
//     $comment, format outside draft-07, $schema 2020-12, 2019-09 or
//     draft-07 at the root). SchemaFastPath says whether a schema fits.
//   - Every other schema is checked by github.com/santhosh-tekuri/jsonschema/v6
//     (it passes the whole required JSON-Schema-Test-Suite for both
//     drafts, through this package's tools/call), over instances built
//     from the raw bytes with exact numbers (json.Number). It allocates on
//     every call (a few µs for a small object).
//
// WithLibraryValidation sends every schema to the library (for
// comparison); a differential test and a fuzz target hold the two to the
// same verdict on every schema the subset covers. Decisions where JSON
// Schema, the contract and the two validators could differ:
//
//   - "integer" is any number without a fractional part, as JSON Schema
//     says: 1.0 and 1e2 are integers (a typed tool decodes them as 1 and
//     100).
//   - Numbers are compared as exact decimals on both paths (no float64
//     rounding: 9007199254740993 > 9007199254740992). The library path
//     refuses with -32602 any number with more than 400 significant digits
//     or a decimal exponent beyond ±400, which would make its big.Rat
//     arithmetic cost milliseconds each; the compiled path compares any
//     number in one linear pass.
//   - minLength and maxLength count Unicode code points, escapes resolved
//     ("\ud83d\ude00" is one), as both validators do.
//   - format asserts nothing under 2020-12 and 2019-09 (an annotation)
//     and is checked under draft-07 and earlier, as the library does by
//     default for those drafts; the compiled subset leaves draft-07
//     schemas with format to the library.
//   - A member name given twice at the top level of arguments is -32602
//     before any schema (the contract). Deeper down the last occurrence
//     is the value every reader sees (decode.Lookup, sonic, the library's
//     map), so it is the one judged, on both paths.
//   - Unknown keywords are annotations, as JSON Schema 2020-12 says: they
//     send a schema to the library, which ignores them.
//
// A failure is 200 / -32602 with data {"field":"…"} naming the value at
// fault, such as "arguments.items[2].name" (for a missing required member,
// the member; for propertyNames, the name). The message repeats at most
// 256 bytes of anything the client sent.
//
// OutputSchema (MCP 2025-06-18 on, listed from that version) holds every
// result that is not an error: it must carry structuredContent that
// passes the schema, else the answer is 500 / -32603 and the result is
// never sent.
//
// # Typed tools
//
// The function AddTool registers a ToolHandlerFor[In, Out]:
// func(ctx, *Call, In) (Out, error), as the official MCP Go SDK's
// mcp.AddTool does. The input and output schemas are inferred from In and
// Out by github.com/google/jsonschema-go, the SDK's generator, with its
// tags; arguments are decoded with sonic after the schema check, and Out
// is encoded with sonic as structuredContent and a text item. Integers
// stay exact: one that does not fit its Go field is -32602, never a
// wrapped or rounded value.
//
// tools/call is checked in the contract's order: params not an object,
// or name missing, not a string or given twice: -32602 (row 15); an
// unknown tool: 200 / -32601 (row 16); a member name given twice in
// params, arguments not an object, a member name given twice in
// arguments, or arguments failing the schema: -32602 with data
// {"field":"…"} naming the field, such as "arguments.text" (row 17); then
// the handler. prompts/get and resources/read follow the same order.
//
// A ToolHandler gets a Call: the checked arguments (Arg, ArgString,
// ArgInt, ArgFloat) and a result builder (AddText, AddTextJSON,
// AddContentJSON, SetStructuredContent, SetError) that writes straight
// into the answer. A handler that returns an error that is not a
// *fastserver.Error ran and failed: the answer is a result with
// isError: true. A *fastserver.Error is answered as that JSON-RPC error.
//
// # Authorization
//
// WithAuth makes the endpoint an OAuth 2.1 protected resource (package
// auth): every request needs a valid access token, checked from the
// headers before the body is read (the contract's row 2a). A Tool's
// Scopes are checked at row 16a, after the tool is found and before its
// arguments: a token without them is answered 403 with
// error="insufficient_scope" and scope= naming every scope the call
// needs, so that a client can step up (re-authorize with them) and retry.
//
// tools/list lists every tool, whatever the token may call. Filtering was
// considered and not chosen: MCP's step-up flow starts from a 403 for a
// tool the client knows of, which a filtered list would hide; the list
// stays one rendered byte string per version (no allocation, cacheScope
// "public" stays true); and what a tool needs is not a secret, calling it
// is. Over stdio (StreamEndpoint) there is no OAuth and scopes are not
// checked: the client is the local process that started the server.
//
// # Departures from the protocol text
//
// On purpose, following rpcedge's product page (contract §3):
//
//   - An unknown tool, resource or prompt is 200 / -32601; MCP's own
//     examples use -32602 (and 2025-11-25 used -32002 for resources).
//   - Arguments failing a tool's input schema are -32602 (the call did
//     not happen), not a result with isError: true as MCP 2026-07-28
//     suggests for input validation errors.
//   - A cursor is refused with -32602: every list fits on one page.
//   - Header mismatches use -32020 (MCP 2026-07-28), not SEP-2243's
//     earlier -32001.
//
// # Lifetimes and concurrency
//
// Register everything, then call Endpoint: it freezes the registries
// and renders every result that does not depend on the request, once
// per version. After that a Server is safe for concurrent use. A Call,
// and every slice it returns, is valid only until the handler returns.
//
// # Security
//
// Nothing here grows with the request beyond the answer itself: the
// header checks and the compiled schema walk allocate nothing for a valid
// call (a schema served by the library costs memory in proportion to the
// arguments, which the body ceiling bounds, and refuses numbers whose
// exact arithmetic would be costly; its pattern keywords run on Go's
// regexp, in linear time; no schema is ever fetched);
// base64 header values decode into a 256-byte stack buffer (longer ones
// into a buffer as long as the header, which the HTTP layer bounds);
// number comparisons never convert a number's text, so a 1 MiB numeral
// costs one linear pass; validation recursion follows the schema, not the
// input. Duplicate member names are refused where the server routes and
// validates (params and arguments) and found in linear time. A refusal
// repeats at most 256 bytes of any name the client sent (an unknown tool,
// a field path), so an error answer stays small whatever the request.
package mcp
