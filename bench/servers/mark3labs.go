package servers

import (
	"context"

	m3 "github.com/mark3labs/mcp-go/mcp"
	m3server "github.com/mark3labs/mcp-go/server"
)

// newMark3labs is mark3labs/mcp-go's streamable HTTP server in stateless
// mode (WithStateLess(true): no session ids) on net/http. It answers a
// tools/call with application/json unless the tool sends notifications,
// which echo does not; it has no option to forbid SSE on POST.
func newMark3labs() (Server, error) {
	s := m3server.NewMCPServer("mark3labs-echo", "0.1.0", m3server.WithToolCapabilities(false))
	s.AddTool(m3.NewTool("echo",
		m3.WithDescription("Returns the text it is given."),
		m3.WithString("text", m3.Required(), m3.Description("The text to echo.")),
	), func(_ context.Context, req m3.CallToolRequest) (*m3.CallToolResult, error) {
		text, err := req.RequireString("text")
		if err != nil {
			return m3.NewToolResultError(err.Error()), nil
		}
		return m3.NewToolResultText(text), nil
	})
	h := m3server.NewStreamableHTTPServer(s, m3server.WithStateLess(true), m3server.WithDisableStreaming(true))
	return newHTTPServer(h), nil
}
