package interop

import (
	"context"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// The client-credentials client of the example provider, and the
// resource server's own client for introspection.
const (
	clientID       = "sid1"
	clientSecret   = "verysecret"
	introspectorID = "rpcedge-rs"
	introspectorPW = "rpcedge-rs-secret"
)

// tokenOpts are what a token request asks the wrapped storage for: the
// RFC 8707 resource, and the test-only switches token_format=opaque and
// token_format=expired (a token the provider signs with an exp already
// past).
type tokenOpts struct {
	resource        string
	opaque, expired bool
}

type optsKey struct{}

func optsFrom(ctx context.Context) tokenOpts {
	o, _ := ctx.Value(optsKey{}).(tokenOpts)
	return o
}

// asStorage wraps the example storage the way a deployment configures a
// provider for a resource server: JWT access tokens (RFC 9068 style) for
// the client, aud from the resource parameter, the granted scopes in a
// scope claim, and introspection answers that carry aud and iss.
type asStorage struct {
	*storage.Storage
	issuer          string
	defaultResource string

	mu     sync.Mutex
	issued map[string]issued // token id → what it was issued for
}

// issued is what the wrapper remembers of a token for introspection
// (the example storage's own answer needs a user, and a client-credentials
// token has none).
type issued struct {
	subject string
	aud     []string
	scopes  []string
	exp     time.Time
}

type jwtClient struct{ op.Client }

func (jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

func (s *asStorage) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	c, err := s.Storage.ClientCredentials(ctx, id, secret)
	if err != nil || optsFrom(ctx).opaque {
		return c, err
	}
	return jwtClient{c}, nil
}

func (s *asStorage) ClientCredentialsTokenRequest(ctx context.Context, id string, scopes []string) (op.TokenRequest, error) {
	if _, err := s.Storage.ClientCredentialsTokenRequest(ctx, id, scopes); err != nil {
		return nil, err
	}
	o := optsFrom(ctx)
	aud := o.resource
	if aud == "" {
		aud = s.defaultResource
	}
	auds := []string{aud}
	if o.opaque {
		auds = append(auds, introspectorID) // the provider answers introspection only to a client in aud
	}
	return &oidc.JWTTokenRequest{Subject: id, Audience: auds, Scopes: scopes}, nil
}

func (s *asStorage) CreateAccessToken(ctx context.Context, req op.TokenRequest) (string, time.Time, error) {
	id, exp, err := s.Storage.CreateAccessToken(ctx, req)
	if optsFrom(ctx).expired {
		exp = time.Now().Add(-10 * time.Minute)
	}
	if err == nil {
		s.mu.Lock()
		s.issued[id] = issued{subject: req.GetSubject(), aud: req.GetAudience(), scopes: req.GetScopes(), exp: exp}
		s.mu.Unlock()
	}
	return id, exp, err
}

func (s *asStorage) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	claims, err := s.Storage.GetPrivateClaimsFromScopes(ctx, userID, clientID, scopes)
	if err == nil && len(scopes) > 0 {
		if claims == nil {
			claims = map[string]any{}
		}
		claims["scope"] = strings.Join(scopes, " ")
	}
	return claims, err
}

func (s *asStorage) AuthorizeClientIDSecret(ctx context.Context, id, secret string) error {
	if id == introspectorID {
		if secret != introspectorPW {
			return oidc.ErrInvalidClient()
		}
		return nil
	}
	return s.Storage.AuthorizeClientIDSecret(ctx, id, secret)
}

// SetIntrospectionFromToken answers for a token the provider decrypted
// and found: active only for a client in its audience, with its aud, iss,
// exp, scope and subject (RFC 7662 §2.2).
func (s *asStorage) SetIntrospectionFromToken(ctx context.Context, resp *oidc.IntrospectionResponse, tokenID, subject, clientID string) error {
	s.mu.Lock()
	in, ok := s.issued[tokenID]
	s.mu.Unlock()
	switch {
	case !ok:
		return errors.New("token is invalid")
	case !in.exp.After(time.Now()):
		return errors.New("token is expired")
	case !slices.Contains(in.aud, clientID):
		return errors.New("token is not valid for this client")
	}
	resp.Audience = in.aud
	resp.Issuer = s.issuer
	resp.Expiration = oidc.FromTime(in.exp)
	resp.Scope = in.scopes
	resp.Subject = in.subject
	resp.ClientID = in.subject
	return nil
}

// provider is a running authorization server.
type provider struct {
	issuer string
	srv    *http.Server
}

// startProvider starts the example OpenID Provider on a loopback port;
// tokens that name no resource get defaultResource as their audience.
func startProvider(t *testing.T, defaultResource string) *provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	st := &asStorage{
		Storage:         storage.NewStorage(storage.NewUserStore(issuer)),
		issuer:          issuer,
		defaultResource: defaultResource,
		issued:          map[string]issued{},
	}
	router := exampleop.SetupServer(issuer, st, nil, false)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/token") {
			r.ParseForm()
			o := tokenOpts{resource: r.PostForm.Get("resource")}
			switch r.PostForm.Get("token_format") {
			case "opaque":
				o.opaque = true
			case "expired":
				o.expired = true
			}
			r = r.WithContext(context.WithValue(r.Context(), optsKey{}, o))
		}
		router.ServeHTTP(w, r)
	})
	p := &provider{issuer: issuer, srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go p.srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.srv.Shutdown(ctx)
	})
	return p
}
