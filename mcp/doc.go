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
// # Tools and the input schema subset
//
// A tool is registered with a JSON Schema for its arguments, compiled at
// registration. Calls are checked against it over the raw bytes, so a
// valid call allocates nothing. The subset:
//
//   - type: a name or an array of names; "integer" is any number without
//     a fractional part (1.0 and 1e2 count);
//   - properties, required, additionalProperties (a boolean or a schema);
//   - enum (compared as JSON values: 1 equals 1.0, member order ignored);
//   - items (one schema for every element);
//   - minimum, maximum: inclusive, compared as exact decimals (no float
//     rounding: 9007199254740993 > 9007199254740992, 1e400 is above any
//     float64);
//   - minLength, maxLength: in Unicode code points, after escapes are
//     resolved ("\ud83d\ude00" is one);
//   - boolean schemas (true, false) anywhere a schema may stand;
//   - annotations that assert nothing: title, description, default,
//     examples, deprecated, readOnly, writeOnly, $comment, format (an
//     annotation in JSON Schema 2020-12) and, at the root, $schema (2020-12,
//     2019-09 or draft-07).
//
// Any other keyword fails the registration: it is never silently
// ignored. That includes $ref, allOf/anyOf/oneOf/not, if/then/else,
// const, pattern, exclusiveMinimum/exclusiveMaximum, multipleOf,
// minItems/maxItems, uniqueItems, prefixItems and the tuple form of items,
// and x-mcp-header (this package does not validate Mcp-Param-* headers).
// The root must have "type": "object". Inside arguments, a member name
// repeated below the top level is validated at each occurrence.
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
// header checks and the schema walk allocate nothing for a valid call;
// base64 header values decode into a 256-byte stack buffer (longer ones
// into a buffer as long as the header, which the HTTP layer bounds);
// number comparisons never convert a number's text, so a 1 MiB numeral
// costs one linear pass; validation recursion follows the schema, not the
// input. Duplicate member names are refused where the server routes and
// validates (params and arguments) and found in linear time. A refusal
// repeats at most 256 bytes of any name the client sent (an unknown tool,
// a field path), so an error answer stays small whatever the request.
package mcp
