package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestBillingConfigFromEnvironment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env     map[string]string
		want    map[string]int64
		cents   int64
		wantErr string
	}{
		{env: nil, want: map[string]int64{"low": 0, "medium": 1, "high": 5, "build": 20}, cents: 10},
		{
			env:   map[string]string{"RESEARCH_CREDITS_LOW": "1", "RESEARCH_CREDITS_BUILD": "40", "RESEARCH_CENTS_PER_CREDIT": "25"},
			want:  map[string]int64{"low": 1, "medium": 1, "high": 5, "build": 40},
			cents: 25,
		},
		{env: map[string]string{"RESEARCH_CREDITS_HIGH": "-1"}, wantErr: "RESEARCH_CREDITS_HIGH"},
		{env: map[string]string{"RESEARCH_CREDITS_MEDIUM": "one"}, wantErr: "RESEARCH_CREDITS_MEDIUM"},
		{env: map[string]string{"RESEARCH_CENTS_PER_CREDIT": "0"}, wantErr: "RESEARCH_CENTS_PER_CREDIT"},
	}
	for _, tt := range tests {
		c, err := loadConfig(func(k string) string { return tt.env[k] })
		if tt.wantErr != "" {
			require.ErrorContains(t, err, tt.wantErr)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tt.want, c.Billing.CreditsPerEffort)
		require.Equal(t, tt.cents, c.Billing.CentsPerCredit)
		require.Equal(t, "medium", c.Billing.MaxEffort("free"))
	}
}

func TestCreditsGrantWritesADeposit(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := storetest.URL(t, d)
			cfg, err := loadConfig(func(k string) string {
				return map[string]string{"DATABASE_URL": url, "RESEARCH_DATA_DIR": t.TempDir(), "RESEARCH_CENTS_PER_CREDIT": "12"}[k]
			})
			require.NoError(t, err)
			var out, errOut bytes.Buffer
			require.NoError(t, keysCreate(ctx, cfg, []string{"--user", "Grantee@Example.com", "--tier", "pro", "--credits", "3"}, &out, &errOut))
			require.NoError(t, creditsGrant(ctx, cfg, []string{"--user", "grantee@example.com", "--amount", "5", "--description", "welcome"}, &errOut))
			require.NoError(t, creditsGrant(ctx, cfg, []string{"--user", "grantee@example.com", "--amount", "2"}, &errOut))
			require.Error(t, creditsGrant(ctx, cfg, []string{"--user", "grantee@example.com", "--amount", "0"}, &errOut))
			require.ErrorContains(t, creditsGrant(ctx, cfg, []string{"--user", "nobody@example.com", "--amount", "1"}, &errOut), "no account")

			st, err := store.Open(ctx, url)
			require.NoError(t, err)
			defer st.Close()
			acct, err := st.AccountByEmail(ctx, "grantee@example.com")
			require.NoError(t, err)
			page, err := st.ListLedger(ctx, acct.ID, "", store.PageRequest{Limit: 10})
			require.NoError(t, err)
			require.Len(t, page.Items, 3)
			total := int64(0)
			descs := map[string]bool{}
			for _, e := range page.Items {
				require.Equal(t, store.TxDeposit, e.Type)
				total += e.AmountCents
				descs[*e.Description] = true
			}
			require.Equal(t, int64((3+5+2)*12), total)
			require.Equal(t, map[string]bool{"3 credits granted by operator": true, "welcome": true, "2 credits granted by operator": true}, descs)
		})
	}
}
