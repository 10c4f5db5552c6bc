package tools

import (
	"context"
	"strconv"

	m3 "github.com/mark3labs/mcp-go/mcp"
	m3server "github.com/mark3labs/mcp-go/server"
)

// tools:begin

// M3AddArgs are the add tool's arguments.
type M3AddArgs struct {
	A int64 `json:"a"`
	B int64 `json:"b"`
}

// M3LookupArgs are the lookup tool's arguments.
type M3LookupArgs struct {
	Key string `json:"key"`
}

// Mark3labs registers the tools on a server built with
// m3server.WithInputSchemaValidation() (mcp-go checks schemas only when
// asked to).
func Mark3labs(s *m3server.MCPServer) error {
	s.AddTool(m3.NewTool("add",
		m3.WithDescription("Adds two integers."),
		m3.WithInteger("a", m3.Required()),
		m3.WithInteger("b", m3.Required()),
	), m3.NewTypedToolHandler(func(ctx context.Context, req m3.CallToolRequest, in M3AddArgs) (*m3.CallToolResult, error) {
		return m3.NewToolResultText(strconv.FormatInt(in.A+in.B, 10)), nil
	}))
	s.AddTool(m3.NewTool("lookup",
		m3.WithDescription("Looks a key up."),
		m3.WithString("key", m3.Required(), m3.Pattern("^[a-z]+$")),
	), m3.NewTypedToolHandler(func(ctx context.Context, req m3.CallToolRequest, in M3LookupArgs) (*m3.CallToolResult, error) {
		v, ok := Table[in.Key]
		if !ok {
			v = Unknown
		}
		return m3.NewToolResultText(v), nil
	}))
	return nil
}

// tools:end
