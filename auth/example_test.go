package auth_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

// A Resource judges the Authorization field of each request: the
// challenge of a refusal says where the resource's metadata is, and a
// valid token comes back verified (and cached, so the next request with
// it costs no signature check).
func ExampleResource_Authenticate() {
	as := authtest.Start() // a test authorization server on loopback
	defer as.Close()
	iss, _ := auth.NewIssuer(auth.IssuerConfig{URL: as.URL})
	res, _ := auth.NewResource(iss, auth.ResourceConfig{Resource: "https://agents.example.com/mcp", Scopes: []string{"mcp"}})
	ctx := context.Background()

	_, e := res.Authenticate(ctx, nil, []byte("/mcp"))
	fmt.Println(e.Status, e.Header[0].Value)

	_, e = res.Authenticate(ctx, []byte("Bearer not.a.token"), []byte("/mcp"))
	fmt.Println(e.Status, strings.Contains(e.Header[0].Value, `error="invalid_token"`))

	tok := as.Token(as.Claims("https://agents.example.com/mcp", "mcp tools:write"))
	t, e := res.Authenticate(ctx, []byte("Bearer "+tok), []byte("/mcp"))
	fmt.Println(e == nil, t.Subject, t.ScopeNames)
	// Output:
	// 401 Bearer resource_metadata="https://agents.example.com/.well-known/oauth-protected-resource/mcp", scope="mcp"
	// 401 true
	// true client-1 [mcp tools:write]
}
