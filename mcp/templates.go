package mcp

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/rpcedge/rpcedge/decode"
	"github.com/rpcedge/rpcedge/fastserver"
)

// ResourceTemplate describes a family of resources whose URIs follow a
// template (RFC 6570), for registration with Server.AddResourceTemplate.
// resources/templates/list lists it; resources/read of a URI that no
// Resource has and that the template matches calls its Read.
type ResourceTemplate struct {
	// URITemplate is the template, such as "test://template/{id}/data".
	// Supported: literal text and variables {name} (one or more
	// characters other than "/", "?" and "#", percent-decoded) and
	// {+name} (any characters). Required; unique. Decoding can put back
	// what the URI could not hold as such: "..%2F..%2Fetc" gives {name}
	// the value "../../etc", so a Read that builds a path from a
	// variable must check it. A value that does not decode to valid
	// UTF-8 does not match.
	URITemplate string
	// Name is the template's programmatic name; empty means URITemplate.
	Name string
	// Title is an optional display name (sent from 2025-06-18 on).
	Title string
	// Description tells a model what the resources hold.
	Description string
	// MIMEType is the media type of the resources, if they share one.
	MIMEType string
	// Read produces the contents of the resource uri, whose variables are
	// in vars. Returning an *fastserver.Error answers that error; any
	// other error is 500 / -32603. Required.
	Read func(r *fastserver.Request, uri string, vars map[string]string) ([]ResourceContents, error)
	// Cache is the caching hint of reads under 2026-07-28; nil means the
	// server's (WithCache).
	Cache *CacheHint
}

type resourceTemplate struct {
	ResourceTemplate
	parts []templatePart
	hint  []byte
}

// templatePart is a literal, or a variable when name is set.
type templatePart struct {
	literal string
	name    string
	any     bool // {+name}: may hold "/", "?", "#"
}

// AddResourceTemplate registers a resource template. It fails (and
// records the mistake for Err and the Endpoint) for an empty, duplicate or
// malformed template, a nil Read, fields that are not valid UTF-8, an
// invalid cache hint, or after Endpoint was called.
func (s *Server) AddResourceTemplate(t ResourceTemplate) error {
	if err := s.register("resource template", t.URITemplate); err != nil {
		return s.fail(err)
	}
	if t.Read == nil {
		return s.fail(fmt.Errorf("mcp: resource template %q registered with a nil Read", t.URITemplate))
	}
	if _, dup := s.tmplIndex[t.URITemplate]; dup {
		return s.fail(fmt.Errorf("mcp: resource template %q registered twice", t.URITemplate))
	}
	for _, f := range []string{t.Name, t.Title, t.Description, t.MIMEType} {
		if !utf8.ValidString(f) {
			return s.fail(fmt.Errorf("mcp: resource template %q: its fields must be valid UTF-8", t.URITemplate))
		}
	}
	if t.Cache != nil {
		if err := t.Cache.validate(); err != nil {
			return s.fail(fmt.Errorf("mcp: resource template %q: %w", t.URITemplate, err))
		}
	}
	parts, err := parseTemplate(t.URITemplate)
	if err != nil {
		return s.fail(fmt.Errorf("mcp: resource template %q: %w", t.URITemplate, err))
	}
	if t.Name == "" {
		t.Name = t.URITemplate
	}
	rt := &resourceTemplate{ResourceTemplate: t, parts: parts}
	s.templates = append(s.templates, rt)
	s.tmplIndex[t.URITemplate] = rt
	return nil
}

// parseTemplate splits a URI template into literals and variables.
func parseTemplate(tmpl string) ([]templatePart, error) {
	var parts []templatePart
	seen := map[string]bool{}
	for len(tmpl) > 0 {
		open := strings.IndexByte(tmpl, '{')
		if close := strings.IndexByte(tmpl, '}'); close >= 0 && (open < 0 || close < open) {
			return nil, errors.New("a '}' without its '{'")
		}
		if open < 0 {
			parts = append(parts, templatePart{literal: tmpl})
			break
		}
		if open > 0 {
			parts = append(parts, templatePart{literal: tmpl[:open]})
		}
		end := strings.IndexByte(tmpl[open:], '}')
		if end < 0 {
			return nil, errors.New("a '{' without its '}'")
		}
		expr := tmpl[open+1 : open+end]
		tmpl = tmpl[open+end+1:]
		p := templatePart{name: expr}
		if strings.HasPrefix(expr, "+") {
			p.name, p.any = expr[1:], true
		}
		if p.name == "" || strings.ContainsAny(p.name, "{}+#./;?&=,!@|*:") {
			return nil, fmt.Errorf("the expression {%s} is not supported (only {name} and {+name})", expr)
		}
		if seen[p.name] {
			return nil, fmt.Errorf("the variable %s appears twice", p.name)
		}
		if len(parts) > 0 && parts[len(parts)-1].name != "" {
			return nil, errors.New("two variables with no literal between them")
		}
		seen[p.name] = true
		parts = append(parts, p)
	}
	return parts, nil
}

// match reports whether uri follows the template, and its variables.
func (t *resourceTemplate) match(uri string) (map[string]string, bool) {
	var vars map[string]string
	rest := uri
	for i, p := range t.parts {
		if p.name == "" {
			if !strings.HasPrefix(rest, p.literal) {
				return nil, false
			}
			rest = rest[len(p.literal):]
			continue
		}
		// A variable runs to the next literal (or the end).
		end := len(rest)
		if i+1 < len(t.parts) {
			next := t.parts[i+1].literal
			k := strings.Index(rest, next)
			if p.any || i+2 == len(t.parts) {
				// The literal that ends the template ends the URI: the
				// variable runs to its last occurrence, so that a value
				// holding the literal ("{b}s" and "success") matches.
				k = strings.LastIndex(rest, next)
			}
			if k < 0 {
				return nil, false
			}
			end = k
		}
		val := rest[:end]
		if val == "" || !p.any && strings.ContainsAny(val, "/?#") {
			return nil, false
		}
		if !p.any {
			dec, err := url.PathUnescape(val)
			if err != nil || !utf8.ValidString(dec) {
				// Percent-encoded bytes are UTF-8 (RFC 3986 §2.5); a
				// value that is not could not be sent back in JSON.
				return nil, false
			}
			val = dec
		}
		if vars == nil {
			vars = make(map[string]string, len(t.parts))
		}
		vars[p.name] = val
		rest = rest[end:]
	}
	return vars, rest == ""
}

func (t *resourceTemplate) freeze(s *Server) {
	h := s.cache
	if t.Cache != nil {
		h = *t.Cache
	}
	t.hint = h.appendJSON(nil)
}

// findTemplate returns the first registered template that matches uri.
func (s *Server) findTemplate(uri string) (*resourceTemplate, map[string]string) {
	for _, t := range s.templates {
		if vars, ok := t.match(uri); ok {
			return t, vars
		}
	}
	return nil, nil
}

func (s *Server) appendTemplates(b []byte, v Version) []byte {
	for i, t := range s.templates {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"uriTemplate":`...)
		b = decode.AppendString(b, t.URITemplate)
		b = append(b, `,"name":`...)
		b = decode.AppendString(b, t.Name)
		b = appendTitled(b, v, t.Title, t.Description)
		if t.MIMEType != "" {
			b = append(b, `,"mimeType":`...)
			b = decode.AppendString(b, t.MIMEType)
		}
		b = append(b, '}')
	}
	return b
}

// serveTemplatesList answers resources/templates/list from the list
// rendered at Endpoint.
func (s *Server) serveTemplatesList(r *fastserver.Request, dst []byte) ([]byte, error) {
	if err := checkCursor(r.Msg); err != nil {
		return dst, err
	}
	return append(dst, s.lists[RequestVersion(r)].templates...), nil
}

// readTemplate answers resources/read of uri through the template t.
func (s *Server) readTemplate(r *fastserver.Request, dst []byte, t *resourceTemplate, uri string, vars map[string]string) ([]byte, error) {
	v := RequestVersion(r)
	items, err := t.Read(r, uri, vars)
	if err != nil {
		return dst, err
	}
	if len(items) == 0 {
		// MCP 2026-07-28 (SEP-2164): never an empty contents array.
		return dst, unknownResource(uri)
	}
	start := len(dst)
	dst = s.openResult(dst, v)
	dst, err = appendContentsOf(dst, uri, t.MIMEType, items)
	if err != nil {
		return dst[:start], err
	}
	if v.Stateless() {
		dst = append(dst, t.hint...)
	}
	return s.closeResult(dst, v), nil
}
