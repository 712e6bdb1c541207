package expert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// Apply (POST /experts/apply) converges one expert to a declarative manifest: the complete desired
// configuration, written as the smallest set of changes, all of them in one transaction and one
// version. It is planned first (target, changes, validation), so a dry run and a real apply answer
// alike and bad input changes nothing.

// SourceApply and SourceBuild are the version sources of an apply and of a build's draft.
const (
	SourceApply = "apply"
	SourceBuild = "build"
)

// ErrAmbiguousName: several of the caller's live experts have the manifest's name.
var ErrAmbiguousName = &fault.Error{Kind: fault.Conflict, Code: "ambiguous_expert_name", Msg: "several of your experts have this name; name one with expert_id"}

// Apply change operations.
const (
	OpAdd    = "add"
	OpUpdate = "update"
	OpRemove = "remove"
)

// Apply actions.
const (
	ActionCreate = "create"
	ActionUpdate = "update"
	ActionNoop   = "noop"
)

// ApplyInput is an apply request. Manifest.ContextFiles nil means "leave the files alone"; an empty,
// non-nil list means "no files".
type ApplyInput struct {
	ExpertRef *string
	Manifest  CreateInput
	DryRun    bool
	// Prune detaches attached files the manifest's context_files does not list.
	Prune bool
}

// Change is one field (or context_files/<name>) an apply changes.
type Change struct{ Field, Op string }

// Applied says what an apply did, or with DryRun would do.
type Applied struct {
	ExpertID   *string // nil only for a dry-run create
	Action     string
	Changes    []Change
	DryRun     bool
	VersionNum *int // nil for a dry run and for noop
}

// Apply converges the targeted expert (ExpertRef, else the caller's live expert of that exact name,
// else a new one) to the manifest.
func (s *Service) Apply(ctx context.Context, c Caller, in ApplyInput) (Applied, error) {
	m := in.Manifest
	if !c.IsAdmin && ((m.IsPublic != nil && *m.IsPublic) || (m.AllowFreeTierUse != nil && *m.AllowFreeTierUse) || m.OwnerEmail != nil) {
		return Applied{}, fmt.Errorf("is_public, allow_free_tier_use and owner_email are for service administrators: %w", ErrForbidden)
	}
	for attempt := 0; ; attempt++ {
		t, found, err := s.applyTarget(ctx, c, in)
		if err != nil {
			return Applied{}, err
		}
		if !found {
			return s.applyCreate(ctx, c, in)
		}
		out, err := s.applyUpdate(ctx, c, t, in)
		if !errors.Is(err, errStale) || attempt == 2 {
			return out, err
		}
	}
}

// applyTarget resolves the expert an apply converges; found false means create.
func (s *Service) applyTarget(ctx context.Context, c Caller, in ApplyInput) (target, bool, error) {
	if in.ExpertRef != nil {
		if _, ok := s.registry.Get(*in.ExpertRef); ok {
			return target{}, false, fmt.Errorf("built-in experts are read-only: %w", ErrForbidden)
		}
		t, err := s.find(ctx, c, *in.ExpertRef)
		if err != nil {
			return target{}, false, err
		}
		if !t.canEdit(c) {
			return target{}, false, fmt.Errorf("only the owner and editors may change the expert: %w", ErrForbidden)
		}
		if t.row.ArchivedAt != nil {
			return target{}, false, ErrArchived
		}
		return t, true, nil
	}
	rows, err := s.st.ExpertsByHandle(ctx, c.AccountID, Handle(in.Manifest.Name))
	if err != nil {
		return target{}, false, err
	}
	rows = slices.DeleteFunc(rows, func(r store.Expert) bool { return r.ArchivedAt != nil || r.Name != in.Manifest.Name })
	switch len(rows) {
	case 0:
		return target{}, false, nil
	case 1:
		return target{row: rows[0], role: RoleOwner}, true, nil
	}
	return target{}, false, fmt.Errorf("%q: %w", in.Manifest.Name, ErrAmbiguousName)
}

// applyCreate creates the expert the manifest describes (or, dry, says what it would hold).
func (s *Service) applyCreate(ctx context.Context, c Caller, in ApplyInput) (Applied, error) {
	cin := in.Manifest
	errs, _, err := s.CheckCreate(ctx, c, cin)
	if err != nil {
		return Applied{}, err
	}
	if len(errs) > 0 {
		return Applied{}, Invalid(errs...)
	}
	cfg := cin.Config
	cfg.OutputTemplateFile = clearEmpty(cfg.OutputTemplateFile)
	cfg.normalize()
	changes, err := configChanges(Config{}, cfg)
	if err != nil {
		return Applied{}, err
	}
	if cin.Status != nil && *cin.Status != store.ExpertActive {
		changes = append(changes, Change{Field: "status", Op: OpAdd})
	}
	names := make([]string, 0, len(cin.ContextFiles))
	for _, f := range cin.ContextFiles {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	for _, n := range names {
		changes = append(changes, Change{Field: "context_files/" + n, Op: OpAdd})
	}
	out := Applied{Action: ActionCreate, Changes: changes, DryRun: in.DryRun}
	if in.DryRun {
		return out, nil
	}
	cin.Config = cfg
	cin.Source = SourceApply
	e, err := s.Create(ctx, c, cin)
	if err != nil {
		return Applied{}, err
	}
	out.ExpertID, out.VersionNum = &e.ID, e.VersionNum
	return out, nil
}

// applyPlan is the planned update of one expert.
type applyPlan struct {
	row     store.Expert // the row to write
	changes []Change
	upserts []FileInput // new or changed inline files
	prunes  []string    // attached files to detach
}

// applyUpdate plans the update against the current row and, unless dry, writes it if the row is
// still the one planned against (errStale otherwise).
func (s *Service) applyUpdate(ctx context.Context, c Caller, t target, in ApplyInput) (Applied, error) {
	p, err := s.planApply(ctx, c, t.row, in)
	if err != nil {
		return Applied{}, err
	}
	id := t.row.ID
	out := Applied{ExpertID: &id, Action: ActionUpdate, Changes: p.changes, DryRun: in.DryRun}
	if len(p.changes) == 0 {
		out.Action = ActionNoop
		return out, nil
	}
	if in.DryRun {
		return out, nil
	}
	before := t.row
	row := p.row
	row.VersionNum++
	row.UpdatedAt = s.now()
	unlock := s.files.repos.lock(id)
	defer unlock()
	removed := map[string]bool{} // pruned files that were in the repository
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		cur, err := tx.ExpertByID(ctx, id, true)
		if err != nil {
			return err
		}
		if cur.VersionNum != before.VersionNum || !cur.UpdatedAt.Equal(before.UpdatedAt) || cur.ArchivedAt != nil {
			return errStale
		}
		// The configuration goes first: a template file the manifest stops naming is no longer
		// referenced when it is detached below.
		if err := tx.SaveExpert(ctx, &row); err != nil {
			return err
		}
		if err := s.saveFiles(ctx, tx, id, p.upserts); err != nil {
			return err
		}
		if len(p.prunes) > 0 {
			attached, err := tx.ExpertContextFiles(ctx, id)
			if err != nil {
				return err
			}
			for _, f := range attached {
				if slices.Contains(p.prunes, f.Name) && f.InRepository {
					removed[f.Name] = true
				}
			}
			for _, name := range p.prunes {
				if err := tx.DeleteExpertContextFile(ctx, id, name); err != nil {
					return err
				}
			}
		}
		return s.snapshot(ctx, tx, row, SourceApply, &c.AccountID)
	})
	if err != nil {
		return Applied{}, err
	}
	s.commitApply(ctx, id, c.AccountID, p.upserts, p.prunes, removed)
	out.VersionNum = &row.VersionNum
	return out, nil
}

// planApply computes the row an apply writes, the changes it lists and the files it touches, and
// validates the result; every problem is reported at once.
func (s *Service) planApply(ctx context.Context, c Caller, before store.Expert, in ApplyInput) (applyPlan, error) {
	m := in.Manifest
	cur, err := decodeConfig(before.Config)
	if err != nil {
		return applyPlan{}, err
	}
	want := m.Config
	want.OutputTemplateFile = clearEmpty(want.OutputTemplateFile)
	want.normalize()
	changes, err := configChanges(cur, want)
	if err != nil {
		return applyPlan{}, err
	}
	p := applyPlan{row: before}
	errs := checkFiles(m.ContextFiles)
	if m.Status != nil && *m.Status != before.Status {
		if *m.Status == store.ExpertBuilding {
			return applyPlan{}, ErrInvalidTransition // as for PATCH: a state conflict, not bad input
		}
		p.row.Status = *m.Status
		changes = append(changes, Change{Field: "status", Op: OpUpdate})
	}
	adminChanges, adminErrs, err := s.applyAdminFields(ctx, &p.row, m)
	if err != nil {
		return applyPlan{}, err
	}
	changes, errs = append(changes, adminChanges...), append(errs, adminErrs...)

	attached, err := s.st.ExpertContextFilesWithContent(ctx, before.ID)
	if err != nil {
		return applyPlan{}, err
	}
	final := map[string]bool{}
	var fileChanges []Change
	listed := map[string]bool{}
	for _, f := range m.ContextFiles {
		listed[f.Name] = true
		final[f.Name] = true
		i := slices.IndexFunc(attached, func(a store.ExpertContextFile) bool { return a.Name == f.Name })
		switch {
		case i < 0:
			fileChanges = append(fileChanges, Change{Field: "context_files/" + f.Name, Op: OpAdd})
		case !bytes.Equal(attached[i].Content, []byte(f.Content)):
			fileChanges = append(fileChanges, Change{Field: "context_files/" + f.Name, Op: OpUpdate})
		default:
			continue
		}
		p.upserts = append(p.upserts, f)
	}
	for _, a := range attached {
		if m.ContextFiles != nil && in.Prune && !listed[a.Name] {
			p.prunes = append(p.prunes, a.Name)
			fileChanges = append(fileChanges, Change{Field: "context_files/" + a.Name, Op: OpRemove})
			continue
		}
		final[a.Name] = true
	}
	slices.SortFunc(fileChanges, func(a, b Change) int { return strings.Compare(a.Field, b.Field) })
	p.changes = append(changes, fileChanges...)

	more, err := s.validate(ctx, before.OwnerID, want, final)
	if err != nil {
		return applyPlan{}, err
	}
	if want.OutputTemplateFile != nil && slices.Contains(p.prunes, *want.OutputTemplateFile) {
		// validate says it names no file; say why.
		more = slices.DeleteFunc(more, func(f fault.Field) bool { return f.Field == "output_template_file" })
		more = append(more, fault.Field{Field: "output_template_file", Message: fmt.Sprintf("%q would be pruned: list it in context_files or set prune_context_files false", *want.OutputTemplateFile)})
	}
	if errs = append(errs, more...); len(errs) > 0 {
		return applyPlan{}, Invalid(errs...)
	}
	if p.row.Config, err = want.encode(); err != nil {
		return applyPlan{}, err
	}
	p.row.Name, p.row.Handle = want.Name, Handle(want.Name)
	return p, nil
}

// applyAdminFields applies the administrator-only fields of a manifest (the caller is known to be
// allowed). They change only when given: an omitted is_public or allow_free_tier_use arrives as
// the document's default false, so false never changes them (POST visibility makes an expert
// private).
func (s *Service) applyAdminFields(ctx context.Context, row *store.Expert, m CreateInput) ([]Change, []fault.Field, error) {
	var changes []Change
	var errs []fault.Field
	if m.IsPublic != nil && *m.IsPublic && !row.IsPublic {
		if row.Status == store.ExpertBuilding && (m.Status == nil || *m.Status == store.ExpertBuilding) {
			errs = append(errs, fault.Field{Field: "is_public", Message: ErrNotActive.Error()})
		}
		row.IsPublic = true
		changes = append(changes, Change{Field: "is_public", Op: OpUpdate})
	}
	if m.AllowFreeTierUse != nil && *m.AllowFreeTierUse && !row.AllowFreeTierUse {
		row.AllowFreeTierUse = true
		changes = append(changes, Change{Field: "allow_free_tier_use", Op: OpUpdate})
	}
	if m.OwnerEmail != nil {
		a, err := s.st.AccountByEmail(ctx, *m.OwnerEmail)
		switch {
		case errors.Is(err, store.ErrNotFound):
			errs = append(errs, fault.Field{Field: "owner_email", Message: "no account has this email"})
		case err != nil:
			return nil, nil, err
		case a.ID != row.OwnerID:
			row.OwnerID = a.ID
			changes = append(changes, Change{Field: "owner_email", Op: OpUpdate})
		}
	}
	return changes, errs, nil
}

// commitApply records an apply's file changes in the expert's repository as one commit; the caller
// holds the repository lock. A failure is logged: the database already holds the files.
func (s *Service) commitApply(ctx context.Context, expertID, accountID string, upserts []FileInput, prunes []string, inRepo map[string]bool) {
	if !s.files.repos.enabled() || len(upserts)+len(inRepo) == 0 {
		return
	}
	var changes []change
	var names []string
	for _, f := range upserts {
		changes = append(changes, change{Name: f.Name, Data: []byte(f.Content)})
		names = append(names, f.Name)
	}
	for _, n := range prunes {
		if inRepo[n] {
			changes = append(changes, change{Name: n})
		}
	}
	msg := fmt.Sprintf("Apply manifest: %d context file(s) written, %d removed\n\nBy account %s.", len(upserts), len(changes)-len(upserts), accountID)
	if _, _, err := s.files.repos.commit(expertID, msg, changes); err != nil {
		s.log.WarnContext(ctx, "commit applied context files", "expert_id", expertID, "error", err)
		return
	}
	if len(names) == 0 {
		return
	}
	if err := s.st.MarkExpertContextFilesInRepository(ctx, expertID, names); err != nil {
		s.log.WarnContext(ctx, "mark applied context files committed", "expert_id", expertID, "error", err)
	}
}

// configFields are the JSON names of the configuration fields, in document order.
var configFields = func() []string {
	t := reflect.TypeFor[Config]()
	out := make([]string, 0, t.NumField())
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		out = append(out, name)
	}
	return out
}()

// configChanges lists the fields that differ between two configurations: add when the old value
// is empty, remove when the new one is, update otherwise.
func configChanges(from, to Config) ([]Change, error) {
	a, err := fieldValues(from)
	if err != nil {
		return nil, err
	}
	b, err := fieldValues(to)
	if err != nil {
		return nil, err
	}
	var out []Change
	for _, f := range configFields {
		if bytes.Equal(a[f], b[f]) {
			continue
		}
		op := OpUpdate
		switch {
		case emptyJSON(a[f]):
			op = OpAdd
		case emptyJSON(b[f]):
			op = OpRemove
		}
		out = append(out, Change{Field: f, Op: op})
	}
	return out, nil
}

// fieldValues encodes each configuration field canonically (objects with sorted keys), so equal
// values compare equal as bytes.
func fieldValues(c Config) (map[string][]byte, error) {
	c.normalize()
	raw, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("encode expert configuration: %w", err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("decode expert configuration: %w", err)
	}
	out := make(map[string][]byte, len(fields))
	for k, v := range fields {
		if out[k], err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("encode %s: %w", k, err)
		}
	}
	return out, nil
}

func emptyJSON(b []byte) bool {
	switch string(b) {
	case "", "null", `""`, "[]", "{}":
		return true
	}
	return false
}

// clearEmpty makes an empty output_template_file the absence it means.
func clearEmpty(s *string) *string {
	if s != nil && *s == "" {
		return nil
	}
	return s
}
