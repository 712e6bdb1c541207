package skill

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/researchd/researchd/store"
)

// Owners of a skill.
const (
	OwnerBuiltin = "builtin"
	OwnerOwn     = "own"
)

// Skill is a catalogue skill or an account's own, with its full SKILL.md.
type Skill struct {
	Name, Description, Category string
	Owner                       string // OwnerBuiltin or OwnerOwn
	Content                     string // the full SKILL.md
}

// Summary is a skill without its content.
type Summary struct{ Name, Description, Category, Owner string }

//go:embed catalog/*/SKILL.md
var catalogFS embed.FS

// Catalog reads the skills shipped in the binary (catalog/<name>/SKILL.md); each must be valid, be
// named like its folder and carry metadata.category.
func Catalog() (map[string]Skill, error) {
	return loadCatalog(catalogFS)
}

func loadCatalog(fsys fs.FS) (map[string]Skill, error) {
	paths, err := fs.Glob(fsys, "catalog/*/SKILL.md")
	if err != nil {
		return nil, fmt.Errorf("skill catalogue: %w", err)
	}
	out := make(map[string]Skill, len(paths))
	for _, p := range paths {
		raw, err := fs.ReadFile(fsys, p)
		if err != nil {
			return nil, fmt.Errorf("skill catalogue: %w", err)
		}
		d, err := Parse(string(raw))
		if err == nil {
			err = d.Validate()
		}
		if err != nil {
			return nil, fmt.Errorf("skill catalogue %s: %w", p, err)
		}
		if dir := path.Base(path.Dir(p)); d.Name != dir {
			return nil, fmt.Errorf("skill catalogue %s: name %q differs from its folder", p, d.Name)
		}
		if d.Category() == "" {
			return nil, fmt.Errorf("skill catalogue %s: no metadata.category", p)
		}
		out[d.Name] = Skill{Name: d.Name, Description: d.Description, Category: d.Category(), Owner: OwnerBuiltin, Content: string(raw)}
	}
	return out, nil
}

// Service lists, reads and writes skills: the catalogue plus each account's own.
type Service struct {
	store   *store.Store
	catalog map[string]Skill
	now     func() time.Time
}

// New returns the skills over st with the shipped catalogue; now stamps writes (nil: time.Now).
func New(st *store.Store, now func() time.Time) (*Service, error) {
	cat, err := Catalog()
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	return &Service{store: st, catalog: cat, now: now}, nil
}

// Filter narrows a list: Query is a case-insensitive substring of name or description, Category
// is exact; Limit caps the items (the total counts every match).
type Filter struct {
	Query, Category string
	Limit           int
}

// List returns the catalogue and the account's own skills matching f, sorted by name, and how many
// match. An own skill shadows a catalogue skill of the same name (one the catalogue gained later).
func (s *Service) List(ctx context.Context, accountID string, f Filter) ([]Summary, int, error) {
	own, err := s.store.SkillSummaries(ctx, accountID)
	if err != nil {
		return nil, 0, err
	}
	all := make(map[string]Summary, len(s.catalog)+len(own))
	for _, c := range s.catalog {
		all[c.Name] = Summary{c.Name, c.Description, c.Category, c.Owner}
	}
	for _, o := range own {
		all[o.Name] = Summary{o.Name, o.Description, o.Category, OwnerOwn}
	}
	q := strings.ToLower(f.Query)
	var hits []Summary
	for _, sm := range all {
		if f.Category != "" && sm.Category != f.Category {
			continue
		}
		if q != "" && !strings.Contains(strings.ToLower(sm.Name), q) && !strings.Contains(strings.ToLower(sm.Description), q) {
			continue
		}
		hits = append(hits, sm)
	}
	slices.SortFunc(hits, func(a, b Summary) int { return strings.Compare(a.Name, b.Name) })
	total := len(hits)
	if f.Limit > 0 && len(hits) > f.Limit {
		hits = hits[:f.Limit]
	}
	return hits, total, nil
}

// Get returns the account's own skill of that name, else the catalogue's; ErrNotFound otherwise.
func (s *Service) Get(ctx context.Context, accountID, name string) (Skill, error) {
	got, err := s.Load(ctx, accountID, []string{name})
	if err != nil {
		return Skill{}, err
	}
	return got[0], nil
}

// Load returns the named skills (own first, then the catalogue) in the order asked, for giving
// linked skills to the engine. A name that is neither is ErrNotFound.
func (s *Service) Load(ctx context.Context, accountID string, names []string) ([]Skill, error) {
	own, err := s.store.SkillsByNames(ctx, accountID, names)
	if err != nil {
		return nil, err
	}
	out := make([]Skill, 0, len(names))
	for _, n := range names {
		if o, ok := own[n]; ok {
			out = append(out, Skill{Name: o.Name, Description: o.Description, Category: o.Category, Owner: OwnerOwn, Content: o.Content})
			continue
		}
		c, ok := s.catalog[n]
		if !ok {
			return nil, fmt.Errorf("skill %q: %w", n, ErrNotFound)
		}
		out = append(out, c)
	}
	return out, nil
}

// Unknown returns the names (in the order given, once each) that are neither catalogue skills nor
// the account's own.
func (s *Service) Unknown(ctx context.Context, accountID string, names []string) ([]string, error) {
	own, err := s.store.SkillsByNames(ctx, accountID, names)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range names {
		_, isOwn := own[n]
		if _, isCat := s.catalog[n]; !isOwn && !isCat && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// WriteRequest is a skill to author. Name and Description win over the front matter of Content;
// Category (when not empty) over its metadata.category, which defaults to DefaultCategory.
type WriteRequest struct {
	Name, Description, Category, Content string
}

// Write validates and stores the account's skill: created is false when it replaced the account's
// skill of that name. *InvalidError for a SKILL.md that breaks the format, ErrNameTaken for a
// catalogue name. Nothing is written on error.
func (s *Service) Write(ctx context.Context, accountID string, req WriteRequest) (name string, created bool, err error) {
	if utf8.RuneCountInString(req.Content) > MaxContentLen {
		return "", false, &InvalidError{Fields: []FieldError{{"content", fmt.Sprintf("must be at most %d characters", MaxContentLen)}}}
	}
	d, err := Parse(req.Content)
	if err != nil {
		return "", false, err
	}
	d.Name, d.Description = req.Name, req.Description
	if d.Metadata == nil {
		d.Metadata = map[string]string{}
	}
	switch {
	case req.Category != "":
		d.Metadata[CategoryKey] = req.Category
	case d.Metadata[CategoryKey] == "":
		d.Metadata[CategoryKey] = DefaultCategory
	}
	if err := d.Validate(); err != nil {
		return "", false, err
	}
	if _, ok := s.catalog[d.Name]; ok {
		return "", false, fmt.Errorf("skill %q: %w", d.Name, ErrNameTaken)
	}
	content, err := d.Render()
	if err != nil {
		return "", false, err
	}
	created, err = s.store.PutSkill(ctx, store.Skill{
		AccountID: accountID, Name: d.Name, Description: d.Description, Category: d.Category(), Content: content,
	}, s.now())
	if err != nil {
		return "", false, fmt.Errorf("write skill %q: %w", d.Name, err)
	}
	return d.Name, created, nil
}

// IsInvalid reports whether err is a SKILL.md validation failure, and which fields.
func IsInvalid(err error) ([]FieldError, bool) {
	var ie *InvalidError
	if errors.As(err, &ie) {
		return ie.Fields, true
	}
	return nil, false
}
