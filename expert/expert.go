// Package expert owns experts: the built-in registry shipped in the binary, custom
// experts with their configuration rules and draft → active state machine, restorable versions,
// sharing and visibility, and the jobs.Experts seam that lets a research job run as an expert.
package expert

import (
	"context"
	"log/slog"
	"time"

	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// Refusals of the expert operations (bad input is Invalid).
var (
	// ErrNotFound: no such expert, or one the caller may not read.
	ErrNotFound = fault.Missing("expert")
	// ErrForbidden: the caller may read the expert but not do this.
	ErrForbidden = &fault.Error{Kind: fault.Forbidden, Msg: "forbidden"}
	// ErrArchived: a change to an archived expert.
	ErrArchived = &fault.Error{Kind: fault.Conflict, Code: "expert_archived", Msg: "the expert is archived and read-only"}
	// ErrInvalidTransition: active → building.
	ErrInvalidTransition = &fault.Error{Kind: fault.Conflict, Code: "invalid_status_transition", Msg: "an active expert cannot go back to building"}
	// ErrNotActive: making a draft public.
	ErrNotActive = &fault.Error{Kind: fault.Conflict, Code: "expert_not_active", Msg: "a building draft cannot be made public; finalize it first"}
	// ErrContextFileMissing: a restored output_template_file is no longer attached.
	ErrContextFileMissing = &fault.Error{Kind: fault.Conflict, Code: "context_file_missing", Msg: "the restored output_template_file is no longer attached"}
	// ErrVersionNotFound: no such version.
	ErrVersionNotFound = fault.Missing("expert version")
)

// Invalid refuses a request for fields (JSON-pointer-like paths such as skill_names/2, at least
// one); nothing was changed. It reads as "invalid expert: " and each "field: message".
func Invalid(fields ...fault.Field) *fault.Error {
	f := fault.InvalidInput(fields...)
	f.Msg = "invalid expert: " + f.Msg
	f.Detail = f.Msg
	return f
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
