package server

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/store"
)

// GetQuota reports the caller's tier, balance and prices.
func (s *Server) GetQuota(ctx context.Context, _ gen.GetQuotaRequestObject) (gen.GetQuotaResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	q, err := s.billing.Quota(ctx, p.AccountID)
	if err != nil {
		return nil, err
	}
	return gen.GetQuota200JSONResponse{
		Tier: gen.Tier(q.Tier), MaxEffort: gen.Effort(q.MaxEffort),
		BalanceCents: int(q.BalanceCents), CreditsRemaining: int(q.CreditsRemaining), CentsPerCredit: int(q.CentsPerCredit),
		CreditsRequiredForEffort: gen.EffortCredits{
			Low: int(q.CreditsPerEffort[billing.EffortLow]), Medium: int(q.CreditsPerEffort[billing.EffortMedium]),
			High: int(q.CreditsPerEffort[billing.EffortHigh]), Build: int(q.CreditsPerEffort[billing.EffortBuild]),
		},
	}, nil
}

// CheckQuota answers whether a create at the effort would be allowed now; it consumes nothing.
func (s *Server) CheckQuota(ctx context.Context, req gen.CheckQuotaRequestObject) (gen.CheckQuotaResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	c, err := s.billing.Check(ctx, p.AccountID, string(req.Params.Effort))
	if errors.Is(err, billing.ErrUnknownEffort) {
		return nil, errValidation("unknown effort", gen.FieldError{Field: "query.effort", Message: "want low, medium, high or build"})
	}
	if err != nil {
		return nil, err
	}
	reason := nullable.NewNullNullable[string]()
	if !c.Allowed {
		reason = nullable.NewNullableWithValue("insufficient_credits")
	}
	return gen.CheckQuota200JSONResponse{
		Allowed: c.Allowed, RequestedEffort: gen.Effort(c.RequestedEffort), Effort: gen.Effort(c.Effort),
		CreditsRequired: int(c.CreditsRequired), CreditsRemaining: int(c.CreditsRemaining), Reason: reason,
	}, nil
}

// ListBillingTransactions pages the caller's ledger, newest first.
func (s *Server) ListBillingTransactions(ctx context.Context, req gen.ListBillingTransactionsRequestObject) (gen.ListBillingTransactionsResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	var typ string
	if req.Params.Type != nil {
		typ = string(*req.Params.Type)
	}
	page, err := s.billing.Transactions(ctx, p.AccountID, typ, pr)
	if err != nil {
		return nil, err
	}
	next, more := pageEnvelope(page)
	return gen.ListBillingTransactions200JSONResponse{Items: mapItems(page.Items, transactionOf), NextCursor: next, HasMore: more}, nil
}

// GetBillingUsage sums the caller's metered runs over a period.
func (s *Server) GetBillingUsage(ctx context.Context, req gen.GetBillingUsageRequestObject) (gen.GetBillingUsageResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	q := billing.UsageQuery{From: req.Params.From, To: req.Params.To}
	if req.Params.Period != nil {
		q.Period = string(*req.Params.Period)
	}
	u, err := s.billing.Usage(ctx, p.AccountID, q)
	var pe *billing.PeriodError
	if errors.As(err, &pe) {
		return nil, errValidation("query."+pe.Field+": "+pe.Reason, gen.FieldError{Field: "query." + pe.Field, Message: pe.Reason})
	}
	if err != nil {
		return nil, err
	}
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
	return gen.GetBillingUsage200JSONResponse{
		TotalCreditsUsed: int(u.CreditsUsed), TotalCentsSpent: int(u.CentsSpent), CentsSpentPaid: int(u.CentsSpentPaid),
		JobCount: int(u.Runs),
		// low is free: the document leaves it out of the breakdown (its runs still count in job_count).
		ByEffort:                  gen.UsageByEffort{Medium: bucket(billing.EffortMedium), High: bucket(billing.EffortHigh), Build: bucket(billing.EffortBuild)},
		PeriodStart:               nullable.NewNullableWithValue(u.Start),
		PeriodEnd:                 nullable.NewNullableWithValue(u.End),
		ProjectedPeriodEndCredits: projected,
	}, nil
}

func transactionOf(e store.LedgerEntry) gen.BillingTransactionItem {
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
