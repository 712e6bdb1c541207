package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRescueSettings: the rescue delay of each effort is its timeout plus RESEARCH_RESCUE_MARGIN, and
// the retired RESEARCH_RESCUE_AFTER is refused by name rather than silently ignored.
func TestRescueSettings(t *testing.T) {
	t.Parallel()
	env := map[string]string{"RESEARCH_JOB_TIMEOUTS": "low=1m,build=3h", "RESEARCH_RESCUE_MARGIN": "30s"}
	cfg, err := loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, cfg.Research.Jobs.RescueDelay("low"))
	require.Equal(t, 3*time.Hour+30*time.Second, cfg.Research.Jobs.RescueDelay("build"))
	require.Equal(t, 30*time.Second, cfg.Research.Jobs.RescueFloor())

	cfg, err = loadConfig(func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, 7*time.Minute, cfg.Research.Jobs.RescueDelay("low"), "defaults: 5 min budget + 2 min margin")

	for _, bad := range []map[string]string{{"RESEARCH_RESCUE_AFTER": "70m"}, {"RESEARCH_RESCUE_MARGIN": "0s"}, {"RESEARCH_RESCUE_MARGIN": "soon"}} {
		_, err := loadConfig(func(k string) string { return bad[k] })
		require.Error(t, err, "%v", bad)
		for name := range bad {
			require.Contains(t, err.Error(), name)
		}
	}
}
