// Package openapi embeds the API document, openapi/v2.json: the source of truth for every route,
// field, limit and error. The server validates requests against it and serves it as-is.
package openapi

import (
	_ "embed"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// JSON is the document exactly as committed.
//
//go:embed v2.json
var JSON []byte

// Load parses the document. Each call returns a fresh copy the caller may modify.
func Load() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(JSON)
	if err != nil {
		return nil, fmt.Errorf("load openapi/v2.json: %w", err)
	}
	return doc, nil
}
