package servers

import (
	"context"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"The text to echo."`
}

// newSDK is the official MCP Go SDK's streamable HTTP handler, stateless
// with JSON answers (no SSE), on net/http. The echo tool is registered
// with the SDK's typed AddTool, whose input schema it infers from
// echoArgs ({"text": string}, required).
func newSDK() (Server, error) {
	s := sdk.NewServer(&sdk.Implementation{Name: "sdk-echo", Version: "0.1.0"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Returns the text it is given."},
		func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.Text}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	return newHTTPServer(h), nil
}
