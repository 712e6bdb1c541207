package server

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/revision"
)

// Research jobs between the domain (jobs) and the API: details and summaries, timeline events,
// webhook deliveries, workspace files and the v1 answer. A job's JSON columns (request echo,
// structured output, basis, call-to-action) are decoded here, where their API shape is known.

// jobDetail assembles the detail of a job from one snapshot, with its latest report. privileged
// readers (owner, administrators) see the webhook URL.
func jobDetail(v jobs.View, privileged bool) (gen.ResearchJobDetail, error) {
	j, runs, revs := v.Job, v.Runs, v.Revisions
	var echo jobs.RequestEcho
	if err := json.Unmarshal([]byte(j.Request), &echo); err != nil {
		return gen.ResearchJobDetail{}, err
	}
	var attIDs []string
	if err := json.Unmarshal([]byte(j.AttachmentIDs), &attIDs); err != nil {
		return gen.ResearchJobDetail{}, err
	}
	d := gen.ResearchJobDetail{
		JobId: uuid.MustParse(j.ID), Slug: j.Slug, Status: gen.JobStatus(j.Status), Question: j.Question,
		Effort: gen.Effort(j.Effort), RequestedEffort: gen.Effort(j.RequestedEffort), IsPublic: j.IsPublic,
		CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, StartedAt: nullableOf(j.StartedAt), CompletedAt: nullableOf(j.CompletedAt),
		StructuredOutput: nullable.NewNullNullable[map[string]any](),
		Revisions:        make([]gen.Revision, 0, len(revs)), Runs: make([]gen.CheckResult, 0, len(runs)),
		Locked: j.Locked, ExpertId: nullableOf(j.ExpertID), WebhookUrl: nullable.NewNullNullable[string](),
		AttachmentIds: uuids(attIDs), AnonymousCtaEnabled: j.AnonymousCTAEnabled, AnonymousCtaVariant: nullableOf(j.AnonymousCTAVariant),
		Request: gen.ResearchRequestEcho{
			Question: echo.Question, Effort: gen.Effort(echo.Effort), JsonSchema: nullable.NewNullNullable[map[string]any](),
			WebhookUrl: nullable.NewNullNullable[string](), ExpertId: nullableOf(echo.ExpertID),
			AttachmentIds: uuids(echo.AttachmentIDs), IsPublic: echo.IsPublic,
		},
	}
	if j.AnonymousCTA != nil {
		var cta gen.AnonymousCta
		if err := json.Unmarshal([]byte(*j.AnonymousCTA), &cta); err != nil {
			return gen.ResearchJobDetail{}, fmt.Errorf("decode anonymous_cta of job %s: %w", j.ID, err)
		}
		d.AnonymousCta = nullable.NewNullableWithValue(cta)
	} else {
		d.AnonymousCta = nullable.NewNullNullable[gen.AnonymousCta]()
	}
	if echo.JSONSchema != nil {
		d.Request.JsonSchema = nullable.NewNullableWithValue(echo.JSONSchema)
	}
	if privileged && j.WebhookURL != nil {
		d.WebhookUrl = nullable.NewNullableWithValue(*j.WebhookURL)
		d.Request.WebhookUrl = nullableOf(echo.WebhookURL)
	}
	if j.StructuredOutput != nil {
		var so map[string]any
		if err := json.Unmarshal([]byte(*j.StructuredOutput), &so); err != nil {
			return gen.ResearchJobDetail{}, err
		}
		d.StructuredOutput = nullable.NewNullableWithValue(so)
	}
	if j.ErrorCode != nil {
		msg := ""
		if j.ErrorMessage != nil {
			msg = *j.ErrorMessage
		}
		d.Error = nullable.NewNullableWithValue(gen.JobError{Code: *j.ErrorCode, Message: msg})
	}
	if err := expertOfJob(&d, j); err != nil {
		return gen.ResearchJobDetail{}, err
	}
	if err := citationsOfJob(&d, j); err != nil {
		return gen.ResearchJobDetail{}, err
	}
	var credits int64
	for _, r := range runs {
		credits += r.CreditsCharged
		d.Runs = append(d.Runs, gen.CheckResult{
			RunId: uuid.MustParse(r.ID), Kind: gen.CheckResultKind(r.Kind), Status: gen.CheckResultStatus(r.Status),
			Effort: gen.Effort(r.Effort), StartedAt: r.StartedAt, FinishedAt: nullableOf(r.FinishedAt), CreditsCharged: int(r.CreditsCharged),
		})
	}
	d.CreditsCharged = int(credits)
	for _, r := range revs {
		d.Revisions = append(d.Revisions, gen.Revision{
			CommitSha: r.SHA, CheckpointType: gen.RevisionCheckpointType(r.CheckpointType), CreatedAt: r.CreatedAt,
			RunId: uuid.MustParse(r.RunID), Message: r.Message,
		})
	}
	if j.ReportSHA != nil && j.ReportMarkdown != nil {
		d.Report = &gen.Report{Markdown: *j.ReportMarkdown, RevisionSha: *j.ReportSHA}
	}
	return d, nil
}

// expertOfJob fills the detail's expert (canonical id and the version that ran) and the last run's
// required-tool outcome; both null when the job has none.
func expertOfJob(d *gen.ResearchJobDetail, j jobs.Job) error {
	d.Expert = nullable.NewNullNullable[gen.JobExpert]()
	if j.ExpertRef != nil {
		e := gen.JobExpert{Id: *j.ExpertRef, Version: nullableOf(j.ExpertVersion)}
		d.Expert = nullable.NewNullableWithValue(e)
	}
	d.RequiredToolCalls = nullable.NewNullNullable[gen.RequiredToolCallsOutcome]()
	if j.RequiredToolCalls != nil {
		var o jobs.RequiredToolCalls
		if err := json.Unmarshal([]byte(*j.RequiredToolCalls), &o); err != nil {
			return fmt.Errorf("decode required tool calls of job %s: %w", j.ID, err)
		}
		d.RequiredToolCalls = nullable.NewNullableWithValue(gen.RequiredToolCallsOutcome{Required: o.Required, Succeeded: o.Succeeded, Missing: o.Missing})
	}
	return nil
}

// citationsOfJob fills the detail's citation counts and structured-output basis (beyond the
// specification); both null until a run completes with them.
func citationsOfJob(d *gen.ResearchJobDetail, j jobs.Job) error {
	d.Citations = nullable.NewNullNullable[gen.CitationCounts]()
	if j.CitationsTotal != nil && j.CitationsVerified != nil {
		d.Citations = nullable.NewNullableWithValue(gen.CitationCounts{Total: *j.CitationsTotal, Verified: *j.CitationsVerified})
	}
	d.StructuredOutputBasis = nullable.NewNullNullable[gen.StructuredOutputBasis]()
	if j.StructuredOutputBasis != nil {
		var b gen.StructuredOutputBasis
		if err := json.Unmarshal([]byte(*j.StructuredOutputBasis), &b); err != nil {
			return fmt.Errorf("decode structured output basis of job %s: %w", j.ID, err)
		}
		d.StructuredOutputBasis = nullable.NewNullableWithValue(b)
	}
	return nil
}

func jobSummary(j jobs.Job) gen.ResearchJobSummary {
	return gen.ResearchJobSummary{
		JobId: uuid.MustParse(j.ID), Slug: j.Slug, Status: gen.JobStatus(j.Status), Question: j.Question,
		Effort: gen.Effort(j.Effort), RequestedEffort: gen.Effort(j.RequestedEffort), IsPublic: j.IsPublic,
		CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, StartedAt: nullableOf(j.StartedAt), CompletedAt: nullableOf(j.CompletedAt),
	}
}

func uuids(ids []string) []openapi_types.UUID {
	out := make([]openapi_types.UUID, 0, len(ids))
	for _, id := range ids {
		if u, err := uuid.Parse(id); err == nil {
			out = append(out, u)
		}
	}
	return out
}

func timelineEvent(e jobs.Event) gen.TimelineEvent {
	var data map[string]any
	if e.Data != nil {
		_ = json.Unmarshal([]byte(*e.Data), &data)
	}
	title, content, data := jobs.SanitizeEvent(e.Kind, e.Title, e.Content, data)
	out := gen.TimelineEvent{
		EventId: uuid.MustParse(e.ID), Seq: int(e.Seq), CreatedAt: e.CreatedAt, Kind: gen.TimelineEventKind(e.Kind),
		Title: title, Content: content, Data: nullable.NewNullNullable[map[string]any](),
	}
	if data != nil {
		out.Data = nullable.NewNullableWithValue(data)
	}
	return out
}

func deliveryView(d jobs.Delivery) gen.WebhookDelivery {
	v := gen.WebhookDelivery{
		DeliveryId: uuid.MustParse(d.ID), RunId: uuid.MustParse(d.RunID), Event: gen.WebhookDeliveryEvent(d.Event),
		Round: max(d.Round, 1), Attempt: d.Attempt, CreatedAt: d.CreatedAt, Url: d.URL, RequestId: d.RequestID,
		StatusCode: nullableOf(d.StatusCode), LatencyMs: int(d.DurationMS), Error: nullableOf(d.Error), Succeeded: d.Succeeded,
	}
	if d.MessageID != nil {
		v.WebhookId = *d.MessageID
	}
	return v
}

func v1View(j jobs.Job) gen.V1ResearchResponse {
	out := gen.V1ResearchResponse{
		JobId: uuid.MustParse(j.ID), CreatedAt: j.CreatedAt, Status: "in_progress",
		Result: nullable.NewNullNullable[string](), CompletedAt: nullable.NewNullNullable[time.Time](),
	}
	if !jobs.Terminal(j.Status) {
		return out
	}
	if j.CompletedAt != nil {
		out.CompletedAt = nullable.NewNullableWithValue(*j.CompletedAt)
	}
	switch j.Status {
	case jobs.Completed:
		out.Status = "complete"
		if j.ReportMarkdown != nil {
			out.Result = nullable.NewNullableWithValue(*j.ReportMarkdown)
		}
	case jobs.Cancelled:
		out.Status = "cancelled"
	default: // failed, blocked
		out.Status = "failed"
		if j.ErrorMessage != nil {
			out.Result = nullable.NewNullableWithValue(*j.ErrorMessage)
		}
	}
	return out
}

func cancelledOf(j jobs.Job) gen.CancelResearchResponse {
	return gen.CancelResearchResponse{JobId: uuid.MustParse(j.ID), Slug: j.Slug, Status: gen.JobStatus(j.Status)}
}

func workspaceFileOf(f revision.File) gen.WorkspaceFile {
	return gen.WorkspaceFile{Path: f.Path, SizeBytes: int(f.Size), ContentType: f.ContentType, LastModified: f.LastModified, LastCommitSha: f.LastCommitSHA}
}

func webhookSecretOf(r jobs.RotatedSecret) gen.WebhookSecret {
	return gen.WebhookSecret{Secret: r.Secret, CreatedAt: r.CreatedAt, PreviousSecretExpiresAt: nullableOf(r.PreviousExpiresAt)}
}

func redeliveryOf(m jobs.Message) gen.WebhookRedelivery {
	return gen.WebhookRedelivery{
		WebhookId: m.ID, JobId: uuid.MustParse(m.JobID), RunId: uuid.MustParse(m.RunID), Event: gen.WebhookRedeliveryEvent(m.Event),
		Round: m.Round, Url: m.URL, State: gen.WebhookRedeliveryState(m.State),
	}
}
