package server

import (
	"encoding/json"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/batch"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/loop"
)

// Batches between the domain (batch) and the API: summaries, details with rows, results and
// estimates.

func nullableUUID(id *string) nullable.Nullable[uuid.UUID] {
	if id == nil {
		return nullable.NewNullNullable[uuid.UUID]()
	}
	return nullable.NewNullableWithValue(uuid.MustParse(*id))
}

func batchCounters(b batch.Batch) gen.BatchCounters {
	return gen.BatchCounters{
		TotalRows: b.TotalRows, ProcessedRows: b.SucceededRows + b.FailedRows, SucceededRows: b.SucceededRows,
		FailedRows: b.FailedRows, PendingRows: b.PendingRows, RunningRows: b.RunningRows,
	}
}

func pausedReason(b batch.Batch) nullable.Nullable[gen.BatchPausedReason] {
	if b.PausedReason == nil {
		return nil // omitted while not paused
	}
	return nullable.NewNullableWithValue(gen.BatchPausedReason(*b.PausedReason))
}

func batchSummary(b batch.Batch) gen.BatchSummary {
	return gen.BatchSummary{
		BatchId: uuid.MustParse(b.ID), BatchName: b.Name, Status: gen.BatchStatus(b.Status), PausedReason: pausedReason(b),
		Effort: gen.Effort(b.Effort), RequestedEffort: gen.Effort(b.RequestedEffort), ExpertId: nullableOf(b.ExpertID),
		Counters: batchCounters(b), CreditsPerRow: int(b.CreditsPerRow), CreditsSpent: int(b.CreditsSpent), CreatedAt: b.CreatedAt,
		ProcessingStartedAt: nullableOf(b.ProcessingStartedAt), ProcessingCompletedAt: nullableOf(b.ProcessingCompletedAt),
		ScheduleId: nullableUUID(b.ScheduleID), RunNumber: nullableOf(b.RunNumber),
	}
}

func batchDetail(b batch.Batch, rows *[]batch.Row) gen.BatchDetail {
	d := gen.BatchDetail{
		BatchId: uuid.MustParse(b.ID), BatchName: b.Name, Status: gen.BatchStatus(b.Status), PausedReason: pausedReason(b),
		Effort: gen.Effort(b.Effort), RequestedEffort: gen.Effort(b.RequestedEffort), ExpertId: nullableOf(b.ExpertID),
		Approach: nullableOf(b.Approach), ResponseLanguage: nullableOf(b.ResponseLanguage), MaxConcurrent: b.MaxConcurrent,
		MaxCredits: nullable.NewNullNullable[int](), CustomJsonSchema: jsonObject(b.CustomJSONSchema),
		Counters: batchCounters(b), CreditsPerRow: int(b.CreditsPerRow), CreditsSpent: int(b.CreditsSpent), CreatedAt: b.CreatedAt,
		ProcessingStartedAt: nullableOf(b.ProcessingStartedAt), ProcessingCompletedAt: nullableOf(b.ProcessingCompletedAt),
		ScheduleId: nullableUUID(b.ScheduleID), RunNumber: nullableOf(b.RunNumber),
	}
	if b.MaxCredits != nil {
		d.MaxCredits = nullable.NewNullableWithValue(int(*b.MaxCredits))
	}
	if rows != nil {
		d.Rows = ptr(mapItems(*rows, batchRow))
	}
	return d
}

func batchRow(r batch.Row) gen.BatchRow {
	return gen.BatchRow{
		RowNumber: r.RowNumber, Question: r.Question, Status: gen.BatchRowStatus(r.Status), JobId: nullableUUID(r.JobID),
		ErrorCode: nullableOf(r.ErrorCode), Attempts: r.Attempts, RowData: jsonObject(r.RowData), Input: jsonObject(r.Input),
	}
}

// batchResultsOf is a batch's per-row outcomes; l is the loop that ran it (nil: none), base
// prefixes the report links.
func batchResultsOf(b batch.Batch, results []batch.Result, l *loop.Summary, base string) gen.BatchResultsResponse {
	out := gen.BatchResultsResponse{
		BatchId: uuid.MustParse(b.ID), BatchName: b.Name, AgentKey: "default", TotalRows: b.TotalRows,
		ProcessedRows: b.SucceededRows + b.FailedRows, ProcessingStatus: gen.BatchStatus(b.Status),
		Results: make([]gen.BatchRowResult, 0, len(results)), CreatedAt: &b.CreatedAt,
		CreditsPerRow: ptr(int(b.CreditsPerRow)), CreditsSpent: ptr(int(b.CreditsSpent)),
		ProcessingStartedAt: nullableOf(b.ProcessingStartedAt), ProcessingCompletedAt: nullableOf(b.ProcessingCompletedAt),
		RunNumber: nullableOf(b.RunNumber), ScheduleId: nullableUUID(b.ScheduleID),
	}
	if b.ExpertID != nil {
		out.AgentKey = *b.ExpertID
	}
	if l != nil {
		out.Schedule = nullable.NewNullableWithValue(loopSummary(*l))
	}
	if b.PausedReason != nil {
		out.PausedReason = nullable.NewNullableWithValue(gen.BatchPausedReason(*b.PausedReason))
	}
	for _, r := range results {
		res := gen.BatchRowResult{
			RowNumber: r.Row.RowNumber, Question: r.Row.Question, Status: gen.BatchRowStatus(r.Row.Status),
			ErrorCode: nullableOf(r.Row.ErrorCode), JobId: nullableUUID(r.Row.JobID),
			ReportLink: nullable.NewNullNullable[string](), StructuredOutput: nullable.NewNullNullable[map[string]any](),
			Headline: nullableOf(r.Headline), Excerpt: nullableOf(r.Excerpt),
		}
		if r.Row.JobID != nil {
			res.ReportLink = nullable.NewNullableWithValue(base + "/api/v2/research/" + *r.Row.JobID)
		}
		if r.StructuredOutput != nil {
			var m map[string]any
			if err := json.Unmarshal([]byte(*r.StructuredOutput), &m); err == nil && m != nil {
				res.StructuredOutput = nullable.NewNullableWithValue(m)
			}
		}
		out.Results = append(out.Results, res)
	}
	return out
}

func estimateOf(e batch.Estimate) gen.BatchCreditEstimateResponse {
	return gen.BatchCreditEstimateResponse{
		Rows: e.Rows, Effort: gen.Effort(e.Effort), RequestedEffort: gen.Effort(e.RequestedEffort),
		CreditsPerRow: int(e.CreditsPerRow), TotalCredits: int(e.TotalCredits), Downgraded: e.Downgraded,
	}
}

// jsonObject decodes a stored JSON object column; NULL (or anything not an object) is JSON null.
func jsonObject(s *string) nullable.Nullable[map[string]any] {
	if s == nil {
		return nullable.NewNullNullable[map[string]any]()
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(*s), &m); err != nil || m == nil {
		return nullable.NewNullNullable[map[string]any]()
	}
	return nullable.NewNullableWithValue(m)
}
