package expertbuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/researchd/researchd/authoring"
	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/skill"
	"github.com/researchd/researchd/store"
)

// CodeBuildFailed is the error code of a failed build.
const CodeBuildFailed = "build_failed"

// buildArgs is the queue entry of one build.
type buildArgs struct {
	BuildID string `json:"build_id"`
}

func (buildArgs) Kind() string { return "expert_build" }

type buildWorker struct {
	river.WorkerDefaults[buildArgs]
	svc *Service
}

func (w *buildWorker) Timeout(*river.Job[buildArgs]) time.Duration { return w.svc.cfg.Timeout }

// Work drafts the expert and ends the build. An error is retried by River; the last attempt's
// error fails the build instead, and a draft the expert rules refuse fails it at once.
func (w *buildWorker) Work(ctx context.Context, job *river.Job[buildArgs]) error {
	s := w.svc
	row, err := s.st.ExpertBuildByID(ctx, job.Args.BuildID)
	if errors.Is(err, store.ErrNotFound) {
		return river.JobCancel(err) // nothing to build: the row is gone
	} else if err != nil {
		return err
	}
	if row.Status == Succeeded || row.Status == Failed {
		return nil
	}
	if err := s.st.StartExpertBuild(ctx, statuses, row.ID); err != nil {
		return err
	}
	e, err := s.draft(ctx, row)
	switch {
	case err == nil:
		_, err := s.st.FinishExpertBuild(ctx, statuses, row.ID, &e.ID, nil, nil, s.now())
		return err
	case fault.IsKind(err, fault.Invalid):
		return s.fail(ctx, row.ID, "the drafted expert was refused: "+fault.Of(err).Error())
	case job.Attempt >= job.MaxAttempts:
		s.log.ErrorContext(ctx, "expert build failed after its last attempt", "build_id", row.ID, "error", err)
		return s.fail(ctx, row.ID, "the build could not be completed; try again")
	}
	return err
}

func (s *Service) fail(ctx context.Context, id, message string) error {
	code := CodeBuildFailed
	_, err := s.st.FinishExpertBuild(ctx, statuses, id, nil, &code, &message, s.now())
	return err
}

// draft builds the expert from the request and saves it as the caller's building draft. It is
// idempotent per build (the create's idempotency key is the build id), so an attempt that died
// after saving the draft finds it again instead of saving a second one.
func (s *Service) draft(ctx context.Context, row store.ExpertBuild) (expert.Expert, error) {
	var req Request
	if err := json.Unmarshal([]byte(row.Request), &req); err != nil {
		return expert.Expert{}, fmt.Errorf("decode build request: %w", err)
	}
	var catalog []authoring.SkillInfo
	if s.skills != nil {
		list, _, err := s.skills.List(ctx, row.AccountID, skill.Filter{})
		if err != nil {
			return expert.Expert{}, fmt.Errorf("list skills: %w", err)
		}
		for _, sk := range list {
			catalog = append(catalog, authoring.SkillInfo{Name: sk.Name, Description: sk.Description})
		}
	}
	name := ""
	if req.Name != nil {
		name = *req.Name
	}
	d := s.author.BuildDraft(ctx, req.DomainDescription, name, catalog)
	in, err := createInput(d)
	if err != nil {
		return expert.Expert{}, err
	}
	sum := sha256.Sum256([]byte(row.ID))
	in.IdempotencyKey, in.RequestHash, in.Source = "build:"+row.ID, hex.EncodeToString(sum[:]), expert.SourceBuild
	return s.experts.Create(ctx, expert.Caller{AccountID: row.AccountID}, in)
}

// createInput turns a draft into a create request with status building.
func createInput(d authoring.Draft) (expert.CreateInput, error) {
	status := store.ExpertBuilding
	in := expert.CreateInput{Status: &status}
	in.Name, in.Description, in.SystemPrompt = d.Name, d.Description, d.SystemPrompt
	in.ExpertiseAreas, in.Tags, in.SkillNames = d.ExpertiseAreas, d.Tags, d.SkillNames
	in.OutputSchema, in.OutputSOP = d.OutputSchema, d.OutputSOP
	if d.Domain != "" {
		in.Domain = &d.Domain
	}
	raw, err := json.Marshal(d.InputForm)
	if err != nil {
		return in, fmt.Errorf("encode input form: %w", err)
	}
	if err := json.Unmarshal(raw, &in.InputForm); err != nil {
		return in, fmt.Errorf("decode input form: %w", err)
	}
	return in, nil
}

// sweepArgs is the periodic sweep of builds that never ended.
type sweepArgs struct{}

func (sweepArgs) Kind() string { return "expert_build_sweep" }

type sweepWorker struct {
	river.WorkerDefaults[sweepArgs]
	svc *Service
}

func (w *sweepWorker) Timeout(*river.Job[sweepArgs]) time.Duration { return time.Minute }

// Work fails builds older than the deadline that are still queued or running: every attempt of a
// live build ends well before it, so such a build lost its queue entry (or its last attempt died
// with its process).
func (w *sweepWorker) Work(ctx context.Context, _ *river.Job[sweepArgs]) error {
	s := w.svc
	stale, err := s.st.UnfinishedExpertBuildsBefore(ctx, statuses, s.now().Add(-s.cfg.Deadline), 200)
	if err != nil {
		return err
	}
	for _, b := range stale {
		s.log.WarnContext(ctx, "failing an expert build that never ended", "build_id", b.ID, "status", b.Status)
		if err := s.fail(ctx, b.ID, "the build did not finish in time; try again"); err != nil {
			return err
		}
	}
	return nil
}
