package campaign

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"gocloud.dev/blob"

	"github.com/researchd/researchd/schema"
	"github.com/researchd/researchd/store"
)

// deliverArgs asks for one deliverable file to be built.
type deliverArgs struct {
	CampaignID     string `json:"campaign_id"`
	DeliverableKey string `json:"deliverable_key"`
}

func (deliverArgs) Kind() string { return "campaign_deliver" }

type deliverWorker struct {
	river.WorkerDefaults[deliverArgs]
	svc *Service
}

func (w *deliverWorker) Timeout(*river.Job[deliverArgs]) time.Duration { return 30 * time.Minute }

func (w *deliverWorker) Work(ctx context.Context, job *river.Job[deliverArgs]) error {
	return w.svc.deliver(ctx, job.Args.CampaignID, job.Args.DeliverableKey)
}

// Media types of the deliverable formats.
var mediaTypes = map[string]string{FormatCSV: "text/csv; charset=utf-8", FormatJSON: "application/json", FormatMarkdown: "text/markdown; charset=utf-8"}

// columns are a stage's fields in display order: identity, given, researched.
type columns struct {
	identity   string // the key field, or "position"
	keyed      bool
	given      []string
	researched []string
	types      map[string]string
}

// deliver builds a deliverable file from its stage's records, streaming them from the database
// into the blob store while hashing, then records it and lets the dispatcher finish the campaign.
func (s *Service) deliver(ctx context.Context, id, key string) error {
	c, err := s.st.CampaignByID(ctx, id)
	if err != nil {
		return err
	}
	v, err := decodeView(c, nil)
	if err != nil {
		return err
	}
	d, ok := v.Plan.Deliverable(key)
	if !ok {
		return fmt.Errorf("campaign %s has no deliverable %s", id, key)
	}
	ps, _ := v.Plan.Stage(d.StageKey)
	cols, err := s.columns(ctx, c.ID, ps)
	if err != nil {
		return err
	}
	blobKey := "campaigns/" + c.ID + "/" + d.Key + "/" + d.Filename
	w, err := s.bucket.NewWriter(ctx, blobKey, &blob.WriterOptions{ContentType: mediaTypes[d.Format]})
	if err != nil {
		return fmt.Errorf("open deliverable %s: %w", key, err)
	}
	h := sha256.New()
	n := &counter{}
	if err := s.writeDeliverable(ctx, io.MultiWriter(w, h, n), c, ps, d, cols); err != nil {
		_ = w.Close()
		return err
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("store deliverable %s: %w", key, err)
	}
	a := store.CampaignArtifact{CampaignID: c.ID, DeliverableKey: d.Key, Filename: d.Filename, MediaType: mediaTypes[d.Format],
		ByteSize: n.n, SHA256: hex.EncodeToString(h.Sum(nil)), BlobKey: blobKey, CreatedAt: s.now()}
	return s.st.InTx(ctx, func(tx *store.Store) error {
		c, err := tx.LockCampaign(ctx, id)
		if err != nil {
			return err
		}
		if err := tx.PutCampaignArtifact(ctx, &a); err != nil {
			return err
		}
		return s.advanceTx(ctx, tx, c)
	})
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

func (s *Service) writeDeliverable(ctx context.Context, w io.Writer, c store.Campaign, ps Stage, d Deliverable, cols columns) error {
	switch d.Format {
	case FormatJSON:
		return s.writeJSON(ctx, w, c, ps, cols)
	case FormatMarkdown:
		return s.writeMarkdown(ctx, w, c, ps, d, cols)
	}
	return s.writeCSV(ctx, w, c, ps, cols)
}

// writeCSV writes one row per record: identity, given and researched columns, then error_code.
func (s *Service) writeCSV(ctx context.Context, w io.Writer, c store.Campaign, ps Stage, cols columns) error {
	cw := csv.NewWriter(w)
	head := append(append(append([]string{cols.identity}, cols.given...), cols.researched...), "error_code")
	if err := cw.Write(head); err != nil {
		return err
	}
	row := make([]string, len(head))
	err := eachRecord(ctx, allRecords(s.st, c.ID, ps.Key), func(r store.CampaignRecord) error {
		fields, err := cols.values(r)
		if err != nil {
			return err
		}
		row[0] = r.EntityKey
		for i, name := range head[1 : len(head)-1] {
			row[i+1] = cell(fields[name])
		}
		row[len(row)-1] = deref(r.ErrorCode)
		return cw.Write(row)
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// writeJSON writes an array of records: their fields, plus status and error_code.
func (s *Service) writeJSON(ctx context.Context, w io.Writer, c store.Campaign, ps Stage, cols columns) error {
	if _, err := io.WriteString(w, "["); err != nil {
		return err
	}
	first := true
	err := eachRecord(ctx, allRecords(s.st, c.ID, ps.Key), func(r store.CampaignRecord) error {
		fields, err := cols.values(r)
		if err != nil {
			return err
		}
		fields["status"], fields["error_code"] = r.Status, r.ErrorCode
		if !cols.keyed {
			fields[cols.identity] = r.Seq
		}
		b, err := json.Marshal(fields)
		if err != nil {
			return err
		}
		if !first {
			b = append([]byte{','}, b...)
		}
		first = false
		_, err = w.Write(append([]byte("\n"), b...))
		return err
	})
	if err != nil {
		return err
	}
	_, err = io.WriteString(w, "\n]\n")
	return err
}

// writeMarkdown writes the records' reports (or their fields) in one document.
func (s *Service) writeMarkdown(ctx context.Context, w io.Writer, c store.Campaign, ps Stage, d Deliverable, cols columns) error {
	if _, err := fmt.Fprintf(w, "# %s\n\n_%s · stage %s_\n\n", d.Title, c.Name, ps.Title); err != nil {
		return err
	}
	return eachRecord(ctx, allRecords(s.st, c.ID, ps.Key), func(r store.CampaignRecord) error {
		fields, err := cols.values(r)
		if err != nil {
			return err
		}
		delete(fields, "report")
		var b strings.Builder
		fmt.Fprintf(&b, "## %s\n\n", r.EntityKey)
		for _, k := range append(slices.Clone(cols.given), cols.researched...) {
			if v, ok := fields[k]; ok {
				fmt.Fprintf(&b, "- **%s:** %s\n", k, cell(v))
			}
		}
		if r.ErrorCode != nil {
			fmt.Fprintf(&b, "- **error_code:** %s\n", *r.ErrorCode)
		}
		if r.Report != nil {
			b.WriteString("\n" + demote(*r.Report))
		}
		b.WriteString("\n\n")
		_, err = io.WriteString(w, b.String())
		return err
	})
}

// demote shifts a report's headings two levels down so they nest under its record's heading.
func demote(md string) string {
	lines := strings.Split(strings.TrimSpace(md), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "#") {
			lines[i] = "##" + l
		}
	}
	return strings.Join(lines, "\n")
}

// values are a record's fields for display: given ones, researched ones, and its report as
// "report" when the stage keeps reports.
func (cols columns) values(r store.CampaignRecord) (map[string]any, error) {
	fields, err := recordFields(r)
	if err != nil {
		return nil, err
	}
	if r.Report != nil && slices.Contains(cols.researched, "report") {
		fields["report"] = *r.Report
	}
	return fields, nil
}

// cell renders a value for a CSV cell.
func cell(v any) string {
	if v == nil {
		return ""
	}
	if s, ok := scalar(v); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// columns works out a stage's fields: the key field (or position), the given fields in first-seen
// order, and the researched fields of its output schema (each discovered record's fields for a
// discovery stage; "report" without a schema).
func (s *Service) columns(ctx context.Context, campaignID string, ps Stage) (columns, error) {
	cols := columns{identity: "position", types: map[string]string{}}
	if ps.EntityKeyField != nil {
		cols.identity, cols.keyed = *ps.EntityKeyField, true
	}
	out := ps.OutputSchema
	if ps.RecordsField != nil {
		props, _ := out["properties"].(map[string]any)
		arr, _ := props[*ps.RecordsField].(map[string]any)
		out, _ = arr["items"].(map[string]any)
		if out == nil || schema.Type(out) != "object" {
			out = map[string]any{"properties": map[string]any{"value": map[string]any{}}}
		}
	}
	if out == nil {
		cols.researched, cols.types["report"] = []string{"report"}, "string"
	} else {
		props, _ := out["properties"].(map[string]any)
		cols.researched = SchemaFields(out)
		for _, f := range cols.researched {
			p, _ := props[f].(map[string]any)
			cols.types[f] = jsonType(schema.Type(p))
		}
	}
	stages, err := s.st.CampaignStages(ctx, campaignID)
	if err != nil {
		return cols, err
	}
	for _, st := range stages {
		if st.Key == ps.Key && st.GivenFields != nil {
			if err := json.Unmarshal([]byte(*st.GivenFields), &cols.given); err != nil {
				return cols, fmt.Errorf("stage %s given fields: %w", ps.Key, err)
			}
		}
	}
	cols.given = slices.DeleteFunc(cols.given, func(f string) bool {
		return (cols.keyed && f == cols.identity) || slices.Contains(cols.researched, f)
	})
	return cols, nil
}

func jsonType(t string) string {
	switch t {
	case "string", "number", "integer", "boolean", "array", "object":
		return t
	}
	return "string"
}

// Download opens a built deliverable for reading (the caller closes it).
func (s *Service) Download(ctx context.Context, accountID, id, key string) (store.CampaignArtifact, io.ReadCloser, error) {
	v, err := s.Get(ctx, accountID, id)
	if err != nil {
		return store.CampaignArtifact{}, nil, err
	}
	d, ok := v.Plan.Deliverable(key)
	if !ok {
		return store.CampaignArtifact{}, nil, ErrDeliverableNotFound
	}
	for _, a := range v.Artifacts {
		if a.DeliverableKey == key {
			rc, err := s.bucket.NewReader(ctx, a.BlobKey, nil)
			if err != nil {
				return a, nil, fmt.Errorf("open deliverable %s: %w", key, err)
			}
			return a, rc, nil
		}
	}
	return store.CampaignArtifact{}, nil, fmt.Errorf("%w: deliverable %s is built when stage %s completes", ErrNotReady, key, d.StageKey)
}

// Portfolio is one page of a stage's records, described generically.
type Portfolio struct {
	View           View // without artifacts
	Stage          Stage
	Fields         []Field
	Total, Done    int
	Failed         int
	Items          []Item
	Next           *store.Cursor
	EntityKeyField *string
}

// Field is how to show one column.
type Field struct{ Name, Label, Type, Source string }

// Item is one record of the page.
type Item struct {
	EntityKey, Status string
	Fields            map[string]any
	ErrorCode         *string
}

// Portfolio reads a page of a stage's records in record order. Before a starting per-entity
// stage runs, its records are the supplied ones, pending. after is the last position of the
// previous page (0 for the first).
func (s *Service) Portfolio(ctx context.Context, accountID, id, stageKey string, limit int, cursor *store.Cursor) (Portfolio, error) {
	v, err := s.Overview(ctx, accountID, id)
	if err != nil {
		return Portfolio{}, err
	}
	ps, ok := v.Plan.Stage(stageKey)
	if !ok {
		return Portfolio{}, ErrStageNotFound
	}
	after := 0
	if cursor != nil {
		if after, err = strconv.Atoi(cursor.ID); err != nil || after < 0 || !cursor.CreatedAt.Equal(v.Campaign.CreatedAt) {
			return Portfolio{}, fmt.Errorf("%w: not a cursor of this portfolio", store.ErrInvalidCursor)
		}
	}
	var row store.CampaignStage
	for _, st := range v.Stages {
		if st.Key == stageKey {
			row = st
		}
	}
	p := Portfolio{View: v, Stage: ps, EntityKeyField: ps.EntityKeyField, Total: row.RecordsTotal, Done: row.RecordsDone, Failed: row.RecordsFailed}
	cols, err := s.columns(ctx, id, ps)
	if err != nil {
		return p, err
	}
	src := ps.Key
	if row.Status == StagePending && ps.Starting() && !ps.Single() {
		src, p.Total = store.InputStage, v.Campaign.RecordsAccepted // the supplied records, before the stage takes them
		cols.given = nil                                            // read from the first supplied record below
	}
	page, err := s.st.CampaignRecordsAfter(ctx, id, src, after, limit+1, false)
	if err != nil {
		return p, err
	}
	if len(page) > limit {
		page = page[:limit]
		p.Next = &store.Cursor{CreatedAt: v.Campaign.CreatedAt, ID: strconv.Itoa(page[len(page)-1].Seq)}
	}
	for _, r := range page {
		fields, err := cols.values(r)
		if err != nil {
			return p, err
		}
		status := r.Status
		if src == store.InputStage {
			status, r.ErrorCode = RecordPending, nil
		}
		p.Items = append(p.Items, Item{EntityKey: r.EntityKey, Status: status, Fields: fields, ErrorCode: r.ErrorCode})
		if src == store.InputStage && len(cols.given) == 0 {
			cols.given = sortedKeys(fields)
		}
	}
	p.Fields = cols.views()
	return p, nil
}

func (cols columns) views() []Field {
	var out []Field
	if cols.keyed {
		out = append(out, Field{Name: cols.identity, Label: label(cols.identity), Type: "string", Source: "identity"})
	}
	for _, f := range cols.given {
		out = append(out, Field{Name: f, Label: label(f), Type: "string", Source: "given"})
	}
	for _, f := range cols.researched {
		t := cols.types[f]
		if t == "" {
			t = "string"
		}
		out = append(out, Field{Name: f, Label: label(f), Type: t, Source: "researched"})
	}
	return out
}

// label is a column heading from a field name ("publishes_soc2" → "Publishes soc2").
func label(name string) string {
	l := strings.TrimSpace(strings.NewReplacer("_", " ", "-", " ").Replace(name))
	if l == "" {
		return name
	}
	return strings.ToUpper(l[:1]) + l[1:]
}
