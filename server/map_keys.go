package server

import (
	"github.com/google/uuid"

	"github.com/researchd/researchd/accounts"
	"github.com/researchd/researchd/gen"
)

// API keys between the domain (accounts) and the API.

func apiKeyOf(k accounts.Key) gen.ApiKey {
	scopes := make([]gen.Scope, 0)
	for _, sc := range k.ScopeList() {
		scopes = append(scopes, gen.Scope(sc))
	}
	return gen.ApiKey{
		KeyId: uuid.MustParse(k.ID), Label: nullableOf(k.Label), Prefix: k.Prefix, Last4: k.Last4, Scopes: scopes,
		CreatedAt: k.CreatedAt, LastUsedAt: nullableOf(k.LastUsedAt), RevokedAt: nullableOf(k.RevokedAt),
	}
}

// createdKeyOf is a key as its creation answers it: the metadata and, this once, the secret.
func createdKeyOf(created accounts.Key, secret string) gen.CreateApiKey201JSONResponse {
	k := apiKeyOf(created)
	return gen.CreateApiKey201JSONResponse{
		Key: secret, KeyId: k.KeyId, Label: k.Label, Prefix: k.Prefix, Last4: k.Last4, Scopes: k.Scopes,
		CreatedAt: k.CreatedAt, LastUsedAt: k.LastUsedAt, RevokedAt: k.RevokedAt,
	}
}
