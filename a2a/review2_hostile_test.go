package a2a

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// authServer is a test server with Config.Auth set: the tokens are put on
// the requests by callAs, as the authorization row would.
func authServer(t testing.TB, mut func(*Config)) *Server {
	t.Helper()
	return newTestServer(t, func(c *Config) {
		c.Auth = &auth.Resource{}
		c.Card.SecuritySchemes = map[string]SecurityScheme{"bearer": {HTTPAuth: &HTTPAuthSecurityScheme{Scheme: "Bearer"}}}
		c.Card.Security = []SecurityRequirement{{"bearer": {}}}
		if mut != nil {
			mut(c)
		}
	})
}

// callAs serves body as callHeader does, authorized as subject sub of
// the issuer "https://issuer.test".
func callAs(t testing.TB, s *Server, sub, version, body string) answer {
	t.Helper()
	var hdr fasthttp.RequestHeader
	hdr.SetHost("agent.test:8080")
	if version != "" {
		hdr.Set(VersionHeader, version)
	}
	var d decode.Decoder
	var m decode.Message
	if err := d.Decode([]byte(body), &m); err != nil {
		t.Fatalf("test body does not decode: %v", err)
	}
	var r fastserver.Request
	r.Reset(&hdr, &m, context.Background())
	r.Auth = &auth.Token{Issuer: "https://issuer.test", Subject: sub}
	ep := s.Endpoint()
	if e := ep.Check(&r); e != nil {
		return errAnswer(e)
	}
	rt := ep.Route(&r)
	if rt.Handler == nil {
		return answer{status: 404, code: decode.CodeMethodNotFound}
	}
	const prefix = `{"jsonrpc":"2.0","id":1,"result":`
	out, err := rt.Handler.ServeRPC(&r, []byte(prefix))
	if err != nil {
		var e *fastserver.Error
		if errors.As(err, &e) {
			return errAnswer(e)
		}
		return answer{status: 500, code: decode.CodeInternalError, msg: err.Error()}
	}
	return answer{status: 200, result: string(out[len(prefix):])}
}

// ownerTask creates a task of sub with the given text ("ask": input
// required, "hold" with the stream agent: working, else completed).
func ownerTask(t testing.TB, s *Server, sub, text string) (id, ctxID string) {
	t.Helper()
	a := callAs(t, s, sub, "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"`+text+`"}]}}`))
	id, _ = get(parse(t, a.result), "task", "id").(string)
	ctxID, _ = get(parse(t, a.result), "task", "contextId").(string)
	if a.code != 0 || id == "" {
		t.Fatalf("%s: %+v", sub, a)
	}
	return id, ctxID
}

// With Config.Auth another owner's task does not exist for a caller,
// whatever it asks and whatever state the task is in: -32001 everywhere,
// never -32002 or -32004 (which would tell that the id exists and is
// final: A2A §3.3.2 "MUST NOT reveal the existence of resources the
// client is not authorized to access"); ListTasks, its filters and a
// forged page token list none of them.
func TestReview2OwnerIsolation(t *testing.T) {
	var srv *Server
	s := authServer(t, func(c *Config) { c.Card.Capabilities.Streaming = true; c.Agent = streamAgent(&srv) })
	srv = s
	open, ctxOpen := ownerTask(t, s, "alice", "ask")
	done, _ := ownerTask(t, s, "alice", "x")
	working, _ := ownerTask(t, s, "alice", "hold")
	ownerTask(t, s, "bob", "y")
	tok := string(AppendPageToken(nil, PageCursor{Millis: 1 << 62, ID: strings.Repeat("z", 40)}))
	for _, id := range []string{open, done, working} {
		for _, b := range []string{
			req("GetTask", `{"id":"`+id+`"}`),
			req("tasks/get", `{"id":"`+id+`","historyLength":5}`),
			req("CancelTask", `{"id":"`+id+`"}`),
			req("tasks/cancel", `{"id":"`+id+`"}`),
			req("SubscribeToTask", `{"id":"`+id+`"}`),
			req("tasks/resubscribe", `{"id":"`+id+`"}`),
			req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"b","taskId":"`+id+`","parts":[{"text":"hi"}]}}`),
			req("SendStreamingMessage", `{"message":{"role":"ROLE_USER","messageId":"b","taskId":"`+id+`","parts":[{"text":"hi"}]}}`),
			req("message/send", `{"message":{"kind":"message","role":"user","messageId":"b","taskId":"`+id+`","contextId":"`+ctxOpen+`","parts":[{"kind":"text","text":"hi"}]}}`),
		} {
			v := ""
			if strings.Contains(b, `"kind"`) {
				v = "0.3"
			}
			if a := callAs(t, s, "bob", v, b); a.code != CodeTaskNotFound {
				t.Errorf("bob: %.90s…: %+v, want -32001", b, a)
			}
		}
	}
	for _, params := range []string{`{}`, `{"contextId":"` + ctxOpen + `"}`, `{"status":"TASK_STATE_INPUT_REQUIRED"}`, `{"pageToken":"` + tok + `"}`, `{"pageSize":100,"includeArtifacts":true}`} {
		a := callAs(t, s, "bob", "1.0", req("ListTasks", params))
		if a.code != 0 || strings.Contains(a.result, open) || strings.Contains(a.result, done) || strings.Contains(a.result, working) {
			t.Errorf("bob lists %s: %+v", params, a)
		}
	}
	// Nothing bob did changed alice's tasks.
	for _, id := range []string{open, done, working} {
		tk, ok := s.Task(id)
		if !ok || tk.Seq != 1 {
			t.Errorf("alice's task %s changed: %+v", id, tk)
		}
	}
	// And alice still reaches all of them.
	a := callAs(t, s, "alice", "1.0", req("ListTasks", `{}`))
	if get(parse(t, a.result), "totalSize") != 3.0 {
		t.Errorf("alice lists %+v", a)
	}
}

// With Config.Auth one owner's requests cannot delete another owner's
// tasks: bob, an authenticated client like any other, sends MaxTasks
// small messages (here 8, by default 10,000 requests of ~120 bytes) and
// every task of alice is evicted: her GetTask, CancelTask and the
// continuation of the task waiting for her input answer -32001, and her
// streams end. The count bound (and the byte bound alike) is shared by
// every owner, oldest first, with no share per owner.
func TestReview2OwnerFloodEvictsOthers(t *testing.T) {
	const maxTasks, share = 8, 4
	s := authServer(t, func(c *Config) { c.MaxTasks = maxTasks; c.MaxOwnerTasks = share })
	id, _ := ownerTask(t, s, "alice", "ask")
	for range 4 * maxTasks {
		ownerTask(t, s, "bob", "ask")
	}
	if a := callAs(t, s, "alice", "1.0", req("GetTask", `{"id":"`+id+`"}`)); a.code != 0 {
		t.Errorf("alice's task waiting for her input is gone after bob sent %d messages: %+v", 4*maxTasks, a)
	}
	if a := callAs(t, s, "bob", "1.0", req("ListTasks", `{}`)); get(parse(t, a.result), "totalSize") != float64(share) {
		t.Errorf("bob keeps %v tasks, want his share, %d", get(parse(t, a.result), "totalSize"), share)
	}
}

// delayBroker is a LocalBroker whose publication of some changes is late
// (a shared broker's network hop, a publisher descheduled between
// storing a change and publishing it, a slow stream ahead of it in
// LocalBroker.Publish's loop).
type delayBroker struct {
	*LocalBroker
	late func(*TaskChange) <-chan struct{}
}

func (b delayBroker) Publish(ctx context.Context, c *TaskChange) {
	if ch := b.late(c); ch != nil {
		<-ch
	}
	b.LocalBroker.Publish(ctx, c)
}

// A stream carries every change of its task: an artifact stored before
// the task completed, but whose publication comes after the completion's,
// is dropped by serveFollow (Seq not above the last sent) and the stream
// ends without it, though the completed task holds it. The 1.0 spec:
// "the stream MUST begin with the Task object, followed by zero or more
// TaskStatusUpdateEvent or TaskArtifactUpdateEvent objects" — here the
// client never sees the artifact, and nothing tells it that it missed one.
func TestReview2StreamLosesLateChange(t *testing.T) {
	release := make(chan struct{})
	b := delayBroker{LocalBroker: NewLocalBroker(), late: func(c *TaskChange) <-chan struct{} {
		for _, ev := range c.Events {
			if ev.Artifact != nil && ev.Artifact.ArtifactID == "late" {
				return release
			}
		}
		return nil
	}}
	s, _, addr := streamServer(t, fastserver.Config{}, func(c *Config) { c.Events = b })
	id := holdTask(t, s)
	c := post(t, addr, "1.0", streamReq(1, "SubscribeToTask", `{"id":"`+id+`"}`))
	if _, _, err := c.next(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "subscribed", func() bool { return b.Subscribers() == 1 })
	stored := make(chan error, 1)
	go func() {
		_, err := s.UpdateArtifact(context.Background(), id, ArtifactUpdate{Artifact: Artifact{ArtifactID: "late", Parts: PartsOf(TextPart("result"))}, LastChunk: true})
		stored <- err
	}()
	waitUntil(t, "artifact stored", func() bool { tk, _ := s.Task(id); return len(tk.Artifacts) == 1 })
	if _, err := s.UpdateTask(context.Background(), id, &Reply{State: TaskStateCompleted}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-stored; err != nil {
		t.Fatal(err)
	}
	evs := c.events("1")
	var kinds []string
	for _, ev := range evs {
		k, _ := kind10(t, ev)
		kinds = append(kinds, k)
	}
	if strings.Join(kinds, ",") != "artifactUpdate,statusUpdate" {
		tk, _ := s.Task(id)
		t.Errorf("stream events %v after the task (want artifactUpdate,statusUpdate); the completed task holds %d artifact(s)", kinds, len(tk.Artifacts))
	}
}
