package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/attachments"
)

func TestAttachmentsConfig(t *testing.T) {
	t.Parallel()
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	c, err := loadConfig(env(nil))
	require.NoError(t, err)
	require.EqualValues(t, attachments.DefaultMaxBytes, c.Attachments.MaxBytes)
	require.Zero(t, c.Attachments.MaxRequestBytes) // derived by attachments.New
	require.Equal(t, time.Hour, c.Attachments.UploadTTL)

	c, err = loadConfig(env(map[string]string{
		"RESEARCH_ATTACHMENT_MAX_BYTES": "1024", "RESEARCH_ATTACHMENT_MAX_REQUEST_BYTES": "4096", "RESEARCH_UPLOAD_TTL": "15m",
	}))
	require.NoError(t, err)
	require.EqualValues(t, 1024, c.Attachments.MaxBytes)
	require.EqualValues(t, 4096, c.Attachments.MaxRequestBytes)
	require.Equal(t, 15*time.Minute, c.Attachments.UploadTTL)

	for _, bad := range []map[string]string{
		{"RESEARCH_ATTACHMENT_MAX_BYTES": "0"},
		{"RESEARCH_ATTACHMENT_MAX_BYTES": "lots"},
		{"RESEARCH_ATTACHMENT_MAX_REQUEST_BYTES": "-1"},
		{"RESEARCH_UPLOAD_TTL": "forever"},
		{"RESEARCH_UPLOAD_TTL": "-1h"},
	} {
		_, err := loadConfig(env(bad))
		require.Error(t, err, "%v", bad)
	}
}
