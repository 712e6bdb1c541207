// Package expert owns experts: the built-in registry shipped in the binary, custom
// experts with their configuration rules and draft → active state machine, restorable versions,
// sharing and visibility, and the jobs.Experts seam that lets a research job run as an expert.
package expert

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/store"
)

// Errors the HTTP layer maps to problems.
var (
	// ErrNotFound: no such expert, or one the caller may not read. 404 not_found.
	ErrNotFound = errors.New("expert not found")
	// ErrForbidden: the caller may read the expert but not do this. 403 forbidden.
	ErrForbidden = errors.New("forbidden")
	// ErrArchived: a change to an archived expert. 409 expert_archived.
	ErrArchived = errors.New("the expert is archived and read-only")
	// ErrInvalidTransition: active → building. 409 invalid_status_transition.
	ErrInvalidTransition = errors.New("an active expert cannot go back to building")
	// ErrNotActive: making a draft public. 409 expert_not_active.
	ErrNotActive = errors.New("a building draft cannot be made public; finalize it first")
	// ErrContextFileMissing: a restored output_template_file is no longer attached. 409 context_file_missing.
	ErrContextFileMissing = errors.New("the restored output_template_file is no longer attached")
	// ErrVersionNotFound: no such version. 404 not_found.
	ErrVersionNotFound = errors.New("expert version not found")
)

// FieldError names one invalid input field (a JSON-pointer-like path such as skill_names/2).
type FieldError struct{ Field, Message string }

// ValidationError is bad input; nothing was changed. 422 validation_error.
type ValidationError struct{ Fields []FieldError }

func (e *ValidationError) Error() string {
	parts := make([]string, 0, len(e.Fields))
	for _, f := range e.Fields {
		parts = append(parts, f.Field+": "+f.Message)
	}
	return "invalid expert: " + strings.Join(parts, "; ")
}

// Roles a caller can hold on an expert.
const (
	RoleOwner  = "owner"
	RoleEditor = "editor"
	RoleViewer = "viewer"
)

// Caller is who acts.
type Caller struct {
	AccountID string
	Email     string
	IsAdmin   bool
}

// SkillCatalog says which skill names an account cannot link (neither in the catalogue nor its own).
type SkillCatalog interface {
	Unknown(ctx context.Context, accountID string, names []string) ([]string, error)
}

// ToolCatalog says which MCP tool names are not grantable.
type ToolCatalog interface {
	Unknown(ctx context.Context, names []string) ([]string, error)
}

// Options wire a Service. Skills and Tools may be nil: then every name is unknown.
type Options struct {
	Skills SkillCatalog
	Tools  ToolCatalog
	// Attachments admits and imports context files (URL fetches, attachment_id); nil: uploads
	// only, with the default attachment size limit.
	Attachments *attachments.Service
	// FilesDir holds one git repository per expert (<FilesDir>/<expert_id>) with its context files
	// under context/; empty: files are kept in the database only (in_repository false).
	FilesDir string
	Now      func() time.Time
	Logger   *slog.Logger
}

// Service manages experts over the store.
type Service struct {
	st       *store.Store
	registry *Registry
	skills   SkillCatalog
	// skillLoader is Skills when it can also load skill bodies (for runs).
	skillLoader SkillLoader
	tools       ToolCatalog
	now         func() time.Time
	log         *slog.Logger
	files       fileDeps
}

// New builds the service and loads the built-in registry.
func New(st *store.Store, cfg Options) (*Service, error) {
	reg, err := LoadRegistry()
	if err != nil {
		return nil, err
	}
	s := &Service{st: st, registry: reg, skills: cfg.Skills, tools: cfg.Tools, now: cfg.Now, log: cfg.Logger,
		files: fileDeps{attachments: cfg.Attachments, repos: newRepos(cfg.FilesDir)}}
	s.skillLoader, _ = cfg.Skills.(SkillLoader)
	if s.now == nil {
		s.now = func() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s, nil
}

// Registry is the built-in experts.
func (s *Service) Registry() *Registry { return s.registry }
