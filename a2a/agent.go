package a2a

import (
	"context"
	"encoding/json"
)

// Agent is the behaviour behind the endpoint: it handles each message a
// client sends (SendMessage, message/send) and answers with a task
// outcome or a direct message. The server does the rest: validation,
// task ids, the task store, GetTask and CancelTask, both wire shapes.
//
// HandleMessage runs on the request's goroutine, under the server's
// handler deadline (ctx carries it). It may be called concurrently and
// must be safe for that. To refuse with a JSON-RPC error, return a
// *fastserver.Error (fastserver.InvalidParams for bad input, or a code of
// its own); any other error is answered 500 / -32603.
type Agent interface {
	HandleMessage(ctx context.Context, c *Call) (*Reply, error)
}

// AgentFunc adapts a function to Agent.
type AgentFunc func(ctx context.Context, c *Call) (*Reply, error)

// HandleMessage calls f(ctx, c).
func (f AgentFunc) HandleMessage(ctx context.Context, c *Call) (*Reply, error) { return f(ctx, c) }

var _ Agent = AgentFunc(nil)

// Call is one message for an Agent. Nothing in it borrows from the
// request, so it may be kept; but Message is also what the task's history
// stores and Task is the store's snapshot, so neither may be modified.
type Call struct {
	// Message is the client's message, validated: a non-empty MessageID,
	// Role RoleUser, at least one well-formed part.
	Message Message
	// SkillID is params.metadata.skillId, "" when absent. When set it
	// names a skill of the card or of the extended card.
	SkillID string
	// AcceptedOutputModes is configuration.acceptedOutputModes: the media
	// types the client accepts for the parts of the answer, nil when
	// absent (A2A: agents SHOULD tailor their output to it; one that
	// cannot answer any of them may refuse with an error of code
	// CodeContentTypeNotSupported).
	AcceptedOutputModes []string
	// TaskID is the id of the task this call creates or continues.
	TaskID string
	// ContextID is the task's context: the message's, the continued
	// task's, or a new one.
	ContextID string
	// Task is the task the message continues (Message.TaskID named it),
	// as stored before this call (read-only); nil for a new task. It is
	// never in a final state.
	Task *Task
	// Metadata is params.metadata (a JSON object), nil when absent.
	Metadata json.RawMessage
	// Version is the protocol generation of the request.
	Version Version

	owner string // the caller's Task.Owner
}

// Reply is an Agent's answer to a Call: either a direct Message, or the
// outcome of the task.
type Reply struct {
	// Message, when not nil, is a direct answer: no task is created or
	// changed, and the other fields are ignored. The server sets its Role
	// to RoleAgent, and its MessageID, ContextID and TaskID when empty.
	Message *Message
	// State is the task's new state. The zero value means
	// TaskStateCompleted.
	State TaskState
	// Status is an optional message from the agent about the state; it
	// is also appended to the task's history.
	Status *Message
	// Artifacts are added to the task's artifacts: one whose ArtifactID
	// the task holds replaces that artifact (an id is unique within a
	// task), the others are appended. The server sets an empty
	// ArtifactID to a new random id. Each needs a part at least, as do
	// Message and Status.
	Artifacts []Artifact
	// Metadata, when not nil, replaces the task's metadata. It must be a
	// valid JSON object.
	Metadata json.RawMessage
	// Then, when not nil, is called on a goroutine of its own once the
	// task outcome is stored (not when storing it fails, nor for a
	// direct Message): work that goes on after the answer starts there
	// and reports with Server.UpdateTask and Server.UpdateArtifact, which
	// the task's streams carry. A stream of SendStreamingMessage is
	// already following the task when Then runs, so it misses nothing.
	Then func()
}
