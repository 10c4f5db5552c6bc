package a2a

import (
	"encoding/json"
	"time"
)

// NOTE: one data model, two wire shapes.
//
// The types here are the protocol's objects as Go values, independent of
// the generation that carried them. The wire shape is decided per request
// (Version) when a value is read from params (params.go) or appended to an
// answer (encode.go); nothing in these types is shape-specific. Values the
// server hands to an Agent are copies: they do not borrow from the request
// and may be kept. A client's parts are kept as the JSON it sent (parts.go),
// so that a message costs about its size in memory.

// Role says who sent a Message.
type Role uint8

// The roles. The zero value is RoleUnspecified, which the server never
// accepts in a request.
const (
	RoleUnspecified Role = iota
	// RoleUser is a message from the client to the agent: 1.0 "ROLE_USER",
	// 0.3 "user".
	RoleUser
	// RoleAgent is a message from the agent: 1.0 "ROLE_AGENT", 0.3 "agent".
	RoleAgent
)

// String returns the 1.0 name of r, such as "ROLE_USER".
func (r Role) String() string { return r.name(Version10) }

func (r Role) name(v Version) string {
	if v == Version03 {
		switch r {
		case RoleUser:
			return "user"
		case RoleAgent:
			return "agent"
		}
		return "unknown"
	}
	switch r {
	case RoleUser:
		return "ROLE_USER"
	case RoleAgent:
		return "ROLE_AGENT"
	}
	return "ROLE_UNSPECIFIED"
}

// TaskState is where a Task is in its lifecycle.
type TaskState uint8

// The task states, in the order of A2A 1.0's enum. The zero value is
// TaskStateUnspecified.
const (
	TaskStateUnspecified   TaskState = iota // 1.0 TASK_STATE_UNSPECIFIED, 0.3 "unknown"
	TaskStateSubmitted                      // acknowledged, not started
	TaskStateWorking                        // being processed
	TaskStateCompleted                      // finished successfully (final)
	TaskStateFailed                         // finished with an error (final)
	TaskStateCanceled                       // canceled before completion (final)
	TaskStateInputRequired                  // waiting for the client's next message
	TaskStateRejected                       // the agent declined the task (final)
	TaskStateAuthRequired                   // waiting for credentials
)

var stateNames10 = [...]string{
	"TASK_STATE_UNSPECIFIED", "TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
	"TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED",
	"TASK_STATE_INPUT_REQUIRED", "TASK_STATE_REJECTED", "TASK_STATE_AUTH_REQUIRED",
}

var stateNames03 = [...]string{
	"unknown", "submitted", "working", "completed", "failed", "canceled",
	"input-required", "rejected", "auth-required",
}

// String returns the 1.0 name of s, such as "TASK_STATE_COMPLETED".
func (s TaskState) String() string { return s.name(Version10) }

func (s TaskState) name(v Version) string {
	if int(s) >= len(stateNames10) {
		s = TaskStateUnspecified
	}
	if v == Version03 {
		return stateNames03[s]
	}
	return stateNames10[s]
}

// Final reports whether s is a terminal state (completed, failed, canceled
// or rejected): a task in a final state takes no more messages and cannot
// be canceled.
func (s TaskState) Final() bool {
	switch s {
	case TaskStateCompleted, TaskStateFailed, TaskStateCanceled, TaskStateRejected:
		return true
	}
	return false
}

// PartKind says what a Part holds.
type PartKind uint8

// The kinds of part.
const (
	// PartText holds Part.Text. 1.0 {"text":…}, 0.3 {"kind":"text",…}.
	PartText PartKind = iota + 1
	// PartFile holds file content, either Part.Raw or Part.URL. 1.0
	// {"raw":…} or {"url":…}, 0.3 {"kind":"file","file":{"bytes"|"uri":…}}.
	PartFile
	// PartData holds Part.Data, a JSON value. 1.0 {"data":…}, 0.3
	// {"kind":"data","data":{…}}.
	PartData
)

// Part is one piece of content in a Message or an Artifact.
type Part struct {
	// Kind says which of Text, Raw or URL, and Data is the content.
	Kind PartKind
	// Text is the content of a PartText.
	Text string
	// Raw is the content of a PartFile given inline (base64 on the wire).
	// A file part with a nil Raw is given by URL.
	Raw []byte
	// URL locates the content of a PartFile whose Raw is nil.
	URL string
	// Data is the content of a PartData: one valid JSON value. 0.3 allows
	// only objects; another value is written there as {"value":<Data>}.
	Data json.RawMessage
	// Filename is an optional file name (1.0 filename, 0.3 file.name).
	Filename string
	// MediaType is an optional media type (1.0 mediaType, 0.3
	// file.mimeType; 0.3 has no place for it on text and data parts).
	MediaType string
	// Metadata is an optional JSON object, nil when absent.
	Metadata json.RawMessage
}

// TextPart returns a PartText holding s.
func TextPart(s string) Part { return Part{Kind: PartText, Text: s} }

// Message is one turn of communication between a client and an agent.
type Message struct {
	// MessageID identifies the message; the sender creates it.
	MessageID string
	// ContextID groups related tasks and messages; "" when absent.
	ContextID string
	// TaskID is the task the message belongs to; "" when absent.
	TaskID string
	// Role is the sender.
	Role Role
	// Parts is the content: at least one part. A client's message holds
	// its parts as the JSON it sent (see Parts); an agent's is made with
	// PartsOf.
	Parts Parts
	// Metadata is an optional JSON object, nil when absent.
	Metadata json.RawMessage
	// Extensions lists the URIs of extensions used in the message.
	Extensions []string
	// ReferenceTaskIDs lists tasks the message refers to.
	ReferenceTaskIDs []string
}

// Artifact is an output of a Task.
type Artifact struct {
	// ArtifactID identifies the artifact within its task. The server
	// generates one when an Agent leaves it empty.
	ArtifactID string
	// Name is an optional human-readable name.
	Name string
	// Description is an optional human-readable description.
	Description string
	// Parts is the content: at least one part (PartsOf, or a client's
	// parts such as Call.Message.Parts.OfKind(PartText), shared without
	// a copy).
	Parts Parts
	// Metadata is an optional JSON object, nil when absent.
	Metadata json.RawMessage
	// Extensions lists the URIs of extensions used in the artifact.
	Extensions []string
}

// TaskStatus is a Task's current state.
type TaskStatus struct {
	// State is the lifecycle state.
	State TaskState
	// Message is an optional message from the agent about the state.
	Message *Message
	// Timestamp is when the status was recorded (written in UTC with
	// millisecond precision).
	Timestamp time.Time
}

// Task is the unit of work the server keeps for a SendMessage call that
// the agent answered with a task rather than a direct message.
//
// The Tasks a Server stores are never modified once stored: an update
// stores a new Task, so a *Task obtained from the server may be read
// concurrently and kept, but must not be modified.
type Task struct {
	// ID is the task's id, generated by the server (a random UUID).
	ID string
	// ContextID groups related tasks: the message's, or generated.
	ContextID string
	// Status is the current state.
	Status TaskStatus
	// Artifacts are the task's outputs.
	Artifacts []Artifact
	// History holds the messages of the task, oldest first: each message
	// the client sent and each status message of the agent.
	History []Message
	// Metadata is an optional JSON object, nil when absent.
	Metadata json.RawMessage
	// Seq counts the task's stored changes: 1 when created, one more for
	// each change the server stores. Streams send the changes whose Seq
	// is above the task they started from (see TaskChange); a TaskStore
	// must keep it. It is not part of the wire shape.
	Seq uint64
	// Owner is who created the task when the endpoint requires
	// authorization (Config.Auth): the token's issuer and subject (its
	// client id when it names no subject); "" without Config.Auth. Only
	// requests authorized as the same owner find the task (GetTask,
	// CancelTask, SubscribeToTask, a SendMessage continuing it,
	// ListTasks); to any other it does not exist (-32001), as A2A's
	// ListTasks requires. A TaskStore must keep it. It is not part of the
	// wire shape.
	Owner string

	// hist, histN and histBytes let a successor extend History without
	// copying it (history.go): History is hist's first histN messages,
	// of estimated size histBytes.
	hist      *sharedBuf[Message]
	histN     int
	histBytes int64
}
