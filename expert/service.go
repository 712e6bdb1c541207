package expert

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/idempotency"
	"github.com/researchd/researchd/store"
)

// CreateInput is a create request (CreateExpertV2Request).
type CreateInput struct {
	Config
	Status           *string     `json:"status"`
	ContextFiles     []FileInput `json:"context_files"`
	IsPublic         *bool       `json:"is_public"`
	AllowFreeTierUse *bool       `json:"allow_free_tier_use"`
	OwnerEmail       *string     `json:"owner_email"`
	// IdempotencyKey and RequestHash (of the body) make a retried create return the original.
	IdempotencyKey string `json:"-"`
	RequestHash    string `json:"-"`
	// Source is the source of version 1 (SourceCreate when empty; apply and build set theirs).
	Source string `json:"-"`
}

// idemPrefix keeps expert creates apart from job creates in the shared idempotency records.
const idemPrefix = "experts:"

// replay answers a create whose Idempotency-Key was seen: the original expert.
func (s *Service) replay(ctx context.Context, c Caller, k store.IdempotencyKey) (Expert, error) {
	row, err := s.st.ExpertByID(ctx, k.JobID, false)
	if err != nil {
		return Expert{}, err
	}
	return s.view(ctx, s.st, row, RoleOwnerIf(row.OwnerID == c.AccountID))
}

// Version sources.
const (
	SourceCreate  = "create"
	SourceUpdate  = "update"
	SourceRestore = "restore"
)

// target is a resolved custom expert with what the caller may do with it.
type target struct {
	row  store.Expert
	role string // owner, editor, viewer or ""
}

func (t target) canEdit(c Caller) bool {
	return c.IsAdmin || t.role == RoleOwner || t.role == RoleEditor
}

func (t target) canManage(c Caller) bool { return c.IsAdmin || t.role == RoleOwner }

// Create saves a custom expert as version 1.
func (s *Service) Create(ctx context.Context, c Caller, in CreateInput) (Expert, error) {
	// The document gives is_public and allow_free_tier_use a default of false, which the request
	// validator fills in: only a true value (or any owner_email) is an administrator's request.
	if !c.IsAdmin && ((in.IsPublic != nil && *in.IsPublic) || (in.AllowFreeTierUse != nil && *in.AllowFreeTierUse) || in.OwnerEmail != nil) {
		return Expert{}, fmt.Errorf("is_public, allow_free_tier_use and owner_email are for service administrators: %w", ErrForbidden)
	}
	k := idempotency.Key{AccountID: c.AccountID, Scope: idemPrefix, Key: in.IdempotencyKey, RequestHash: in.RequestHash, StatusCode: 201, Now: s.now()}
	e, _, err := idempotency.Create(ctx, s.st, k, in, func(ctx context.Context, k store.IdempotencyKey) (Expert, error) {
		return s.replay(ctx, c, k)
	}, func(ctx context.Context, in CreateInput, claim idempotency.Claim) (Expert, error) {
		return s.create(ctx, c, in, claim)
	})
	return e, err
}

func (s *Service) create(ctx context.Context, c Caller, in CreateInput, claim idempotency.Claim) (Expert, error) {
	ownerID := c.AccountID
	if in.OwnerEmail != nil {
		a, err := s.st.AccountByEmail(ctx, *in.OwnerEmail)
		if errors.Is(err, store.ErrNotFound) {
			return Expert{}, Invalid(fault.Field{Field: "owner_email", Message: "no account has this email"})
		} else if err != nil {
			return Expert{}, err
		}
		ownerID = a.ID
	}
	status := store.ExpertActive
	if in.Status != nil {
		status = *in.Status
	}
	cfg := in.Config
	cfg.normalize()
	errs := checkFiles(in.ContextFiles)
	names := map[string]bool{}
	for _, f := range in.ContextFiles {
		names[f.Name] = true
	}
	more, err := s.validate(ctx, ownerID, cfg, names)
	if err != nil {
		return Expert{}, err
	}
	if errs = append(errs, more...); len(errs) > 0 {
		return Expert{}, Invalid(errs...)
	}
	encoded, err := cfg.encode()
	if err != nil {
		return Expert{}, err
	}
	now := s.now()
	row := store.Expert{
		ID: uuid.NewString(), OwnerID: ownerID, Handle: Handle(cfg.Name), Name: cfg.Name, Status: status,
		IsPublic: in.IsPublic != nil && *in.IsPublic, AllowFreeTierUse: in.AllowFreeTierUse != nil && *in.AllowFreeTierUse,
		Config: encoded, VersionNum: 1, CreatedAt: now, UpdatedAt: now,
	}
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		if err := claim(ctx, tx, row.ID); err != nil {
			return err
		}
		if err := s.insertWithSlug(ctx, tx, &row); err != nil {
			return err
		}
		if err := s.saveFiles(ctx, tx, row.ID, in.ContextFiles); err != nil {
			return err
		}
		source := SourceCreate
		if in.Source != "" {
			source = in.Source
		}
		return s.snapshot(ctx, tx, row, source, &c.AccountID)
	})
	if err != nil {
		return Expert{}, err
	}
	s.commitInline(ctx, row.ID, c.AccountID, in.ContextFiles)
	return s.view(ctx, s.st, row, RoleOwnerIf(row.OwnerID == c.AccountID))
}

// RoleOwnerIf is "owner" when owner holds, else "" (an administrator acting for someone).
func RoleOwnerIf(owner bool) string {
	if owner {
		return RoleOwner
	}
	return ""
}

// insertWithSlug inserts the expert under the first free slug candidate. The check before each
// insert is only a shortcut: a concurrent create can take the same slug in between, and then the
// insert's unique violation moves on to the next, longer candidate.
func (s *Service) insertWithSlug(ctx context.Context, tx *store.Store, row *store.Expert) error {
	for _, suffix := range []int{0, 6, 8, 12, 16, 32} {
		row.Slug = slugCandidate(row.Handle, row.ID, suffix, s.registry)
		taken, err := tx.ExpertSlugTaken(ctx, row.Slug)
		if err != nil {
			return err
		}
		if taken {
			continue
		}
		if err := tx.CreateExpert(ctx, row); !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("no free slug for %q", row.Handle)
}

// saveFiles adds or replaces inline text context files.
func (s *Service) saveFiles(ctx context.Context, tx *store.Store, expertID string, files []FileInput) error {
	now := s.now()
	for _, f := range files {
		mt := textExtensions[strings.ToLower(strings.TrimPrefix(path.Ext(f.Name), "."))]
		if full := mime.FormatMediaType(mt, map[string]string{"charset": "utf-8"}); full != "" {
			mt = full
		}
		row := store.ExpertContextFile{
			ID: uuid.NewString(), ExpertID: expertID, Name: f.Name, Content: []byte(f.Content), MediaType: mt,
			SizeBytes: int64(len(f.Content)), CharCount: int64(utf8.RuneCountInString(f.Content)), TextMirrored: true,
			CreatedAt: now, UpdatedAt: now,
		}
		if err := tx.UpsertExpertContextFile(ctx, &row); err != nil {
			return err
		}
	}
	return nil
}

// snapshot records the expert's current configuration as version row.VersionNum.
func (s *Service) snapshot(ctx context.Context, tx *store.Store, row store.Expert, source string, by *string) error {
	e, err := s.view(ctx, tx, row, "")
	if err != nil {
		return err
	}
	e.CallerRole = nil
	b, err := jsonMarshal(e)
	if err != nil {
		return err
	}
	return tx.CreateExpertVersion(ctx, &store.ExpertVersion{
		ID: uuid.NewString(), ExpertID: row.ID, VersionNum: row.VersionNum, Source: source, CreatedBy: by,
		Snapshot: b, CreatedAt: row.UpdatedAt,
	})
}

// view builds the resource of a custom expert.
func (s *Service) view(ctx context.Context, st *store.Store, row store.Expert, role string) (Expert, error) {
	cfg, err := decodeConfig(row.Config)
	if err != nil {
		return Expert{}, err
	}
	files, err := st.ExpertContextFiles(ctx, row.ID)
	if err != nil {
		return Expert{}, err
	}
	e := Expert{
		ID: row.ID, Slug: row.Slug, Config: cfg, Status: row.Status, ContextFiles: make([]FileSummary, 0, len(files)),
		IsPublic: row.IsPublic, AllowFreeTierUse: row.AllowFreeTierUse, OwnerID: &row.OwnerID,
		ArchivedAt: row.ArchivedAt, VersionNum: &row.VersionNum, CreatedAt: &row.CreatedAt, UpdatedAt: &row.UpdatedAt,
	}
	for _, f := range files {
		e.ContextFiles = append(e.ContextFiles, FileSummary{Name: f.Name, CharCount: f.CharCount, SizeBytes: f.SizeBytes, InRepository: f.InRepository, TextMirrored: f.TextMirrored})
	}
	if role != "" {
		e.CallerRole = &role
	}
	return e, nil
}

// grantee describes the caller for share matching.
func (s *Service) grantee(ctx context.Context, c Caller) (store.Grantee, error) {
	email := strings.ToLower(strings.TrimSpace(c.Email))
	_, domain, _ := strings.Cut(email, "@")
	teams, err := s.st.TeamIDsOf(ctx, c.AccountID)
	if err != nil {
		return store.Grantee{}, err
	}
	return store.Grantee{AccountID: c.AccountID, Email: email, Domain: domain, Teams: teams}, nil
}

// roleOn is the caller's role on an expert: owner, the best matching grant, or "".
func (s *Service) roleOn(ctx context.Context, g store.Grantee, row store.Expert) (string, error) {
	if row.OwnerID == g.AccountID {
		return RoleOwner, nil
	}
	shares, err := s.st.ExpertSharesFor(ctx, row.ID)
	if err != nil {
		return "", err
	}
	role := ""
	for _, sh := range shares {
		match := (sh.PrincipalType == PrincipalUser && sh.Principal == g.Email) ||
			(sh.PrincipalType == PrincipalDomain && g.Domain != "" && sh.Principal == g.Domain) ||
			(sh.PrincipalType == PrincipalTeam && slices.Contains(g.Teams, sh.Principal))
		if match && (role == "" || sh.Role == RoleEditor) {
			role = sh.Role
		}
	}
	return role, nil
}

// readable: the owner, grantees, administrators, and everyone for a public active expert.
func readable(c Caller, row store.Expert, role string) bool {
	return role != "" || c.IsAdmin || (row.IsPublic && row.Status == store.ExpertActive)
}

// find resolves ref (UUID, slug, or the caller's handle) to a custom expert the caller may read.
// Registry ids are handled by the callers before this.
func (s *Service) find(ctx context.Context, c Caller, ref string) (target, error) {
	g, err := s.grantee(ctx, c)
	if err != nil {
		return target{}, err
	}
	var candidates []store.Expert
	if _, perr := uuid.Parse(ref); perr == nil {
		row, err := s.st.ExpertByID(ctx, ref, false)
		if err == nil {
			candidates = append(candidates, row)
		} else if !errors.Is(err, store.ErrNotFound) {
			return target{}, err
		}
	} else {
		row, err := s.st.ExpertBySlug(ctx, ref)
		if err == nil {
			candidates = append(candidates, row)
		} else if !errors.Is(err, store.ErrNotFound) {
			return target{}, err
		}
		own, err := s.st.ExpertsByHandle(ctx, c.AccountID, ref)
		if err != nil {
			return target{}, err
		}
		candidates = append(candidates, own...)
	}
	for _, row := range candidates {
		role, err := s.roleOn(ctx, g, row)
		if err != nil {
			return target{}, err
		}
		if readable(c, row, role) {
			return target{row: row, role: role}, nil
		}
	}
	return target{}, fmt.Errorf("expert %q: %w", ref, ErrNotFound)
}

// Get reads an expert by registry id, UUID, slug or handle.
func (s *Service) Get(ctx context.Context, c Caller, ref string) (Expert, error) {
	if b, ok := s.registry.Get(ref); ok {
		return b.Expert(), nil
	}
	t, err := s.find(ctx, c, ref)
	if err != nil {
		return Expert{}, err
	}
	return s.view(ctx, s.st, t.row, t.role)
}

// ListPublic lists the registry experts and the public custom experts, by name; query filters by a
// case-insensitive substring of name, description, domain or tags.
func (s *Service) ListPublic(ctx context.Context, query string) ([]Summary, error) {
	var out []Summary
	for _, b := range s.registry.All() {
		out = append(out, b.Expert().Summary())
	}
	rows, err := s.st.ListPublicExperts(ctx)
	if err != nil {
		return nil, err
	}
	for _, row := range rows {
		e, err := s.summaryOf(row)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if q := strings.ToLower(strings.TrimSpace(query)); q != "" {
		out = slices.DeleteFunc(out, func(e Summary) bool { return !matches(e, q) })
	}
	slices.SortStableFunc(out, func(a, b Summary) int {
		if c := strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if out == nil {
		out = []Summary{}
	}
	return out, nil
}

func matches(e Summary, q string) bool {
	hay := []string{e.Name, e.Description}
	if e.Domain != nil {
		hay = append(hay, *e.Domain)
	}
	hay = append(hay, e.Tags...)
	for _, h := range hay {
		if strings.Contains(strings.ToLower(h), q) {
			return true
		}
	}
	return false
}

func (s *Service) summaryOf(row store.Expert) (Summary, error) {
	cfg, err := decodeConfig(row.Config)
	if err != nil {
		return Summary{}, err
	}
	e := Expert{ID: row.ID, Slug: row.Slug, Config: cfg, Status: row.Status, IsPublic: row.IsPublic, UpdatedAt: &row.UpdatedAt}
	return e.Summary(), nil
}

// ListCustom pages the live experts the caller owns or is granted, drafts included, newest first.
func (s *Service) ListCustom(ctx context.Context, c Caller, req store.PageRequest) (store.Page[Summary], error) {
	g, err := s.grantee(ctx, c)
	if err != nil {
		return store.Page[Summary]{}, err
	}
	page, err := s.st.ListAccessibleExperts(ctx, g, req)
	if err != nil {
		return store.Page[Summary]{}, err
	}
	out := store.Page[Summary]{Items: make([]Summary, 0, len(page.Items)), Next: page.Next}
	for _, row := range page.Items {
		e, err := s.summaryOf(row)
		if err != nil {
			return out, err
		}
		out.Items = append(out.Items, e)
	}
	return out, nil
}

// Archive hides an expert from lists and stops new runs; idempotent. Owner or administrator.
func (s *Service) Archive(ctx context.Context, c Caller, ref string) error {
	if _, ok := s.registry.Get(ref); ok {
		return fmt.Errorf("built-in experts cannot be archived: %w", ErrForbidden)
	}
	t, err := s.find(ctx, c, ref)
	if err != nil {
		return err
	}
	if !t.canManage(c) {
		return fmt.Errorf("only the owner may archive the expert: %w", ErrForbidden)
	}
	if t.row.ArchivedAt != nil {
		return nil
	}
	return s.st.InTx(ctx, func(tx *store.Store) error {
		row, err := tx.ExpertByID(ctx, t.row.ID, true)
		if err != nil || row.ArchivedAt != nil {
			return err
		}
		now := s.now()
		row.ArchivedAt = &now
		return tx.SaveExpert(ctx, &row)
	})
}
