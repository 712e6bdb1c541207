package server

import (
	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/gen"
)

// Billing between the domain (billing) and the API: quota, quota checks, usage and the ledger.

func quotaOf(q billing.Quota) gen.QuotaResponse {
	return gen.QuotaResponse{
		Tier: gen.Tier(q.Tier), MaxEffort: gen.Effort(q.MaxEffort),
		BalanceCents: int(q.BalanceCents), CreditsRemaining: int(q.CreditsRemaining), CentsPerCredit: int(q.CentsPerCredit),
		CreditsRequiredForEffort: gen.EffortCredits{
			Low: int(q.CreditsPerEffort[billing.EffortLow]), Medium: int(q.CreditsPerEffort[billing.EffortMedium]),
			High: int(q.CreditsPerEffort[billing.EffortHigh]), Build: int(q.CreditsPerEffort[billing.EffortBuild]),
		},
	}
}

func quotaCheckOf(c billing.Check) gen.QuotaCheckResponse {
	reason := nullable.NewNullNullable[string]()
	if !c.Allowed {
		reason = nullable.NewNullableWithValue("insufficient_credits")
	}
	return gen.QuotaCheckResponse{
		Allowed: c.Allowed, RequestedEffort: gen.Effort(c.RequestedEffort), Effort: gen.Effort(c.Effort),
		CreditsRequired: int(c.CreditsRequired), CreditsRemaining: int(c.CreditsRemaining), Reason: reason,
	}
}

func usageOf(u billing.Usage) gen.BillingUsageResponse {
	bucket := func(effort string) *gen.UsageBucket {
		b, ok := u.ByEffort[effort]
		if !ok {
			return nil
		}
		return &gen.UsageBucket{Jobs: int(b.Runs), Credits: int(b.Credits), Cents: int(b.Cents)}
	}
	projected := nullable.NewNullNullable[int]()
	if u.Projected != nil {
		projected = nullable.NewNullableWithValue(int(*u.Projected))
	}
	return gen.BillingUsageResponse{
		TotalCreditsUsed: int(u.CreditsUsed), TotalCentsSpent: int(u.CentsSpent), CentsSpentPaid: int(u.CentsSpentPaid),
		JobCount: int(u.Runs),
		// low is free: the document leaves it out of the breakdown (its runs still count in job_count).
		ByEffort:                  gen.UsageByEffort{Medium: bucket(billing.EffortMedium), High: bucket(billing.EffortHigh), Build: bucket(billing.EffortBuild)},
		PeriodStart:               nullable.NewNullableWithValue(u.Start),
		PeriodEnd:                 nullable.NewNullableWithValue(u.End),
		ProjectedPeriodEndCredits: projected,
	}
}

func transactionOf(e billing.Transaction) gen.BillingTransactionItem {
	item := gen.BillingTransactionItem{
		Id: uuid.MustParse(e.ID), CreatedAt: e.CreatedAt.UTC(), Type: gen.BillingTransactionType(e.Type),
		AmountCents: int(e.AmountCents), BalanceAfterCents: int(e.BalanceAfterCents),
		Description: nullableOf(e.Description), JobId: nullable.NewNullNullable[uuid.UUID](),
		ReceiptUrl: nullable.NewNullNullable[string](), StripePaymentIntentId: nullable.NewNullNullable[string](),
	}
	if e.DepthType != nil {
		item.DepthType = nullable.NewNullableWithValue(gen.Effort(*e.DepthType))
	}
	if e.JobID != nil {
		if id, err := uuid.Parse(*e.JobID); err == nil {
			item.JobId = nullable.NewNullableWithValue(id)
		}
	}
	return item
}
