package billing_test

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// TestUnitsHoldAndSettle: a batch holds its workers' price, and settling charges the succeeded ones
// once, in one consumption entry, and frees the rest of the hold.
func TestUnitsHoldAndSettle(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, store.TierPro, 100)
		available := func() int64 {
			t.Helper()
			n, err := b.svc.AvailableUnits(ctx, st, b.account, "medium")
			require.NoError(t, err)
			return n
		}
		u := billing.Units{AccountID: b.account, RunID: uuid.NewString(), JobID: uuid.NewString(), Effort: "medium", Count: 3,
			Description: "Campaign chunk"}
		require.NoError(t, st.InTx(ctx, func(tx *store.Store) error { return b.svc.HoldUnits(ctx, tx, u) }))
		require.EqualValues(t, 7, available())
		require.EqualValues(t, 100, b.balance(t), "a hold books nothing")

		big := billing.Units{AccountID: b.account, RunID: uuid.NewString(), JobID: u.JobID, Effort: "medium", Count: 8}
		require.ErrorIs(t, b.svc.HoldUnits(ctx, st, big), billing.ErrInsufficientCredits)
		require.ErrorIs(t, b.svc.HoldUnits(ctx, st, billing.Units{AccountID: b.account, RunID: uuid.NewString(), Effort: "extreme", Count: 1}),
			billing.ErrUnknownEffort)

		for range 2 { // settling again books nothing
			require.NoError(t, st.InTx(ctx, func(tx *store.Store) error { return b.svc.SettleUnits(ctx, tx, u, 2) }))
		}
		require.EqualValues(t, 80, b.balance(t))
		require.EqualValues(t, 8, available(), "the unused part of the hold is released")
		entries := b.entries(t, store.TxConsumption)
		require.Len(t, entries, 1)
		e := entries[0]
		require.EqualValues(t, -20, e.AmountCents)
		require.Equal(t, "medium", *e.DepthType)
		require.Equal(t, u.RunID, *e.RunID)
		require.Nil(t, e.JobID)
		require.Equal(t, "Campaign chunk", *e.Description)
		run, err := st.BillingRunByID(ctx, u.RunID)
		require.NoError(t, err)
		require.EqualValues(t, 2, run.Credits)
		require.EqualValues(t, 20, run.AmountCents)
		require.EqualValues(t, 20, run.PaidCents)
		require.Equal(t, u.JobID, run.JobID)

		// No success: the hold is only released.
		none := billing.Units{AccountID: b.account, RunID: uuid.NewString(), JobID: u.JobID, Effort: "medium", Count: 5}
		require.NoError(t, b.svc.HoldUnits(ctx, st, none))
		require.EqualValues(t, 3, available())
		require.NoError(t, st.InTx(ctx, func(tx *store.Store) error { return b.svc.SettleUnits(ctx, tx, none, 0) }))
		require.EqualValues(t, 8, available())
		require.EqualValues(t, 80, b.balance(t))
		_, err = st.BillingRunByID(ctx, none.RunID)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func TestAvailableUnitsRefusesAnUnknownEffort(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		b := setup(t, st, store.TierPro, 100)
		_, err := b.svc.AvailableUnits(context.Background(), st, b.account, "extreme")
		require.ErrorIs(t, err, billing.ErrUnknownEffort)
	})
}
