package tools

import (
	"context"

	"github.com/rpcedge/rpcedge/mcp"
)

// tools:begin

// AddArgs are the add tool's arguments.
type AddArgs struct {
	A int64 `json:"a"`
	B int64 `json:"b"`
}

// LookupArgs are the lookup tool's arguments.
type LookupArgs struct {
	Key string `json:"key"`
}

// RpcedgeTyped registers the two tools on s as typed tools (mcp.AddTool):
// the input schemas come from the argument types.
func RpcedgeTyped(s *mcp.Server) error {
	mcp.AddTool(s, mcp.Tool{Name: "add", Description: "Adds two integers."},
		func(ctx context.Context, c *mcp.Call, in AddArgs) (int64, error) {
			return in.A + in.B, nil
		})
	mcp.AddTool(s, mcp.Tool{
		Name:        "lookup",
		Description: "Looks a key up.",
		InputSchema: `{"type":"object","properties":{"key":{"type":"string","pattern":"^[a-z]+$"}},"required":["key"]}`,
	}, func(ctx context.Context, c *mcp.Call, in LookupArgs) (string, error) {
		if v, ok := Table[in.Key]; ok {
			return v, nil
		}
		return Unknown, nil
	})
	return s.Err()
}

// tools:end
