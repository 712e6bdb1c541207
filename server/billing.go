package server

import (
	"context"
	"errors"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/gen"
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
	return gen.GetQuota200JSONResponse(quotaOf(q)), nil
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
	return gen.CheckQuota200JSONResponse(quotaCheckOf(c)), nil
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
	return gen.GetBillingUsage200JSONResponse(usageOf(u)), nil
}
