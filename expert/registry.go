package expert

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
)

//go:embed registry/*.json
var registryFS embed.FS

// registryIDPattern is the shape of a registry id: a slug, so it never parses as a UUID.
var registryIDPattern = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// Builtin is one registry expert, read from registry/<id>.json.
type Builtin struct {
	ID string `json:"id"`
	// DefaultEffort is the effort a run of this expert uses when the caller names none.
	DefaultEffort string `json:"default_effort"`
	Config
}

// Registry is the built-in experts, shipped in the binary as data files.
type Registry struct {
	byID  map[string]Builtin
	order []string // by name
}

// LoadRegistry reads and checks the embedded registry; a bad file is a build defect, reported as an error.
func LoadRegistry() (*Registry, error) {
	return loadRegistry(registryFS)
}

func loadRegistry(fsys fs.FS) (*Registry, error) {
	files, err := fs.Glob(fsys, "registry/*.json")
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	r := &Registry{byID: map[string]Builtin{}}
	for _, f := range files {
		raw, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, fmt.Errorf("registry %s: %w", f, err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		var b Builtin
		if err := dec.Decode(&b); err != nil {
			return nil, fmt.Errorf("registry %s: %w", f, err)
		}
		b.normalize()
		if want := strings.TrimSuffix(path.Base(f), ".json"); b.ID != want {
			return nil, fmt.Errorf("registry %s: id %q must match the file name", f, b.ID)
		}
		if err := b.check(); err != nil {
			return nil, fmt.Errorf("registry %s: %w", f, err)
		}
		r.byID[b.ID] = b
		r.order = append(r.order, b.ID)
	}
	slices.SortFunc(r.order, func(a, b string) int { return strings.Compare(r.byID[a].Name, r.byID[b].Name) })
	return r, nil
}

func (b Builtin) check() error {
	if !registryIDPattern.MatchString(b.ID) || reservedSlugs[b.ID] {
		return fmt.Errorf("id %q is not a usable registry id", b.ID)
	}
	switch b.DefaultEffort {
	case "low", "medium", "high", "build":
	default:
		return fmt.Errorf("default_effort %q is not an effort", b.DefaultEffort)
	}
	if b.OutputSchema == nil {
		return fmt.Errorf("output_schema is required for built-in experts")
	}
	if errs := checkStatic(b.Config); len(errs) > 0 {
		return Invalid(errs...)
	}
	return nil
}

// Get returns a registry expert by id.
func (r *Registry) Get(id string) (Builtin, bool) {
	b, ok := r.byID[id]
	return b, ok
}

// All lists the registry experts by name.
func (r *Registry) All() []Builtin {
	out := make([]Builtin, 0, len(r.order))
	for _, id := range r.order {
		out = append(out, r.byID[id])
	}
	return out
}

// Expert is the registry expert as a resource: public, built-in, read-only, unversioned.
func (b Builtin) Expert() Expert {
	return Expert{ID: b.ID, Slug: b.ID, Config: b.Config, Status: "active", ContextFiles: []FileSummary{}, IsPublic: true, IsBuiltin: true}
}
