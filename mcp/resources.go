package mcp

import (
	"encoding/base64"
	"fmt"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// Resource describes a resource for registration with Server.AddResource.
// A resource is either static (Text, rendered once at Endpoint; reading
// it allocates nothing) or dynamic (Read, called on every resources/read).
type Resource struct {
	// URI identifies the resource in resources/read, compared exactly.
	// Required; unique.
	URI string
	// Name is the resource's programmatic name; empty means URI.
	Name string
	// Title is an optional display name (sent from 2025-06-18 on).
	Title string
	// Description tells a model what the resource holds.
	Description string
	// MIMEType is the resource's media type, such as "text/plain".
	MIMEType string
	// Text is the contents of a static text resource. It is ignored when
	// Read or Blob is set.
	Text string
	// Blob is the contents of a static binary resource, sent
	// base64-encoded. It is ignored when Read is set.
	Blob []byte
	// Read, when set, produces the contents on every read. Returning an
	// *fastserver.Error answers that error; any other error is 500 /
	// -32603.
	Read func(r *fastserver.Request) ([]ResourceContents, error)
	// Cache is the caching hint of this resource's reads under
	// 2026-07-28; nil means the server's (WithCache).
	Cache *CacheHint
}

// ResourceContents is one item of a resources/read result: text or
// binary contents.
type ResourceContents struct {
	// URI of the contents; empty means the resource's URI.
	URI string
	// MIMEType of the contents; empty means the resource's MIMEType.
	MIMEType string
	// Text is the contents as text; used unless Blob is set.
	Text string
	// Blob is binary contents, sent base64-encoded.
	Blob []byte
}

type resource struct {
	Resource
	contents []byte // static: "contents":[…]
	hint     []byte // ,"ttlMs":…,"cacheScope":…
}

// AddResource registers a resource. It fails (and records the mistake for
// Err and the Endpoint) for an empty or duplicate URI, text that is not
// valid UTF-8, an invalid cache hint, or after Endpoint was called.
func (s *Server) AddResource(r Resource) error {
	if err := s.register("resource", r.URI); err != nil {
		return s.fail(err)
	}
	if _, dup := s.resIndex[r.URI]; dup {
		return s.fail(fmt.Errorf("mcp: resource %q registered twice", r.URI))
	}
	for _, f := range []string{r.Name, r.Title, r.Description, r.MIMEType, r.Text} {
		if !utf8.ValidString(f) {
			return s.fail(fmt.Errorf("mcp: resource %q: its fields must be valid UTF-8", r.URI))
		}
	}
	if r.Cache != nil {
		if err := r.Cache.validate(); err != nil {
			return s.fail(fmt.Errorf("mcp: resource %q: %w", r.URI, err))
		}
	}
	if r.Name == "" {
		r.Name = r.URI
	}
	rs := &resource{Resource: r}
	s.resources = append(s.resources, rs)
	s.resIndex[r.URI] = rs
	return nil
}

func (r *resource) freeze(s *Server) {
	h := s.cache
	if r.Cache != nil {
		h = *r.Cache
	}
	r.hint = h.appendJSON(nil)
	if r.Read == nil {
		r.contents, _ = appendContentsOf(nil, r.URI, r.MIMEType, []ResourceContents{{Text: r.Text, Blob: r.Blob}})
	}
}

// appendContentsOf appends "contents":[…] for the resource uri whose
// media type is mime (each item may name its own URI and type). An item
// whose text is not valid UTF-8 is an error.
func appendContentsOf(b []byte, uri, mime string, items []ResourceContents) ([]byte, error) {
	b = append(b, `"contents":[`...)
	for i, c := range items {
		if i > 0 {
			b = append(b, ',')
		}
		u, m := c.URI, c.MIMEType
		if u == "" {
			u = uri
		}
		if m == "" {
			m = mime
		}
		b = append(b, `{"uri":`...)
		b = decode.AppendString(b, u)
		if m != "" {
			b = append(b, `,"mimeType":`...)
			b = decode.AppendString(b, m)
		}
		if c.Blob != nil {
			b = append(b, `,"blob":"`...)
			b = base64.StdEncoding.AppendEncode(b, c.Blob)
			b = append(b, '"')
		} else {
			if !utf8.ValidString(c.Text) {
				return b, fmt.Errorf("mcp: resource %q: text is not valid UTF-8", u)
			}
			b = append(b, `,"text":`...)
			b = decode.AppendString(b, c.Text)
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// unknownResource answers row 16 for a URI that names no resource and
// matches no template: 200 / -32601 (the contract's departure; MCP
// 2026-07-28 says -32602), with data {"uri": …} as SEP-2164 asks.
func unknownResource(uri string) *fastserver.Error {
	c := clip(uri) // first: a long URI is not copied again
	return &fastserver.Error{
		Code:    decode.CodeMethodNotFound,
		Message: "unknown resource: " + c,
		Data:    append(append([]byte(`{"uri":`), decode.AppendString(nil, c)...), '}'),
	}
}

// serveResourcesRead answers resources/read: row 15 (params, uri), row
// 16 (the resource exists), row 17 (duplicates in params), then the
// contents.
func (s *Server) serveResourcesRead(r *fastserver.Request, dst []byte) ([]byte, error) {
	m := r.Msg
	uri, _, dup, ferr := target(m, "uri")
	if ferr != nil {
		return dst, ferr
	}
	res, ok := lookup(s.resIndex, uri)
	if !ok {
		u := string(decode.AppendUnquoted(nil, uri))
		if t, vars := s.findTemplate(u); t != nil {
			if dup {
				return dst, duplicateIn(m.Params, "")
			}
			return s.readTemplate(r, dst, t, u, vars)
		}
		return dst, unknownResource(u)
	}
	if dup {
		return dst, duplicateIn(m.Params, "")
	}
	v := RequestVersion(r)
	start := len(dst)
	dst = s.openResult(dst, v)
	if res.Read == nil {
		dst = append(dst, res.contents...)
	} else {
		items, err := res.Read(r)
		if err == nil && len(items) == 0 {
			err = unknownResource(res.URI) // never an empty contents array (SEP-2164)
		}
		if err != nil {
			return dst[:start], err
		}
		if dst, err = appendContentsOf(dst, res.URI, res.MIMEType, items); err != nil {
			return dst[:start], err
		}
	}
	if v.Stateless() {
		dst = append(dst, res.hint...)
	}
	return s.closeResult(dst, v), nil
}

// serveResourcesList answers resources/list from the list rendered at
// Endpoint.
func (s *Server) serveResourcesList(r *fastserver.Request, dst []byte) ([]byte, error) {
	if err := checkCursor(r.Msg); err != nil {
		return dst, err
	}
	return append(dst, s.lists[RequestVersion(r)].resources...), nil
}
