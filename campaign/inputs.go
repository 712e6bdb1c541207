package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/researchd/researchd/store"
)

// inputPage is how many records one read of a stage's inputs takes.
const inputPage = 1000

// errEnough stops reading inputs early.
var errEnough = errors.New("enough records")

// eachInput calls fn with every record a stage reads, in order: the supplied records for a
// starting stage, else the accepted (done) records of each stage it depends on, in depends_on
// order. A record's fields are its given fields with the researched ones of its stage added (a
// given field wins over a researched one of the same name); report is its worker's report, if
// kept. db may be a transaction.
func (s *Service) eachInput(ctx context.Context, db *store.Store, c store.Campaign, ps Stage, fn func(fields map[string]any, report *string) error) error {
	sources := ps.DependsOn
	if ps.Starting() {
		sources = []string{store.InputStage}
	}
	for _, src := range sources {
		read := doneRecords(db, c.ID, src)
		if src == store.InputStage {
			read = allRecords(db, c.ID, src)
		}
		err := eachRecord(ctx, read, func(r store.CampaignRecord) error {
			fields, err := recordFields(r)
			if err != nil {
				return err
			}
			return fn(fields, r.Report)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// recordPage reads up to limit records of one stage after position after, in order.
type recordPage func(ctx context.Context, after, limit int) ([]store.CampaignRecord, error)

// allRecords pages a stage's records, supplied repeats included. db may be a transaction.
func allRecords(db *store.Store, campaignID, stageKey string) recordPage {
	return func(ctx context.Context, after, limit int) ([]store.CampaignRecord, error) {
		return db.CampaignRecordsAfter(ctx, campaignID, stageKey, after, limit, true)
	}
}

// doneRecords pages a stage's records whose worker succeeded. db may be a transaction.
func doneRecords(db *store.Store, campaignID, stageKey string) recordPage {
	return func(ctx context.Context, after, limit int) ([]store.CampaignRecord, error) {
		return db.DoneCampaignRecordsAfter(ctx, statuses, campaignID, stageKey, after, limit)
	}
}

// eachRecord calls fn with the records read returns (not a stage's worker, at position 0), in
// order, reading inputPage at a time: keyset pages by position, so a stage of 100,000 records is
// never held at once; a short page is the last.
func eachRecord(ctx context.Context, read recordPage, fn func(store.CampaignRecord) error) error {
	for after := 0; ; {
		page, err := read(ctx, after, inputPage)
		if err != nil {
			return err
		}
		for _, r := range page {
			if err := fn(r); err != nil {
				return err
			}
		}
		if len(page) < inputPage {
			return nil
		}
		after = page[len(page)-1].Seq
	}
}

// recordFields merges a record's researched fields under its given ones.
func recordFields(r store.CampaignRecord) (map[string]any, error) {
	fields := map[string]any{}
	if r.Output != nil {
		if err := json.Unmarshal([]byte(*r.Output), &fields); err != nil {
			return nil, fmt.Errorf("record %d of stage %q: decode output: %w", r.Seq, r.StageKey, err)
		}
	}
	var given map[string]any
	if err := json.Unmarshal([]byte(r.Given), &given); err != nil {
		return nil, fmt.Errorf("record %d of stage %q: decode fields: %w", r.Seq, r.StageKey, err)
	}
	for k, v := range given {
		fields[k] = v
	}
	return fields, nil
}

// materialize writes a per-entity stage's records from its inputs: identified by the stage's key
// field (records without a value are left out, repeats kept once) or by position, at most
// max_records_per_stage. It returns how many it wrote and the given field names in first-seen
// order (JSON).
func (s *Service) materialize(ctx context.Context, tx *store.Store, c store.Campaign, ps Stage, now time.Time) (int, string, error) {
	var rows []store.CampaignRecord
	var order []string
	known := map[string]bool{}
	seen := map[string]bool{}
	n := 0
	flush := func() error {
		err := tx.InsertCampaignRecords(ctx, rows)
		rows = rows[:0]
		return err
	}
	err := s.eachInput(ctx, tx, c, ps, func(fields map[string]any, _ *string) error {
		if n >= s.cfg.Limits.MaxRecordsPerStage {
			return errEnough
		}
		key, dup, missing := entityKey(&ps, fields, n+1, seen)
		if dup || missing != "" {
			return nil
		}
		b, err := json.Marshal(fields)
		if err != nil {
			return fmt.Errorf("encode record: %w", err)
		}
		n++
		for _, k := range sortedKeys(fields) {
			if !known[k] {
				known[k] = true
				order = append(order, k)
			}
		}
		rows = append(rows, store.CampaignRecord{CampaignID: c.ID, StageKey: ps.Key, Seq: n, EntityKey: key, Status: RecordPending, Given: string(b), UpdatedAt: now})
		if len(rows) == inputPage {
			return flush()
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return 0, "", err
	}
	if err := flush(); err != nil {
		return 0, "", err
	}
	if order == nil {
		order = []string{}
	}
	b, err := json.Marshal(order)
	return n, string(b), err
}

// aggregateInput is what an aggregate worker sees: the assignment with the records listed (as
// many as fit the assignment limit) and every record, with its report, as a source document.
func (s *Service) aggregateInput(ctx context.Context, c store.Campaign, ps Stage) (question string, doc []byte, err error) {
	var list, src strings.Builder
	base := Assignment(ps, nil)
	budget := s.cfg.Limits.MaxAssignmentChars - len(base) - 100
	n, listed := 0, 0
	err = s.eachInput(ctx, s.st, c, ps, func(fields map[string]any, report *string) error {
		n++
		line := "- " + strings.ReplaceAll(renderFields(fields), "\n", "; ") + "\n"
		if list.Len()+len(line) <= budget {
			list.WriteString(line)
			listed++
		}
		fmt.Fprintf(&src, "## Record %d\n\n%s\n\n", n, renderFields(fields))
		if report != nil {
			src.WriteString(*report + "\n\n")
		}
		return nil
	})
	if err != nil {
		return "", nil, err
	}
	head := fmt.Sprintf("Records (%d):", n)
	if listed < n {
		head = fmt.Sprintf("Records (%d of %d shown; all are in the source records.md):", listed, n)
	}
	return strings.TrimSpace(base + "\n\n" + head + "\n" + list.String()), []byte(src.String()), nil
}
