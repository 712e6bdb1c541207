package loop_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/require"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/loop"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/store/storetest"
)

// testBatch is a run's batch as the test implementation of loop.Batches keeps it: a real table
// in the test database, written inside the firing's transaction, so a rolled-back claim leaves
// no batch and a duplicate firing would leave two.
type testBatch struct {
	ID         string `gorm:"type:varchar(36);primaryKey"`
	ScheduleID string `gorm:"type:varchar(36);index"`
	RunNumber  int
	AccountID  string `gorm:"type:varchar(36)"`
	Name       string
	Status     string
	Total      int
	Succeeded  int
	Failed     int
	CreatedAt  time.Time
}

type testRow struct {
	BatchID          string `gorm:"type:varchar(36);primaryKey"`
	RowNumber        int    `gorm:"primaryKey;autoIncrement:false"`
	Question         string
	Status           string
	Headline         *string
	StructuredOutput *string
}

// testBatches implements loop.Batches over those tables. NoCredits makes CreateRun answer
// insufficient credits; Broken makes it refuse the configuration.
type testBatches struct {
	st        *store.Store
	NoCredits atomic.Bool
	Broken    atomic.Bool
}

func newTestBatches(t *testing.T, st *store.Store) *testBatches {
	t.Helper()
	require.NoError(t, st.DB().AutoMigrate(&testBatch{}, &testRow{}))
	return &testBatches{st: st}
}

func (b *testBatches) Validate(_ context.Context, _ string, cfg loop.Config) error {
	if cfg.ExpertID != nil && *cfg.ExpertID == "missing" {
		return fault.InvalidInput(fault.Field{Field: "expert_id", Message: "no expert missing"})
	}
	if cfg.MaxCredits != nil && *cfg.MaxCredits < 1 {
		f := fault.InvalidInput(fault.Field{Field: "max_credits", Message: "too low"})
		f.Code = "max_credits_too_low"
		return f
	}
	return nil
}

func (b *testBatches) PrepareRun(context.Context, loop.RunInput) (any, error) { return nil, nil }

func (b *testBatches) CreateRun(ctx context.Context, tx *store.Store, in loop.RunInput) (string, error) {
	if b.NoCredits.Load() {
		return "", fmt.Errorf("account %s: %w", in.AccountID, loop.ErrInsufficientCredits)
	}
	if b.Broken.Load() {
		return "", fault.InvalidInput(fault.Field{Field: "expert_id", Message: "expert gone"})
	}
	tb := testBatch{ID: uuid.NewString(), ScheduleID: in.ScheduleID, RunNumber: in.RunNumber, AccountID: in.AccountID,
		Name: in.Name, Status: loop.StatusPending, Total: len(in.Config.Questions), CreatedAt: time.Now().UTC()}
	if err := tx.DB().WithContext(ctx).Create(&tb).Error; err != nil {
		return "", err
	}
	for i, q := range in.Config.Questions {
		if err := tx.DB().WithContext(ctx).Create(&testRow{BatchID: tb.ID, RowNumber: i + 1, Question: q, Status: "PENDING"}).Error; err != nil {
			return "", err
		}
	}
	return tb.ID, nil
}

func (b *testBatches) RunStates(ctx context.Context, ids []string) (map[string]loop.RunState, error) {
	var bs []testBatch
	if err := b.st.DB().WithContext(ctx).Where("id IN ?", ids).Find(&bs).Error; err != nil {
		return nil, err
	}
	out := map[string]loop.RunState{}
	for _, x := range bs {
		out[x.ID] = loop.RunState{Status: x.Status, TotalRows: x.Total, ProcessedRows: x.Succeeded + x.Failed, SucceededRows: x.Succeeded}
	}
	return out, nil
}

func (b *testBatches) RunResults(ctx context.Context, batchID string) ([]loop.RowResult, error) {
	var rows []testRow
	if err := b.st.DB().WithContext(ctx).Where("batch_id = ?", batchID).Order("row_number").Find(&rows).Error; err != nil {
		return nil, err
	}
	out := make([]loop.RowResult, len(rows))
	for i, r := range rows {
		out[i] = loop.RowResult{RowNumber: r.RowNumber, Question: r.Question, Status: r.Status, Headline: r.Headline}
		if r.StructuredOutput != nil {
			if err := json.Unmarshal([]byte(*r.StructuredOutput), &out[i].StructuredOutput); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// finish ends a batch with succeeded SUCCESS rows and the rest FAILED.
func (b *testBatches) finish(t *testing.T, batchID string, succeeded int) {
	t.Helper()
	var tb testBatch
	require.NoError(t, b.st.DB().Where("id = ?", batchID).Take(&tb).Error)
	status := loop.StatusProcessedSuccessfully
	if succeeded < tb.Total {
		status = loop.StatusProcessedWithErrors
	}
	require.NoError(t, b.st.DB().Model(&testBatch{}).Where("id = ?", batchID).
		Updates(map[string]any{"status": status, "succeeded": succeeded, "failed": tb.Total - succeeded}).Error)
}

// answer sets a row's outcome (SUCCESS with headline and structured output, given as JSON).
func (b *testBatches) answer(t *testing.T, batchID string, row int, headline, structured string) {
	t.Helper()
	set := map[string]any{"status": "SUCCESS", "headline": headline, "structured_output": nil}
	if structured != "" {
		set["structured_output"] = structured
	}
	require.NoError(t, b.st.DB().Model(&testRow{}).Where("batch_id = ? AND row_number = ?", batchID, row).Updates(set).Error)
}

func (b *testBatches) count(t *testing.T, scheduleID string) int {
	t.Helper()
	var n int64
	require.NoError(t, b.st.DB().Model(&testBatch{}).Where("schedule_id = ?", scheduleID).Count(&n).Error)
	return int(n)
}

// bundle is one test's service over a fresh database.
type bundle struct {
	st      *store.Store
	svc     *loop.Service
	batches *testBatches
	clock   *clockwork.FakeClock
	account string
}

func setup(t *testing.T, d store.Dialect, start time.Time) *bundle {
	t.Helper()
	st := storetest.Open(t, d)
	return setupOn(t, st, clockwork.NewFakeClockAt(start))
}

func setupOn(t *testing.T, st *store.Store, clock *clockwork.FakeClock) *bundle {
	t.Helper()
	tb := newTestBatches(t, st)
	svc, err := loop.New(loop.Deps{Store: st, Batches: tb, Clock: clock})
	require.NoError(t, err)
	return &bundle{st: st, svc: svc, batches: tb, clock: clock, account: uuid.NewString()}
}

// create makes a loop with two questions on the given schedule.
func (b *bundle) create(t *testing.T, sched loop.ScheduleInput) loop.Loop {
	t.Helper()
	l, replayed, err := b.svc.Create(context.Background(), loop.CreateInput{
		AccountID: b.account, Name: "watch",
		Config:   loop.Config{Questions: []string{"What is new at Initech?", " ", "What is new at Hooli?"}},
		Schedule: sched,
	})
	require.NoError(t, err)
	require.False(t, replayed)
	return l
}

func (b *bundle) get(t *testing.T, id string) loop.Detail {
	t.Helper()
	d, err := b.svc.Get(context.Background(), b.account, id)
	require.NoError(t, err)
	return d
}

func daily(h, m int) loop.ScheduleInput {
	return loop.ScheduleInput{Frequency: loop.Daily, Hour: &h, Minute: &m}
}
