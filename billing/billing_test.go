package billing_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

func TestClamp(t *testing.T) {
	t.Parallel()
	cfg := billing.DefaultConfig()
	tests := []struct{ tier, effort, want string }{
		{store.TierFree, "low", "low"},
		{store.TierFree, "medium", "medium"},
		{store.TierFree, "high", "medium"},
		{store.TierFree, "build", "medium"},
		{store.TierPro, "low", "low"},
		{store.TierPro, "medium", "medium"},
		{store.TierPro, "high", "high"},
		{store.TierPro, "build", "high"},
		{store.TierEnterprise, "low", "low"},
		{store.TierEnterprise, "high", "high"},
		{store.TierEnterprise, "build", "build"},
		{"unknown-tier", "build", "medium"}, // an unknown tier gets the lowest tier's limit
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, cfg.Clamp(tt.tier, tt.effort), "%s at %s", tt.tier, tt.effort)
	}
}

func TestCreditTable(t *testing.T) {
	t.Parallel()
	cfg := billing.DefaultConfig()
	require.NoError(t, cfg.Validate())
	for effort, want := range map[string]int64{"low": 0, "medium": 1, "high": 5, "build": 20} {
		require.Equal(t, want, cfg.Credits(effort), effort)
		require.Equal(t, want*10, cfg.Cents(effort), effort)
	}
	require.EqualValues(t, 10, cfg.CentsPerCredit)

	broken := []func(*billing.Config){
		func(c *billing.Config) { c.CentsPerCredit = 0 },
		func(c *billing.Config) { delete(c.CreditsPerEffort, "high") },
		func(c *billing.Config) { c.CreditsPerEffort["low"] = -1 },
		func(c *billing.Config) { c.MaxEffortByTier[store.TierPro] = "huge" },
	}
	for i, breakIt := range broken {
		c := billing.DefaultConfig()
		breakIt(&c)
		require.Error(t, c.Validate(), "case %d", i)
	}
}

func TestBillingPeriod(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
	tests := []struct{ created, now, start, end string }{
		// Anchored on the creation instant, monthly.
		{"2025-01-15T08:30:00Z", "2025-01-20T00:00:00Z", "2025-01-15T08:30:00Z", "2025-02-15T08:30:00Z"},
		{"2025-01-15T08:30:00Z", "2025-03-15T08:29:59Z", "2025-02-15T08:30:00Z", "2025-03-15T08:30:00Z"},
		{"2025-01-15T08:30:00Z", "2025-03-15T08:30:00Z", "2025-03-15T08:30:00Z", "2025-04-15T08:30:00Z"},
		{"2024-11-15T08:30:00Z", "2025-01-02T00:00:00Z", "2024-12-15T08:30:00Z", "2025-01-15T08:30:00Z"},
		// Days 29-31 fall back to the last day of shorter months.
		{"2025-01-31T10:00:00Z", "2025-02-28T09:59:59Z", "2025-01-31T10:00:00Z", "2025-02-28T10:00:00Z"},
		{"2025-01-31T10:00:00Z", "2025-03-15T12:00:00Z", "2025-02-28T10:00:00Z", "2025-03-31T10:00:00Z"},
		{"2024-01-30T00:00:00Z", "2024-02-29T12:00:00Z", "2024-02-29T00:00:00Z", "2024-03-30T00:00:00Z"},
		{"2025-03-31T23:00:00Z", "2025-04-30T23:30:00Z", "2025-04-30T23:00:00Z", "2025-05-31T23:00:00Z"},
		// A clock behind the creation time still gets the first period.
		{"2025-01-15T08:30:00Z", "2025-01-15T08:00:00Z", "2025-01-15T08:30:00Z", "2025-02-15T08:30:00Z"},
	}
	for _, tt := range tests {
		start, end := billing.BillingPeriod(at(tt.created), at(tt.now))
		require.Equal(t, at(tt.start), start, "start: created %s now %s", tt.created, tt.now)
		require.Equal(t, at(tt.end), end, "end: created %s now %s", tt.created, tt.now)
	}
}

// bundle is a service over a fresh database with one account.
type bundle struct {
	st      *store.Store
	svc     *billing.Service
	account string
}

func setup(t *testing.T, st *store.Store, tier string, cents int64) bundle {
	t.Helper()
	ctx := context.Background()
	a, _, err := st.EnsureAccount(ctx, storetest.Name("payer")+"@example.com", tier, false)
	require.NoError(t, err)
	if cents > 0 {
		require.NoError(t, st.AppendLedger(ctx, &store.LedgerEntry{AccountID: a.ID, Type: store.TxDeposit, AmountCents: cents}))
	}
	return bundle{st: st, svc: billing.New(st, billing.DefaultConfig()), account: a.ID}
}

func (b bundle) run(effort string) billing.Run {
	return billing.Run{AccountID: b.account, JobID: uuid.NewString(), RunID: uuid.NewString(), Effort: effort}
}

func (b bundle) balance(t *testing.T) int64 {
	t.Helper()
	bal, err := b.st.Balance(context.Background(), b.account)
	require.NoError(t, err)
	return bal
}

// entries returns the account's whole ledger, newest first.
func (b bundle) entries(t *testing.T, typ string) []store.LedgerEntry {
	t.Helper()
	page, err := b.svc.Transactions(context.Background(), b.account, typ, store.PageRequest{Limit: 1000})
	require.NoError(t, err)
	return page.Items
}

func TestChargeRunBooksAConsumption(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, store.TierEnterprise, 1000)
		for _, tt := range []struct {
			effort string
			cents  int64
		}{{"medium", 10}, {"high", 50}, {"build", 200}} {
			r := b.run(tt.effort)
			before := b.balance(t)
			require.NoError(t, b.svc.ChargeRun(ctx, nil, r))
			require.Equal(t, before-tt.cents, b.balance(t))
			e := b.entries(t, store.TxConsumption)[0]
			require.Equal(t, -tt.cents, e.AmountCents)
			require.Equal(t, tt.effort, *e.DepthType)
			require.Equal(t, r.JobID, *e.JobID)
			require.Equal(t, r.RunID, *e.RunID)
			require.Equal(t, before-tt.cents, e.BalanceAfterCents)
			credits, err := b.svc.JobCredits(ctx, r.JobID)
			require.NoError(t, err)
			require.Equal(t, tt.cents/10, credits)
		}
		err := b.svc.ChargeRun(ctx, nil, b.run("extreme"))
		require.ErrorIs(t, err, billing.ErrUnknownEffort)
	})
}

func TestChargeRunIsExactlyOncePerRun(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, store.TierPro, 1000)
		r := b.run("high")

		// Repeated: the second call books nothing.
		require.NoError(t, b.svc.ChargeRun(ctx, nil, r))
		require.NoError(t, b.svc.ChargeRun(ctx, nil, r))
		require.EqualValues(t, 950, b.balance(t))

		// Concurrent, for one new run: one charge.
		r2 := b.run("high")
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Go(func() { errs <- b.svc.ChargeRun(ctx, nil, r2) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.EqualValues(t, 900, b.balance(t))
		require.Len(t, b.entries(t, store.TxConsumption), 2)
		credits, err := b.svc.JobCredits(ctx, r2.JobID)
		require.NoError(t, err)
		require.EqualValues(t, 5, credits)
	})
}

func TestRefundRunIsExactlyOnceAndEqualsTheCharge(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, store.TierEnterprise, 1000)

		// Never charged: nothing to refund.
		require.NoError(t, b.svc.RefundRun(ctx, nil, b.run("build")))
		require.Empty(t, b.entries(t, store.TxRefund))

		r := b.run("build")
		require.NoError(t, b.svc.ChargeRun(ctx, nil, r))
		require.EqualValues(t, 800, b.balance(t))
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for range 16 {
			wg.Go(func() { errs <- b.svc.RefundRun(ctx, nil, r) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.NoError(t, b.svc.RefundRun(ctx, nil, r))
		require.EqualValues(t, 1000, b.balance(t))
		refunds := b.entries(t, store.TxRefund)
		require.Len(t, refunds, 1)
		require.EqualValues(t, 200, refunds[0].AmountCents)
		require.Equal(t, "build", *refunds[0].DepthType)
		require.Equal(t, r.JobID, *refunds[0].JobID)
		credits, err := b.svc.JobCredits(ctx, r.JobID)
		require.NoError(t, err)
		require.Zero(t, credits)

		// A refunded run stays charged once: charging it again books nothing.
		require.NoError(t, b.svc.ChargeRun(ctx, nil, r))
		require.EqualValues(t, 1000, b.balance(t))

		// A continuation is a new run of the same job and is charged; the job shows the sum.
		job := uuid.NewString()
		for range 2 {
			require.NoError(t, b.svc.ChargeRun(ctx, nil, billing.Run{AccountID: b.account, JobID: job, RunID: uuid.NewString(), Effort: "high"}))
		}
		credits, err = b.svc.JobCredits(ctx, job)
		require.NoError(t, err)
		require.EqualValues(t, 10, credits)
	})
}

func TestZeroCreditRunsAreMeteredButBookNothing(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, store.TierFree, 0) // an empty wallet can still run low
		ok, err := b.svc.CanAfford(ctx, b.account, "low")
		require.NoError(t, err)
		require.True(t, ok)
		r := b.run("low")
		require.NoError(t, b.svc.ChargeRun(ctx, nil, r))
		require.NoError(t, b.svc.ChargeRun(ctx, nil, r))
		require.Empty(t, b.entries(t, ""))
		require.Zero(t, b.balance(t))
		u, err := b.svc.Usage(ctx, b.account, billing.UsageQuery{Period: billing.PeriodLast30d})
		require.NoError(t, err)
		require.EqualValues(t, 1, u.Runs)
		require.Zero(t, u.CreditsUsed)
		require.NoError(t, b.svc.RefundRun(ctx, nil, r))
		require.Empty(t, b.entries(t, ""))

		ok, err = b.svc.CanAfford(ctx, b.account, "medium")
		require.NoError(t, err)
		require.False(t, ok)
		require.ErrorIs(t, b.svc.ChargeRun(ctx, nil, b.run("medium")), billing.ErrInsufficientCredits)
	})
}

func TestChargeRunFollowsTheCallersTransaction(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, store.TierPro, 60)
		errRollback := errors.New("dispatch failed")

		// The caller rolls back: no charge, and the run can be charged later.
		r := b.run("high")
		err := st.InTx(ctx, func(tx *store.Store) error {
			require.NoError(t, b.svc.ChargeRun(ctx, tx, r))
			return errRollback
		})
		require.ErrorIs(t, err, errRollback)
		require.EqualValues(t, 60, b.balance(t))

		// A refused charge inside a transaction the caller commits leaves nothing behind.
		big := b.run("high")
		require.NoError(t, st.InTx(ctx, func(tx *store.Store) error {
			require.NoError(t, b.svc.ChargeRun(ctx, tx, r))
			require.ErrorIs(t, b.svc.ChargeRun(ctx, tx, big), billing.ErrInsufficientCredits)
			return nil
		}))
		require.EqualValues(t, 10, b.balance(t))
		_, err = st.BillingRunByID(ctx, big.RunID)
		require.ErrorIs(t, err, store.ErrNotFound)
		require.NoError(t, st.AppendLedger(ctx, &store.LedgerEntry{AccountID: b.account, Type: store.TxDeposit, AmountCents: 40}))
		require.NoError(t, b.svc.ChargeRun(ctx, nil, big), "a refused run can be charged once credits return")
		require.Zero(t, b.balance(t))
	})
}

// TestRaceForTheLastCredits: many runs dispatched at once on a wallet that pays for only some of them.
func TestRaceForTheLastCredits(t *testing.T) {
	t.Parallel()
	const affordable, attempts = 7, 48
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, store.TierPro, affordable*50) // 7 high runs
		var wg sync.WaitGroup
		var mu sync.Mutex
		charged, refused := 0, 0
		start := make(chan struct{})
		for range attempts {
			wg.Go(func() {
				<-start
				err := b.svc.ChargeRun(ctx, nil, b.run("high"))
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					charged++
				case errors.Is(err, billing.ErrInsufficientCredits):
					refused++
				default:
					t.Errorf("charge: %v", err)
				}
			})
		}
		close(start)
		wg.Wait()
		t.Logf("%s: %d attempts, %d charged, %d refused", st.Dialect(), attempts, charged, refused)
		require.Equal(t, affordable, charged)
		require.Equal(t, attempts-affordable, refused)
		require.Zero(t, b.balance(t))
		entries := b.entries(t, "")
		require.Len(t, entries, affordable+1)
		for _, e := range entries {
			require.GreaterOrEqual(t, e.BalanceAfterCents, int64(0))
		}
		u, err := b.svc.Usage(ctx, b.account, billing.UsageQuery{Period: billing.PeriodLast30d})
		require.NoError(t, err)
		require.EqualValues(t, affordable, u.Runs, "refused runs are not metered")
		require.EqualValues(t, affordable*5, u.CreditsUsed)
	})
}

func TestBonusCreditsAreDrawnFirst(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		b := setup(t, st, store.TierEnterprise, 0)
		require.NoError(t, st.AppendLedger(ctx, &store.LedgerEntry{AccountID: b.account, Type: store.TxBonus, AmountCents: 30}))
		require.NoError(t, st.AppendLedger(ctx, &store.LedgerEntry{AccountID: b.account, Type: store.TxDeposit, AmountCents: 1000}))
		steps := []struct {
			effort          string
			refund          bool
			paid, bonusLeft int64 // cents_spent_paid so far, bonus part of the balance after
		}{
			{effort: "medium", paid: 0, bonusLeft: 20},              // 10 from bonus
			{effort: "high", paid: 30, bonusLeft: 0},                // 20 from bonus, 30 paid
			{effort: "build", paid: 230, bonusLeft: 0},              // all paid
			{effort: "build", refund: true, paid: 30, bonusLeft: 0}, // the build run's 200 paid cents come back
		}
		var last billing.Run
		for i, s := range steps {
			if s.refund {
				require.NoError(t, b.svc.RefundRun(ctx, nil, last))
			} else {
				last = b.run(s.effort)
				require.NoError(t, b.svc.ChargeRun(ctx, nil, last))
			}
			u, err := b.svc.Usage(ctx, b.account, billing.UsageQuery{Period: billing.PeriodLast30d})
			require.NoError(t, err)
			require.Equal(t, s.paid, u.CentsSpentPaid, "step %d", i)
			require.Equal(t, s.bonusLeft, b.entries(t, "")[0].BonusAfterCents, "step %d", i)
		}
		// Refunding the high run that drew 20 bonus + 30 paid gives each part back.
		b2 := setup(t, st, store.TierEnterprise, 0)
		require.NoError(t, st.AppendLedger(ctx, &store.LedgerEntry{AccountID: b2.account, Type: store.TxBonus, AmountCents: 20}))
		require.NoError(t, st.AppendLedger(ctx, &store.LedgerEntry{AccountID: b2.account, Type: store.TxDeposit, AmountCents: 30}))
		r := b2.run("high")
		require.NoError(t, b2.svc.ChargeRun(ctx, nil, r))
		require.NoError(t, b2.svc.RefundRun(ctx, nil, r))
		top := b2.entries(t, "")[0]
		require.Equal(t, store.TxRefund, top.Type)
		require.EqualValues(t, 20, top.BonusCents)
		require.EqualValues(t, 20, top.BonusAfterCents)
		require.EqualValues(t, 50, top.BalanceAfterCents)
	})
}

func TestUsagePeriods(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		created := time.Date(2025, 1, 31, 10, 0, 0, 0, time.UTC)
		now := time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)
		b := setup(t, st, store.TierEnterprise, 0)
		require.NoError(t, st.DB().Model(&store.Account{}).Where("id = ?", b.account).Update("created_at", created).Error)
		at := func(tm time.Time) *billing.Service {
			return billing.New(st, billing.DefaultConfig(), billing.WithClock(func() time.Time { return tm }))
		}
		require.NoError(t, st.AppendLedger(ctx, &store.LedgerEntry{AccountID: b.account, Type: store.TxBonus, AmountCents: 30, CreatedAt: created}))
		require.NoError(t, st.AppendLedger(ctx, &store.LedgerEntry{AccountID: b.account, Type: store.TxDeposit, AmountCents: 1000, CreatedAt: created}))
		refunded := b.run("build")
		for _, s := range []struct {
			at  time.Time
			run billing.Run
		}{
			{time.Date(2025, 2, 27, 9, 0, 0, 0, time.UTC), b.run("medium")}, // previous period; all bonus
			{time.Date(2025, 2, 28, 10, 0, 0, 0, time.UTC), b.run("high")},  // the period's first instant; 20 bonus + 30 paid
			{time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC), refunded},
			{time.Date(2025, 3, 12, 0, 0, 0, 0, time.UTC), b.run("medium")},
			{time.Date(2025, 3, 12, 1, 0, 0, 0, time.UTC), b.run("low")},
			{time.Date(2025, 3, 15, 11, 0, 0, 0, time.UTC), b.run("high")},
		} {
			require.NoError(t, at(s.at).ChargeRun(ctx, nil, s.run))
		}
		require.NoError(t, at(time.Date(2025, 3, 10, 1, 0, 0, 0, time.UTC)).RefundRun(ctx, nil, refunded))
		svc := at(now)
		ts := func(s string) *time.Time {
			v, err := time.Parse(time.RFC3339, s)
			require.NoError(t, err)
			return &v
		}
		p := func(v int64) *int64 { return &v }
		tests := []struct {
			name string
			q    billing.UsageQuery
			want billing.Usage
		}{{
			name: "current (default)",
			q:    billing.UsageQuery{},
			want: billing.Usage{
				Start: *ts("2025-02-28T10:00:00Z"), End: *ts("2025-03-31T10:00:00Z"),
				Runs: 5, CreditsUsed: 11, CentsSpent: 110, CentsSpentPaid: 90,
				ByEffort: map[string]billing.Bucket{
					"low": {Runs: 1}, "medium": {Runs: 1, Credits: 1, Cents: 10},
					"high": {Runs: 2, Credits: 10, Cents: 100}, "build": {Runs: 1},
				},
				// 11 credits in 362 of the period's 744 hours.
				Projected: p(23),
			},
		}, {
			name: "last_30d",
			q:    billing.UsageQuery{Period: billing.PeriodLast30d},
			want: billing.Usage{
				Start: *ts("2025-02-13T12:00:00Z"), End: now,
				Runs: 6, CreditsUsed: 12, CentsSpent: 120, CentsSpentPaid: 90,
				ByEffort: map[string]billing.Bucket{
					"low": {Runs: 1}, "medium": {Runs: 2, Credits: 2, Cents: 20},
					"high": {Runs: 2, Credits: 10, Cents: 100}, "build": {Runs: 1},
				},
			},
		}, {
			name: "custom",
			q:    billing.UsageQuery{Period: billing.PeriodCustom, From: ts("2025-02-27T09:00:00Z"), To: ts("2025-03-12T00:00:00Z")},
			want: billing.Usage{
				Start: *ts("2025-02-27T09:00:00Z"), End: *ts("2025-03-12T00:00:00Z"),
				Runs: 3, CreditsUsed: 6, CentsSpent: 60, CentsSpentPaid: 30,
				ByEffort: map[string]billing.Bucket{
					"medium": {Runs: 1, Credits: 1, Cents: 10}, "high": {Runs: 1, Credits: 5, Cents: 50}, "build": {Runs: 1},
				},
			},
		}, {
			name: "custom, empty",
			q:    billing.UsageQuery{Period: billing.PeriodCustom, From: ts("2024-01-01T00:00:00Z"), To: ts("2024-12-31T00:00:00Z")},
			want: billing.Usage{Start: *ts("2024-01-01T00:00:00Z"), End: *ts("2024-12-31T00:00:00Z"), ByEffort: map[string]billing.Bucket{}},
		}}
		for _, tt := range tests {
			got, err := svc.Usage(ctx, b.account, tt.q)
			require.NoError(t, err, tt.name)
			got.Start, got.End = got.Start.UTC(), got.End.UTC()
			require.Equal(t, tt.want, got, tt.name)
		}

		bad := []struct {
			q     billing.UsageQuery
			field string
		}{
			{billing.UsageQuery{Period: billing.PeriodCustom, To: ts("2025-03-01T00:00:00Z")}, "from"},
			{billing.UsageQuery{Period: billing.PeriodCustom, From: ts("2025-03-01T00:00:00Z")}, "to"},
			{billing.UsageQuery{Period: billing.PeriodCustom, From: ts("2025-03-02T00:00:00Z"), To: ts("2025-03-01T00:00:00Z")}, "to"},
			{billing.UsageQuery{Period: billing.PeriodCustom, From: ts("2025-03-01T00:00:00Z"), To: ts("2025-03-01T00:00:00Z")}, "to"},
			{billing.UsageQuery{Period: billing.PeriodCustom, From: ts("2024-01-01T00:00:00Z"), To: ts("2025-01-02T00:00:00Z")}, "to"},
			{billing.UsageQuery{Period: billing.PeriodLast30d, From: ts("2025-03-01T00:00:00Z")}, "from"},
			{billing.UsageQuery{To: ts("2025-03-01T00:00:00Z")}, "to"},
			{billing.UsageQuery{Period: "fortnight"}, "period"},
		}
		for i, tt := range bad {
			_, err := svc.Usage(ctx, b.account, tt.q)
			var pe *billing.PeriodError
			require.ErrorAs(t, err, &pe, "case %d", i)
			require.Equal(t, tt.field, pe.Field, "case %d", i)
			require.ErrorIs(t, err, billing.ErrInvalidPeriod)
		}
	})
}

func TestQuotaAndCheck(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		tests := []struct {
			tier              string
			cents             int64
			effort            string
			wantEffort        string
			wantRequired      int64
			wantAllowed       bool
			wantCreditsRemain int64
		}{
			{store.TierFree, 0, "low", "low", 0, true, 0},
			{store.TierFree, 9, "medium", "medium", 1, false, 0},
			{store.TierFree, 10, "build", "medium", 1, true, 1},
			{store.TierPro, 49, "high", "high", 5, false, 4},
			{store.TierPro, 425, "build", "high", 5, true, 42},
			{store.TierEnterprise, 199, "build", "build", 20, false, 19},
			{store.TierEnterprise, 200, "build", "build", 20, true, 20},
		}
		for _, tt := range tests {
			name := fmt.Sprintf("%s with %d cents at %s", tt.tier, tt.cents, tt.effort)
			b := setup(t, st, tt.tier, tt.cents)
			c, err := b.svc.Check(ctx, b.account, tt.effort)
			require.NoError(t, err, name)
			require.Equal(t, billing.Check{
				Allowed: tt.wantAllowed, RequestedEffort: tt.effort, Effort: tt.wantEffort,
				CreditsRequired: tt.wantRequired, CreditsRemaining: tt.wantCreditsRemain,
			}, c, name)
			ok, err := b.svc.CanAfford(ctx, b.account, tt.wantEffort)
			require.NoError(t, err)
			require.Equal(t, tt.wantAllowed, ok, name)
			q, err := b.svc.Quota(ctx, b.account)
			require.NoError(t, err)
			require.Equal(t, tt.cents, q.BalanceCents, "checking consumes nothing: "+name)
			require.Equal(t, tt.wantCreditsRemain, q.CreditsRemaining, name)
			require.Equal(t, billing.DefaultConfig().MaxEffort(tt.tier), q.MaxEffort)
		}
	})
}
