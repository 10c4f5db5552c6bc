package tools

import (
	"context"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// tools:begin

// SDKAddArgs are the add tool's arguments.
type SDKAddArgs struct {
	A int64 `json:"a"`
	B int64 `json:"b"`
}

// SDKLookupArgs are the lookup tool's arguments.
type SDKLookupArgs struct {
	Key string `json:"key"`
}

// SDK registers the two tools on s as the official MCP Go SDK's
// documentation shows (sdk.AddTool, schemas inferred from the types).
func SDK(s *sdk.Server) error {
	sdk.AddTool(s, &sdk.Tool{Name: "add", Description: "Adds two integers."},
		func(ctx context.Context, req *sdk.CallToolRequest, in SDKAddArgs) (*sdk.CallToolResult, any, error) {
			text := strconv.FormatInt(in.A+in.B, 10)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil, nil
		})
	schema, err := jsonschema.For[SDKLookupArgs](nil)
	if err != nil {
		return err
	}
	schema.Properties["key"].Pattern = "^[a-z]+$"
	sdk.AddTool(s, &sdk.Tool{Name: "lookup", Description: "Looks a key up.", InputSchema: schema},
		func(ctx context.Context, req *sdk.CallToolRequest, in SDKLookupArgs) (*sdk.CallToolResult, any, error) {
			v, ok := Table[in.Key]
			if !ok {
				v = Unknown
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: v}}}, nil, nil
		})
	return nil
}

// tools:end
