package tools

import (
	"errors"
	"strconv"

	"github.com/rpcedge/rpcedge/mcp"
)

// tools:begin
func RpcedgeRaw(s *mcp.Server) error {
	s.AddTool(mcp.Tool{
		Name:        "add",
		Description: "Adds two integers.",
		InputSchema: `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]}`,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
			a, okA := c.ArgInt("a")
			b, okB := c.ArgInt("b")
			if !okA || !okB {
				return errors.New("a and b must be 64-bit integers")
			}
			var buf [20]byte
			c.AddText(string(strconv.AppendInt(buf[:0], a+b, 10)))
			return nil
		}),
	})
	s.AddTool(mcp.Tool{
		Name:        "lookup",
		Description: "Looks a key up.",
		InputSchema: `{"type":"object","properties":{"key":{"type":"string","pattern":"^[a-z]+$"}},"required":["key"]}`,
		Handler: mcp.ToolFunc(func(c *mcp.Call) error {
			key, _ := c.ArgString("key")
			if v, ok := Table[string(key)]; ok {
				c.AddText(v)
			} else {
				c.AddText(Unknown)
			}
			return nil
		}),
	})
	return s.Err()
}

// tools:end
