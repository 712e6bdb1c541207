package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/server/servertest"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// billingNow is the server's clock in the billing tests.
var billingNow = time.Date(2025, 3, 15, 12, 0, 0, 0, time.UTC)

func atClock(now time.Time) servertest.Option {
	return func(c *servertest.Config) { c.Now = func() time.Time { return now } }
}

// seeder books on env's store at a chosen time.
func seeder(env *servertest.Env, at time.Time) *billing.Service {
	return billing.New(env.Store, billing.DefaultConfig(), billing.WithClock(func() time.Time { return at }))
}

func TestQuota(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)
			tests := []struct {
				tier      string
				cents     int64
				maxEffort gen.Effort
				credits   int
			}{
				{store.TierFree, 0, "medium", 0},
				{store.TierPro, 425, "high", 42},
				{store.TierEnterprise, 10000, "build", 1000},
			}
			for _, tt := range tests {
				acct := env.NewAccount(t, tt.tier, false, 0)
				if tt.cents > 0 {
					require.NoError(t, env.Store.AppendLedger(context.Background(), &store.LedgerEntry{AccountID: acct.ID, Type: store.TxDeposit, AmountCents: tt.cents}))
				}
				r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota", Token: acct.Key})
				require.Equal(t, http.StatusOK, r.Status)
				var q gen.QuotaResponse
				r.JSON(t, &q)
				require.Equal(t, gen.QuotaResponse{
					Tier: gen.Tier(tt.tier), CreditsRemaining: tt.credits, BalanceCents: int(tt.cents), CentsPerCredit: 10,
					MaxEffort: tt.maxEffort, CreditsRequiredForEffort: gen.EffortCredits{Low: 0, Medium: 1, High: 5, Build: 20},
				}, q, tt.tier)
			}

			// Without the billing scope, or without credentials.
			acct := env.NewAccount(t, store.TierPro, false, 0)
			r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota", Token: env.Key(t, acct.ID, "research")})
			require.Equal(t, http.StatusForbidden, r.Status)
			r = env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota"})
			require.Equal(t, http.StatusUnauthorized, r.Status)
		})
	}
}

func TestQuotaPricesAreConfigurable(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			prices := billing.DefaultConfig()
			prices.CentsPerCredit = 25
			prices.CreditsPerEffort["low"] = 1
			prices.CreditsPerEffort["build"] = 50
			env := servertest.New(t, d, func(c *servertest.Config) { c.App.Billing = prices })
			acct := env.NewAccount(t, store.TierEnterprise, false, 0)
			require.NoError(t, env.Store.AppendLedger(context.Background(), &store.LedgerEntry{AccountID: acct.ID, Type: store.TxDeposit, AmountCents: 100}))
			var q gen.QuotaResponse
			env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota", Token: acct.Key}).JSON(t, &q)
			require.Equal(t, 25, q.CentsPerCredit)
			require.Equal(t, 4, q.CreditsRemaining)
			require.Equal(t, gen.EffortCredits{Low: 1, Medium: 1, High: 5, Build: 50}, q.CreditsRequiredForEffort)
			var c gen.QuotaCheckResponse
			env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota/check?effort=low", Token: acct.Key}).JSON(t, &c)
			require.True(t, c.Allowed)
			require.Equal(t, 1, c.CreditsRequired)
		})
	}
}

func TestQuotaCheck(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := servertest.New(t, d)
			tests := []struct {
				tier     string
				credits  int64
				effort   string
				want     gen.Effort
				required int
				allowed  bool
			}{
				{store.TierFree, 0, "low", "low", 0, true},
				{store.TierFree, 0, "medium", "medium", 1, false},
				{store.TierFree, 1, "build", "medium", 1, true},
				{store.TierPro, 4, "high", "high", 5, false},
				{store.TierPro, 5, "build", "high", 5, true},
				{store.TierEnterprise, 19, "build", "build", 20, false},
				{store.TierEnterprise, 20, "build", "build", 20, true},
			}
			for _, tt := range tests {
				name := fmt.Sprintf("%s with %d credits at %s", tt.tier, tt.credits, tt.effort)
				acct := env.NewAccount(t, tt.tier, false, tt.credits)
				for range 3 { // asking again changes nothing: checking never consumes
					r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota/check?effort=" + tt.effort, Token: acct.Key})
					require.Equal(t, http.StatusOK, r.Status, name)
					var c gen.QuotaCheckResponse
					r.JSON(t, &c)
					require.Equal(t, tt.allowed, c.Allowed, name)
					require.Equal(t, gen.Effort(tt.effort), c.RequestedEffort, name)
					require.Equal(t, tt.want, c.Effort, name)
					require.Equal(t, tt.required, c.CreditsRequired, name)
					require.Equal(t, int(tt.credits), c.CreditsRemaining, name)
					if tt.allowed {
						require.True(t, c.Reason.IsNull(), name)
					} else {
						require.Equal(t, "insufficient_credits", c.Reason.MustGet(), name)
					}
				}
				bal, err := env.Store.Balance(context.Background(), acct.ID)
				require.NoError(t, err)
				require.Equal(t, tt.credits*10, bal, name)
				var page gen.BillingTransactionPage
				env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/billing/transactions", Token: acct.Key}).JSON(t, &page)
				require.Len(t, page.Items, min(int(tt.credits), 1), "only the deposit: "+name)
			}

			acct := env.NewAccount(t, store.TierPro, false, 1)
			for _, q := range []string{"", "?effort=extreme", "?effort=high&extra=1"} {
				r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/quota/check" + q, Token: acct.Key})
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, q)
				require.Equal(t, "validation_error", r.Problem(t).Code, q)
			}
		})
	}
}

func TestBillingTransactions(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			env := servertest.New(t, d, atClock(billingNow))
			acct := env.NewAccount(t, store.TierEnterprise, false, 0)
			other := env.NewAccount(t, store.TierEnterprise, false, 50)
			day := func(n int) time.Time { return billingNow.Add(time.Duration(n-10) * 24 * time.Hour) }

			// Ten days of activity, one entry a day, oldest first.
			_, err := seeder(env, day(0)).Grant(ctx, nil, acct.ID, 100, "")
			require.NoError(t, err)
			job := uuid.NewString()
			runs := make([]billing.Run, 0)
			for i, effort := range []string{"medium", "high", "build", "medium", "high", "high"} {
				r := billing.Run{AccountID: acct.ID, JobID: job, RunID: uuid.NewString(), Effort: effort}
				runs = append(runs, r)
				require.NoError(t, seeder(env, day(1+i)).ChargeRun(ctx, nil, r))
			}
			require.NoError(t, seeder(env, day(7)).RefundRun(ctx, nil, runs[2]))
			require.NoError(t, env.Store.AppendLedger(ctx, &store.LedgerEntry{AccountID: acct.ID, Type: store.TxBonus, AmountCents: 70, CreatedAt: day(8)}))
			require.NoError(t, seeder(env, day(9)).ChargeRun(ctx, nil, billing.Run{AccountID: acct.ID, JobID: job, RunID: uuid.NewString(), Effort: "low"}))

			type row struct {
				typ     gen.BillingTransactionType
				amount  int
				balance int
				effort  string
			}
			want := []row{ // newest first; the low run booked nothing
				{"bonus", 70, 900, ""},
				{"refund", 200, 830, "build"},
				{"consumption", -50, 630, "high"},
				{"consumption", -50, 680, "high"},
				{"consumption", -10, 730, "medium"},
				{"consumption", -200, 740, "build"},
				{"consumption", -50, 940, "high"},
				{"consumption", -10, 990, "medium"},
				{"deposit", 1000, 1000, ""},
			}
			list := func(query string, limit int) ([]gen.BillingTransactionItem, int) {
				var items []gen.BillingTransactionItem
				pages := 0
				cursor := ""
				for {
					q := url.Values{"limit": {fmt.Sprint(limit)}}
					if query != "" {
						q.Set("type", query)
					}
					if cursor != "" {
						q.Set("cursor", cursor)
					}
					r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/billing/transactions?" + q.Encode(), Token: acct.Key})
					require.Equal(t, http.StatusOK, r.Status)
					var page gen.BillingTransactionPage
					r.JSON(t, &page)
					pages++
					items = append(items, page.Items...)
					require.Equal(t, page.HasMore, !page.NextCursor.IsNull())
					if !page.HasMore {
						return items, pages
					}
					cursor = page.NextCursor.MustGet()
				}
			}

			for _, limit := range []int{1, 2, 4, 20, 100} {
				items, pages := list("", limit)
				require.Equal(t, (len(want)+limit-1)/limit, pages, "limit %d", limit)
				require.Len(t, items, len(want))
				for i, it := range items {
					require.Equal(t, want[i].typ, it.Type, "limit %d item %d", limit, i)
					require.Equal(t, want[i].amount, it.AmountCents, "item %d", i)
					require.Equal(t, want[i].balance, it.BalanceAfterCents, "item %d", i)
					if want[i].effort == "" {
						require.False(t, it.DepthType.IsSpecified(), "depth_type is omitted: item %d", i)
						require.True(t, it.JobId.IsNull(), "item %d", i)
					} else {
						require.Equal(t, gen.Effort(want[i].effort), it.DepthType.MustGet(), "item %d", i)
						require.Equal(t, job, it.JobId.MustGet().String(), "item %d", i)
					}
					require.True(t, it.StripePaymentIntentId.IsNull())
					require.True(t, it.ReceiptUrl.IsNull())
					if i > 0 {
						require.False(t, it.CreatedAt.After(items[i-1].CreatedAt), "newest first")
					}
				}
				require.Equal(t, day(0), items[len(items)-1].CreatedAt, "booked on the service's clock")
				require.Equal(t, "100 credits granted by operator", items[len(items)-1].Description.MustGet())
			}

			for _, tt := range []struct {
				typ  string
				want int
			}{{"consumption", 6}, {"refund", 1}, {"deposit", 1}, {"bonus", 1}, {"expiration", 0}, {"auto_topup", 0}} {
				items, _ := list(tt.typ, 4)
				require.Len(t, items, tt.want, tt.typ)
				for _, it := range items {
					require.Equal(t, gen.BillingTransactionType(tt.typ), it.Type)
				}
			}

			// The other account sees only its own deposit.
			var page gen.BillingTransactionPage
			env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/billing/transactions", Token: other.Key}).JSON(t, &page)
			require.Len(t, page.Items, 1)
			require.Equal(t, 500, page.Items[0].AmountCents)

			for _, q := range []string{"cursor=not-a-cursor", "type=gift", "limit=0", "limit=101"} {
				r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/billing/transactions?" + q, Token: acct.Key})
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, q)
			}
		})
	}
}

func TestBillingUsage(t *testing.T) {
	t.Parallel()
	for _, d := range storetest.Dialects() {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			env := servertest.New(t, d, atClock(billingNow))
			acct := env.NewAccount(t, store.TierEnterprise, false, 0)
			created := time.Date(2025, 1, 31, 10, 0, 0, 0, time.UTC)
			require.NoError(t, env.Store.DB().Model(&store.Account{}).Where("id = ?", acct.ID).Update("created_at", created).Error)
			require.NoError(t, env.Store.AppendLedger(ctx, &store.LedgerEntry{AccountID: acct.ID, Type: store.TxBonus, AmountCents: 30, CreatedAt: created}))
			_, err := seeder(env, created).Grant(ctx, nil, acct.ID, 100, "")
			require.NoError(t, err)
			run := func(effort string) billing.Run {
				return billing.Run{AccountID: acct.ID, JobID: uuid.NewString(), RunID: uuid.NewString(), Effort: effort}
			}
			failed := run("build")
			for _, s := range []struct {
				at  time.Time
				run billing.Run
			}{
				{time.Date(2025, 2, 27, 9, 0, 0, 0, time.UTC), run("medium")}, // the previous period; paid by bonus
				{time.Date(2025, 2, 28, 10, 0, 0, 0, time.UTC), run("high")},  // the current period's first instant; 20 bonus + 30 paid
				{time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC), failed},        // refunded below
				{time.Date(2025, 3, 12, 0, 0, 0, 0, time.UTC), run("medium")},
				{time.Date(2025, 3, 12, 1, 0, 0, 0, time.UTC), run("low")},
				{time.Date(2025, 3, 15, 11, 0, 0, 0, time.UTC), run("high")},
			} {
				require.NoError(t, seeder(env, s.at).ChargeRun(ctx, nil, s.run))
			}
			require.NoError(t, seeder(env, time.Date(2025, 3, 10, 1, 0, 0, 0, time.UTC)).RefundRun(ctx, nil, failed))

			ts := func(s string) time.Time {
				v, err := time.Parse(time.RFC3339, s)
				require.NoError(t, err)
				return v
			}
			bucket := func(jobs, credits int) *gen.UsageBucket {
				return &gen.UsageBucket{Jobs: jobs, Credits: credits, Cents: credits * 10}
			}
			type want struct {
				credits, paid, jobs int
				byEffort            gen.UsageByEffort
				start, end          time.Time
				projected           *int
			}
			projected := 23 // 11 credits in 362 of the period's 744 hours
			tests := []struct {
				query string
				want  want
			}{
				{"", want{11, 90, 5, gen.UsageByEffort{Medium: bucket(1, 1), High: bucket(2, 10), Build: bucket(1, 0)}, ts("2025-02-28T10:00:00Z"), ts("2025-03-31T10:00:00Z"), &projected}},
				{"period=current", want{11, 90, 5, gen.UsageByEffort{Medium: bucket(1, 1), High: bucket(2, 10), Build: bucket(1, 0)}, ts("2025-02-28T10:00:00Z"), ts("2025-03-31T10:00:00Z"), &projected}},
				{"period=last_30d", want{12, 90, 6, gen.UsageByEffort{Medium: bucket(2, 2), High: bucket(2, 10), Build: bucket(1, 0)}, ts("2025-02-13T12:00:00Z"), billingNow, nil}},
				{"period=custom&from=2025-02-27T09:00:00Z&to=2025-03-12T00:00:00Z", want{6, 30, 3, gen.UsageByEffort{Medium: bucket(1, 1), High: bucket(1, 5), Build: bucket(1, 0)}, ts("2025-02-27T09:00:00Z"), ts("2025-03-12T00:00:00Z"), nil}},
				{"period=custom&from=2025-03-12T00:00:00Z&to=2025-03-12T00:30:00Z", want{1, 10, 1, gen.UsageByEffort{Medium: bucket(1, 1)}, ts("2025-03-12T00:00:00Z"), ts("2025-03-12T00:30:00Z"), nil}},
				{"period=custom&from=2025-03-12T00:30:00Z&to=2025-03-13T00:00:00Z", want{0, 0, 1, gen.UsageByEffort{}, ts("2025-03-12T00:30:00Z"), ts("2025-03-13T00:00:00Z"), nil}}, // only the low run
				{"period=custom&from=2024-01-01T00:00:00Z&to=2024-12-31T00:00:00Z", want{0, 0, 0, gen.UsageByEffort{}, ts("2024-01-01T00:00:00Z"), ts("2024-12-31T00:00:00Z"), nil}},
			}
			for _, tt := range tests {
				r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/billing/usage?" + tt.query, Token: acct.Key})
				require.Equal(t, http.StatusOK, r.Status, tt.query)
				var u gen.BillingUsageResponse
				r.JSON(t, &u)
				require.Equal(t, tt.want.credits, u.TotalCreditsUsed, tt.query)
				require.Equal(t, tt.want.credits*10, u.TotalCentsSpent, tt.query)
				require.Equal(t, tt.want.paid, u.CentsSpentPaid, tt.query)
				require.Equal(t, tt.want.jobs, u.JobCount, tt.query)
				require.Equal(t, tt.want.byEffort, u.ByEffort, tt.query)
				require.NotContains(t, string(r.Body), `"low"`, tt.query)
				require.Equal(t, tt.want.start, u.PeriodStart.MustGet().UTC(), tt.query)
				require.Equal(t, tt.want.end, u.PeriodEnd.MustGet().UTC(), tt.query)
				if tt.want.projected == nil {
					require.True(t, u.ProjectedPeriodEndCredits.IsNull(), tt.query)
				} else {
					require.Equal(t, *tt.want.projected, u.ProjectedPeriodEndCredits.MustGet(), tt.query)
				}
			}

			for _, tt := range []struct{ query, field string }{
				{"period=custom&to=2025-03-01T00:00:00Z", "query.from"},
				{"period=custom&from=2025-03-01T00:00:00Z", "query.to"},
				{"period=custom&from=2025-03-02T00:00:00Z&to=2025-03-01T00:00:00Z", "query.to"},
				{"period=custom&from=2025-03-01T00:00:00Z&to=2025-03-01T00:00:00Z", "query.to"},
				{"period=custom&from=2024-01-01T00:00:00Z&to=2025-01-02T00:00:00Z", "query.to"},
				{"period=custom&from=yesterday&to=2025-03-01T00:00:00Z", "query.from"},
				{"period=custom&from=2025-03-01T00:00:00Z&to=2025-13-01T00:00:00Z", "query.to"},
				{"period=last_30d&from=2025-03-01T00:00:00Z", "query.from"},
				{"to=2025-03-01T00:00:00Z", "query.to"},
				{"period=fortnight", "query.period"},
			} {
				r := env.Do(t, servertest.Req{Method: "GET", Path: "/api/v2/billing/usage?" + tt.query, Token: acct.Key})
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, tt.query)
				p := r.Problem(t)
				require.Equal(t, "validation_error", p.Code, tt.query)
				require.NotNil(t, p.Errors, tt.query)
				require.Equal(t, tt.field, (*p.Errors)[0].Field, tt.query)
			}
		})
	}
}
