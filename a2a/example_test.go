package a2a_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// shout is an Agent: a completed task whose artifact upper-cases the
// message's text parts.
var shout = a2a.AgentFunc(func(_ context.Context, c *a2a.Call) (*a2a.Reply, error) {
	var parts []a2a.Part
	for _, p := range c.Message.Parts.OfKind(a2a.PartText).All() {
		parts = append(parts, a2a.TextPart(strings.ToUpper(p.Text)))
	}
	return &a2a.Reply{Artifacts: []a2a.Artifact{{Name: "shout", Parts: a2a.PartsOf(parts...)}}}, nil
})

var shoutCard = a2a.AgentCard{
	Name:        "shout",
	Description: "Upper-cases text.",
	Version:     "1.0.0",
	Skills:      []a2a.AgentSkill{{ID: "shout", Name: "Shout", Description: "Upper-cases text.", Tags: []string{"text"}}},
}

// serve answers one request body the way the fastserver server does:
// Check, Route, then the handler (or the refusal).
func serve(ep *fastserver.Endpoint, version, body string) (string, []byte, error) {
	var d decode.Decoder
	var m decode.Message
	if err := d.Decode([]byte(body), &m); err != nil {
		return "", nil, err
	}
	var hdr fasthttp.RequestHeader
	if version != "" {
		hdr.Set(a2a.VersionHeader, version)
	}
	var r fastserver.Request
	r.Reset(&hdr, &m, context.Background())
	if e := ep.Check(&r); e != nil {
		return "", nil, e
	}
	route := ep.Route(&r)
	if route.Refuse != nil {
		return route.Label, nil, route.Refuse
	}
	out, err := route.Handler.ServeRPC(&r, nil)
	return route.Label, out, err
}

// An endpoint serving both protocol generations: the A2A-Version header
// (or, without it, the method's name) picks the shapes of the answer.
func Example() {
	srv, err := a2a.New(a2a.Config{Card: shoutCard, Agent: shout})
	if err != nil {
		panic(err)
	}
	ep := srv.Endpoint() // mount it with fastserver

	// A2A 1.0: {"task":{…}}, enum strings, no kind tags.
	label, out, _ := serve(ep, "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hello"}]}}}`)
	var r10 struct {
		Task struct {
			Status    struct{ State string }
			Artifacts []struct{ Parts []struct{ Text string } }
		}
	}
	json.Unmarshal(out, &r10)
	fmt.Println(label, r10.Task.Status.State, r10.Task.Artifacts[0].Parts[0].Text)

	// A2A 0.3: the bare task, kind tags, lower-case states.
	label, out, _ = serve(ep, "", `{"jsonrpc":"2.0","id":2,"method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m2","parts":[{"kind":"text","text":"hi"}]}}}`)
	var r03 struct {
		Kind      string
		Status    struct{ State string }
		Artifacts []struct{ Parts []struct{ Kind, Text string } }
	}
	json.Unmarshal(out, &r03)
	fmt.Println(label, r03.Kind, r03.Status.State, r03.Artifacts[0].Parts[0].Kind, r03.Artifacts[0].Parts[0].Text)

	// Refusals: an unknown skill, streaming, a version not served.
	_, _, err = serve(ep, "1.0", `{"jsonrpc":"2.0","id":3,"method":"SendMessage","params":{"metadata":{"skillId":"whisper"}}}`)
	fmt.Println(err)
	_, _, err = serve(ep, "", `{"jsonrpc":"2.0","id":4,"method":"SendStreamingMessage","params":[]}`)
	fmt.Println(err)
	_, _, err = serve(ep, "2.0", `{"jsonrpc":"2.0","id":5,"method":"GetTask"}`)
	fmt.Println(err)
	// Output:
	// SendMessage TASK_STATE_COMPLETED HELLO
	// message/send task completed text HI
	// fastserver: -32004 the skill is not on the agent card
	// fastserver: -32004 streaming is not supported: the agent card declares streaming: false
	// fastserver: -32009 A2A version not supported
}

// The card names the endpoint by the request's Host unless a public URL is
// configured; it carries the members of both protocol generations.
func ExampleServer_AppendCard() {
	srv, err := a2a.New(a2a.Config{Card: shoutCard, Agent: shout})
	if err != nil {
		panic(err)
	}
	fmt.Println(string(srv.AppendCard(nil, []byte("localhost:8080"))))

	srv, _ = a2a.New(a2a.Config{Card: shoutCard, Agent: shout, PublicURL: "https://agents.example.com"})
	fmt.Println(srv.EndpointURL([]byte("ignored:1")))
	// Output:
	// {"name":"shout","description":"Upper-cases text.","supportedInterfaces":[{"url":"http://localhost:8080/a2a","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],"url":"http://localhost:8080/a2a","preferredTransport":"JSONRPC","protocolVersion":"0.3.0","version":"1.0.0","capabilities":{"streaming":false,"pushNotifications":false,"extendedAgentCard":false},"supportsAuthenticatedExtendedCard":false,"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"shout","name":"Shout","description":"Upper-cases text.","tags":["text"]}]}
	// https://agents.example.com/a2a
}
