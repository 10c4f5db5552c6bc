// Command a2a-agent is an A2A agent that answers each message with a
// completed task whose artifact shouts the message's text; its card is at
// /.well-known/agent-card.json.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/fastserver"
)

func shout(_ context.Context, c *a2a.Call) (*a2a.Reply, error) {
	var parts []a2a.Part
	for _, p := range c.Message.Parts.OfKind(a2a.PartText).All() {
		parts = append(parts, a2a.TextPart(strings.ToUpper(p.Text)))
	}
	if len(parts) == 0 {
		return &a2a.Reply{State: a2a.TaskStateRejected}, nil
	}
	return &a2a.Reply{Artifacts: []a2a.Artifact{{Name: "shout", Parts: a2a.PartsOf(parts...)}}}, nil
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	flag.Parse()
	a, err := a2a.New(a2a.Config{Agent: a2a.AgentFunc(shout), Card: a2a.AgentCard{
		Name: "shouter", Description: "answers in capitals", Version: "1.0.0",
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "shout", Name: "Shout", Description: "upper-cases text", Tags: []string{"text"}}},
	}})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := fastserver.New(fastserver.Config{Addr: *addr}, a.Endpoint())
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.HandleGET("/.well-known/agent-card.json", a.ServeCard); err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := srv.Run(ctx); err != nil { // serves until a signal, then shuts down gracefully
		log.Fatal(err)
	}
}
