package fleet_test

import (
	"log"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/fleet"
	"github.com/rpcedge/rpcedge/internal/demo"
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
	agent, err := demo.NewA2A(demo.A2AOptions{Tasks: tasks}) // or a2a.New(a2a.Config{..., Tasks: tasks})
	if err != nil {
		log.Fatal(err)
	}
	defer agent.Close()
	srv, err := fastserver.New(fastserver.Config{
		RateLimiter: lim,
		MoreMetrics: f.WritePrometheus,
	}, agent.Server.Endpoint())
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(srv.ListenAndServe())
}
