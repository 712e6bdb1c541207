package server

import (
	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/loop"
)

// Loops between the domain (loop) and the API: summaries, details with recent runs, run diffs.

func loopSummary(l loop.Summary) gen.BatchScheduleSummary {
	cfg := gen.ScheduleConfig{Hour: ptr(l.Hour), Minute: ptr(l.Minute), DayOfMonth: l.DayOfMonth}
	if l.DayOfWeek != nil {
		var d gen.ScheduleConfig_DayOfWeek
		_ = d.FromScheduleConfigDayOfWeek0(*l.DayOfWeek) // marshalling an int cannot fail
		cfg.DayOfWeek = &d
	}
	out := gen.BatchScheduleSummary{
		ScheduleId: uuid.MustParse(l.ID), Name: l.Name, Frequency: gen.ScheduleFrequency(l.Frequency), ScheduleConfig: cfg,
		Timezone: l.Timezone, IsActive: l.IsActive, RunCount: l.RunCount, ConsecutiveFailures: l.ConsecutiveFailures,
		ExpertId: nullableOf(l.ExpertID), QuestionCount: l.QuestionCount, CreatedAt: l.CreatedAt,
		DeletedAt: nullableOf(l.DeletedAt), LastRunAt: nullableOf(l.LastRunAt), LastSkipReason: nullableOf(l.LastSkipReason),
		LastSkippedAt: nullableOf(l.LastSkippedAt), LatestBatchId: nullableUUID(l.LatestBatchID), NextRunAt: nullableOf(l.NextRunAt),
		Effort: nullable.NewNullNullable[gen.Effort](),
	}
	if l.Effort != nil {
		out.Effort = nullable.NewNullableWithValue(gen.Effort(*l.Effort))
	}
	return out
}

func loopDetail(d loop.Detail) gen.BatchScheduleDetail {
	c := d.Cfg
	cfg := gen.LoopConfig{
		Questions: c.Questions, Approach: nullableOf(c.Approach), ResponseLanguage: c.ResponseLanguage, MaxConcurrent: c.MaxConcurrent,
		MaxCredits: nullable.NewNullNullable[int](), CustomJsonSchema: nullable.NewNullNullable[map[string]any](),
		Inputs: nullable.NewNullNullable[[]nullable.Nullable[map[string]any]](), Rows: nullable.NewNullNullable[[]map[string]any](),
	}
	if c.MaxCredits != nil {
		cfg.MaxCredits = nullable.NewNullableWithValue(int(*c.MaxCredits))
	}
	if c.CustomJSONSchema != nil {
		cfg.CustomJsonSchema = nullable.NewNullableWithValue(c.CustomJSONSchema)
	}
	if c.Inputs != nil {
		in := make([]nullable.Nullable[map[string]any], len(c.Inputs))
		for i, m := range c.Inputs {
			in[i] = nullable.NewNullNullable[map[string]any]()
			if m != nil {
				in[i] = nullable.NewNullableWithValue(m)
			}
		}
		cfg.Inputs = nullable.NewNullableWithValue(in)
	}
	if c.Rows != nil {
		cfg.Rows = nullable.NewNullableWithValue(c.Rows)
	}
	runs := make([]gen.LoopRunSummary, 0, len(d.Runs))
	for _, r := range d.Runs {
		status := r.State.Status
		if status == "" {
			status = loop.StatusCancelled // the batch is gone; never shown as running
		}
		runs = append(runs, gen.LoopRunSummary{BatchId: uuid.MustParse(r.BatchID), RunNumber: r.RunNumber, Status: gen.BatchStatus(status),
			CreatedAt: r.CreatedAt, TotalRows: r.State.TotalRows, ProcessedRows: r.State.ProcessedRows})
	}
	return gen.BatchScheduleDetail{Schedule: loopSummary(d.Schedule), Config: cfg, Runs: runs}
}

func runDiffOf(d loop.RunDiff) gen.LoopRunDiff {
	out := gen.LoopRunDiff{
		ScheduleId: uuid.MustParse(d.ScheduleID), RunNumber: d.RunNumber, BatchId: uuid.MustParse(d.BatchID),
		PreviousRunNumber: nullableOf(d.PreviousRunNumber), PreviousBatchId: nullableUUID(d.PreviousBatchID),
		Questions: []gen.LoopQuestionDiff{},
	}
	for _, q := range d.Questions {
		gq := gen.LoopQuestionDiff{
			RowNumber: q.RowNumber, PreviousRowNumber: nullableOf(q.PreviousRowNumber), Question: q.Question,
			Status: gen.BatchRowStatus(q.Status), Change: gen.LoopQuestionDiffChange(q.Change), HeadlineChanged: q.HeadlineChanged,
			Headline: nullableOf(q.Headline), PreviousHeadline: nullableOf(q.PreviousHeadline), ChangedFields: []gen.LoopFieldChange{},
		}
		for _, f := range q.ChangedFields {
			fc := gen.LoopFieldChange{Path: f.Path, Change: gen.LoopFieldChangeChangeChanged}
			switch {
			case !f.OldSet:
				fc.Change = gen.LoopFieldChangeChangeAdded
			case !f.NewSet:
				fc.Change = gen.LoopFieldChangeChangeRemoved
			}
			if f.OldSet {
				fc.Old = nullable.NewNullableWithValue(f.Old)
			}
			if f.NewSet {
				fc.New = nullable.NewNullableWithValue(f.New)
			}
			gq.ChangedFields = append(gq.ChangedFields, fc)
		}
		switch q.Change {
		case loop.ChangeChanged:
			out.Summary.Changed++
		case loop.ChangeUnchanged:
			out.Summary.Unchanged++
		case loop.ChangeNew:
			out.Summary.New++
		default:
			out.Summary.NotComparable++
		}
		out.Questions = append(out.Questions, gq)
	}
	return out
}
