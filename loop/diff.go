package loop

import (
	"context"
	"errors"
	"reflect"
	"sort"
	"strings"

	"github.com/researchd/researchd/store"
)

// Change kinds of one question between two runs.
const (
	// ChangeChanged: both runs answered and the headline or a structured-output field differs.
	ChangeChanged = "changed"
	// ChangeUnchanged: both runs answered the same.
	ChangeUnchanged = "unchanged"
	// ChangeNew: this run answered, the previous run did not (no previous run, the question was
	// not in it, or its row did not succeed).
	ChangeNew = "new"
	// ChangeNotComparable: this run's row has no answer (still running, or failed).
	ChangeNotComparable = "not_comparable"
)

// FieldChange is one structured-output value that differs: Path is a JSON pointer into the
// structured output; Old or New is absent (OldSet/NewSet false) when the field was added or
// removed.
type FieldChange struct {
	Path           string
	Old, New       any
	OldSet, NewSet bool
}

// QuestionDiff is one question of a run against the previous run.
type QuestionDiff struct {
	RowNumber         int
	PreviousRowNumber *int
	Question          string
	Status            string // this run's row status
	Change            string
	HeadlineChanged   bool
	Headline          *string
	PreviousHeadline  *string
	ChangedFields     []FieldChange
}

// RunDiff is GET /loops/{id}/runs/{n}/diff.
type RunDiff struct {
	ScheduleID        string
	RunNumber         int
	BatchID           string
	PreviousRunNumber *int
	PreviousBatchID   *string
	Questions         []QuestionDiff
}

// Diff compares run n of a loop with the run before it, question by question. Questions are
// matched by their text (a PATCH may reorder or replace them); a question asked twice is matched
// in order.
func (s *Service) Diff(ctx context.Context, accountID, id string, n int) (RunDiff, error) {
	l, err := s.load(ctx, s.st, accountID, id)
	if err != nil {
		return RunDiff{}, err
	}
	run, err := s.st.ScheduleRunAt(ctx, l.ID, n)
	if errors.Is(err, store.ErrNotFound) {
		return RunDiff{}, ErrRunNotFound
	}
	if err != nil {
		return RunDiff{}, err
	}
	cur, err := s.batches.RunResults(ctx, run.BatchID)
	if err != nil {
		return RunDiff{}, err
	}
	d := RunDiff{ScheduleID: l.ID, RunNumber: n, BatchID: run.BatchID}
	prevByQ := map[string][]RowResult{}
	prev, err := s.st.ScheduleRunBefore(ctx, l.ID, n)
	switch {
	case err == nil:
		d.PreviousRunNumber, d.PreviousBatchID = &prev.RunNumber, &prev.BatchID
		old, err := s.batches.RunResults(ctx, prev.BatchID)
		if err != nil {
			return RunDiff{}, err
		}
		for _, r := range old {
			k := questionKey(r.Question)
			prevByQ[k] = append(prevByQ[k], r)
		}
	case !errors.Is(err, store.ErrNotFound):
		return RunDiff{}, err
	}
	for _, r := range cur {
		q := QuestionDiff{RowNumber: r.RowNumber, Question: r.Question, Status: r.Status, Headline: r.Headline}
		var old *RowResult
		if k := questionKey(r.Question); len(prevByQ[k]) > 0 {
			old = &prevByQ[k][0]
			prevByQ[k] = prevByQ[k][1:]
			q.PreviousRowNumber, q.PreviousHeadline = &old.RowNumber, old.Headline
		}
		switch {
		case r.Status != "SUCCESS":
			q.Change = ChangeNotComparable
		case old == nil || old.Status != "SUCCESS":
			q.Change = ChangeNew
		default:
			q.HeadlineChanged = normalize(r.Headline) != normalize(old.Headline)
			q.ChangedFields = diffValues("", old.StructuredOutput, r.StructuredOutput, old.StructuredOutput != nil, r.StructuredOutput != nil)
			q.Change = ChangeUnchanged
			if q.HeadlineChanged || len(q.ChangedFields) > 0 {
				q.Change = ChangeChanged
			}
		}
		d.Questions = append(d.Questions, q)
	}
	return d, nil
}

func questionKey(q string) string { return strings.Join(strings.Fields(strings.ToLower(q)), " ") }

func normalize(s *string) string {
	if s == nil {
		return ""
	}
	return strings.Join(strings.Fields(*s), " ")
}

// diffValues lists the leaves that differ between two JSON values: objects are compared key by
// key (recursively), anything else (arrays included) as a whole.
func diffValues(path string, old, cur any, oldSet, curSet bool) []FieldChange {
	om, oldObj := old.(map[string]any)
	cm, curObj := cur.(map[string]any)
	if oldSet && curSet && oldObj && curObj {
		keys := map[string]bool{}
		for k := range om {
			keys[k] = true
		}
		for k := range cm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		var out []FieldChange
		for _, k := range sorted {
			ov, ok1 := om[k]
			cv, ok2 := cm[k]
			out = append(out, diffValues(path+"/"+pointerEscape(k), ov, cv, ok1, ok2)...)
		}
		return out
	}
	if oldSet == curSet && (!oldSet || reflect.DeepEqual(old, cur)) {
		return nil
	}
	return []FieldChange{{Path: path, Old: old, New: cur, OldSet: oldSet, NewSet: curSet}}
}

func pointerEscape(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}
