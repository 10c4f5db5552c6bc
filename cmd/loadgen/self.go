package main

import (
	"io"
	"log/slog"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/internal/app"
	"github.com/rpcedge/rpcedge/internal/loadgen"
)

// startSelf is the hook behind -self: it starts the rpcedge demo server
// (what cmd/rpcedge serves) in-process on a free loopback port, with its
// logs discarded so they do not mix with the report.
var startSelf loadgen.SelfServer = func() (string, func(), error) {
	url, stop, err := app.Start(app.Options{Server: fastserver.Config{
		Addr:   "127.0.0.1:0",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}})
	if err != nil {
		return "", nil, err
	}
	return url, func() { stop() }, nil
}
