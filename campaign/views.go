package campaign

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/researchd/researchd/store"
)

// View is a campaign as the API shows it: the row, its decoded plan, workforce and capabilities,
// and its stages' progress in plan order (Artifacts only for the detail).
type View struct {
	Campaign     store.Campaign
	Plan         Plan
	Workforce    Workforce
	Capabilities []string
	Stages       []store.CampaignStage
	Artifacts    []store.CampaignArtifact
}

// Get reads an account's campaign in full.
func (s *Service) Get(ctx context.Context, accountID, id string) (View, error) {
	return s.get(ctx, accountID, id, true)
}

// Overview reads an account's campaign without its artifacts, for answers that do not show them.
func (s *Service) Overview(ctx context.Context, accountID, id string) (View, error) {
	return s.get(ctx, accountID, id, false)
}

func (s *Service) get(ctx context.Context, accountID, id string, artifacts bool) (View, error) {
	return s.snapshotView(ctx, artifacts, func(tx *store.Store) (store.Campaign, error) {
		return s.owned(ctx, tx, accountID, id, false)
	})
}

// Summary reads a campaign without its artifacts (the answer of approve, cancel and retry).
func (s *Service) summary(ctx context.Context, id string) (View, error) {
	return s.snapshotView(ctx, false, func(tx *store.Store) (store.Campaign, error) {
		return tx.CampaignByID(ctx, id)
	})
}

// snapshotView reads a campaign (by read) and the rest of its view from one snapshot, so the view
// shows one state of the campaign and its stages.
func (s *Service) snapshotView(ctx context.Context, artifacts bool, read func(tx *store.Store) (store.Campaign, error)) (View, error) {
	var v View
	err := s.st.Snapshot(ctx, func(tx *store.Store) error {
		c, err := read(tx)
		if err != nil {
			return err
		}
		v, err = s.viewIn(ctx, tx, c, artifacts)
		return err
	})
	return v, err
}

// List pages an account's campaigns newest first.
func (s *Service) List(ctx context.Context, accountID string, status *string, req store.PageRequest) ([]View, *store.Cursor, error) {
	var page store.Page[store.Campaign]
	var stages []store.CampaignStage
	err := s.st.Snapshot(ctx, func(tx *store.Store) error {
		var err error
		if page, err = tx.ListCampaigns(ctx, accountID, status, req); err != nil {
			return err
		}
		ids := make([]string, len(page.Items))
		for i, c := range page.Items {
			ids[i] = c.ID
		}
		stages, err = tx.CampaignStages(ctx, ids...)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	byCampaign := map[string][]store.CampaignStage{}
	for _, st := range stages {
		byCampaign[st.CampaignID] = append(byCampaign[st.CampaignID], st)
	}
	out := make([]View, len(page.Items))
	for i, c := range page.Items {
		if out[i], err = decodeView(c, byCampaign[c.ID]); err != nil {
			return nil, nil, err
		}
	}
	return out, page.Next, nil
}

// view reads the rest of campaign c's view; c must be from the same snapshot when the view is
// shown as one state (get, summary).
func (s *Service) view(ctx context.Context, c store.Campaign, artifacts bool) (View, error) {
	return s.viewIn(ctx, s.st, c, artifacts)
}

func (s *Service) viewIn(ctx context.Context, st *store.Store, c store.Campaign, artifacts bool) (View, error) {
	stages, err := st.CampaignStages(ctx, c.ID)
	if err != nil {
		return View{}, err
	}
	v, err := decodeView(c, stages)
	if err != nil || !artifacts {
		return v, err
	}
	v.Artifacts, err = st.CampaignArtifacts(ctx, c.ID)
	return v, err
}

func decodeView(c store.Campaign, stages []store.CampaignStage) (View, error) {
	v := View{Campaign: c, Stages: stages}
	var err error
	if v.Plan, err = ParsePlan([]byte(c.Plan)); err != nil {
		return View{}, fmt.Errorf("campaign %s: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(c.Workforce), &v.Workforce); err != nil {
		return View{}, fmt.Errorf("campaign %s: decode workforce: %w", c.ID, err)
	}
	if err := json.Unmarshal([]byte(c.Capabilities), &v.Capabilities); err != nil {
		return View{}, fmt.Errorf("campaign %s: decode capabilities: %w", c.ID, err)
	}
	return v, nil
}

// StageStatus is a stage's status as shown: a running stage of a campaign that needs attention (or
// was cancelled) is paused.
func (v View) StageStatus(st store.CampaignStage) string {
	if st.Status == StageRunning && (v.Campaign.Status == NeedsAttention || v.Campaign.Status == Cancelled) {
		return "paused"
	}
	return st.Status
}

// NeedsAttention reports whether the campaign waits on its owner; the attention fields say why.
func (v View) NeedsAttention() bool { return v.Campaign.Status == NeedsAttention }

// NextStep says what happens next without the caller acting.
func (v View) NextStep() string {
	c := v.Campaign
	switch c.Status {
	case Draft:
		return "Nothing runs until you approve: POST /api/v2/campaigns/" + c.ID + "/approve with this review_digest."
	case Approved:
		return "The dispatcher starts the campaign within about 30 seconds."
	case Completed:
		return "Nothing: the campaign is completed. Download its deliverables."
	case Cancelled:
		return "Nothing: the campaign is cancelled. Finished records stay readable in the portfolio."
	case NeedsAttention:
		switch deref(c.AttentionAction) {
		case ActionAddCredits:
			return "Paused until credits are added; it resumes on its own once the balance covers the next worker."
		case ActionRetry:
			return "Paused: " + deref(c.AttentionMessage) + " POST .../retry to resume."
		}
		return "Paused: " + deref(c.AttentionMessage) + " Cancel to keep the finished records and deliverables."
	}
	for _, st := range v.Stages {
		if st.Status == StageRunning {
			return fmt.Sprintf("Stage %s is running (%d of %d records done); the campaign completes on its own.", st.Key, st.RecordsDone, st.RecordsTotal)
		}
	}
	return "The campaign moves on to its next stage on its own."
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
