package fleet_test

import (
	"context"
	"log"

	"github.com/rpcedge/rpcedge/a2a"
	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/fleet"
)

// One instance of a fleet: the fleet-wide limit and the shared task store
// wired into the server (cmd/rpcedge -redis URL -instance NAME -rate 100
// does the same). It needs a Redis server, so it only compiles here.
func Example() {
	f, err := fleet.New(fleet.Options{URL: "redis://127.0.0.1:6379/0", Instance: "edge-1"})
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	lim, err := f.Limiter(fleet.LimiterOptions{Rate: 100})
	if err != nil {
		log.Fatal(err)
	}
	defer lim.Close()
	tasks, err := f.TaskStore(fleet.TaskOptions{})
	if err != nil {
		log.Fatal(err)
	}
	// Every instance keeps its tasks in Redis: GetTask and CancelTask
	// work whichever instance the balancer picks.
	agent, err := a2a.New(a2a.Config{
		Card: a2a.AgentCard{Name: "done", Description: "Completes every task.", Version: "1.0.0"},
		Agent: a2a.AgentFunc(func(context.Context, *a2a.Call) (*a2a.Reply, error) {
			return &a2a.Reply{}, nil
		}),
		Tasks: tasks,
	})
	if err != nil {
		log.Fatal(err)
	}
	srv, err := fastserver.New(fastserver.Config{
		RateLimiter: lim,
		MoreMetrics: f.WritePrometheus,
	}, agent.Endpoint())
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(srv.ListenAndServe())
}
