package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"time"

	"github.com/riverqueue/river"

	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/engine"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/workspace"
)

// runArgs is the queue entry of one run. The run id is chosen when the run is enqueued, so every
// attempt of the entry (after a crash, a shutdown, a rescue) reuses the same run and its charge.
type runArgs struct {
	JobID   string `json:"job_id"`
	RunID   string `json:"run_id"`
	RunKind string `json:"kind"` // initial|continuation
	Effort  string `json:"effort"`
}

func (runArgs) Kind() string { return "research_run" }

type runWorker struct {
	river.WorkerDefaults[runArgs]
	svc *Service
}

// Timeout is how long River lets an attempt hold its entry: the effort's budget plus the rescue
// margin (Config.RescueDelay). River's rescuer waits it out before presuming the process dead, so it
// must outlast the run; work enforces the budget itself, inside it, and fails the run with timed_out.
func (w *runWorker) Timeout(job *river.Job[runArgs]) time.Duration {
	return w.svc.cfg.RescueDelay(job.Args.Effort)
}

// errRunBudget is the cause given to a run's context when its effort's timeout is up.
var errRunBudget = errors.New("run budget spent")

// NextRetry retries an interrupted run soon: it resumes a job a caller is waiting for.
func (w *runWorker) NextRetry(job *river.Job[runArgs]) time.Time {
	return time.Now().Add(time.Duration(min(job.Attempt, 15)) * time.Second)
}

// errJobCancelled is the cause given to a run's context when its job was cancelled.
var errJobCancelled = errors.New("job cancelled")

// errSkip ends a dispatch that finds nothing to do.
var errSkip = errors.New("nothing to run")

func (w *runWorker) Work(ctx context.Context, job *river.Job[runArgs]) error {
	return w.svc.work(ctx, job.Args, job.Queue, job.Attempt, job.MaxAttempts)
}

func (s *Service) work(ctx context.Context, a runArgs, queue string, attempt, maxAttempts int) error {
	log := s.log.With("job_id", a.JobID, "run_id", a.RunID, "attempt", attempt)
	j, run, err := s.dispatch(ctx, a, queue)
	if errors.Is(err, errSkip) || errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if errors.Is(err, errOverShare) {
		// Back in the queue (a snooze spends no attempt): the worker goes to another account's run.
		return river.JobSnooze(s.cfg.ShareRecheck)
	}
	if err != nil {
		return s.retryOrFail(ctx, log, a, attempt, maxAttempts, err)
	}
	if run.Status == RunFailed {
		return nil // refused at dispatch (no credits): already failed and notified
	}
	// The budget ends the run; River's deadline (the margin later) leaves time to record the outcome.
	runCtx, cancel := context.WithTimeoutCause(ctx, s.cfg.TimeoutFor(a.Effort), errRunBudget)
	defer cancel()
	res, sink, runErr := s.execute(runCtx, j, a)
	switch {
	case runErr == nil:
		err = s.complete(ctx, j, a, res, sink)
	case errors.Is(context.Cause(sink.ctx), errJobCancelled):
		log.Info("run stopped: job cancelled")
		return nil
	case errors.Is(context.Cause(runCtx), errRunBudget):
		err = s.fail(ctx, j, a, "timed_out", fmt.Sprintf("the run exceeded the %s limit of effort %s", s.cfg.TimeoutFor(a.Effort), a.Effort))
	case ctx.Err() != nil:
		// Shutdown: leave the job in_progress; the entry is retried by the next process.
		log.Info("run interrupted by shutdown; it resumes on the next start")
		return fmt.Errorf("run interrupted: %w", ctx.Err())
	default:
		var ee *engine.Error
		if errors.As(runErr, &ee) {
			err = s.fail(ctx, j, a, ee.Code, ee.Message)
		} else {
			return s.retryOrFail(ctx, log, a, attempt, maxAttempts, runErr)
		}
	}
	if err != nil {
		return s.retryOrFail(ctx, log, a, attempt, maxAttempts, err)
	}
	return nil
}

// retryOrFail hands an infrastructure error back to River for another attempt, or fails the job
// for good on the last attempt so that no job stays in_progress forever.
func (s *Service) retryOrFail(ctx context.Context, log *slog.Logger, a runArgs, attempt, maxAttempts int, cause error) error {
	if attempt < maxAttempts {
		log.Warn("run attempt failed; retrying", "error", cause)
		return cause
	}
	j, err := s.st.ResearchJobByID(context.WithoutCancel(ctx), a.JobID)
	if err != nil {
		return errors.Join(cause, err)
	}
	if err := s.fail(context.WithoutCancel(ctx), j, a, "internal_error", "the run could not be completed after repeated attempts"); err != nil {
		return errors.Join(cause, err)
	}
	return nil
}

// dispatch marks the job in_progress, starts (or, after a crash, reuses) the run and charges it,
// all in one transaction. errSkip when the entry is stale (job cancelled, superseded, or this run
// already finished).
func (s *Service) dispatch(ctx context.Context, a runArgs, queue string) (store.ResearchJob, store.ResearchRun, error) {
	var j store.ResearchJob
	var run store.ResearchRun
	err := s.st.InTx(ctx, func(tx *store.Store) error {
		var err error
		if j, err = tx.ResearchJobByID(ctx, a.JobID); err != nil {
			return err
		}
		if j.CurrentRunID == nil || *j.CurrentRunID != a.RunID {
			return errSkip
		}
		if err := s.checkShare(ctx, tx, j, queue); err != nil {
			return err
		}
		now := s.now()
		ok, err := tx.StartResearchJob(ctx, statuses, j.ID, now)
		if err != nil {
			return err
		}
		if !ok {
			return errSkip
		}
		resumed := j.Status == InProgress
		run, err = tx.CreateRun(ctx, &store.ResearchRun{ID: a.RunID, JobID: j.ID, Kind: a.RunKind, Status: RunRunning, Effort: a.Effort, StartedAt: now})
		if err != nil {
			return err
		}
		if run.Status != RunRunning {
			return errSkip
		}
		// Exactly once per run id, so a resumed run is not charged again.
		err = s.billing.ChargeRun(ctx, tx, billing.Run{AccountID: j.AccountID, JobID: j.ID, RunID: run.ID, Effort: run.Effort})
		if errors.Is(err, billing.ErrInsufficientCredits) {
			run.Status = RunFailed
			return s.finishFailed(ctx, tx, j, a, "insufficient_credits",
				fmt.Sprintf("the balance cannot cover a run at effort %s (%d credits)", run.Effort, s.billing.Config().Credits(run.Effort)), false)
		}
		if err != nil {
			return err
		}
		if err := tx.RecordRunCharge(ctx, j.ID, run.ID, s.billing.Config().Credits(run.Effort)); err != nil {
			return err
		}
		msg := "A worker started the run."
		if resumed {
			msg = "A worker resumed the run after an interruption."
		}
		return s.statusEvent(ctx, tx, j.ID, InProgress, msg,
			map[string]any{"status": InProgress, "run_id": run.ID, "kind": run.Kind, "effort": run.Effort})
	})
	return j, run, err
}

// openWorkspace opens or creates the job's repository. A process killed mid-write (kill -9 during
// init, a commit or a ref update) can leave a repository git cannot open or whose history does not
// read. An initial run is re-run from scratch after a crash anyway, so its broken folder is set aside
// (kept for inspection), the revisions it had recorded are forgotten, and the run starts over in a
// fresh repository. A continuation builds on earlier runs' history, so there the error stands.
// A continuation whose working copy lacks the job's latest revision (another process ran it) first
// brings it there from the blob store; an initial run starts over whatever it finds, so it needs none.
func (s *Service) openWorkspace(ctx context.Context, j store.ResearchJob, a runArgs) (*workspace.Repo, error) {
	dir := s.workspaceDir(j.ID)
	repo, err := workspace.Init(dir)
	if err == nil {
		_, err = repo.Revisions()
	}
	if err == nil || a.RunKind != RunInitial {
		if err != nil {
			return nil, err
		}
		if a.RunKind == RunContinuation {
			if _, err := s.revisions.Restore(ctx, repo, j.ID); err != nil {
				return nil, fmt.Errorf("restore workspace: %w", err)
			}
		}
		return repo, nil
	}
	aside := fmt.Sprintf("%s.broken-%d", dir, s.now().UnixNano())
	if mvErr := os.Rename(dir, aside); mvErr != nil {
		return nil, fmt.Errorf("set aside broken workspace: %w (after %w)", mvErr, err)
	}
	if ferr := s.st.ForgetWorkspace(ctx, j.ID); ferr != nil {
		return nil, ferr
	}
	s.log.WarnContext(ctx, "workspace unreadable; starting the run in a fresh one", "job_id", j.ID, "error", err, "set_aside", aside)
	return workspace.Init(dir)
}

// execute prepares the workspace and runs the engine, cancelling it when the job is cancelled.
func (s *Service) execute(ctx context.Context, j store.ResearchJob, a runArgs) (_ engine.Result, _ *sink, err error) {
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sk := &sink{svc: s, ctx: runCtx, jobID: j.ID, runID: a.RunID, events: &eventBuffer{st: s.st, jobID: j.ID, now: s.now}}
	// The run's events land before its outcome is recorded.
	defer func() {
		if ferr := sk.events.flush(context.WithoutCancel(ctx)); ferr != nil && err == nil {
			err = ferr
		}
	}()
	repo, err := s.openWorkspace(ctx, j, a)
	if err != nil {
		return engine.Result{}, sk, err
	}
	sk.repo = repo
	in := engine.Input{Question: j.Question, Effort: a.Effort, Workspace: repo, Continuation: a.RunKind == RunContinuation}
	if in.Continuation && j.ReportMarkdown != nil {
		in.PriorReport = *j.ReportMarkdown
	}
	if j.JSONSchema != nil {
		if err := json.Unmarshal([]byte(*j.JSONSchema), &in.JSONSchema); err != nil {
			return engine.Result{}, sk, fmt.Errorf("decode json_schema: %w", err)
		}
	}
	cleanup, err := s.applyExpert(runCtx, j, a.RunID, &in, sk)
	if err != nil {
		return engine.Result{}, sk, err
	}
	defer cleanup()
	in.Now, sk.schema = s.now, in.JSONSchema
	// Each run states its own basis: an earlier run's must not judge this run's structured output.
	if _, err := repo.RemoveFile(engine.StructuredOutputBasisPath); err != nil {
		return engine.Result{}, sk, err
	}
	if a.RunKind == RunInitial {
		if err := s.copyInputs(runCtx, j, repo, sk); err != nil {
			return engine.Result{}, sk, err
		}
	}

	done := make(chan struct{})
	defer close(done)
	go s.watchCancel(runCtx, cancel, j.ID, done)

	res, err := s.engine.Run(runCtx, in, sk)
	if err == nil {
		err = runCtx.Err() // cancelled at the very end: do not complete
	}
	return res, sk, err
}

// watchCancel cancels a run's context when its job leaves in_progress (a cancel from the API).
func (s *Service) watchCancel(ctx context.Context, cancel context.CancelCauseFunc, jobID string, done <-chan struct{}) {
	t := time.NewTicker(s.cfg.CancelCheck)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			j, err := s.st.ResearchJobByID(ctx, jobID)
			if err == nil && j.Status != InProgress {
				cancel(errJobCancelled)
				return
			}
		}
	}
}

// copyInputs copies the job's attachments into input_files/.
func (s *Service) copyInputs(ctx context.Context, j store.ResearchJob, repo *workspace.Repo, sk *sink) error {
	var ids []string
	if err := json.Unmarshal([]byte(j.AttachmentIDs), &ids); err != nil {
		return fmt.Errorf("decode attachment ids: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	if s.attachments == nil {
		return &engine.Error{Code: "attachment_unavailable", Message: "attachments are not available on this server"}
	}
	files, err := s.attachments.FilesForJob(ctx, j.AccountID, ids)
	var ue *UnusableAttachmentError
	if errors.As(err, &ue) {
		return &engine.Error{Code: "attachment_unavailable", Message: ue.Error()}
	}
	if err != nil {
		return err
	}
	var names []string
	for _, f := range files {
		b, err := readInput(ctx, f)
		if err != nil {
			return err
		}
		p := path.Join(engine.InputDir, f.Name)
		if err := repo.WriteFile(p, b); err != nil {
			return fmt.Errorf("copy %s: %w", p, err)
		}
		names = append(names, p)
	}
	return sk.Event(ctx, engine.Event{Kind: engine.KindStatus, Title: "inputs", Content: fmt.Sprintf("Copied %d input file(s) into input_files/.", len(names)),
		Data: map[string]any{"files": names}})
}

func readInput(ctx context.Context, f InputFile) ([]byte, error) {
	rc, err := f.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("open attachment %s: %w", f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read attachment %s: %w", f.Name, err)
	}
	return b, nil
}

// complete records a successful run: the job completed with its report and structured output, the
// run completed, and the webhook enqueued, in one transaction.
func (s *Service) complete(ctx context.Context, j store.ResearchJob, a runArgs, res engine.Result, sk *sink) error {
	final := workspace.CheckpointFinal
	if a.RunKind == RunContinuation {
		final = workspace.CheckpointContinuation
	}
	// The engine checkpoints at the end; if it did not, the runner takes the final checkpoint.
	if sk.lastType != final {
		if res.Report != "" {
			if err := sk.repo.WriteFile(engine.ReportPath, []byte(res.Report)); err != nil {
				return err
			}
		}
		if _, err := sk.Checkpoint(ctx, "Final report", final); err != nil {
			return err
		}
	}
	sha := sk.lastSHA
	report := res.Report
	if sk.lastReport != nil {
		report = *sk.lastReport
	}
	out := store.JobResult{ReportSHA: sha, Report: report, Uncharged: res.NoSources}
	if res.StructuredOutput != nil {
		b, err := json.Marshal(res.StructuredOutput)
		if err != nil {
			return fmt.Errorf("encode structured output: %w", err)
		}
		out.StructuredOutput = ptr(string(b))
	}
	if v := sk.verified; v != nil && v.structuredStored {
		res.StructuredOutput = v.structured // as verification settled it
		b, err := json.Marshal(v.structured)
		if err != nil {
			return fmt.Errorf("encode structured output: %w", err)
		}
		out.StructuredOutput = ptr(string(b))
	}
	if err := sk.verified.record(&out); err != nil {
		return err
	}
	if o := res.RequiredTools; o != nil {
		b, err := json.Marshal(RequiredToolCalls{Required: nonNil(o.Required), Succeeded: nonNil(o.Succeeded), Missing: nonNil(o.Missing)})
		if err != nil {
			return fmt.Errorf("encode required tool calls: %w", err)
		}
		out.RequiredToolCalls = ptr(string(b))
	}
	return s.st.InTx(ctx, func(tx *store.Store) error {
		ok, err := tx.CompleteResearchJob(ctx, statuses, j.ID, a.RunID, out, s.now())
		if err != nil || !ok {
			return err // not in progress any more: cancelled meanwhile, and the cancel recorded it
		}
		if res.NoSources {
			// A run that had nothing to read researched nothing: the charge taken at dispatch goes back.
			err := s.billing.RefundRun(ctx, tx, billing.Run{AccountID: j.AccountID, JobID: j.ID, RunID: a.RunID, Effort: a.Effort, Reason: "had no sources"})
			if err != nil {
				return err
			}
		}
		if err := s.statusEvent(ctx, tx, j.ID, Completed, "The job completed.",
			map[string]any{"status": Completed, "run_id": a.RunID, "revision_sha": sha}); err != nil {
			return err
		}
		if err := s.queue.JobSettled(ctx, tx, j.ID, Completed, ""); err != nil {
			return err
		}
		var structured any
		if res.StructuredOutput != nil {
			structured = res.StructuredOutput
		}
		return s.enqueueWebhook(ctx, tx, j, a.RunID, EventCompleted, Completed, &reportBody{Markdown: report, RevisionSHA: sha}, structured,
			withVerification(sk.verified))
	})
}

// fail records a failed run: job failed with error{code,message}, run failed and refunded, webhook
// enqueued, in one transaction.
func (s *Service) fail(ctx context.Context, j store.ResearchJob, a runArgs, code, message string) error {
	return s.st.InTx(ctx, func(tx *store.Store) error {
		return s.finishFailed(ctx, tx, j, a, code, message, true)
	})
}

func (s *Service) finishFailed(ctx context.Context, tx *store.Store, j store.ResearchJob, a runArgs, code, message string, refund bool) error {
	ok, err := tx.FailResearchJob(ctx, statuses, j.ID, a.RunID, code, message, s.now())
	if err != nil || !ok {
		return err
	}
	// A run that fails before dispatch (no credits, orphaned in the queue) gives its hold back.
	if err := s.billing.ReleaseRun(ctx, tx, a.RunID); err != nil {
		return err
	}
	if refund {
		if err := s.billing.RefundRun(ctx, tx, billing.Run{AccountID: j.AccountID, JobID: j.ID, RunID: a.RunID, Effort: a.Effort}); err != nil {
			return err
		}
	}
	if err := s.statusEvent(ctx, tx, j.ID, Failed, "The job failed: "+message,
		map[string]any{"status": Failed, "run_id": a.RunID, "error_code": code}); err != nil {
		return err
	}
	if err := s.queue.JobSettled(ctx, tx, j.ID, Failed, code); err != nil {
		return err
	}
	var report *reportBody
	if j.ReportSHA != nil && j.ReportMarkdown != nil {
		report = &reportBody{Markdown: *j.ReportMarkdown, RevisionSHA: *j.ReportSHA}
	}
	return s.enqueueWebhook(ctx, tx, j, a.RunID, EventFailed, Failed, report, nil)
}

// sink turns engine events into timeline events and checkpoints into commits and revisions.
type sink struct {
	svc      *Service
	ctx      context.Context // the run's context: cancelled when the job is
	repo     *workspace.Repo
	jobID    string
	runID    string
	lastSHA  string
	lastType string
	// lastReport is report.md at lastSHA (nil when that commit has none), read once per checkpoint.
	lastReport *string
	// schema is the run's effective json_schema; verified what citation verification settled
	// (nil until the run finalises its report) and verifiedReport the report it left.
	schema         map[string]any
	verified       *verified
	verifiedReport string
	events         *eventBuffer
}

func (k *sink) Event(ctx context.Context, e engine.Event) error {
	if err := context.Cause(k.ctx); err != nil {
		return err
	}
	if e.Kind == engine.KindFinalAnswer {
		// The final answer shows the report as verification leaves it.
		if _, err := k.verify(ctx); err != nil {
			return err
		}
		e.Content = k.verifiedReport
	}
	return k.events.add(ctx, e)
}

func (k *sink) Checkpoint(ctx context.Context, message, checkpointType string) (string, error) {
	if err := context.Cause(k.ctx); err != nil {
		return "", err
	}
	// The events before a checkpoint come before it in the timeline.
	if err := k.events.flush(ctx); err != nil {
		return "", err
	}
	// Between steps is where a cancelled job stops: check the row, not only the watcher.
	j, err := k.svc.st.ResearchJobByID(ctx, k.jobID)
	if err != nil {
		return "", err
	}
	if j.Status != InProgress {
		return "", errJobCancelled
	}
	if checkpointType != workspace.CheckpointProgress {
		if _, err := k.verify(ctx); err != nil {
			return "", err
		}
	}
	sha, err := k.repo.Commit(message, checkpointType)
	if err != nil {
		return "", err
	}
	var report *string
	if b, err := k.repo.ReadFile(sha, engine.ReportPath); err == nil {
		report = ptr(string(b))
	}
	// Contents go to the blob store first, so a recorded manifest never names a missing blob; then
	// any process can serve the revision.
	files, err := k.svc.revisions.Publish(ctx, k.repo, k.jobID, sha)
	if err != nil {
		return "", fmt.Errorf("publish checkpoint %s: %w", sha, err)
	}
	// The revision, its manifest and the report it shows land together, so the detail never names a
	// report_sha that has no revision (or the reverse) after a crash.
	err = k.svc.st.InTx(ctx, func(tx *store.Store) error {
		if err := tx.AddRevision(ctx, &store.ResearchRevision{JobID: k.jobID, SHA: sha, RunID: k.runID, CheckpointType: checkpointType,
			Message: message, CreatedAt: k.svc.now(), FilesStored: true}); err != nil {
			return err
		}
		if err := tx.AddRevisionFiles(ctx, files); err != nil {
			return err
		}
		if report == nil {
			return nil
		}
		// The detail shows the newest report as soon as a checkpoint contains one.
		return tx.ShowJobReport(ctx, statuses, k.jobID, sha, *report)
	})
	if err != nil {
		return "", fmt.Errorf("record checkpoint %s: %w", sha, err)
	}
	k.lastSHA, k.lastType, k.lastReport = sha, checkpointType, report
	return sha, nil
}
