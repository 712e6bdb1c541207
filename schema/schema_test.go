package schema_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/schema"
)

func TestCompileObjectRefusesEveryExternalReference(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "secret.json")
	require.NoError(t, os.WriteFile(secret, []byte(`{"type":"object","description":"TOPSECRET"}`), 0o600))
	cases := []struct {
		name string
		doc  map[string]any
	}{
		{"file ref", map[string]any{"$ref": "file://" + secret}},
		{"passwd", map[string]any{"$ref": "file:///etc/passwd"}},
		{"device that blocks on read", map[string]any{"$ref": "file:///dev/ptmx"}},
		{"nested file ref", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "file://" + secret}}}},
		{"relative ref against a file $id", map[string]any{"$id": "file://" + filepath.Dir(secret) + "/root.json", "type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "secret.json"}}}},
		{"http ref", map[string]any{"$ref": "http://127.0.0.1:1/schema.json"}},
		{"https ref", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "https://example.com/s.json#/x"}}}},
		{"dynamic ref", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$dynamicRef": "file://" + secret}}}},
		{"unknown metaschema", map[string]any{"$schema": "file://" + secret, "type": "object"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := schema.CompileObject(tc.doc)
			require.Error(t, err)
			require.NotContains(t, err.Error(), "TOPSECRET")
			require.NotContains(t, err.Error(), "root:")
		})
	}
}

func TestCompileObject(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		doc     map[string]any
		wantErr string
	}{
		{"object", map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}}}, ""},
		{"object inferred from properties", map[string]any{"properties": map[string]any{"n": map[string]any{"type": "integer"}}}, ""},
		{"nullable object", map[string]any{"type": []any{"null", "object"}}, ""},
		{"local ref", map[string]any{"type": "object", "$defs": map[string]any{"n": map[string]any{"type": "integer"}},
			"properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/n"}}}, ""},
		{"draft-07 metaschema is built in", map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"}, ""},
		{"string schema", map[string]any{"type": "string"}, "must describe an object"},
		{"array schema", map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, "must describe an object"},
		{"empty schema", map[string]any{}, "must describe an object"},
		{"invalid", map[string]any{"type": "nonsense"}, "invalid JSON Schema"},
		{"unknown local ref", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/missing"}}}, "invalid JSON Schema"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := schema.CompileObject(tc.doc)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			require.True(t, strings.Contains(err.Error(), tc.wantErr), err.Error())
		})
	}
}
