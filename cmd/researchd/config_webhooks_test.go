package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWebhookSettings: RESEARCH_SECRET_KEY_FILE and RESEARCH_WEBHOOK_SECRET_GRACE are read, and bad
// values are refused by name.
func TestWebhookSettings(t *testing.T) {
	t.Parallel()
	cfg, err := loadConfig(func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, cfg.Research.Jobs.WebhookSecretGrace)
	require.Empty(t, cfg.Research.SecretKeyFile)

	env := map[string]string{"RESEARCH_SECRET_KEY_FILE": "/run/secrets/researchd-sealing-key", "RESEARCH_WEBHOOK_SECRET_GRACE": "0s"}
	cfg, err = loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, "/run/secrets/researchd-sealing-key", cfg.Research.SecretKeyFile)
	require.Zero(t, cfg.Research.Jobs.WebhookSecretGrace)

	for _, bad := range []string{"soon", "-1h", "200h"} {
		_, err := loadConfig(func(k string) string {
			if k == "RESEARCH_WEBHOOK_SECRET_GRACE" {
				return bad
			}
			return ""
		})
		require.Error(t, err, bad)
		require.Contains(t, strings.ToLower(err.Error()), "grace", bad)
	}
}
