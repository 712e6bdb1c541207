package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/engine/llm"
)

// TestModelSettings: RESEARCH_MODEL_CONTEXT and RESEARCH_MODEL_TOOLS reach the openai engine's
// options; bad values are refused by name.
func TestModelSettings(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(func(string) string { return "" })
	require.NoError(t, err)
	require.Zero(t, cfg.Research.ModelContext)
	require.Equal(t, llm.ToolsAuto, cfg.Research.ModelTools)

	env := map[string]string{"RESEARCH_MODEL_CONTEXT": "8192", "RESEARCH_MODEL_TOOLS": "Retrieve"}
	cfg, err = loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, 8192, cfg.Research.ModelContext)
	require.Equal(t, llm.ToolsRetrieve, cfg.Research.ModelTools)

	for _, bad := range []map[string]string{{"RESEARCH_MODEL_CONTEXT": "lots"}, {"RESEARCH_MODEL_CONTEXT": "512"}, {"RESEARCH_MODEL_TOOLS": "maybe"}} {
		_, err := loadConfig(func(k string) string { return bad[k] })
		require.Error(t, err, "%v", bad)
		for name := range bad {
			require.Contains(t, err.Error(), name)
		}
	}
}
