package a2a

import (
	"context"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/fastserver"
)

// Third hostile review (2026-12): what review_hostile_test.go and
// review2_hostile_test.go do not cover.

// Attack: hold the in-flight body budget with SendStreamingMessage. A
// client opens streams whose bodies are padded to near the ceiling (an
// unknown member of params, which the server ignores) and whose task
// stays working: each stream keeps its whole body charged to
// Config.InflightBodyBytes for as long as it runs (MaxStreamDuration, an
// hour by default), though prepareSend copied everything the stream needs
// out of the request before the agent ran. A handful of such streams
// spend the budget, and every other request of every client is refused
// 503 / -32603. SubscribeToTask was fixed for exactly this
// (TestStreamSubscribeReleasesBody, fastserver.Stream.ReleaseBody);
// SendStreamingMessage (stream.go, sendStream.ServeStream) never calls
// ReleaseBody. Contract §3, "in-flight body budget": the budget is for
// bodies being read, and fastserver's body.go: "the handler gives the
// body back before the stream's first event ... so that hour-long streams
// do not hold the budget".
func TestReview3StreamingSendReleasesBody(t *testing.T) {
	s, _, addr := streamServer(t, fastserver.Config{MaxBodyBytes: 1 << 20, InflightBodyBytes: 2 << 20}, nil)
	pad := strings.Repeat("p", 900<<10)
	for i := range 3 {
		body := streamReq(10+i, "SendStreamingMessage", `{"message":{"role":"ROLE_USER","messageId":"m`+string(rune('a'+i))+`","parts":[{"text":"hold"}]},"pad":"`+pad+`"}`)
		c := post(t, addr, "1.0", body)
		if c.br == nil {
			t.Fatalf("stream %d refused %d %s: the streams before it still hold their bodies' budget", i, c.resp.StatusCode, c.body)
		}
		if _, _, err := c.next(); err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	waitUntil(t, "three streams", func() bool { return s.events.(*LocalBroker).Subscribers() == 3 })
	// 3 × 900 KiB still held, and this one's 900 KiB, pass the 2 MiB
	// budget: it waits BudgetWait for room and is refused 503. (As the
	// code stands the third stream is refused already.)
	id := holdTask(t, s)
	c := post(t, addr, "1.0", streamReq(20, "GetTask", `{"id":"`+id+`","pad":"`+pad+`"}`), "Accept: application/json")
	if c.resp.StatusCode != 200 {
		t.Errorf("GetTask beside three padded SendStreamingMessage streams: %d %s (the streams still hold their bodies' budget)", c.resp.StatusCode, c.body)
	}
}

// Attack (a careless client): a 1.0 data part whose value is JSON null.
// A2A 1.0's Part is `oneof content { ...; google.protobuf.Value data = 4; }`,
// "Arbitrary structured `data` as a JSON value (object, array, string,
// number, boolean, or null)", and ProtoJSON reads null for a
// google.protobuf.Value field as the value NULL_VALUE, not as absent (the
// one exception to "null means default"). viewPart (parts.go, `val :=
// value(it.Value())` then the `n != 1` count) turns it into "absent" and
// refuses the message -32602 "must have exactly one of text, raw, url,
// data". Accepted, it must also come back as {"data":null} (appendPartView10
// would otherwise write `{"data":}`).
func TestReview3DataPartNull(t *testing.T) {
	s := newTestServer(t, nil)
	a := call(t, s, "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"data":null}]}}`))
	if a.code != 0 {
		t.Fatalf("a part {\"data\":null}: %+v, want it accepted (a null google.protobuf.Value)", a)
	}
	if !strings.Contains(a.result, `"parts":[{"data":null}]`) {
		t.Errorf("the part does not come back as {\"data\":null}: %s", a.result)
	}
}

// Attack (a careless client relying on the 1.0 default): SendMessage
// without configuration.returnImmediately, or with it false, must not
// answer before the task is terminal or interrupted. A2A 1.0,
// SendMessageConfiguration.return_immediately: "If `false` (default), the
// operation MUST wait until the task reaches a terminal (`COMPLETED`,
// `FAILED`, `CANCELED`, `REJECTED`) or interrupted (`INPUT_REQUIRED`,
// `AUTH_REQUIRED`) state before returning." readSend (params.go) checks
// returnImmediately and blocking as booleans and drops them; sendMessage
// (handlers.go) answers the task as the agent left it, WORKING, while its
// work goes on in Reply.Then and completes a moment later. (0.3's
// `blocking: true` asks the same: "the client will wait for the task to
// complete".)
func TestReview3SendMessageWaitsByDefault(t *testing.T) {
	var srv *Server
	agent := AgentFunc(func(ctx context.Context, c *Call) (*Reply, error) {
		id := c.TaskID
		return &Reply{State: TaskStateWorking, Then: func() {
			srv.UpdateTask(context.Background(), id, &Reply{State: TaskStateCompleted, Artifacts: []Artifact{{Name: "out", Parts: PartsOf(TextPart("done"))}}})
		}}, nil
	})
	srv = newTestServer(t, func(c *Config) { c.Agent = agent; c.SendWait = 0 })
	for _, tc := range []struct{ name, version, body, path, want string }{
		{"1.0, no configuration", "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"x"}]}}`), "task", "TASK_STATE_COMPLETED"},
		{"1.0, returnImmediately false", "1.0", req("SendMessage", `{"message":{"role":"ROLE_USER","messageId":"m2","parts":[{"text":"x"}]},"configuration":{"returnImmediately":false}}`), "task", "TASK_STATE_COMPLETED"},
		{"0.3, blocking true", "0.3", req("message/send", `{"message":{"kind":"message","role":"user","messageId":"m3","parts":[{"kind":"text","text":"x"}]},"configuration":{"blocking":true}}`), "", "completed"},
	} {
		a := call(t, srv, tc.version, tc.body)
		if a.code != 0 {
			t.Fatalf("%s: %+v", tc.name, a)
		}
		res := any(parse(t, a.result))
		if tc.path != "" {
			res = get(res, tc.path)
		}
		if got := get(res, "status", "state"); got != tc.want {
			t.Errorf("%s: answered in state %v before the task finished, want %s", tc.name, got, tc.want)
		}
	}
}

// Ids of every JSON-RPC type /a2a accepts come back byte for byte in
// every event of a stream, not only in plain answers: contract §2 "The id
// in answers" (`1e400` on /a2a, `"caf\u00e9"` exactly so, never
// re-encoded) and §5 "each event's data is one JSON-RPC response with the
// request's id". Earlier stream tests use small integer ids only.
func TestReview3StreamIDsVerbatim(t *testing.T) {
	_, _, addr := streamServer(t, fastserver.Config{}, nil)
	for _, id := range []string{`1e400`, `"caf\u00e9"`, `12345678901234567890123`, `null`, `-0.0`} {
		body := `{"jsonrpc":"2.0","id":` + id + `,"method":"SendStreamingMessage","params":` + text10("chunks a b") + `}`
		evs := post(t, addr, "1.0", body).events(id)
		if len(evs) != 5 {
			t.Errorf("id %s: %d events, want 5", id, len(evs))
		}
	}
}
