package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// UpdateInput is a PATCH of a draft: nil fields are unchanged; MaxCreditsSet with a nil MaxCredits
// removes the budget.
type UpdateInput struct {
	AccountID, Tier, ID string
	Plan                *Plan
	Name                *string
	MaxCreditsSet       bool
	MaxCredits          *int64
	Revision            *int
}

// Update edits a draft: its name, budget, or plan (sent back unchanged or with one stage changed).
// Any change increments the revision and so the digest; an edit that changes nothing answers the
// campaign as it is.
func (s *Service) Update(ctx context.Context, in UpdateInput) (View, error) {
	c, err := s.owned(ctx, s.st, in.AccountID, in.ID, false)
	if err != nil {
		return View{}, err
	}
	if c.Status != Draft {
		return View{}, ErrNotEditable
	}
	if in.Revision != nil && *in.Revision != c.Revision {
		return View{}, fmt.Errorf("%w: the campaign is at revision %d, the edit is based on %d", ErrRevisionConflict, c.Revision, *in.Revision)
	}
	cur, err := ParsePlan([]byte(c.Plan))
	if err != nil {
		return View{}, err
	}
	next := c
	plan := cur
	if in.Plan != nil {
		plan = in.Plan.Normalize()
		changed, err := ChangedStages(cur, plan)
		if err != nil {
			return View{}, invalid("plan", err.Error())
		}
		if len(changed) > 1 {
			return View{}, invalid("plan", fmt.Sprintf("%d stages changed; an edit changes at most one stage (edit them one at a time)", len(changed)))
		}
	}
	if in.Name != nil {
		next.Name = *in.Name
	}
	if in.MaxCreditsSet {
		next.MaxCredits = in.MaxCredits
	}
	if c.ExpertID != nil { // a one-stage campaign's own agent is its stage's
		next.ExpertID, next.ExpertName = nil, nil
		if a := plan.Stages[0].Agent; a != nil {
			next.ExpertID = &a.ID
		}
	}
	rows, err := s.recheckSupplied(ctx, &next, cur, plan)
	if err != nil {
		return View{}, err
	}
	if _, err := s.review(ctx, &next, plan, "plan/", in.Tier); err != nil {
		return View{}, err
	}
	if next.Plan == c.Plan && next.Name == c.Name && equalBudget(next.MaxCredits, c.MaxCredits) {
		return s.view(ctx, c, true)
	}
	next.Revision = c.Revision + 1
	if next.ReviewDigest, err = Digest(plan, next.Revision, next.MaxCredits); err != nil {
		return View{}, err
	}
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		now, err := tx.LockCampaign(ctx, c.ID)
		if err != nil {
			return err
		}
		if now.Status != Draft {
			return ErrNotEditable
		}
		if now.Revision != c.Revision {
			return fmt.Errorf("%w: the campaign changed while this edit was checked; read it again", ErrRevisionConflict)
		}
		next.UpdatedAt = s.now()
		if err := tx.ReviseCampaignDraft(ctx, next); err != nil {
			return err
		}
		if next.Plan != c.Plan {
			if err := tx.ReplaceCampaignStages(ctx, c.ID, stageRows(c.ID, plan)); err != nil {
				return err
			}
		}
		return tx.RekeyInputRecords(ctx, rows)
	})
	if err != nil {
		return View{}, err
	}
	return s.Get(ctx, in.AccountID, c.ID)
}

func equalBudget(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// recheckSupplied checks the supplied records against an edited plan: records still need a stage
// that reads them, and when the stage reading them changed, every record is keyed again and its
// assignment measured. It returns the rows to rekey (none when the reading stage is unchanged).
func (s *Service) recheckSupplied(ctx context.Context, c *store.Campaign, cur, next Plan) ([]store.CampaignRecord, error) {
	if probs := suppliedProblems(next, "plan/", "plan", c.RecordsSupplied > 0); len(probs) > 0 {
		return nil, refuse(probs)
	}
	was, now := intake(cur), intake(next)
	if now == nil || (was != nil && asJSONEqual(*was, *now)) {
		return nil, nil
	}
	var rows []store.CampaignRecord
	err := eachRecord(ctx, allRecords(s.st, c.ID, store.InputStage), func(r store.CampaignRecord) error {
		rows = append(rows, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	dups, probs := rekey(rows, now)
	for _, r := range rows {
		var rec map[string]any
		if err := json.Unmarshal([]byte(r.Given), &rec); err != nil {
			return nil, fmt.Errorf("supplied record %d: %w", r.Seq, err)
		}
		if n := utf8.RuneCountInString(Assignment(*now, rec)); n > s.cfg.Limits.MaxAssignmentChars {
			probs = append(probs, fault.Field{Field: "plan", Message: fmt.Sprintf("supplied record %d: the assignment would be %d characters; the limit is %d (max_assignment_chars)",
				r.Seq, n, s.cfg.Limits.MaxAssignmentChars)})
			break
		}
	}
	if len(probs) > 0 {
		return nil, refuse(probs)
	}
	c.DuplicatesDropped = dups
	c.RecordsAccepted = c.RecordsSupplied - c.BlankDropped - dups
	return rows, nil
}

func asJSONEqual(a, b Stage) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Approve approves a draft reviewed with its current digest; the dispatcher then starts it.
// keyID is the API key approving (the campaign runs under it while it stays usable).
func (s *Service) Approve(ctx context.Context, accountID, keyID, id, digest string) (View, error) {
	c, err := s.owned(ctx, s.st, accountID, id, false)
	if err != nil {
		return View{}, err
	}
	if c.Status != Draft {
		return View{}, ErrNotDraft
	}
	if digest != c.ReviewDigest {
		return View{}, ErrDigestMismatch
	}
	v, err := decodeView(c, nil)
	if err != nil {
		return View{}, err
	}
	if err := s.agentTiers(ctx, accountID, v.Plan); err != nil {
		return View{}, err
	}
	if err := s.affordable(ctx, accountID, v.Plan, v.Workforce.efforts()); err != nil {
		return View{}, err
	}
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		now := s.now()
		ok, err := tx.ApproveCampaign(ctx, statuses, c.ID, keyRef(keyID), now)
		if err != nil {
			return err
		}
		if !ok {
			return ErrNotDraft
		}
		cur, err := tx.CampaignByID(ctx, c.ID)
		if err != nil {
			return err
		}
		if cur.ReviewDigest != digest {
			return ErrDigestMismatch // edited between the check and the update: roll back
		}
		return s.enqueueAdvance(ctx, tx, c.ID)
	})
	if err != nil {
		return View{}, err
	}
	return s.summary(ctx, c.ID)
}

// Cancel stops a campaign that has not finished: nothing new starts, and chunks in flight give
// back the records they have not answered. A finished campaign is returned unchanged.
func (s *Service) Cancel(ctx context.Context, accountID, id string) (View, error) {
	err := s.st.InTx(ctx, func(tx *store.Store) error {
		c, err := s.owned(ctx, tx, accountID, id, true)
		if err != nil || Terminal(c.Status) {
			return err
		}
		return tx.CancelCampaign(ctx, statuses, c.ID, s.now())
	})
	if err != nil {
		return View{}, err
	}
	return s.summary(ctx, id)
}

// efforts are the members' efforts in plan order.
func (w Workforce) efforts() resolved {
	var r resolved
	for _, m := range w.Members {
		r.effort = append(r.effort, m.Effort)
	}
	return r
}

// Retry resumes a campaign that needs attention: a failed stage's failed work is reset to
// pending, a campaign paused for credits resumes once they cover the next worker (else
// ErrInsufficientCredits), and an unusable key is replaced by keyID, the key making the call. A
// spent budget cannot be retried: it was approved with the plan.
func (s *Service) Retry(ctx context.Context, accountID, keyID, id string) (View, error) {
	err := s.st.InTx(ctx, func(tx *store.Store) error {
		c, err := s.owned(ctx, tx, accountID, id, true)
		if err != nil {
			return err
		}
		if c.Status != NeedsAttention {
			return fmt.Errorf("%w: the campaign is %s; only a campaign that needs attention can be retried", ErrNotRetryable, c.Status)
		}
		switch deref(c.AttentionReason) {
		case ReasonBudgetExhausted:
			return fmt.Errorf("%w: the budget was approved with the plan and cannot be raised; cancel to keep the finished records and deliverables", ErrNotRetryable)
		case ReasonQuotaExhausted:
			ok, err := s.creditsForNext(ctx, tx, c)
			if err != nil {
				return err
			}
			if !ok {
				return noCredits("add credits first")
			}
		case ReasonKeyUnusable:
			if err := tx.ReplaceCampaignKey(ctx, c.ID, keyRef(keyID)); err != nil {
				return err
			}
		case ReasonStageFailed:
			if err := s.resetStage(ctx, tx, c, deref(c.AttentionStage)); err != nil {
				return err
			}
		}
		if err := s.resume(ctx, tx, &c); err != nil {
			return err
		}
		return s.enqueueAdvance(ctx, tx, c.ID)
	})
	if err != nil {
		return View{}, err
	}
	return s.summary(ctx, id)
}

// resetStage puts a failed stage's failed work back to pending and the stage back to running.
func (s *Service) resetStage(ctx context.Context, tx *store.Store, c store.Campaign, key string) error {
	plan, err := ParsePlan([]byte(c.Plan))
	if err != nil {
		return err
	}
	ps, ok := plan.Stage(key)
	_, err = tx.RetryCampaignStage(ctx, statuses, c.ID, key, ok && !ps.Single(), s.now())
	return err
}
