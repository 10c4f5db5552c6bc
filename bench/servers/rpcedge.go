package servers

import (
	"io"
	"log/slog"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/rpcedge/rpcedge/mcp"
)

// EchoSchema is the echo tool's input schema, as internal/demo registers
// it.
const EchoSchema = `{"type":"object","properties":{"text":{"type":"string","description":"The text to echo."}},"required":["text"]}`

// newRpcedge is fastserver with rpcedge's MCP endpoint and the echo tool
// registered as internal/demo does (the demo's other content is left out:
// it is not on the measured path). The Config is the default one, as
// cmd/rpcedge runs it, with logs discarded.
func newRpcedge() (Server, error) {
	m, err := mcp.New(mcp.Info{Name: "rpcedge", Title: "rpcedge demo", Version: "0.1.0"})
	if err != nil {
		return nil, err
	}
	m.AddTool(mcp.Tool{
		Name:        "echo",
		Title:       "Echo",
		Description: "Returns the text it is given.",
		InputSchema: EchoSchema,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
			return c.AddTextJSON(c.Arg("text"))
		}),
	})
	if err := m.Err(); err != nil {
		return nil, err
	}
	s, err := fastserver.New(fastserver.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, m.Endpoint())
	if err != nil {
		return nil, err
	}
	return s, nil
}
