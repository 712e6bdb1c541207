package server

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/batch"
	"github.com/researchd/researchd/billing"
	"github.com/researchd/researchd/campaign"
	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/expertbuild"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/gen"
	"github.com/researchd/researchd/idempotency"
	"github.com/researchd/researchd/jobs"
	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/store"
)

// TestProblemForRefusals: every domain package's refusals become the problem they have always
// answered, through the one mapping (status, code, title, detail and fields).
func TestProblemForRefusals(t *testing.T) {
	t.Parallel()
	const (
		invalid  = "Validation failed"
		notFound = "Not Found"
		conflict = "Conflict"
	)
	unsupported := &attachments.FieldError{Field: "files/0", Err: attachments.ErrUnsupportedType, Detail: `"a.exe": not accepted`}
	empty := &attachments.FieldError{Field: "files/1", Err: attachments.ErrInvalid, Detail: `"b.txt" is empty`}
	for _, tc := range []struct {
		name                string
		err                 error
		status              int
		code, title, detail string
		fields              []gen.FieldError
	}{
		{"invalid field", fault.InvalidInput(fault.Field{Field: "effort", Message: "unknown effort x"}),
			422, "validation_error", invalid, "effort: unknown effort x", []gen.FieldError{{Field: "effort", Message: "unknown effort x"}}},
		{"invalid fields", fault.InvalidInput(fault.Field{Field: "inputs", Message: "x"}, fault.Field{Field: "rows", Message: "y"}),
			422, "validation_error", invalid, "inputs: x; rows: y", []gen.FieldError{{Field: "inputs", Message: "x"}, {Field: "rows", Message: "y"}}},
		{"invalid expert", expert.Invalid(fault.Field{Field: "name", Message: "is required"}),
			422, "validation_error", invalid, "invalid expert: name: is required", []gen.FieldError{{Field: "name", Message: "is required"}}},
		{"credits of a job", jobs.NoCredits("high", 5, "check GET /api/v2/quota/check"),
			402, "insufficient_credits", "Insufficient credits", "effort high needs 5 credits, more than the balance holds; check GET /api/v2/quota/check", nil},
		{"credits of a run", fmt.Errorf("hold run r: %w", billing.ErrInsufficientCredits),
			402, "insufficient_credits", "Insufficient credits", "the balance cannot cover this run", nil},
		{"credits of a loop", fmt.Errorf("%w: effort high needs 5 credits", loop.ErrInsufficientCredits),
			402, "insufficient_credits", "Insufficient credits", "the balance cannot cover one row; check GET /api/v2/quota/check", nil},
		{"tier", fmt.Errorf("%w: %w", loop.ErrExpertForbidden, jobs.TierRefusal("x", "free")),
			403, "forbidden", "Forbidden", "expert x is not available to free-tier accounts (its allow_free_tier_use is off); upgrade the account's tier or choose another expert", nil},
		{"idempotency key reused", idempotency.ErrKeyReused,
			409, "idempotency_key_reused", "Idempotency key reused", "this Idempotency-Key was used with a different request body", nil},
		{"expert not found (a run's)", fmt.Errorf("expert %q: %w", "x", jobs.ErrExpertNotFound), 404, "not_found", notFound, "expert not found", nil},
		{"not continuable", fmt.Errorf("%w: only a completed, unlocked job can be continued; this job is failed", jobs.ErrNotContinuable),
			409, "job_not_continuable", conflict, "job not continuable: only a completed, unlocked job can be continued; this job is failed", nil},
		{"locked", fmt.Errorf("%w: a job locked by moderation cannot be changed", jobs.ErrLocked),
			409, "job_locked", conflict, "job locked: a job locked by moderation cannot be changed", nil},
		{"batch", batch.ErrNotFound, 404, "not_found", notFound, "batch not found", nil},
		{"batch cancelled", batch.ErrCancelled, 409, "batch_cancelled", conflict, "the batch is cancelled; its rows cannot be retried", nil},
		{"row not retryable", batch.ErrRowNotRetryable, 409, "row_not_retryable", conflict, "only a FAILED row can be retried", nil},
		{"campaign", campaign.ErrNotFound, 404, "not_found", notFound, "campaign not found", nil},
		{"stage", campaign.ErrStageNotFound, 404, "not_found", notFound, "stage not found", nil},
		{"deliverable", campaign.ErrDeliverableNotFound, 404, "not_found", notFound, "deliverable not found", nil},
		{"not editable", campaign.ErrNotEditable, 409, "campaign_not_editable", conflict, "only a draft campaign can be edited", nil},
		{"revision", fmt.Errorf("%w: the campaign is at revision 3, the edit is based on 2", campaign.ErrRevisionConflict),
			409, "revision_conflict", conflict, "revision conflict: the campaign is at revision 3, the edit is based on 2", nil},
		{"not draft", campaign.ErrNotDraft, 409, "campaign_not_draft", conflict, "only a draft campaign can be approved", nil},
		{"digest", campaign.ErrDigestMismatch, 409, "digest_mismatch", conflict, "review_digest is not the campaign's current one: read the campaign again and review it", nil},
		{"not retryable", fmt.Errorf("%w: the campaign is running", campaign.ErrNotRetryable),
			409, "campaign_not_retryable", conflict, "campaign not retryable: the campaign is running", nil},
		{"not ready", fmt.Errorf("%w: deliverable d is built when stage s completes", campaign.ErrNotReady),
			409, "deliverable_not_ready", conflict, "deliverable not ready: deliverable d is built when stage s completes", nil},
		{"expert", fmt.Errorf("expert %q: %w", "x", expert.ErrNotFound), 404, "not_found", notFound, "expert not found", nil},
		{"expert version", expert.ErrVersionNotFound, 404, "not_found", notFound, "expert version not found", nil},
		{"expert forbidden", fmt.Errorf("built-in experts are read-only: %w", expert.ErrForbidden),
			403, "forbidden", "Forbidden", "built-in experts are read-only: forbidden", nil},
		{"archived", expert.ErrArchived, 409, "expert_archived", conflict, "the expert is archived and read-only", nil},
		{"transition", expert.ErrInvalidTransition, 409, "invalid_status_transition", conflict, "an active expert cannot go back to building", nil},
		{"not active", expert.ErrNotActive, 409, "expert_not_active", conflict, "a building draft cannot be made public; finalize it first", nil},
		{"template missing", fmt.Errorf("%q: %w", "t.html", expert.ErrContextFileMissing),
			409, "context_file_missing", conflict, `"t.html": the restored output_template_file is no longer attached`, nil},
		{"ambiguous name", fmt.Errorf("%q: %w", "X", expert.ErrAmbiguousName),
			409, "ambiguous_expert_name", conflict, `"X": several of your experts have this name; name one with expert_id`, nil},
		{"context file", expert.ErrFileNotFound, 404, "not_found", notFound, "context file not found", nil},
		{"file in use", fmt.Errorf("%q: %w", "t.html", expert.ErrFileInUse),
			409, "context_file_in_use", conflict, `"t.html": the context file is the current output_template_file; clear that setting first`, nil},
		{"file too large", fmt.Errorf("%q is larger than 10 bytes: %w", "a.md", expert.ErrFileTooLarge),
			413, "payload_too_large", "Request Entity Too Large", `"a.md" is larger than 10 bytes: context file over the size limit`, nil},
		{"expert build", expertbuild.ErrNotFound, 404, "not_found", notFound, "expert build not found", nil},
		{"loop", loop.ErrNotFound, 404, "not_found", notFound, "loop not found", nil},
		{"loop run", loop.ErrRunNotFound, 404, "not_found", notFound, "loop run not found", nil},
		{"run active", loop.ErrRunActive, 409, "loop_run_active", conflict, "the previous run has not finished: cancel it or wait", nil},
		{"attachment", attachments.ErrNotFound, 404, "not_found", notFound, "attachment not found", nil},
		{"one refused file", unsupported, 422, "unsupported_file_type", "Unsupported file type", `files/0: "a.exe": not accepted`,
			[]gen.FieldError{{Field: "files/0", Message: `"a.exe": not accepted`}}},
		{"refused files", &attachments.RefusedError{Errors: []*attachments.FieldError{empty, unsupported}}, 422, "validation_error", invalid,
			"2 inputs were refused; nothing was stored (see errors)",
			[]gen.FieldError{{Field: "files/1", Message: `"b.txt" is empty`}, {Field: "files/0", Message: `"a.exe": not accepted`}}},
		{"attachment too large", fmt.Errorf("body is over the 10-byte limit: %w", attachments.ErrTooLarge),
			413, "payload_too_large", "Request Entity Too Large", "body is over the 10-byte limit: over the attachment size limit", nil},
		{"upload token", fmt.Errorf("the upload token is invalid or was already used: %w", attachments.ErrTokenInvalid),
			401, "unauthenticated", "Unauthorized", "the upload token is invalid or was already used: upload token missing, invalid or used", nil},
		{"upload token of another", attachments.ErrTokenMismatch, 403, "forbidden", "Forbidden", "this upload token was issued for a different attachment", nil},
		{"a store row", fmt.Errorf("job j: %w", store.ErrNotFound), 404, "not_found", notFound, "resource not found", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := problemFor(tc.err)
			require.Equal(t, tc.status, p.Status)
			require.Equal(t, tc.code, p.Code)
			require.Equal(t, tc.title, p.Title)
			require.Equal(t, tc.detail, p.Detail)
			require.Equal(t, tc.fields, p.Errors)
			if tc.status == http.StatusUnauthorized {
				require.Equal(t, errUnauthenticated("").header, p.header)
			}
		})
	}
	p := problemFor(errors.New("boom"))
	require.Equal(t, http.StatusInternalServerError, p.Status)
}
