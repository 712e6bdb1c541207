package expert

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConfigChanges(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	cost := 5.0
	base := Config{Name: "A", SystemPrompt: "p", Tags: []string{"x"}, OutputSchema: map[string]any{"type": "object", "required": []any{"a"}}}
	tests := []struct {
		name string
		from Config
		to   func(Config) Config
		want []Change
	}{
		{"equal", base, func(c Config) Config { return c }, nil},
		{"map key order and nil lists do not matter", base, func(c Config) Config {
			c.OutputSchema = map[string]any{"required": []any{"a"}, "type": "object"}
			c.ExpertiseAreas = nil
			return c
		}, nil},
		{"set from empty is add", base, func(c Config) Config { c.Domain, c.MaxCostUSD = str("d"), &cost; return c },
			[]Change{{"domain", OpAdd}, {"max_cost_usd", OpAdd}}},
		{"cleared is remove", base, func(c Config) Config { c.Tags, c.OutputSchema = []string{}, nil; return c },
			[]Change{{"tags", OpRemove}, {"output_schema", OpRemove}}},
		{"changed is update", base, func(c Config) Config { c.Name, c.Tags = "B", []string{"y"}; return c },
			[]Change{{"name", OpUpdate}, {"tags", OpUpdate}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := configChanges(tc.from, tc.to(tc.from))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
