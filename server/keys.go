package server

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/researchd/researchd/auth"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/store"
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
	page, err := s.store.ListAPIKeys(ctx, p.AccountID, pr)
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
	created, secret, err := CreateKey(ctx, s.store, p.AccountID, label, scopes)
	if err != nil {
		return nil, err
	}
	k := apiKeyOf(created)
	return gen.CreateApiKey201JSONResponse{
		Key: secret, KeyId: k.KeyId, Label: k.Label, Prefix: k.Prefix, Last4: k.Last4, Scopes: k.Scopes,
		CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt,
	}, nil
}

// RevokeApiKey revokes one of the caller's keys; repeating it is harmless.
func (s *Server) RevokeApiKey(ctx context.Context, req gen.RevokeApiKeyRequestObject) (gen.RevokeApiKeyResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	err = s.store.RevokeAPIKey(ctx, p.AccountID, req.KeyId.String(), s.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNotFound("API key")
	}
	if err != nil {
		return nil, err
	}
	s.keys.forget(req.KeyId.String())
	return gen.RevokeApiKey204Response{}, nil
}

// CreateKey mints and stores a key for an account; the secret is returned once and never stored.
// The CLI's `keys create` uses it too.
func CreateKey(ctx context.Context, st *store.Store, accountID string, label *string, scopes []string) (store.APIKey, string, error) {
	nk := auth.MintKey()
	row := store.APIKey{
		ID: uuid.NewString(), AccountID: accountID, Label: label, Prefix: nk.Prefix, Last4: nk.Last4,
		Hash: nk.Hash, Scopes: strings.Join(scopes, " "),
	}
	if err := st.CreateAPIKey(ctx, &row); err != nil {
		return store.APIKey{}, "", err
	}
	return row, nk.Secret, nil
}

func apiKeyOf(k store.APIKey) gen.ApiKey {
	scopes := make([]gen.Scope, 0)
	for _, sc := range k.ScopeList() {
		scopes = append(scopes, gen.Scope(sc))
	}
	return gen.ApiKey{
		KeyId: uuid.MustParse(k.ID), Label: nullableOf(k.Label), Prefix: k.Prefix, Last4: k.Last4, Scopes: scopes,
		CreatedAt: k.CreatedAt, LastUsedAt: nullableOf(k.LastUsedAt), RevokedAt: nullableOf(k.RevokedAt),
	}
}
