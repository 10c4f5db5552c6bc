package auth

import (
	"encoding/json"
	"strconv"

	"github.com/rpcedge/rpcedge/fastserver"
	"github.com/valyala/fasthttp"
)

// Metadata is an OAuth 2.0 Protected Resource Metadata document (RFC
// 9728 §2), as this package serves it.
type Metadata struct {
	// Resource is the resource identifier the document describes.
	Resource string `json:"resource"`
	// AuthorizationServers are the issuer identifiers whose tokens the
	// resource accepts.
	AuthorizationServers []string `json:"authorization_servers"`
	// ScopesSupported are the scopes the resource uses.
	ScopesSupported []string `json:"scopes_supported,omitempty"`
	// BearerMethodsSupported is ["header"]: tokens only in the
	// Authorization header, never in the query or a form body.
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	// ResourceName is a human-readable name.
	ResourceName string `json:"resource_name,omitempty"`
	// ResourceDocumentation points at documentation for developers.
	ResourceDocumentation string `json:"resource_documentation,omitempty"`
}

// Metadata returns the resource's metadata document.
func (r *Resource) Metadata() Metadata {
	return Metadata{
		Resource:               r.id,
		AuthorizationServers:   []string{r.iss.URL()},
		ScopesSupported:        r.ScopesSupported(),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           r.name,
		ResourceDocumentation:  r.doc,
	}
}

// ServeMetadata answers GET MetadataPath() with the metadata document
// (application/json, Access-Control-Allow-Origin: *, so that a browser
// client can read it; Cache-Control: max-age=300). It is public: mount it
// beside the protected endpoint.
func (r *Resource) ServeMetadata(ctx *fasthttp.RequestCtx) {
	ServeMetadata(ctx, r.Metadata())
}

// ServeMetadata answers a GET with the metadata document m.
func ServeMetadata(ctx *fasthttp.RequestCtx, m Metadata) {
	b, err := json.Marshal(m)
	if err != nil {
		ctx.Error("metadata unavailable", fasthttp.StatusInternalServerError)
		return
	}
	ctx.Response.Header.Set("Access-Control-Allow-Origin", "*")
	ctx.Response.Header.Set("Cache-Control", "max-age=300")
	ctx.SetContentType("application/json")
	ctx.SetBody(b)
}

// Guard returns a fastserver.Config.MetricsGuard (or any GET guard): the
// request passes with a valid token for the resource that holds need and
// the required scopes; otherwise it is answered as Authenticate decides,
// in plain text with the challenge.
func (r *Resource) Guard(need ScopeSet) func(ctx *fasthttp.RequestCtx) bool {
	return func(ctx *fasthttp.RequestCtx) bool {
		var req fastserver.Request
		req.Reset(&ctx.Request.Header, nil, nil)
		tok, e := r.Authenticate(ctx, req.HeaderOf(keyAuthorization), req.RequestURI())
		if e == nil && !tok.Scopes.Has(need) {
			e = r.Forbidden(need)
		}
		if e == nil {
			return true
		}
		ctx.Error(e.Message, e.Status) // resets the headers: set them after
		for _, h := range e.Header {
			ctx.Response.Header.Set(h.Name, h.Value)
		}
		if e.RetryAfter > 0 {
			ctx.Response.Header.Set("Retry-After", strconv.Itoa(e.RetryAfter))
		}
		return false
	}
}
