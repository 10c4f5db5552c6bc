package tools

import (
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
			a, err := c.ArgInt("a")
			if err != nil {
				return err
			}
			b, err := c.ArgInt("b")
			if err != nil {
				return err
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
			key, err := c.ArgString("key")
			if err != nil {
				return err
			}
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
