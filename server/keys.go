package server

import (
	"context"
	"slices"
	"strings"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/gen"
)

// ListApiKeys pages the caller's key metadata.
func (s *Server) ListApiKeys(ctx context.Context, req gen.ListApiKeysRequestObject) (gen.ListApiKeysResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	page, err := s.accounts.Keys(ctx, p.AccountID, pr)
	if err != nil {
		return nil, err
	}
	next, more := pageEnvelope(page)
	return gen.ListApiKeys200JSONResponse{Items: mapItems(page.Items, apiKeyOf), NextCursor: next, HasMore: more}, nil
}

// CreateApiKey mints a key for the OAuth token's identity. The authenticate middleware has already
// refused API keys here (403 oauth_required).
func (s *Server) CreateApiKey(ctx context.Context, req gen.CreateApiKeyRequestObject) (gen.CreateApiKeyResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if p.Method != auth.MethodOAuth {
		return nil, errForbidden("oauth_required", "minting a key needs an OAuth access token")
	}
	scopes := p.Scopes
	var label *string
	if b := req.Body; b != nil {
		label = b.Label
		if b.Scopes != nil {
			scopes = nil
			for _, sc := range *b.Scopes {
				if !slices.Contains(p.Scopes, string(sc)) {
					return nil, errForbidden("forbidden", "scope "+string(sc)+" is not granted by the access token (it has: "+strings.Join(p.Scopes, ", ")+")")
				}
				scopes = append(scopes, string(sc))
			}
		}
	}
	created, secret, err := s.accounts.CreateKey(ctx, p.AccountID, label, scopes)
	if err != nil {
		return nil, err
	}
	return createdKeyOf(created, secret), nil
}

// RevokeApiKey revokes one of the caller's keys; repeating it is harmless.
func (s *Server) RevokeApiKey(ctx context.Context, req gen.RevokeApiKeyRequestObject) (gen.RevokeApiKeyResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if err = s.accounts.RevokeKey(ctx, p.AccountID, req.KeyId.String()); err != nil {
		return nil, err
	}
	return gen.RevokeApiKey204Response{}, nil
}
