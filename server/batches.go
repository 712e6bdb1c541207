package server

import (
	"context"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/researchd/researchd/batch"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/loop"
)

// Batches: thin handlers over batch.Service (state machine, dispatcher); map_batches.go maps its
// views to the API's models.

// CreateBatch accepts a batch (202) or replays an Idempotency-Key.
func (s *Server) CreateBatch(ctx context.Context, req gen.CreateBatchRequestObject) (gen.CreateBatchResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	b := req.Body
	hash, err := requestHash(b)
	if err != nil {
		return nil, err
	}
	in := batch.CreateInput{
		AccountID: p.AccountID, Tier: p.Tier, Name: b.BatchName, Questions: b.Questions,
		ExpertID: valueOf(b.ExpertId), Approach: valueOf(b.Approach), ResponseLanguage: b.ResponseLanguage,
		MaxConcurrent: valueOf(b.MaxConcurrent), RequestHash: hash,
	}
	if e := valueOf(b.Effort); e != nil {
		in.Effort = string(*e)
	}
	if m := valueOf(b.MaxCredits); m != nil {
		in.MaxCredits = ptr(int64(*m))
	}
	if sch := valueOf(b.CustomJsonSchema); sch != nil {
		in.CustomJSONSchema = *sch
	}
	if inputs := valueOf(b.Inputs); inputs != nil {
		in.Inputs = make([]map[string]any, len(*inputs))
		for i, v := range *inputs {
			if m := valueOf(v); m != nil {
				in.Inputs[i] = *m
			}
		}
	}
	if rows := valueOf(b.Rows); rows != nil {
		in.Rows = *rows
	}
	if req.Params.IdempotencyKey != nil {
		in.IdempotencyKey = *req.Params.IdempotencyKey
	}
	c, err := s.batches.Create(ctx, in)
	if err != nil {
		return nil, err
	}
	return gen.CreateBatch202JSONResponse(batchDetail(c.Batch, &c.Rows)), nil
}

// ListBatches pages the caller's batches, newest first.
func (s *Server) ListBatches(ctx context.Context, req gen.ListBatchesRequestObject) (gen.ListBatchesResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	pr, err := pageRequest(req.Params.Limit, req.Params.Cursor)
	if err != nil {
		return nil, err
	}
	var status *string
	if req.Params.Status != nil {
		status = ptr(string(*req.Params.Status))
	}
	page, err := s.batches.List(ctx, p.AccountID, req.Params.Query, status, pr)
	if err != nil {
		return nil, err
	}
	next, more := pageEnvelope(page)
	return gen.ListBatches200JSONResponse{Items: mapItems(page.Items, batchSummary), NextCursor: next, HasMore: more}, nil
}

// GetBatch reads a batch, with its rows unless include_rows=false.
func (s *Server) GetBatch(ctx context.Context, req gen.GetBatchRequestObject) (gen.GetBatchResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	b, err := s.batches.Get(ctx, p.AccountID, req.BatchId.String())
	if err != nil {
		return nil, err
	}
	var rows *[]batch.Row
	if req.Params.IncludeRows == nil || *req.Params.IncludeRows {
		rs, err := s.batches.Rows(ctx, b.ID, nil)
		if err != nil {
			return nil, err
		}
		rows = &rs
	}
	return gen.GetBatch200JSONResponse(batchDetail(b, rows)), nil
}

// CancelBatch cancels a batch at once; a terminal batch is returned unchanged.
func (s *Server) CancelBatch(ctx context.Context, req gen.CancelBatchRequestObject) (gen.CancelBatchResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	b, err := s.batches.Cancel(ctx, p.AccountID, req.BatchId.String())
	if err != nil {
		return nil, err
	}
	rows, err := s.batches.Rows(ctx, b.ID, nil)
	if err != nil {
		return nil, err
	}
	return gen.CancelBatch200JSONResponse(batchDetail(b, &rows)), nil
}

// GetBatchResults lists per-row outcomes as each row finishes.
func (s *Server) GetBatchResults(ctx context.Context, req gen.GetBatchResultsRequestObject) (gen.GetBatchResultsResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	b, err := s.batches.Get(ctx, p.AccountID, req.BatchId.String())
	if err != nil {
		return nil, err
	}
	var status *string
	if req.Params.RowStatus != nil {
		status = ptr(string(*req.Params.RowStatus))
	}
	results, err := s.batches.Results(ctx, b.ID, status)
	if err != nil {
		return nil, err
	}
	var l *loop.Summary
	if b.ScheduleID != nil {
		sch, err := s.loops.Summary(ctx, *b.ScheduleID)
		if err != nil {
			return nil, err
		}
		l = &sch
	}
	return gen.GetBatchResults200JSONResponse(batchResultsOf(b, results, l, s.linkBase(ctx))), nil
}

// runBatchDetail renders a loop run's batch with its rows (run-now's 202).
func (s *Server) runBatchDetail(ctx context.Context, accountID, batchID string) (gen.BatchDetail, error) {
	b, err := s.batches.Get(ctx, accountID, batchID)
	if err != nil {
		return gen.BatchDetail{}, err
	}
	rows, err := s.batches.Rows(ctx, b.ID, nil)
	if err != nil {
		return gen.BatchDetail{}, err
	}
	return batchDetail(b, &rows), nil
}

// RetryFailedBatchRows resets every failed row; zero is a successful no-op.
func (s *Server) RetryFailedBatchRows(ctx context.Context, req gen.RetryFailedBatchRowsRequestObject) (gen.RetryFailedBatchRowsResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	n, err := s.batches.RetryFailed(ctx, p.AccountID, req.BatchId.String())
	if err != nil {
		return nil, err
	}
	return gen.RetryFailedBatchRows200JSONResponse{BatchId: req.BatchId, RetriedRows: int(n)}, nil
}

// RetryBatchRow resets one failed row.
func (s *Server) RetryBatchRow(ctx context.Context, req gen.RetryBatchRowRequestObject) (gen.RetryBatchRowResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.batches.RetryRow(ctx, p.AccountID, req.BatchId.String(), req.RowNumber)
	if err != nil {
		return nil, err
	}
	return gen.RetryBatchRow200JSONResponse(batchRow(r)), nil
}

// EstimateBatchCredits prices a batch with the creation defaults and tier clamp.
func (s *Server) EstimateBatchCredits(ctx context.Context, req gen.EstimateBatchCreditsRequestObject) (gen.EstimateBatchCreditsResponseObject, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	effort := ""
	if req.Params.Effort != nil {
		effort = string(*req.Params.Effort)
	}
	e, err := s.batches.Estimate(ctx, p.AccountID, p.Tier, req.Params.Rows, effort, req.Params.ExpertId)
	if err != nil {
		return nil, err
	}
	return gen.EstimateBatchCredits200JSONResponse(estimateOf(e)), nil
}

type originKey struct{}

// rememberOrigin keeps the request's scheme and host for absolute links (report_link) when no
// public URL is configured.
func (s *Server) rememberOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.publicURL == "" {
			req := c.Request()
			c.SetRequest(req.WithContext(context.WithValue(req.Context(), originKey{}, c.Scheme()+"://"+req.Host)))
		}
		return next(c)
	}
}

// linkBase is the base of absolute links: RESEARCH_PUBLIC_URL, else the request's own origin.
func (s *Server) linkBase(ctx context.Context) string {
	if s.publicURL != "" {
		return strings.TrimRight(s.publicURL, "/")
	}
	o, _ := ctx.Value(originKey{}).(string)
	return o
}
