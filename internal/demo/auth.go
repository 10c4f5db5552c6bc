package demo

import (
	"github.com/rpcedge/rpcedge/a2a"
)

// A2AAuthCard returns the demo card for an agent behind OAuth: A2ACard
// with two security schemes — "oauth" (OAuth 2.0, client credentials at
// tokenURL, the authorization server's metadata at metadataURL, the given
// scopes) and "bearer" (HTTP Bearer, JWT) — any one of which authorizes a
// call, and the extended card declared.
func A2AAuthCard(tokenURL, metadataURL string, scopes []string) a2a.AgentCard {
	c := A2ACard()
	sc := make(map[string]string, len(scopes))
	for _, s := range scopes {
		sc[s] = "call the agent"
	}
	if scopes == nil {
		scopes = []string{}
	}
	c.SecuritySchemes = map[string]a2a.SecurityScheme{
		"oauth": {OAuth2: &a2a.OAuth2SecurityScheme{
			Flows:       a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsFlow{TokenURL: tokenURL, Scopes: sc}},
			MetadataURL: metadataURL,
			Description: "OAuth 2.0 client credentials; tokens must name this endpoint in aud (RFC 8707 resource)",
		}},
		"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: "JWT"}},
	}
	c.Security = []a2a.SecurityRequirement{{"oauth": scopes}, {"bearer": {}}}
	c.Capabilities.ExtendedAgentCard = true
	return c
}

// A2AExtendedCard returns the extended card the demo serves to
// authenticated callers: the public card (card) with what only they see,
// a longer description and the provider.
func A2AExtendedCard(card a2a.AgentCard) a2a.AgentCard {
	card.Description += " Authenticated callers: tasks are kept in a bounded in-memory store (10,000 tasks, 64 MiB); GetTask finds them until they are evicted."
	card.Provider = &a2a.AgentProvider{Organization: "rpcedge demo", URL: "https://github.com/rpcedge/rpcedge"}
	return card
}
