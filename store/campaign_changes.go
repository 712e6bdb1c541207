package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// CampaignStatuses are the statuses of package campaign's state machine (campaigns, stages and
// records) that the state changes below write and filter by. Package campaign defines them;
// store persists them without knowing their values.
type CampaignStatuses struct {
	Draft, Approved, Running, NeedsAttention, Completed, Cancelled string

	StageRunning, StageCompleted, StageFailed string

	RecordPending, RecordRunning, RecordDone, RecordFailed string
}

// ReviseCampaignDraft writes a draft's edited plan and everything derived from it (name, budget,
// revision and digest, workforce, record counts).
func (s *Store) ReviseCampaignDraft(ctx context.Context, next Campaign) error {
	_, err := updateByID[Campaign](ctx, s, "campaign", next.ID, nil, map[string]any{
		"name": next.Name, "max_credits": next.MaxCredits, "plan": next.Plan, "revision": next.Revision, "review_digest": next.ReviewDigest,
		"objective": next.Objective, "workforce": next.Workforce, "expert_id": next.ExpertID, "expert_name": next.ExpertName, "capabilities": next.Capabilities,
		"duplicates_dropped": next.DuplicatesDropped, "records_accepted": next.RecordsAccepted, "updated_at": next.UpdatedAt,
	})
	return err
}

// ApproveCampaign moves a draft to approved under the approving key; false when it is no longer a
// draft.
func (s *Store) ApproveCampaign(ctx context.Context, st CampaignStatuses, id string, keyID *string, now time.Time) (bool, error) {
	return updateByID[Campaign](ctx, s, "campaign", id, []string{st.Draft}, map[string]any{
		"status": st.Approved, "approved_at": now, "status_changed_at": now, "approved_key_id": keyID,
	})
}

// ReplaceCampaignKey makes keyID the key a campaign runs under (the approving one became unusable).
func (s *Store) ReplaceCampaignKey(ctx context.Context, id string, keyID *string) error {
	_, err := updateByID[Campaign](ctx, s, "campaign", id, nil, map[string]any{"approved_key_id": keyID})
	return err
}

// noAttention clears a campaign's attention.
var noAttention = map[string]any{"attention_reason": nil, "attention_stage": nil, "attention_message": nil, "attention_action": nil}

// setCampaignStatus moves a campaign to status (from any status when from is empty), with the
// columns of set; false when no row matched.
func (s *Store) setCampaignStatus(ctx context.Context, id string, from []string, status string, now time.Time, set ...map[string]any) (bool, error) {
	cols := map[string]any{"status": status, "status_changed_at": now}
	for _, m := range set {
		for k, v := range m {
			cols[k] = v
		}
	}
	return updateByID[Campaign](ctx, s, "campaign", id, from, cols)
}

// CancelCampaign ends a campaign as cancelled; any attention it needed is cleared.
func (s *Store) CancelCampaign(ctx context.Context, st CampaignStatuses, id string, now time.Time) error {
	_, err := s.setCampaignStatus(ctx, id, nil, st.Cancelled, now, noAttention, map[string]any{"finished_at": now})
	return err
}

// ResumeCampaign sets a campaign running again and clears its attention.
func (s *Store) ResumeCampaign(ctx context.Context, st CampaignStatuses, id string, now time.Time) error {
	_, err := s.setCampaignStatus(ctx, id, nil, st.Running, now, noAttention)
	return err
}

// StartCampaign sets an approved campaign running.
func (s *Store) StartCampaign(ctx context.Context, st CampaignStatuses, id string, now time.Time) error {
	_, err := s.setCampaignStatus(ctx, id, nil, st.Running, now, map[string]any{"started_at": now})
	return err
}

// Attention is why a campaign needs attention: its reason code, the stage at fault (if one), what
// the owner reads and the action that resolves it.
type Attention struct {
	Reason  string
	Stage   *string
	Message string
	Action  string
}

// PauseCampaign makes a campaign need attention: no new worker starts until a retry resumes it.
func (s *Store) PauseCampaign(ctx context.Context, st CampaignStatuses, id string, a Attention, now time.Time) error {
	_, err := s.setCampaignStatus(ctx, id, nil, st.NeedsAttention, now, map[string]any{
		"attention_reason": a.Reason, "attention_stage": a.Stage, "attention_message": a.Message, "attention_action": a.Action,
	})
	return err
}

// CompleteCampaign moves a running campaign to completed; false when it was no longer running.
func (s *Store) CompleteCampaign(ctx context.Context, st CampaignStatuses, id string, now time.Time) (bool, error) {
	return s.setCampaignStatus(ctx, id, []string{st.Running}, st.Completed, now, map[string]any{"finished_at": now})
}

// updateStage sets columns of one stage.
func (s *Store) updateStage(ctx context.Context, campaignID, key string, set map[string]any) error {
	err := s.with(ctx).Model(&CampaignStage{}).Where("campaign_id = ? AND key = ?", campaignID, key).Updates(set).Error
	if err != nil {
		return fmt.Errorf("update stage %s of campaign %s: %w", key, campaignID, err)
	}
	return nil
}

// StageStart is what a stage starts with: the effort its workers run at and, for a per-entity
// stage, the records it took and their given field names (JSON array).
type StageStart struct {
	Effort       string
	RecordsTotal *int
	GivenFields  *string
}

// StartCampaignStage sets a stage running.
func (s *Store) StartCampaignStage(ctx context.Context, st CampaignStatuses, campaignID, key string, in StageStart, now time.Time) error {
	set := map[string]any{"status": st.StageRunning, "started_at": now, "effort": in.Effort}
	if in.RecordsTotal != nil {
		set["records_total"], set["given_fields"] = *in.RecordsTotal, in.GivenFields
	}
	return s.updateStage(ctx, campaignID, key, set)
}

// CompleteCampaignStage marks a stage whose work has all settled completed.
func (s *Store) CompleteCampaignStage(ctx context.Context, st CampaignStatuses, campaignID, key string, now time.Time) error {
	return s.updateStage(ctx, campaignID, key, map[string]any{"status": st.StageCompleted, "finished_at": now})
}

// FailCampaignStage marks a stage failed, saying why.
func (s *Store) FailCampaignStage(ctx context.Context, st CampaignStatuses, campaignID, key, why string) error {
	return s.updateStage(ctx, campaignID, key, map[string]any{"status": st.StageFailed, "worker_error": why})
}

// RetryCampaignStage puts a failed stage's failed records back to pending and the stage back to
// running; a per-entity stage's failed counter gives them back. It returns how many records moved.
func (s *Store) RetryCampaignStage(ctx context.Context, st CampaignStatuses, campaignID, key string, perEntity bool, now time.Time) (int, error) {
	var n int
	err := s.atomically(ctx, func(tx *Store) error {
		res := tx.with(ctx).Model(&CampaignRecord{}).Where("campaign_id = ? AND stage_key = ? AND status = ?", campaignID, key, st.RecordFailed).
			Updates(map[string]any{"status": st.RecordPending, "error_code": nil, "chunk": nil, "output": nil, "report": nil, "updated_at": now})
		if res.Error != nil {
			return fmt.Errorf("reset records of stage %s: %w", key, res.Error)
		}
		n = int(res.RowsAffected)
		set := map[string]any{"status": st.StageRunning, "worker_error": nil}
		if perEntity {
			set["records_failed"] = gorm.Expr("records_failed - ?", n)
		}
		return tx.updateStage(ctx, campaignID, key, set)
	})
	return n, err
}

// ReserveCampaignCredits records a chunk claimed on a stage of a locked campaign: one more chunk
// running, and the credits its hold took reserved on the stage and on the campaign, whose budget
// guard counts them.
func (s *Store) ReserveCampaignCredits(ctx context.Context, campaignID, key string, held int64) error {
	return s.atomically(ctx, func(tx *Store) error {
		if err := tx.updateStage(ctx, campaignID, key, map[string]any{
			"chunks_running": gorm.Expr("chunks_running + 1"), "credits_reserved": gorm.Expr("credits_reserved + ?", held)}); err != nil {
			return err
		}
		_, err := updateByID[Campaign](ctx, tx, "campaign", campaignID, nil, map[string]any{"credits_reserved": gorm.Expr("credits_reserved + ?", held)})
		return err
	})
}

// ChunkSettlement is what a settled chunk moves on its stage and campaign: the credits its hold
// reserved and what its successful workers spent; a per-entity stage's records done and failed, or
// the records a single worker produced (nil when it produced none).
type ChunkSettlement struct {
	Held, Spent  int64
	Done, Failed int
	Produced     *int
}

// SettleCampaignChunk moves the counters of a locked campaign and its stage when a chunk settles:
// one chunk fewer running, the hold released from the reserve and what was spent added.
func (s *Store) SettleCampaignChunk(ctx context.Context, campaignID, key string, perEntity bool, c ChunkSettlement) error {
	return s.atomically(ctx, func(tx *Store) error {
		stageSet := map[string]any{
			"chunks_running":   gorm.Expr("chunks_running - 1"),
			"credits_reserved": gorm.Expr("credits_reserved - ?", c.Held), "credits_spent": gorm.Expr("credits_spent + ?", c.Spent),
		}
		switch {
		case perEntity:
			stageSet["records_done"] = gorm.Expr("records_done + ?", c.Done)
			stageSet["records_failed"] = gorm.Expr("records_failed + ?", c.Failed)
		case c.Produced != nil:
			stageSet["records_total"], stageSet["records_done"] = *c.Produced, *c.Produced
		}
		if err := tx.updateStage(ctx, campaignID, key, stageSet); err != nil {
			return err
		}
		_, err := updateByID[Campaign](ctx, tx, "campaign", campaignID, nil, map[string]any{
			"credits_reserved": gorm.Expr("credits_reserved - ?", c.Held), "credits_spent": gorm.Expr("credits_spent + ?", c.Spent),
		})
		return err
	})
}
