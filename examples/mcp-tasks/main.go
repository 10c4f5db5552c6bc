// Command mcp-tasks serves an MCP tool whose work outlives a request: for a
// client that declares MCP's tasks extension (2026-07-28, SEP-2663) a call
// of "report" is answered at once with a task id, the report is built in
// the background, and tasks/get answers its status and then its result;
// other clients wait for the result on the request. It runs until SIGINT
// or SIGTERM, then shuts down gracefully and cancels what still runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

type ReportIn struct {
	Month string `json:"month" jsonschema:"the month to report on, YYYY-MM"`
}

type ReportOut struct {
	Month  string `json:"month"`
	Orders int    `json:"orders"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	work := flag.Duration("work", 2*time.Second, "how long a report takes")
	flag.Parse()
	s, err := mcp.New(mcp.Info{Name: "reports", Version: "1.0.0"})
	if err != nil {
		log.Fatal(err)
	}
	mcp.AddTool(s, mcp.Tool{Name: "report", Description: "Builds a month's report.", Task: mcp.TaskOptional},
		func(ctx context.Context, c *mcp.Call, in ReportIn) (ReportOut, error) {
			if _, err := time.Parse("2006-01", in.Month); err != nil {
				return ReportOut{}, fmt.Errorf("month %q is not YYYY-MM", in.Month) // checked on the request
			}
			if err := c.StartTask(); err != nil {
				return ReportOut{}, err // mcp.ErrRunAsTask: the client gets a task id now
			}
			_ = c.Progress(0, 1, "counting orders") // the task's statusMessage
			// The long part, in the task (or on the request).
			select {
			case <-time.After(*work):
			case <-ctx.Done(): // tasks/cancel, the task's TTL, shutdown
				return ReportOut{}, ctx.Err()
			}
			return ReportOut{Month: in.Month, Orders: len(in.Month) * 100}, nil
		})
	cfg := fastserver.Config{Addr: *addr, MoreMetrics: s.WritePrometheus} // rpcedge_mcp_tasks on /metrics
	srv, err := fastserver.New(cfg, s.Endpoint())
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err = srv.Run(ctx) // serves until a signal, then shuts down gracefully
	s.Close()          // cancels the tasks still running
	if err != nil {
		log.Fatal(err)
	}
}
