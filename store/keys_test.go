package store_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
)

func TestTouchDue(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := now.Add(d); return &v }
	tests := []struct {
		name     string
		lastUsed *time.Time
		want     bool
	}{
		{"never used", nil, true},
		{"used just now", at(0), false},
		{"used within the interval", at(-store.KeyTouchInterval + time.Microsecond), false},
		{"used exactly one interval ago", at(-store.KeyTouchInterval), false},
		{"used longer ago", at(-store.KeyTouchInterval - time.Microsecond), true},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, store.APIKey{LastUsedAt: tt.lastUsed}.TouchDue(now), tt.name)
	}
}
