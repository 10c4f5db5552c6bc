// Package a2a serves the Agent2Agent (A2A) protocol over JSON-RPC 2.0 on a
// fastserver endpoint (POST /a2a), and the agent card that lets clients
// find it (GET /.well-known/agent-card.json). It speaks both protocol
// generations in use, A2A 1.0 and 0.3, on one endpoint.
//
// # Wiring
//
//	srv, err := a2a.New(a2a.Config{Card: card, Agent: agent})
//	...
//	ep := srv.Endpoint()     // mount with the fastserver server
//	srv.ServeCard(ctx)       // GET /.well-known/agent-card.json (fasthttp)
//	srv.AppendCard(dst, host) // the same card, without fasthttp
//
// The behaviour is an Agent: it gets each message a client sends and
// answers with a task outcome (state, artifacts, status message) or a
// direct message. The server validates requests, keeps tasks in a bounded
// in-memory store, answers GetTask and CancelTask, and writes every answer
// in the shape of the request's protocol generation.
//
// # Methods and versions
//
// Every operation is served under its 1.0 name and its 0.3 alias:
//
//	SendMessage                        message/send
//	SendStreamingMessage               message/stream
//	GetTask                            tasks/get
//	ListTasks                          (1.0 only)
//	CancelTask                         tasks/cancel
//	SubscribeToTask                    tasks/resubscribe
//	GetExtendedAgentCard               agent/getAuthenticatedExtendedCard
//	CreateTaskPushNotificationConfig   tasks/pushNotificationConfig/set
//	GetTaskPushNotificationConfig      tasks/pushNotificationConfig/get
//	ListTaskPushNotificationConfigs    tasks/pushNotificationConfig/list
//	DeleteTaskPushNotificationConfig   tasks/pushNotificationConfig/delete
//
// The A2A-Version request header decides the shapes when present: "1.0"
// (camelCase, enum strings such as "ROLE_USER" and "TASK_STATE_COMPLETED",
// no kind tags; SendMessage answers {"task":…} or {"message":…}) or "0.3"
// (kind tags, lower-case roles and states; message/send answers the bare
// task or message). Any other value is refused, notifications included,
// with 400 / -32009 and data {"supported":["1.0","0.3"],"requested":"…"};
// so is an empty value, and a patch version such as "1.0.0". Without the
// header the method name's family decides. Either name is
// accepted under either version. Requests are read strictly in the shape
// of their version: a 1.0 part is {"text":"hi"}, a 0.3 part
// {"kind":"text","text":"hi"}.
//
// # Tasks
//
// Tasks live in a TaskStore (Config.Tasks): by default a bounded
// in-memory one (MemoryStore); package fleet keeps them in Redis so that
// every instance of a fleet serves every task. Every change of a task is
// a check-and-set (TaskStore.Update), so a CancelTask racing the
// completion of a task ends in exactly one of the two, for every reader.
// A final state is never undone: the reply of an Agent to a message
// continuing a task that was canceled (or finished) while it ran is
// dropped (-32004), and so is one whose task left the store meanwhile
// (evicted, expired: -32001), which is not stored again. An Agent whose
// work goes on after it answered (State TaskStateWorking) reports the
// outcome with Server.UpdateTask. SendMessage then waits for the task to
// reach a final or interrupted state (input or auth required) and answers
// it as stored then, as A2A 1.0 requires by default and 0.3's blocking
// asks; a client that sets returnImmediately (1.0) or blocking false
// (0.3) gets the task as the agent left it. The wait is bounded by
// Config.SendWait (1 min) and by the handler's deadline (a tenth of the
// time left is kept to answer): past them the task is answered as it
// stands, for GetTask or SubscribeToTask to follow. ListTasks pages by status timestamp,
// newest first, then id (pageSize 1 to 100, default 50; contextId, status
// and statusTimestampAfter filters). While
// the store is unreachable, calls that need it (SendMessage creating or
// continuing a task, GetTask, CancelTask, ListTasks) answer 503 / -32603
// with Retry-After; the rest is served.
//
// # Refusals, in order
//
// Within rows 15 to 17 of the wire contract each route owns its params
// (fastserver.Route.OwnParams) so that the order is contract §5's:
//
//   - A method refused outright is answered before its params are read
//     (fastserver.Route.Refuse): SendStreamingMessage and SubscribeToTask
//     with -32004 when the card declares no streaming, GetExtendedAgentCard
//     with -32004 when there is no extended card, the push-notification
//     config methods with -32003 when the card declares none.
//   - GetTask and CancelTask check params (an object; id a string) with
//     -32602, then answer -32001 for an unknown task and, CancelTask,
//     -32002 for a task in a final state.
//   - SendMessage checks params.metadata.skillId, when present, before the
//     message: not a string -32602, empty or not a skill of the card (or
//     of the extended card) -32004; then the message (role, parts, messageId, …) with -32602
//     naming the member in error.data.field.
//
// # Departures from the protocol text
//
// On purpose, following the product page: a missing extended agent card
// is -32004 (UnsupportedOperationError), whether or not the card declares
// the capability; A2A defines -32007 (ExtendedAgentCardNotConfiguredError)
// for a declared capability without a card. Push notifications cannot be
// declared (New refuses a card that does): there is no webhook delivery.
// tasks/resubscribe (0.3) of a task in a final state is refused like 1.0's
// SubscribeToTask (-32004): 0.3 names no error for it.
//
// # Streams
//
// With Capabilities.Streaming, SendStreamingMessage and SubscribeToTask
// answer 200 text/event-stream (fastserver's Request.Stream): each event a
// JSON-RPC response with the request's id whose result is a stream
// response (1.0 {"task"|"message"|"statusUpdate"|"artifactUpdate":…}, 0.3
// the kind-tagged Task, Message, status-update or artifact-update). The
// task (or the agent's direct message, alone) comes first, then its
// changes as they are stored: UpdateTask's artifacts and status,
// UpdateArtifact's chunks (append, lastChunk), a CancelTask from any
// connection. The stream ends after a final or interrupted state (0.3
// marks that status-update "final": true), at Config.MaxStreamDuration and
// when the server shuts down (then with the task's current status). Past
// fastserver's Config.MaxStreams, or its client's MaxClientStreams, a
// stream is refused 503 / -32603 with Retry-After; a client whose Accept does not allow text/event-stream, or
// whose request is HTTP/1.0, gets 406 / -32600, its message saying which.
// A client too slow to read is cut once Config.StreamQueue changes wait
// for it; an idle stream sends an SSE comment every Config.KeepAlive. Changes reach the streams through a Broker
// (Config.Events): in-process by default, Redis pub/sub with package
// fleet.
//
// # Security
//
// The task store is bounded twice: at most Config.MaxTasks tasks (default
// 10,000) and Config.MaxTaskBytes estimated bytes (default 64 MiB); the
// oldest tasks are evicted first, and an evicted task answers -32001.
// Each owner (with Config.Auth) is bounded by its share of both,
// Config.MaxOwnerTasks and Config.MaxOwnerTaskBytes (default a tenth:
// 1,000 tasks, 6.4 MiB): an owner at its share that creates or grows a
// task evicts its own oldest, never another owner's, so one client's
// flood of requests displaces at most its share of the others' tasks,
// and only once they fill the rest of the store (found by review on
// 2026-12-06: 10,000 small requests of one client evicted every task of
// every other, those waiting for their input too). A share is per token
// subject: an issuer that hands out subjects freely hands out shares.
// The store is safe for concurrent use (one mutex, held for map
// operations only; each O(1) amortized).
// Task ids are random version 4 UUIDs from crypto/rand. With Config.Auth
// a task belongs to the client that created it (Task.Owner: the token's
// issuer and subject): ListTasks lists only the caller's tasks, and
// GetTask, CancelTask, SubscribeToTask and SendMessage find no task of
// another owner (-32001). Without Config.Auth there is no caller to tell
// apart: a task is reachable by whoever holds its id, and ListTasks lists
// every task, so serve an endpoint without authorization only to one
// trusted client. Without Config.PublicURL the card's endpoint URL is
// built from the request's Host header, which the client controls; it is
// admitted only as a plain host[:port] (else FallbackHost is written), but
// a cache that does not key on Host could serve one client's card to
// another, so set PublicURL in production.
//
// A request's decoded form costs at most 8× its body (contract §3): a
// client's parts are checked in place and kept as one copy of their JSON
// (Parts), never as a Part each; lists of strings are sized once. A
// stored message costs about its size against MaxTaskBytes.
//
// Config.Auth protects the endpoint with OAuth (package auth): every call
// needs a valid access token for the endpoint's resource identifier,
// checked from the headers before the body is read (401 with a
// WWW-Authenticate challenge, 403 for missing scopes; codes -31401 and
// -31403, the A2A Go SDK's), and GetExtendedAgentCard is then answered
// only to authenticated callers. The card declares how to authenticate:
// AgentCard.SecuritySchemes and Security, written in both generations'
// shapes (see SecurityScheme; 0.3's typed schemes and "security", 1.0's
// oneof members and "securityRequirements" side by side). The agent card
// itself stays public. Without Config.Auth the extended card is served
// without authentication, so it must hold only what the public may see.
//
// # Lifetimes
//
// Nothing a Server hands out borrows from a request: a Call may be kept
// by the Agent, and a *Task from Server.Task (or Call.Task) is an immutable
// snapshot, safe to read concurrently. Call.Message is stored in the task's
// history and Reply's slices are stored as they are: modify neither once
// HandleMessage has returned.
package a2a
