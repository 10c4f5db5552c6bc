package auth_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rpcedge/rpcedge/auth"
	"github.com/rpcedge/rpcedge/internal/authtest"
)

// FuzzAuthenticate feeds arbitrary Authorization values and request
// targets: nothing panics, nothing but a valid token passes, and every
// refusal is one of the documented answers with its challenge.
func FuzzAuthenticate(f *testing.F) {
	as := authtest.New(f)
	good := as.Token(as.Claims(resourceID, "mcp"))
	for _, s := range []string{"", "Bearer", "Bearer ", "bearer " + good, "Bearer " + good + ", Bearer " + good,
		"Basic abc", "Bearer a.b.c", "Bearer ..", "Bearer =", "Bearer a=b", "BEARER\t" + good, "Bearer  " + good,
		"Bearer " + good[:len(good)-2], "Bearer eyJhbGciOiJub25lIn0.e30.", strings.Repeat("Bearer ", 50)} {
		f.Add(s, "/mcp")
	}
	f.Add("Bearer "+good, "/mcp?access_token=x")
	f.Add("", "/mcp?a=1&access%5Ftoken=2#f")
	iss, err := auth.NewIssuer(auth.IssuerConfig{URL: as.URL})
	if err != nil {
		f.Fatal(err)
	}
	res, err := auth.NewResource(iss, auth.ResourceConfig{Resource: resourceID})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, authz, uri string) {
		tok, e := res.Authenticate(context.Background(), []byte(authz), []byte(uri))
		if e == nil {
			if tok == nil || !strings.Contains(authz, good) {
				t.Fatalf("let through: %q %q", authz, uri)
			}
			return
		}
		if tok != nil {
			t.Fatal("a token and a refusal")
		}
		switch e.Status {
		case 400, 401:
			if len(e.Header) != 1 || !strings.HasPrefix(e.Header[0].Value, `Bearer resource_metadata="`) || e.Code != auth.CodeUnauthorized {
				t.Fatalf("refusal %+v", e)
			}
		case 503:
		default:
			t.Fatalf("status %d", e.Status)
		}
	})
}
