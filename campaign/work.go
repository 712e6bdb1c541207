package campaign

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/riverqueue/river"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/schema"
	"github.com/researchd/researchd/store"
)

// chunkBudget bounds how long one chunk keeps answering; records it has not reached go back to
// pending for the next chunk, so a chunk never outlives the queue's rescue delay.
const chunkBudget = 10 * time.Minute

// cancelCheck is how many records a chunk answers between looks at the campaign's status.
const cancelCheck = 25

// chunkArgs asks a worker to answer the records a chunk holds.
type chunkArgs struct {
	CampaignID string `json:"campaign_id"`
	StageKey   string `json:"stage_key"`
	Chunk      string `json:"chunk"`
}

func (chunkArgs) Kind() string { return "campaign_chunk" }

type chunkWorker struct {
	river.WorkerDefaults[chunkArgs]
	svc *Service
}

func (w *chunkWorker) Timeout(*river.Job[chunkArgs]) time.Duration {
	return chunkBudget + 20*time.Minute
}

func (w *chunkWorker) Work(ctx context.Context, job *river.Job[chunkArgs]) error {
	return w.svc.work(ctx, job.Args)
}

// outcome is what became of one record.
type outcome struct {
	status         string
	output, report *string
	code           *string
	produced       []map[string]any // the records a single-worker stage found or made
}

// work answers a chunk's records in-process and settles them.
func (s *Service) work(ctx context.Context, a chunkArgs) error {
	recs, err := s.st.ChunkRecords(ctx, statuses, a.Chunk)
	if err != nil || len(recs) == 0 {
		return err // settled already (a retried queue entry)
	}
	c, err := s.st.CampaignByID(ctx, a.CampaignID)
	if err != nil {
		return err
	}
	v, err := decodeView(c, nil)
	if err != nil {
		return err
	}
	ps, ok := v.Plan.Stage(a.StageKey)
	if !ok {
		return fmt.Errorf("campaign %s has no stage %s", c.ID, a.StageKey)
	}
	effort := v.Workforce.effortOf(ps.Key)
	var outs []outcome
	if c.Status != Cancelled {
		outs = s.answerAll(ctx, c, ps, effort, recs)
	}
	return s.settle(ctx, c.ID, ps, effort, a.Chunk, recs, outs)
}

// answerAll answers records one after the other until they are done, the campaign is cancelled,
// or the chunk's time is up; records not reached are left out of the result.
func (s *Service) answerAll(ctx context.Context, c store.Campaign, ps Stage, effort string, recs []store.CampaignRecord) []outcome {
	sess, sch, release, err := s.sessions.acquire(ctx, sessionKey{c.ID, ps.Key}, func(ctx context.Context) (engine.AnswerSession, *jsonschema.Schema, error) {
		return s.open(ctx, c, ps, effort)
	})
	if err != nil {
		s.log.WarnContext(ctx, "campaign worker could not start", "campaign_id", c.ID, "stage", ps.Key, "error", err)
		code := CodeDispatchError
		var te *jobs.ExpertTierError
		if errors.As(err, &te) {
			code = CodeForbidden // the tier changed after approval: what a create would answer now
		}
		outs := make([]outcome, len(recs))
		for i := range outs {
			outs[i] = outcome{status: RecordFailed, code: ptr(code)}
		}
		return outs
	}
	defer release()
	deadline := time.Now().Add(chunkBudget)
	outs := make([]outcome, 0, len(recs))
	for i, r := range recs {
		if i > 0 && (time.Now().After(deadline) || ctx.Err() != nil || (i%cancelCheck == 0 && s.cancelled(ctx, c.ID))) {
			break
		}
		outs = append(outs, s.answer(ctx, sess, sch, c, ps, r))
	}
	return outs
}

func (s *Service) cancelled(ctx context.Context, id string) bool {
	c, err := s.st.CampaignByID(ctx, id)
	return err == nil && c.Status == Cancelled
}

// open starts an answer session for a stage: its agent's instructions and context files, its
// output schema (compiled once for the checks).
func (s *Service) open(ctx context.Context, c store.Campaign, ps Stage, effort string) (engine.AnswerSession, *jsonschema.Schema, error) {
	// With a schema a record keeps only its researched fields: no report is written.
	cfg := engine.AnswerConfig{Effort: effort, JSONSchema: ps.OutputSchema, NoReport: ps.OutputSchema != nil}
	if ps.Agent != nil {
		ex, err := s.expert(ctx, c.AccountID, ps.Agent.ID)
		if err != nil {
			return nil, nil, fmt.Errorf("agent %s: %w", ps.Agent.ID, err)
		}
		cfg.Expert = &engine.ExpertInfo{ID: ex.ID, Name: ex.Name, Version: ex.Version}
		cfg.SystemPrompt, cfg.Skills = ex.SystemPrompt, ex.Skills
		if cfg.ContextFiles, err = readContext(ctx, ex.ContextFiles); err != nil {
			return nil, nil, err
		}
	}
	var sch *jsonschema.Schema
	if ps.OutputSchema != nil {
		var err error
		if sch, err = schema.CompileObject(ps.OutputSchema); err != nil {
			return nil, nil, err
		}
	}
	sess, err := s.answerer.OpenAnswers(ctx, cfg)
	return sess, sch, err
}

func readContext(ctx context.Context, files []jobs.InputFile) ([]engine.SourceFile, error) {
	out := make([]engine.SourceFile, 0, len(files))
	for _, f := range files {
		rc, err := f.Open(ctx)
		if err != nil {
			return nil, fmt.Errorf("context file %s: %w", f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("context file %s: %w", f.Name, err)
		}
		out = append(out, engine.SourceFile{Name: f.Name, Data: b})
	}
	return out, nil
}

// answer runs one worker: it builds the assignment (recordAssignment), asks the engine, checks the output
// against the stage's schema and keeps the researched fields (or the report, without a schema).
func (s *Service) answer(ctx context.Context, sess engine.AnswerSession, sch *jsonschema.Schema, c store.Campaign, ps Stage, r store.CampaignRecord) outcome {
	var a engine.Assignment
	switch ps.Fanout {
	case FanoutRoot:
		a.Question = Assignment(ps, nil)
	case FanoutAggregate:
		q, doc, err := s.aggregateInput(ctx, c, ps)
		if err != nil {
			s.log.WarnContext(ctx, "campaign aggregate input", "campaign_id", c.ID, "stage", ps.Key, "error", err)
			return outcome{status: RecordFailed, code: ptr(CodeDispatchError)}
		}
		a.Question, a.Extra = q, []engine.SourceFile{{Name: "records.md", Data: doc}}
	default:
		var given map[string]any
		if err := json.Unmarshal([]byte(r.Given), &given); err != nil {
			return outcome{status: RecordFailed, code: ptr(CodeDispatchError)}
		}
		a = recordAssignment(ps, given)
	}
	actx, cancel := context.WithTimeout(ctx, s.cfg.AnswerTimeout)
	defer cancel()
	res, err := sess.Answer(actx, a)
	if err != nil {
		return outcome{status: RecordFailed, code: ptr(errorCode(err, actx))}
	}
	var out outcome
	if ps.OutputSchema != nil {
		b, err := json.Marshal(res.StructuredOutput)
		if err != nil || res.StructuredOutput == nil || !valid(sch, b) {
			return outcome{status: RecordFailed, code: ptr(CodeOutputInvalid)}
		}
		out = outcome{status: RecordDone, output: ptr(string(b))}
	} else {
		out = outcome{status: RecordDone, report: ptr(res.Report)}
	}
	if ps.Single() {
		out.produced = produced(ps, res)
	}
	return out
}

// valid checks an output (JSON) against the stage's compiled schema.
func valid(sch *jsonschema.Schema, b []byte) bool {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	return err == nil && sch != nil && sch.Validate(v) == nil
}

// produced are the records a single-worker stage yields: the items of its records_field, else its
// one output.
func produced(ps Stage, res engine.Result) []map[string]any {
	if ps.RecordsField == nil {
		if res.StructuredOutput != nil {
			return []map[string]any{res.StructuredOutput}
		}
		return []map[string]any{{}}
	}
	items, _ := res.StructuredOutput[*ps.RecordsField].([]any)
	out := make([]map[string]any, 0, len(items))
	for _, it := range items {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		} else {
			out = append(out, map[string]any{"value": it})
		}
	}
	return out
}

func errorCode(err error, ctx context.Context) string {
	var ee *engine.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return CodeTimedOut
	case errors.As(err, &ee) && (ee.Code == engine.CodeStructuredOutputInvalid || ee.Code == engine.CodeInvalidJSONSchema):
		return CodeOutputInvalid
	case errors.As(err, &ee) && ee.Code == engine.CodeTimeout:
		return CodeTimedOut
	}
	return CodeEngineError
}

// settle writes a chunk's outcomes in one transaction with the campaign locked: the records (those
// not reached go back to pending), what a single worker produced, the counters, the charge for the
// workers that succeeded (the rest of the hold is released), then the dispatcher moves on.
func (s *Service) settle(ctx context.Context, id string, ps Stage, effort, chunk string, recs []store.CampaignRecord, outs []outcome) error {
	now := s.now()
	done, failed := 0, 0
	rows := make([]store.CampaignRecord, len(recs))
	for i, r := range recs {
		r.Chunk, r.UpdatedAt = nil, now
		if i < len(outs) {
			r.Status, r.Output, r.Report, r.ErrorCode = outs[i].status, outs[i].output, outs[i].report, outs[i].code
			if r.Status == RecordDone {
				done++
			} else {
				failed++
			}
		} else {
			r.Status = RecordPending
		}
		rows[i] = r
	}
	cost := s.billing.Config().Credits(effort)
	held, spent := cost*int64(len(recs)), cost*int64(done)
	return s.st.InTx(ctx, func(tx *store.Store) error {
		c, err := tx.LockCampaign(ctx, id)
		if err != nil {
			return err
		}
		if err := tx.SettleCampaignRecords(ctx, chunk, rows); err != nil {
			return err
		}
		settled := store.ChunkSettlement{Held: held, Spent: spent, Done: done, Failed: failed}
		if ps.Single() && done == 1 {
			n, err := s.insertProduced(ctx, tx, c, ps, outs[0], now)
			if err != nil {
				return err
			}
			settled.Produced = &n
		}
		if err := tx.SettleCampaignChunk(ctx, id, ps.Key, !ps.Single(), settled); err != nil {
			return err
		}
		units := billing.Units{AccountID: c.AccountID, RunID: chunkRun(chunk), JobID: c.ID, Effort: effort, Count: int64(len(recs)),
			Description: fmt.Sprintf("Campaign %q, stage %s: %d records (%s)", truncate(c.Name, 100), ps.Key, done, effort)}
		if err := s.billing.SettleUnits(ctx, tx, units, int64(done)); err != nil {
			return err
		}
		// The row stays locked, so the locked copy with the two counters moved as above is what a
		// second read would return (but for updated_at, which advancing does not read).
		c.CreditsReserved -= held
		c.CreditsSpent += spent
		return s.advanceTx(ctx, tx, c)
	})
}

// insertProduced writes what a single worker produced as its stage's records (identified by the
// stage's key field or by position, repeats kept once, at most max_records_per_stage).
func (s *Service) insertProduced(ctx context.Context, tx *store.Store, c store.Campaign, ps Stage, out outcome, now time.Time) (int, error) {
	seen := map[string]bool{}
	var rows []store.CampaignRecord
	for _, rec := range out.produced {
		if len(rows) >= s.cfg.Limits.MaxRecordsPerStage {
			break
		}
		key, dup, missing := entityKey(&ps, rec, len(rows)+1, seen)
		if dup || missing != "" {
			continue
		}
		b, err := json.Marshal(rec)
		if err != nil {
			return 0, fmt.Errorf("encode produced record: %w", err)
		}
		row := store.CampaignRecord{CampaignID: c.ID, StageKey: ps.Key, Seq: len(rows) + 1, EntityKey: key, Status: RecordDone,
			Given: "{}", UpdatedAt: now}
		if ps.OutputSchema != nil {
			row.Output = ptr(string(b))
		} else {
			row.Report = out.report
		}
		rows = append(rows, row)
	}
	return len(rows), tx.InsertCampaignRecords(ctx, rows)
}

// effortOf is the effort a stage's workers run at.
func (w Workforce) effortOf(key string) string {
	for _, m := range w.Members {
		if m.StageKey == key {
			return m.Effort
		}
	}
	return billing.EffortMedium
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
