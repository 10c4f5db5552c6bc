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
// 2025-06-18 and 2025-03-26, served statelessly by default: initialize
// is answered but remembers nothing, notifications/initialized is
// accepted (202) and has no effect, and no Mcp-Session-Id is issued unless
// WithSessions turns sessions on (see Sessions). Answers are plain JSON,
// or a text/event-stream when a handler sends notifications or requests
// to the client while it runs (see Streamed answers).
//
// The official MCP conformance suite (@modelcontextprotocol/conformance)
// is the arbiter of this package's MCP behaviour: where it and rpcedge's
// wire contract (§4) disagree, the suite wins, except for the departures
// listed below. cmd/rpcedge -demo conformance serves the suite's fixtures
// (internal/demo/conformance.go) and interop/conformance.sh runs the
// suite against it.
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
//	resources/templates/list                yes          yes
//	prompts/list, prompts/get               yes          yes
//	completion/complete                     yes          yes
//	logging/setLevel                        -            yes
//	resources/subscribe, unsubscribe        -            yes
//	subscriptions/listen                    yes          -
//	tasks/get, tasks/update, tasks/cancel   with tasks   -
//
// logging/setLevel checks its level and answers {}; it sets the level of
// the session (WithSessions) or, over stdio, of the stream it came on,
// and otherwise nothing (log messages of a request go out at every level
// under 2025-xx). resources/subscribe and unsubscribe answer {} for a URI that
// names a resource or matches a template; a session's updates go on its
// GET stream, a stdio stream's as lines between its answers
// (NotifyResourceUpdated); without either they have no effect. completion/complete asks the Completer (WithCompleter) about
// an existing prompt or template, and answers no suggestions without one.
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
//   - Under 2026-07-28 every request must carry an Mcp-Method header equal
//     to the method, and for tools/call and prompts/get an Mcp-Name header
//     equal to params.name, for resources/read equal to params.uri, for
//     tasks/get, tasks/update and tasks/cancel (on a server with tasks)
//     equal to params.taskId (else 400 / -32020), and params._meta with
//     "io.modelcontextprotocol/protocolVersion" (a string) and
//     "io.modelcontextprotocol/clientCapabilities" (an object; clientInfo
//     is optional): missing params, missing _meta or a missing or
//     ill-typed key is 400 / -32602 with data {"field":…} (SEP-2575, as
//     the conformance suite checks it); a protocol version that differs
//     from the header, or _meta or the version key given twice, is 400 /
//     -32020. A request whose handling needs a client capability the
//     request does not declare is 400 / -32021 (CodeMissingCapability).
//   - Under earlier versions Mcp-Method and Mcp-Name are optional, but a
//     present one must match the body: else 400 / -32020.
//   - A present Mcp-Name disagrees with a body whose source field
//     (params.name, params.uri or params.taskId) is absent, given twice or
//     not a string;
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
//   - A tool's input schema may mark arguments with "x-mcp-header":
//     "Name" (SEP-2243): clients then mirror each into an Mcp-Param-Name
//     header, for gateways that route on it. AddTool refuses an
//     annotation that breaks a constraint of MCP 2026-07-28 (empty, not
//     an HTTP token, given twice in any case, on a property whose type
//     is not "string", "integer" or "boolean", or not reached from the
//     root through "properties" alone), since clients drop such a tool.
//     On a tools/call, a present Mcp-Param header must carry the value
//     at its property's path — a string's text, a number's value ("42"
//     carries 42.0), "true" or "false" — after base64 decoding as for
//     Mcp-Name; it disagrees with an absent, null or non-primitive value
//     and with an argument given twice (below the arguments the last
//     occurrence counts), and a header value holding a byte outside
//     visible ASCII, space and tab, or given in more than one line, is
//     refused.
//     Under 2026-07-28 a value present (not null) needs its header,
//     except an integer beyond ±(2^53−1), which clients cannot mirror;
//     under earlier versions the headers are optional. Each refusal is
//     400 / -32020, before rows 15 to 17; Mcp-Param headers that name no
//     annotation are ignored. The check costs ~0.5 µs for three headers
//     and allocates nothing (BenchmarkParamHeaders, TestParamHeaderAllocs).
//
// The -32020 answers carry data {"header":"<the header at fault>"}.
//
// # Streamed answers and requests to the client
//
// A tool registered with Streaming may send progress (Call.Progress) and
// log messages (Call.Log) while it runs, and ask the client for input
// (Call.Ask, Elicit, Sample, ListRoots); a prompt's Render may ask too.
// Progress goes out when the request carries _meta.progressToken, log
// messages at or above the level the request asks for
// (_meta["io.modelcontextprotocol/logLevel"] under 2026-07-28, none when
// it asks for none; under 2025-xx every level, or the session's). They go
// on the request's own stream (fastserver.Request.Stream): the first one
// turns the answer into 200 text/event-stream, the final response is the
// last event; a call that sends nothing is answered with plain JSON, byte
// for byte, and a Streaming tool called with nothing to stream runs on
// the plain path without allocating.
//
// Requests to the client follow the version. Under 2026-07-28 they never
// go on a stream (SEP-2322): Ask returns the answer the request carries
// in inputResponses (or an earlier round left in its requestState), and
// otherwise records the request and returns ErrInputRequired; the
// handler returns it and the call is answered
// {"resultType":"input_required","inputRequests":{…},"requestState":"…"}.
// The client repeats the call with its answers and that state; the
// handler runs again from the start and finds them. requestState is
// signed with HMAC-SHA256 (WithStateKey; a random key per process by
// default, so share one across a fleet), bound to the method and tool or
// prompt and, under WithAuth, to the token's holder (issuer, subject and
// client: another user cannot replay it), expires (WithStateTTL, 10 minutes) and is bounded in size
// (WithStateLimit, 64 KiB): a tampered, foreign, expired or misbound
// state is -32602, as are inputResponses that are not an object of
// objects. Under 2025-xx the request goes on the call's stream with an id
// the server generates, the client POSTs its response (answered 202) and
// Ask returns it; a client's error answer is a ClientError (the tool
// fails, isError). Behind a balancer that response must reach the
// instance holding the stream: route by the client (sticky sessions), or
// relay it with fastserver.Config.UnmatchedResponse and
// Server.DeliverResponse, passing on the scope. The response must come
// from the token's holder (WithAuth) and in the session (WithSessions)
// the request was sent to: from another it answers nothing (400, -32600),
// and one naming a session that ended is 404.
//
// # Tasks
//
// A tool registered with Task (TaskOptional or TaskRequired) may go on in
// the background as a task of MCP's tasks extension (SEP-2663,
// ExtensionTasks, under 2026-07-28): its handler runs on the request as
// any tool's does, and calls Call.StartTask where its long part begins.
// When the request's clientCapabilities declare the extension (in
// "extensions"), StartTask returns ErrRunAsTask, which the handler returns;
// the client is answered with a CreateTaskResult ({"resultType":"task",
// "taskId", "status":"working", "createdAt", "lastUpdatedAt", "ttlMs",
// "pollIntervalMs"}) once the task is stored, and the handler runs again
// from the start in the task, where StartTask returns nil. Before StartTask
// a handler may gather input by input_required rounds on the request; the
// task keeps their answers and the handler's state. For a client without
// the extension StartTask returns nil and the call is answered on its
// request; a TaskRequired tool refuses such calls with 400 / -32021 (data
// {"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}})
// before its handler, and every call under 2025-xx.
//
// In the task, Ask returns the answers the task holds, or records the
// request and returns ErrInputRequired: the task is then input_required,
// its requests in tasks/get's inputRequests, and tasks/update delivers
// answers (to keys not pending: ignored); once none is pending the handler
// runs again from the start with every answer. tasks/get answers the task
// with its result (completed), its error (failed) or its inputRequests;
// tasks/cancel cancels a task that has not finished (its Call's Context
// ends, and what the handler returns then is dropped) and answers an empty
// result, for a finished task too. A tool that fails as a tool (an error,
// SetError) completes its task with isError; a *fastserver.Error, a panic
// or a result that breaks the output schema fails it, the JSON-RPC error
// inlined. Progress sets the task's statusMessage; Log sends nothing;
// Call.TaskID names the task.
//
// The tasks methods need the extension in the request's
// clientCapabilities (else 400 / -32021), an unknown task id is -32602,
// and they exist only under 2026-07-28 on a server with tasks (else 404 /
// -32601, as tasks/result and tasks/list always are: SEP-2663 removed
// them). The store is in memory, bounded (WithTasks: a TTL of one hour
// from creation, 1,000 tasks and 64 MiB, a token holder's share a tenth of
// each); under WithAuth a task belongs to its creator, and to anyone else
// it does not exist. Ids are 128 random bits. Behind a balancer, the tasks
// requests of a task must reach the instance that holds it: their Mcp-Name
// header is the task id, which TaskOptions.IDPrefix can make name the
// instance. Status notifications (notifications/tasks) are not sent
// (optional in SEP-2663, and the listen filter names no opt-in for them).
// Server.Close cancels every task; Server.WritePrometheus writes the
// store's metrics.
//
// # Listening (2026-07-28)
//
// subscriptions/listen (SEP-2575) is 2026-07-28's way to receive what no
// request asked for: its answer is a stream that opens with
// notifications/subscriptions/acknowledged (the opt-ins honored) and then
// carries notifications/resources/updated for the URIs of
// params.notifications.resourceSubscriptions, fed by
// NotifyResourceUpdated, each tagged with the listen request's id in
// _meta["io.modelcontextprotocol/subscriptionId"]; server/discover
// declares resources.subscribe. The lists are fixed once served, so
// toolsListChanged, promptsListChanged and resourcesListChanged are never
// honored (the acknowledgement leaves them out). A URI that names no
// resource and matches no template is -32601, a malformed filter -32602,
// a client that does not accept text/event-stream 406, and the stdio
// transport, which serves one call at a time, -32600. Updates of a URI merge while
// one waits to be written, so a slow reader costs its stream no more than
// its subscriptions; streams are bounded in number and in URIs each
// (WithListen: 1,000 and 1,000), write a keep-alive comment after 15 s of
// silence, and end gracefully (their SubscriptionsListenResult) after an
// hour, at shutdown and at Server.Close; the client then listens again.
// Server.Listeners counts them; WritePrometheus writes their metrics.
// Behind a balancer, WithRelay carries each update to the streams of
// every instance (package fleet's ResourceUpdates, over Redis).
//
// # Sessions
//
// WithSessions turns on sessions for 2025-xx clients, only for what
// needs one: initialize issues an Mcp-Session-Id (404 for an id that
// ended or expired; requests without the header stay stateless), the
// session keeps its log level and resource subscriptions, GET /mcp with
// the id opens its stream of notifications/resources/updated
// (NotifyResourceUpdated; a new GET takes the stream over, with what is
// queued, as a client reconnecting after its connection dropped needs),
// DELETE ends it; GET and DELETE are checked as a POST is for Origin
// (403), the token (WithAuth), MCP-Protocol-Version (400 for one not
// served; under 2026-07-28, 405) and an Mcp-Session-Id in more than one
// line (404), and a browser on an allowed origin may read the
// Mcp-Session-Id of initialize's answer (Access-Control-Expose-Headers).
// Sessions are bounded in number, idle time, queued notifications and
// subscriptions each (SessionOptions). 2026-07-28 has no sessions. See
// sessions.go for the details.
//
// # Cancellation
//
// Over stdio a notifications/cancelled cancels the request it names (see
// StreamEndpoint). Over HTTP under 2025-xx, which says a disconnect is no
// cancellation, a notifications/cancelled POSTed in a session ends the
// context of that session's running tools/call, resources/read,
// prompts/get or completion/complete with the id it names
// (context.Canceled; its POST is answered -32603 "request cancelled"; a
// streamed answer until its first event, after which closing its stream
// ends it; a session with a request running does not expire, and DELETE
// cancels its running requests in the same way, a streamed answer until
// its first event); without a session the id names
// no request anyone can tell apart (ids are the client's own), and the
// cancellation is ignored. Under
// 2026-07-28 a client cancels by closing the request's connection or
// stream: the tool's context ends with fastserver.ErrClientGone (looked
// for once it has run 2 s) or fastserver.ErrStreamClosed.
//
// # Newline-delimited streams
//
// StreamEndpoint serves the same methods over newline-delimited streams
// (MCP's stdio transport, fastserver.ServeLines), where there are no
// headers: a request's version is the one its
// params._meta["io.modelcontextprotocol/protocolVersion"] names, as MCP
// 2026-07-28 defines for stdio; when it names none, the version the
// stream's initialize negotiated (under 2025-xx it holds for the
// connection), and 2025-03-26 before an initialize; a version not served
// is -32022. Calls are served one at a time, in order,
// while the lines after them are read ahead, so that a
// notifications/cancelled (the only way to cancel over stdio) takes
// effect at once: the request it names is never served if it still
// waits, its tool's context (Call.Context) ends with context.Canceled if
// it runs, and it gets no answer (MCP: "Not send a response for the
// cancelled request").
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
// Three validators serve calls, with the same verdicts:
//
//   - The compiled subset checks the raw argument bytes and allocates
//     nothing for a valid call. It covers what Go's schema generators
//     write for plain structs: type (a name or a list), properties,
//     required, additionalProperties (a boolean or a schema), enum, items
//     (one schema for every element), minimum and maximum, minLength and
//     maxLength, minItems and maxItems, pattern (Go's regexp, as the
//     library uses), boolean schemas, and the annotations (title,
//     description, default, examples, deprecated, readOnly, writeOnly,
//     $comment, format outside draft-07, $schema 2020-12, 2019-09 or
//     draft-07 at the root). SchemaFastPath says whether a schema fits.
//   - Every other schema is compiled by github.com/santhosh-tekuri/jsonschema/v6
//     (the library), and the raw walk judges calls against its compiled
//     form: the library's schema graph walked over the raw argument
//     bytes, keyword by keyword as the library's validator does ($ref,
//     allOf, anyOf, oneOf, not, if/then/else, const, uniqueItems,
//     prefixItems, contains, patternProperties, dependencies,
//     propertyNames, unevaluatedProperties and unevaluatedItems, the
//     exclusive bounds, multipleOf, format under draft-07...). It
//     allocates nothing for a valid call (every valid case of the official
//     JSON-Schema-Test-Suite it serves is checked), runs 4-10 times faster
//     than the library's Validate, and keeps a call's memory to a few
//     times its bytes where the library's model of the arguments cost
//     36-480 times (contract §3 allows 8). A walk that would judge values
//     too many times (combinators that branch on every level of a deep
//     instance, a recursive schema over a deep instance with its bulk at
//     the bottom) is refused -32602 as too costly to check: it is
//     charged a step per node applied and per 32 bytes that node judges,
//     against 2 steps per schema node per argument byte (16 to 64) and
//     2^20; so is a "regex" format string over 4 KiB, and format checks
//     left to the library past 256 KiB plus 4 times the arguments.
//   - The library's own Validate, over a model of the arguments with
//     exact numbers (json.Number), serves WithLibraryValidation, and
//     would serve a schema the raw walk cannot read: a vocabulary
//     extension, a content assertion or a format the library does not
//     define — none of which this package enables, so today no schema
//     reaches it by default.
//
// The three pass the whole required JSON-Schema-Test-Suite for 2020-12
// and draft-07, through this package's tools/call. WithLibraryValidation
// sends every schema to the library (for comparison); differential tests
// and a fuzz target hold the three to the same verdict. Decisions where
// JSON Schema, the contract and the validators could differ:
//
//   - "integer" is any number without a fractional part, as JSON Schema
//     says: 1.0 and 1e2 are integers (a typed tool decodes them as 1 and
//     100).
//   - Numbers are compared as exact decimals on every path (no float64
//     rounding: 9007199254740993 > 9007199254740992). The library's own
//     Validate refuses with -32602 any number with more than 400
//     significant digits or a decimal exponent beyond ±400, which would
//     make its big.Rat arithmetic cost milliseconds each; the compiled
//     subset and the raw walk compare (and divide, for multipleOf) any
//     number in time linear in its text.
//   - minLength and maxLength count Unicode code points, escapes resolved
//     ("\ud83d\ude00" is one), as every validator does.
//   - format asserts nothing under 2020-12 and 2019-09 (an annotation)
//     and is checked under draft-07 and earlier, as the library does by
//     default for those drafts; the compiled subset leaves draft-07
//     schemas with format to the raw walk, which asks the library's own
//     format checks.
//   - A member name given twice at the top level of arguments is -32602
//     before any schema (the contract). Deeper down the last occurrence
//     is the value every reader sees (decode.Lookup, sonic, the library's
//     map), so it is the one judged, on every path.
//   - Unknown keywords are annotations, as JSON Schema 2020-12 says: they
//     send a schema past the compiled subset; the raw walk and the
//     library ignore them.
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
// A ToolHandler gets a Call: the checked arguments (Arg for the raw
// value; ArgString, ArgInt, ArgFloat, ArgBool and ArgNumber, which return
// the value or an error — a -32602 *fastserver.Error naming the argument,
// to be returned as it is — and never a quiet zero: an integer beyond
// int64, or one beyond 2^53 asked for as a float, is an error, and
// ArgNumber gives any number's exact text) and a result builder
// (AddText, AddTextJSON, AddContentJSON, SetStructuredContent, SetError)
// that writes straight into the answer. A handler that returns an error
// that is not a *fastserver.Error ran and failed: the answer is a result
// with isError: true. A *fastserver.Error is answered as that JSON-RPC
// error. Typed tools (AddTool with Go types) decode every argument with
// the same exactness.
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
//   - A resource that does not exist (and no template matches) is -32601
//     with data {"uri": …}; MCP 2026-07-28 (SEP-2164) asks for -32602.
//     The conformance suite warns on it.
//   - On newline-delimited streams (stdio) calls are served one at a
//     time: a Streaming tool's notifications and its 2025-xx requests to
//     the client are lines written before its answer (the client's
//     responses come back as lines, read while the tool waits), but
//     subscriptions/listen is refused with -32600 (a listen stream would
//     hold the transport).
//
// # Lifetimes and concurrency
//
// Register everything, then call Endpoint: it freezes the registries
// and renders every result that does not depend on the request, once
// per version. After that a Server is safe for concurrent use. A Call,
// and every slice it returns, is valid only until the handler returns.
// The endpoints keep their Call with the server's pooled call
// (fastserver.Request.Keep) rather than in a pool of their own: a hook of
// the caller's that puts something else in Keep makes them fall back to
// the pool.
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
