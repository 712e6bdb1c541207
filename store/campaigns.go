package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
)

// InputStage is the stage key under which the records supplied at create are kept; no plan stage
// can have it (stage keys start with a letter).
const InputStage = ""

// WorkerSeq is the record position of the one worker of a root or aggregate stage; the records it
// produces are numbered from 1.
const WorkerSeq = 0

// Campaign is one campaign: its reviewed plan (normalized JSON), its budget and money counters, and
// its attention while it needs attention. CreditsReserved is what workers in flight hold; the
// budget guard is CreditsSpent + CreditsReserved.
type Campaign struct {
	ID                string  `gorm:"type:varchar(36);primaryKey"`
	AccountID         string  `gorm:"type:varchar(36);not null"`
	Name              string  `gorm:"type:varchar(200);not null"`
	Status            string  `gorm:"type:varchar(32);not null"`
	Revision          int     `gorm:"not null"`
	Objective         *string `gorm:"type:text"`
	Plan              string  `gorm:"type:text;not null"`
	MaxCredits        *int64
	ReviewDigest      string  `gorm:"type:varchar(64);not null"`
	ExpertID          *string `gorm:"type:varchar(255)"`
	ExpertName        *string `gorm:"type:varchar(255)"`
	Capabilities      string  `gorm:"type:text;not null"` // JSON array of strings
	Workforce         string  `gorm:"type:text;not null"` // JSON, as the API shows it
	RecordsSupplied   int     `gorm:"not null;default:0"`
	RecordsAccepted   int     `gorm:"not null;default:0"`
	BlankDropped      int     `gorm:"not null;default:0"`
	DuplicatesDropped int     `gorm:"not null;default:0"`
	CreditsSpent      int64   `gorm:"not null;default:0"`
	CreditsReserved   int64   `gorm:"not null;default:0"`
	AttentionReason   *string `gorm:"type:varchar(32)"`
	AttentionStage    *string `gorm:"type:varchar(64)"`
	AttentionMessage  *string `gorm:"type:text"`
	AttentionAction   *string `gorm:"type:varchar(16)"`
	ApprovedKeyID     *string `gorm:"type:varchar(36)"`
	CreatedAt         time.Time
	UpdatedAt         time.Time
	ApprovedAt        *time.Time
	StartedAt         *time.Time
	FinishedAt        *time.Time
	StatusChangedAt   *time.Time
}

// CampaignStage is a stage's progress. The counters change in the transactions that change its
// records, so RecordsTotal = done + failed + pending + running always holds for per-entity stages.
type CampaignStage struct {
	CampaignID      string  `gorm:"type:varchar(36);primaryKey"`
	Key             string  `gorm:"type:varchar(64);primaryKey"`
	Position        int     `gorm:"not null"`
	Status          string  `gorm:"type:varchar(16);not null"`
	Effort          *string `gorm:"type:varchar(16)"` // what runs, set when the stage starts
	RecordsTotal    int     `gorm:"not null;default:0"`
	RecordsDone     int     `gorm:"not null;default:0"`
	RecordsFailed   int     `gorm:"not null;default:0"`
	ChunksRunning   int     `gorm:"not null;default:0"`
	CreditsSpent    int64   `gorm:"not null;default:0"`
	CreditsReserved int64   `gorm:"not null;default:0"`
	GivenFields     *string `gorm:"type:text"` // JSON array: the given field names, in first-seen order
	WorkerError     *string `gorm:"type:text"` // why a root or aggregate worker failed
	StartedAt       *time.Time
	FinishedAt      *time.Time
}

// CampaignRecord is one record of a stage (or, under InputStage, one supplied record). Given holds
// the record's identity and given fields (JSON object), Output the researched fields its worker
// returned (JSON object) and Report the worker's report when the stage has no output schema. Chunk
// names the batch of work a running record belongs to.
type CampaignRecord struct {
	CampaignID string  `gorm:"type:varchar(36);primaryKey"`
	StageKey   string  `gorm:"type:varchar(64);primaryKey"`
	Seq        int     `gorm:"primaryKey;autoIncrement:false"`
	EntityKey  string  `gorm:"type:text;not null"`
	Status     string  `gorm:"type:varchar(16);not null"`
	Given      string  `gorm:"type:text;not null"`
	Output     *string `gorm:"type:text"`
	Report     *string `gorm:"type:text"`
	ErrorCode  *string `gorm:"type:varchar(64)"`
	Chunk      *string `gorm:"type:varchar(36)"`
	Duplicate  bool    `gorm:"not null;default:false"` // supplied records only: repeats an earlier key
	Attempts   int     `gorm:"not null;default:0"`
	UpdatedAt  time.Time
}

// CampaignArtifact is a built deliverable file, stored in the blob bucket under BlobKey.
type CampaignArtifact struct {
	CampaignID     string `gorm:"type:varchar(36);primaryKey"`
	DeliverableKey string `gorm:"type:varchar(64);primaryKey"`
	Filename       string `gorm:"type:varchar(255);not null"`
	MediaType      string `gorm:"type:varchar(100);not null"`
	ByteSize       int64  `gorm:"not null"`
	SHA256         string `gorm:"column:sha256;type:varchar(64);not null"`
	BlobKey        string `gorm:"type:varchar(300);not null"`
	CreatedAt      time.Time
}

// recordBatch is how many records one INSERT carries. Small on purpose: the pure-Go SQLite
// driver matches each bound value to its parameter by a linear scan, so a statement's binding cost
// grows with the square of its values (500 rows took four times the CPU of 100).
const recordBatch = 100

// CreateCampaign inserts a campaign, its stages and its supplied records.
func (s *Store) CreateCampaign(ctx context.Context, c *Campaign, stages []CampaignStage, input []CampaignRecord) error {
	if err := s.with(ctx).Create(c).Error; err != nil {
		return notFound(err, "create campaign")
	}
	if err := s.with(ctx).Create(&stages).Error; err != nil {
		return notFound(err, "create campaign stages")
	}
	return s.InsertCampaignRecords(ctx, input)
}

// InsertCampaignRecords inserts records in bulk.
func (s *Store) InsertCampaignRecords(ctx context.Context, rows []CampaignRecord) error {
	if len(rows) == 0 {
		return nil
	}
	if err := s.with(ctx).CreateInBatches(rows, recordBatch).Error; err != nil {
		return notFound(err, "insert campaign records")
	}
	return nil
}

// CampaignByID loads a campaign.
func (s *Store) CampaignByID(ctx context.Context, id string) (Campaign, error) {
	var c Campaign
	err := s.with(ctx).Where("id = ?", id).Take(&c).Error
	return c, notFound(err, "campaign "+id)
}

// LockCampaign loads a campaign for update: on Postgres the row stays locked until the
// transaction ends, so every change to one campaign's work happens one at a time (SQLite's single
// connection already serialises transactions).
func (s *Store) LockCampaign(ctx context.Context, id string) (Campaign, error) {
	var c Campaign
	err := s.forUpdate(ctx).Where("id = ?", id).Take(&c).Error
	return c, notFound(err, "campaign "+id)
}

// ListCampaigns pages an account's campaigns newest first, only those in status when set.
func (s *Store) ListCampaigns(ctx context.Context, accountID string, status *string, req PageRequest) (Page[Campaign], error) {
	q := s.with(ctx).Model(&Campaign{}).Where("account_id = ?", accountID)
	if status != nil {
		q = q.Where("status = ?", *status)
	}
	page, err := paginate(q, req, func(c Campaign) Cursor { return Cursor{CreatedAt: c.CreatedAt, ID: c.ID} })
	if err != nil {
		return page, fmt.Errorf("list campaigns: %w", err)
	}
	return page, nil
}

// CampaignsIn lists the campaigns in one of statuses, oldest change first, at most limit.
func (s *Store) CampaignsIn(ctx context.Context, statuses []string, limit int) ([]Campaign, error) {
	var cs []Campaign
	err := s.with(ctx).Where("status IN ?", statuses).Order("updated_at").Limit(limit).Find(&cs).Error
	if err != nil {
		return nil, fmt.Errorf("campaigns in %v: %w", statuses, err)
	}
	return cs, nil
}

// CampaignStages lists the stages of the campaigns, by campaign and plan order.
func (s *Store) CampaignStages(ctx context.Context, campaignIDs ...string) ([]CampaignStage, error) {
	var st []CampaignStage
	if len(campaignIDs) == 0 {
		return st, nil
	}
	err := s.with(ctx).Where("campaign_id IN ?", campaignIDs).Order("campaign_id").Order("position").Find(&st).Error
	if err != nil {
		return nil, fmt.Errorf("campaign stages: %w", err)
	}
	return st, nil
}

// ReplaceCampaignStages swaps a draft's stage rows for new ones (an edited plan).
func (s *Store) ReplaceCampaignStages(ctx context.Context, campaignID string, stages []CampaignStage) error {
	if err := s.with(ctx).Where("campaign_id = ?", campaignID).Delete(&CampaignStage{}).Error; err != nil {
		return fmt.Errorf("delete stages of campaign %s: %w", campaignID, err)
	}
	if err := s.with(ctx).Create(&stages).Error; err != nil {
		return notFound(err, "create campaign stages")
	}
	return nil
}

// CampaignRecordsAfter lists up to limit records of a stage after position after, in order;
// supplied records marked Duplicate are left out unless withDuplicates.
func (s *Store) CampaignRecordsAfter(ctx context.Context, campaignID, stageKey string, after, limit int, withDuplicates bool) ([]CampaignRecord, error) {
	q := s.with(ctx).Where("campaign_id = ? AND stage_key = ? AND seq > ?", campaignID, stageKey, after)
	if !withDuplicates {
		q = q.Where("duplicate = ?", false)
	}
	var rs []CampaignRecord
	if err := q.Order("seq").Limit(limit).Find(&rs).Error; err != nil {
		return nil, fmt.Errorf("records of stage %q of campaign %s: %w", stageKey, campaignID, err)
	}
	return rs, nil
}

// DoneCampaignRecordsAfter is CampaignRecordsAfter over the records whose worker succeeded.
func (s *Store) DoneCampaignRecordsAfter(ctx context.Context, st CampaignStatuses, campaignID, stageKey string, after, limit int) ([]CampaignRecord, error) {
	var rs []CampaignRecord
	err := s.with(ctx).Where("campaign_id = ? AND stage_key = ? AND seq > ? AND status = ?", campaignID, stageKey, max(after, WorkerSeq), st.RecordDone).
		Order("seq").Limit(limit).Find(&rs).Error
	if err != nil {
		return nil, fmt.Errorf("done records of stage %q of campaign %s: %w", stageKey, campaignID, err)
	}
	return rs, nil
}

// CampaignRecordAt loads one record.
func (s *Store) CampaignRecordAt(ctx context.Context, campaignID, stageKey string, seq int) (CampaignRecord, error) {
	var r CampaignRecord
	err := s.with(ctx).Where("campaign_id = ? AND stage_key = ? AND seq = ?", campaignID, stageKey, seq).Take(&r).Error
	return r, notFound(err, fmt.Sprintf("record %d of stage %q", seq, stageKey))
}

// RekeyInputRecords rewrites the entity key and duplicate mark of supplied records (a draft whose
// key field was edited), in bulk.
func (s *Store) RekeyInputRecords(ctx context.Context, rows []CampaignRecord) error {
	for start := 0; start < len(rows); start += recordBatch {
		part := rows[start:min(start+recordBatch, len(rows))]
		err := s.with(ctx).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "campaign_id"}, {Name: "stage_key"}, {Name: "seq"}},
			DoUpdates: clause.AssignmentColumns([]string{"entity_key", "duplicate"}),
		}).Create(&part).Error
		if err != nil {
			return fmt.Errorf("rekey supplied records: %w", err)
		}
	}
	return nil
}

// ClaimCampaignRecords marks up to limit pending records of a stage (lowest positions first)
// running under chunk, and returns how many it took. Call it with the campaign locked.
//
// Two statements, a range on purpose: the highest position to take (the limit-th pending one, by
// the claim index), then every pending record up to it. "seq IN (pending … LIMIT n)" let Postgres
// plan a nested loop over the whole stage when its statistics were stale — right after a stage's
// 100,000 records are written, in the same transaction — and one claim ran for minutes.
func (s *Store) ClaimCampaignRecords(ctx context.Context, st CampaignStatuses, campaignID, stageKey, chunk string, limit int, now time.Time) (int, error) {
	if limit < 1 {
		return 0, nil // Offset(limit-1) would be ignored, and the range below would take a record
	}
	pending := func() *gorm.DB {
		return s.with(ctx).Model(&CampaignRecord{}).Where("campaign_id = ? AND stage_key = ? AND status = ?", campaignID, stageKey, st.RecordPending)
	}
	var last []int
	if err := pending().Order("seq").Offset(limit-1).Limit(1).Pluck("seq", &last).Error; err != nil {
		return 0, fmt.Errorf("claim records of stage %s: %w", stageKey, err)
	}
	q := pending()
	if len(last) == 1 {
		q = q.Where("seq <= ?", last[0])
	} // else fewer than limit are pending: take them all
	res := q.Updates(map[string]any{"status": st.RecordRunning, "chunk": chunk, "error_code": nil, "attempts": gorm.Expr("attempts + 1"), "updated_at": now})
	if res.Error != nil {
		return 0, fmt.Errorf("claim records of stage %s: %w", stageKey, res.Error)
	}
	return int(res.RowsAffected), nil
}

// ChunkRecords lists the records a chunk holds, in order.
func (s *Store) ChunkRecords(ctx context.Context, st CampaignStatuses, chunk string) ([]CampaignRecord, error) {
	var rs []CampaignRecord
	if err := s.with(ctx).Where("chunk = ? AND status = ?", chunk, st.RecordRunning).Order("seq").Find(&rs).Error; err != nil {
		return nil, fmt.Errorf("records of chunk %s: %w", chunk, err)
	}
	return rs, nil
}

// SettleCampaignRecords writes the outcome of a chunk's records in one statement per batch: status,
// output, report and error code, and frees them from the chunk. Only records the chunk still holds
// change.
func (s *Store) SettleCampaignRecords(ctx context.Context, chunk string, rows []CampaignRecord) error {
	for start := 0; start < len(rows); start += recordBatch {
		part := rows[start:min(start+recordBatch, len(rows))]
		err := s.with(ctx).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "campaign_id"}, {Name: "stage_key"}, {Name: "seq"}},
			DoUpdates: clause.AssignmentColumns([]string{"status", "output", "report", "error_code", "chunk", "updated_at"}),
			Where:     clause.Where{Exprs: []clause.Expression{clause.Expr{SQL: "campaign_records.chunk = ?", Vars: []any{chunk}}}},
		}).Create(&part).Error
		if err != nil {
			return fmt.Errorf("settle records of chunk %s: %w", chunk, err)
		}
	}
	return nil
}

// PutCampaignArtifact records a built deliverable (a rebuild replaces the record).
func (s *Store) PutCampaignArtifact(ctx context.Context, a *CampaignArtifact) error {
	err := s.with(ctx).Clauses(clause.OnConflict{UpdateAll: true}).Create(a).Error
	if err != nil {
		return fmt.Errorf("record artifact %s of campaign %s: %w", a.DeliverableKey, a.CampaignID, err)
	}
	return nil
}

// CampaignArtifacts lists a campaign's built deliverables by key.
func (s *Store) CampaignArtifacts(ctx context.Context, campaignID string) ([]CampaignArtifact, error) {
	var as []CampaignArtifact
	if err := s.with(ctx).Where("campaign_id = ?", campaignID).Order("deliverable_key").Find(&as).Error; err != nil {
		return nil, fmt.Errorf("artifacts of campaign %s: %w", campaignID, err)
	}
	return as, nil
}

// APIKeyByID loads an API key (a campaign checks that the key that approved it is still usable).
func (s *Store) APIKeyByID(ctx context.Context, id string) (APIKey, error) {
	var k APIKey
	err := s.with(ctx).Where("id = ?", id).Take(&k).Error
	return k, notFound(err, "api key "+id)
}
