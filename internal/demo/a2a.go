package demo

import (
	"context"

	"github.com/rpcedge/rpcedge/a2a"
)

// A2ACard returns the demo agent card (contract §5): one skill, echo; no
// streaming, no push notifications, no extended card. The endpoint
// members are filled in per request by the server.
func A2ACard() a2a.AgentCard {
	return a2a.AgentCard{
		Name:        "rpcedge",
		Description: "rpcedge demo agent: answers each message with a completed task whose artifact repeats the message's text parts.",
		Version:     "0.1.0",
		Capabilities: a2a.AgentCapabilities{
			Streaming:         false,
			PushNotifications: false,
			ExtendedAgentCard: false,
		},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{
			ID:          "echo",
			Name:        "Echo",
			Description: "Repeats the text parts of the message as the task's artifact.",
			Tags:        []string{"echo", "demo"},
			Examples:    []string{"hello"},
		}},
	}
}

// A2A returns the demo A2A server of the contract's §5: the card of
// A2ACard, the Echo agent, tasks kept in the default bounded store (10,000
// tasks, 64 MiB) so that GetTask finds them. publicURL is the base URL the
// card names the endpoint under ("" for the request's Host); New's error
// for a malformed one is returned.
func A2A(publicURL string) (*a2a.Server, error) {
	return a2a.New(a2a.Config{
		Card:      A2ACard(),
		Agent:     a2a.AgentFunc(Echo),
		PublicURL: publicURL,
	})
}

// Echo is the demo agent: a completed task with one artifact, "echo",
// whose parts repeat the message's text parts in order. A message without
// a text part has nothing to echo: its task is rejected, with a status
// message that says why.
func Echo(_ context.Context, c *a2a.Call) (*a2a.Reply, error) {
	var parts []a2a.Part
	for _, p := range c.Message.Parts {
		if p.Kind == a2a.PartText {
			parts = append(parts, a2a.TextPart(p.Text))
		}
	}
	if len(parts) == 0 {
		return &a2a.Reply{
			State:  a2a.TaskStateRejected,
			Status: &a2a.Message{Parts: []a2a.Part{a2a.TextPart("nothing to echo: the message has no text part")}},
		}, nil
	}
	return &a2a.Reply{Artifacts: []a2a.Artifact{{Name: "echo", Parts: parts}}}, nil
}
