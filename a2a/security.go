package a2a

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/rpcedge/rpcedge/decode"
)

// NOTE: security schemes on a card that serves two generations.
//
// A2A 1.0 (ProtoJSON of a2a.proto) and 0.3 both name the card's schemes
// "securitySchemes", in incompatible shapes: 1.0 wraps each scheme in its
// oneof member ({"oauth2SecurityScheme": {"flows": …}}), 0.3 tags it
// with "type" ({"type": "oauth2", "flows": …}). The card already carries
// both generations' members side by side (1.0's supportedInterfaces, 0.3's
// url), relying on each reader ignoring the members it does not know; the
// schemes follow the same rule: each scheme object holds the 0.3 members
// (type and the scheme's fields) and the 1.0 oneof member with the same
// fields inside. A 0.3 reader sees its typed scheme and an unknown member;
// a 1.0 reader sees its oneof and unknown members. The requirements have
// different names in the two generations and are both written: 0.3's
// "security" ([{"oauth": ["a2a:invoke"]}]) and 1.0's
// "securityRequirements" ([{"schemes": {"oauth": {"list": […]}}}]).

// SecurityScheme declares one way to authenticate to the agent: exactly
// one of its members is set.
type SecurityScheme struct {
	// HTTPAuth is an HTTP authentication scheme, such as Bearer.
	HTTPAuth *HTTPAuthSecurityScheme
	// OAuth2 is OAuth 2.0 with its flows and metadata URL.
	OAuth2 *OAuth2SecurityScheme
	// OpenIDConnect is OpenID Connect with its discovery URL.
	OpenIDConnect *OpenIDConnectSecurityScheme
}

// HTTPAuthSecurityScheme is an HTTP authentication scheme (RFC 9110 §11).
type HTTPAuthSecurityScheme struct {
	// Scheme is the Authorization scheme, such as "Bearer". Required.
	Scheme string
	// BearerFormat hints at the token's format, such as "JWT".
	BearerFormat string
	// Description is for people.
	Description string
}

// OAuth2SecurityScheme is OAuth 2.0.
type OAuth2SecurityScheme struct {
	// Flows are the OAuth flows the agent accepts tokens from. At least
	// one must be set.
	Flows OAuthFlows
	// MetadataURL is the authorization server's RFC 8414 metadata URL.
	MetadataURL string
	// Description is for people.
	Description string
}

// OAuthFlows lists OAuth flows.
type OAuthFlows struct {
	// ClientCredentials is the client credentials flow, for agents
	// calling agents.
	ClientCredentials *ClientCredentialsFlow
	// AuthorizationCode is the authorization code flow (with PKCE).
	AuthorizationCode *AuthorizationCodeFlow
}

// ClientCredentialsFlow is the OAuth client credentials flow.
type ClientCredentialsFlow struct {
	// TokenURL is the token endpoint. Required.
	TokenURL string
	// RefreshURL is where tokens are refreshed; optional.
	RefreshURL string
	// Scopes maps each scope to a description; written as {} when nil.
	Scopes map[string]string
}

// AuthorizationCodeFlow is the OAuth authorization code flow.
type AuthorizationCodeFlow struct {
	// AuthorizationURL and TokenURL are the endpoints. Required.
	AuthorizationURL, TokenURL string
	// RefreshURL is where tokens are refreshed; optional.
	RefreshURL string
	// Scopes maps each scope to a description; written as {} when nil.
	Scopes map[string]string
	// PKCERequired says PKCE (RFC 7636) is required (1.0 only).
	PKCERequired bool
}

// OpenIDConnectSecurityScheme is OpenID Connect.
type OpenIDConnectSecurityScheme struct {
	// URL is the OpenID Connect discovery URL. Required.
	URL string
	// Description is for people.
	Description string
}

// SecurityRequirement names schemes (keys of AgentCard.SecuritySchemes)
// that together authorize a call, each with the scopes it needs; the
// card's requirements are alternatives, any one of which will do.
type SecurityRequirement map[string][]string

// SecurityRequirements10 is AgentCard.Security in the 1.0 shape; the
// card fills it in from Security (see WithEndpoint).
type SecurityRequirements10 []SecurityRequirement

func (s SecurityScheme) validate(name string) error {
	n := 0
	if s.HTTPAuth != nil {
		n++
		if s.HTTPAuth.Scheme == "" {
			return fmt.Errorf("a2a: security scheme %q: HTTPAuth.Scheme is empty", name)
		}
	}
	if s.OAuth2 != nil {
		n++
		f := s.OAuth2.Flows
		if f.ClientCredentials == nil && f.AuthorizationCode == nil {
			return fmt.Errorf("a2a: security scheme %q: OAuth2 declares no flow", name)
		}
		if f.ClientCredentials != nil && f.ClientCredentials.TokenURL == "" ||
			f.AuthorizationCode != nil && (f.AuthorizationCode.TokenURL == "" || f.AuthorizationCode.AuthorizationURL == "") {
			return fmt.Errorf("a2a: security scheme %q: an OAuth2 flow lacks its URLs", name)
		}
	}
	if s.OpenIDConnect != nil {
		n++
		if s.OpenIDConnect.URL == "" {
			return fmt.Errorf("a2a: security scheme %q: OpenIDConnect.URL is empty", name)
		}
	}
	if n != 1 {
		return fmt.Errorf("a2a: security scheme %q: set exactly one of HTTPAuth, OAuth2, OpenIDConnect", name)
	}
	return nil
}

// validateSecurity checks the schemes and that every requirement names
// a declared scheme.
func (c *AgentCard) validateSecurity(which string) error {
	var errs []error
	for name, s := range c.SecuritySchemes {
		if name == "" {
			errs = append(errs, fmt.Errorf("a2a: %s: a security scheme has an empty name", which))
		}
		if err := s.validate(name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", which, err))
		}
	}
	for _, req := range c.Security {
		if len(req) == 0 {
			errs = append(errs, fmt.Errorf("a2a: %s: an empty security requirement", which))
		}
		for name := range req {
			if _, ok := c.SecuritySchemes[name]; !ok {
				errs = append(errs, fmt.Errorf("a2a: %s: security requirement names scheme %q, which the card does not declare", which, name))
			}
		}
	}
	return errors.Join(errs...)
}

// MarshalJSON writes the scheme in both generations' shapes (see the
// NOTE in security.go).
func (s SecurityScheme) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	switch {
	case s.HTTPAuth != nil:
		h := s.HTTPAuth
		body := func(b []byte) []byte {
			b = append(b, `"scheme":`...)
			b = decode.AppendString(b, h.Scheme)
			if h.BearerFormat != "" {
				b = append(b, `,"bearerFormat":`...)
				b = decode.AppendString(b, h.BearerFormat)
			}
			if h.Description != "" {
				b = append(b, `,"description":`...)
				b = decode.AppendString(b, h.Description)
			}
			return b
		}
		b = append(b, `"type":"http",`...)
		b = body(b)
		b = append(b, `,"httpAuthSecurityScheme":{`...)
		b = body(b)
		b = append(b, '}')
	case s.OAuth2 != nil:
		o := s.OAuth2
		body := func(b []byte, v10 bool) []byte {
			b = append(b, `"flows":{`...)
			f := o.Flows
			if cc := f.ClientCredentials; cc != nil {
				b = append(b, `"clientCredentials":{"tokenUrl":`...)
				b = decode.AppendString(b, cc.TokenURL)
				if cc.RefreshURL != "" {
					b = append(b, `,"refreshUrl":`...)
					b = decode.AppendString(b, cc.RefreshURL)
				}
				b = append(b, `,"scopes":`...)
				b = appendScopes(b, cc.Scopes)
				b = append(b, '}')
			}
			// A 1.0 OAuthFlows is a oneof: it holds one flow, the first set.
			if ac := f.AuthorizationCode; ac != nil && !(v10 && f.ClientCredentials != nil) {
				if f.ClientCredentials != nil {
					b = append(b, ',')
				}
				b = append(b, `"authorizationCode":{"authorizationUrl":`...)
				b = decode.AppendString(b, ac.AuthorizationURL)
				b = append(b, `,"tokenUrl":`...)
				b = decode.AppendString(b, ac.TokenURL)
				if ac.RefreshURL != "" {
					b = append(b, `,"refreshUrl":`...)
					b = decode.AppendString(b, ac.RefreshURL)
				}
				b = append(b, `,"scopes":`...)
				b = appendScopes(b, ac.Scopes)
				if v10 && ac.PKCERequired {
					b = append(b, `,"pkceRequired":true`...)
				}
				b = append(b, '}')
			}
			b = append(b, '}')
			if o.MetadataURL != "" {
				b = append(b, `,"oauth2MetadataUrl":`...)
				b = decode.AppendString(b, o.MetadataURL)
			}
			if o.Description != "" {
				b = append(b, `,"description":`...)
				b = decode.AppendString(b, o.Description)
			}
			return b
		}
		b = append(b, `"type":"oauth2",`...)
		b = body(b, false)
		b = append(b, `,"oauth2SecurityScheme":{`...)
		b = body(b, true)
		b = append(b, '}')
	case s.OpenIDConnect != nil:
		o := s.OpenIDConnect
		body := func(b []byte) []byte {
			b = append(b, `"openIdConnectUrl":`...)
			b = decode.AppendString(b, o.URL)
			if o.Description != "" {
				b = append(b, `,"description":`...)
				b = decode.AppendString(b, o.Description)
			}
			return b
		}
		b = append(b, `"type":"openIdConnect",`...)
		b = body(b)
		b = append(b, `,"openIdConnectSecurityScheme":{`...)
		b = body(b)
		b = append(b, '}')
	default:
		return nil, errors.New("a2a: a SecurityScheme with no member set")
	}
	return append(b, '}'), nil
}

func appendScopes(b []byte, scopes map[string]string) []byte {
	names := make([]string, 0, len(scopes))
	for k := range scopes {
		names = append(names, k)
	}
	sort.Strings(names)
	b = append(b, '{')
	for i, k := range names {
		if i > 0 {
			b = append(b, ',')
		}
		b = decode.AppendString(b, k)
		b = append(b, ':')
		b = decode.AppendString(b, scopes[k])
	}
	return append(b, '}')
}

// MarshalJSON writes the requirements in the 1.0 shape:
// [{"schemes": {"name": {"list": [scopes…]}}}].
func (rs SecurityRequirements10) MarshalJSON() ([]byte, error) {
	type list struct {
		List []string `json:"list"`
	}
	out := make([]map[string]map[string]list, len(rs))
	for i, r := range rs {
		m := make(map[string]list, len(r))
		for name, scopes := range r {
			if scopes == nil {
				scopes = []string{}
			}
			m[name] = list{scopes}
		}
		out[i] = map[string]map[string]list{"schemes": m}
	}
	return json.Marshal(out)
}
