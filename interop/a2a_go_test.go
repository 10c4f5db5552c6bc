package interop

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
)

// a2aGoClient is the A2A Go SDK's client (A2A 0.3, JSON-RPC) for the
// server's /a2a.
func a2aGoClient(t *testing.T, url string) *a2aclient.Client {
	t.Helper()
	c, err := a2aclient.NewFromEndpoints(context.Background(), []a2a.AgentInterface{{URL: url + "/a2a", Transport: a2a.TransportProtocolJSONRPC}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Destroy() })
	return c
}

// TestA2AGoSDKStreams drives message/stream and tasks/resubscribe with the
// A2A Go SDK (github.com/a2aproject/a2a-go): every event parses as the
// SDK's type for its kind, and carries what the spec says it must — the
// task first, the stream skill's chunks (append, lastChunk) with working
// statuses between them, a final status with final: true; a subscription
// that a CancelTask from another connection ends with canceled; the
// refusal of a subscription to a finished task.
func TestA2AGoSDKStreams(t *testing.T) {
	s := startServer(t)
	c := a2aGoClient(t, s.url)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	text := "streamed through the Go SDK"
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: text})
	var (
		task   *a2a.Task
		chunks []string
		kinds  []string
		final  *a2a.TaskStatusUpdateEvent
	)
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: msg, Metadata: map[string]any{"skillId": "stream", "chunks": 5, "delayMs": 10}}) {
		if err != nil {
			t.Fatalf("SendStreamingMessage: %v (after %v)", err, kinds)
		}
		switch e := ev.(type) {
		case *a2a.Task:
			kinds = append(kinds, "task")
			task = e
			if e.Status.State != a2a.TaskStateWorking || e.ID == "" || e.ContextID == "" {
				t.Errorf("first event: %+v", e)
			}
		case *a2a.TaskArtifactUpdateEvent:
			kinds = append(kinds, "artifact")
			k := len(chunks)
			if task == nil || e.TaskID != task.ID || e.ContextID != task.ContextID || e.Artifact == nil || e.Append != (k > 0) || e.LastChunk != (k == 4) {
				t.Errorf("artifact event %d: %+v", k, e)
			}
			if e.Artifact != nil && len(e.Artifact.Parts) == 1 {
				if p, ok := e.Artifact.Parts[0].(a2a.TextPart); ok {
					chunks = append(chunks, p.Text)
				}
			}
		case *a2a.TaskStatusUpdateEvent:
			kinds = append(kinds, "status")
			if task == nil || e.TaskID != task.ID || e.Status.Timestamp == nil {
				t.Errorf("status event: %+v", e)
			}
			if e.Final {
				final = e
			}
		default:
			t.Errorf("unexpected event %T", ev)
		}
	}
	if want := "task artifact status artifact status artifact status artifact status artifact status"; strings.Join(kinds, " ") != want {
		t.Errorf("event order %q, want %q", strings.Join(kinds, " "), want)
	}
	if strings.Join(chunks, "") != text {
		t.Errorf("chunks %q", chunks)
	}
	if final == nil || final.Status.State != a2a.TaskStateCompleted {
		t.Errorf("final status %+v", final)
	}

	// The wait skill: the first event, then the stream is left; a
	// resubscription follows the task until a cancel from elsewhere.
	var id a2a.TaskID
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.MessageSendParams{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: "hold"}), Metadata: map[string]any{"skillId": "wait", "seconds": 60}}) {
		if err != nil {
			t.Fatal(err)
		}
		tk, ok := ev.(*a2a.Task)
		if !ok || tk.Status.State != a2a.TaskStateWorking {
			t.Fatalf("wait: first event %#v", ev)
		}
		id = tk.ID
		break
	}
	var events []a2a.Event
	canceled := make(chan error, 1)
	for ev, err := range c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: id}) {
		if err != nil {
			t.Fatalf("ResubscribeToTask: %v", err)
		}
		events = append(events, ev)
		if len(events) == 1 {
			go func() {
				time.Sleep(100 * time.Millisecond)
				_, err := a2aGoClient(t, s.url).CancelTask(ctx, &a2a.TaskIDParams{ID: id})
				canceled <- err
			}()
		}
	}
	if err := <-canceled; err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	if len(events) != 2 {
		t.Fatalf("resubscribe: %d events %#v", len(events), events)
	}
	if tk, ok := events[0].(*a2a.Task); !ok || tk.ID != id || tk.Status.State != a2a.TaskStateWorking {
		t.Errorf("resubscribe: first event %#v", events[0])
	}
	if st, ok := events[1].(*a2a.TaskStatusUpdateEvent); !ok || st.Status.State != a2a.TaskStateCanceled || !st.Final || st.TaskID != id {
		t.Errorf("resubscribe: last event %#v", events[1])
	}

	// A finished task: the SDK surfaces -32004 as ErrUnsupportedOperation.
	for _, err := range c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: id}) {
		if !errors.Is(err, a2a.ErrUnsupportedOperation) {
			t.Errorf("resubscribe to a canceled task: %v, want ErrUnsupportedOperation", err)
		}
		break
	}
	// An unknown one: ErrTaskNotFound.
	for _, err := range c.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: "no-such-task"}) {
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("resubscribe to an unknown task: %v, want ErrTaskNotFound", err)
		}
		break
	}
}
