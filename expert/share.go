package expert

import (
	"context"
	"fmt"
	"net/mail"
	"strings"

	"github.com/google/uuid"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
)

// Principal types of a grant.
const (
	PrincipalUser   = "user"
	PrincipalDomain = "domain"
	PrincipalTeam   = "team"
)

// Share is a grant on an expert.
type Share = store.ExpertShare

// ShareList is an expert's grants.
type ShareList struct {
	ExpertID string
	Items    []Share
}

// normalizePrincipal checks and canonicalises a principal: emails and domains lowercase.
func normalizePrincipal(kind, p string) (string, error) {
	p = strings.TrimSpace(p)
	switch kind {
	case PrincipalUser:
		a, err := mail.ParseAddress(p)
		if err != nil || a.Address != p {
			return "", Invalid(fault.Field{Field: "principal", Message: "a user grant needs an email address"})
		}
		return strings.ToLower(p), nil
	case PrincipalDomain:
		p = strings.ToLower(strings.TrimPrefix(p, "@"))
		if !strings.Contains(p, ".") || strings.ContainsAny(p, "@ /") {
			return "", Invalid(fault.Field{Field: "principal", Message: "a domain grant needs a domain such as example.com"})
		}
		return p, nil
	case PrincipalTeam:
		if p == "" || len(p) > 100 {
			return "", Invalid(fault.Field{Field: "principal", Message: "a team grant needs a team id of 1-100 characters"})
		}
		return p, nil
	}
	return "", Invalid(fault.Field{Field: "principal_type", Message: "unknown principal type " + kind})
}

// managed resolves an expert the caller must own (or administer) to share or change visibility.
func (s *Service) managed(ctx context.Context, c Caller, ref, what string) (target, error) {
	if _, ok := s.registry.Get(ref); ok {
		return target{}, fmt.Errorf("built-in experts are read-only: %w", ErrForbidden)
	}
	t, err := s.find(ctx, c, ref)
	if err != nil {
		return target{}, err
	}
	if !t.canManage(c) {
		return target{}, fmt.Errorf("only the owner may %s: %w", what, ErrForbidden)
	}
	return t, nil
}

// Shares lists the grants (owner, editors and administrators).
func (s *Service) Shares(ctx context.Context, c Caller, ref string) (ShareList, error) {
	if _, ok := s.registry.Get(ref); ok {
		return ShareList{}, fmt.Errorf("built-in experts have no shares: %w", ErrForbidden)
	}
	t, err := s.find(ctx, c, ref)
	if err != nil {
		return ShareList{}, err
	}
	if !t.canEdit(c) {
		return ShareList{}, fmt.Errorf("viewers cannot list grants: %w", ErrForbidden)
	}
	items, err := s.st.ExpertSharesFor(ctx, t.row.ID)
	if err != nil {
		return ShareList{}, err
	}
	return ShareList{ExpertID: t.row.ID, Items: items}, nil
}

// Grant creates a grant (created true) or changes the role of an existing one.
func (s *Service) Grant(ctx context.Context, c Caller, ref, kind, principal, role string) (Share, bool, error) {
	t, err := s.managed(ctx, c, ref, "share the expert")
	if err != nil {
		return Share{}, false, err
	}
	if t.row.ArchivedAt != nil {
		return Share{}, false, ErrArchived
	}
	if role != RoleViewer && role != RoleEditor {
		return Share{}, false, Invalid(fault.Field{Field: "role", Message: "role must be viewer or editor"})
	}
	principal, err = normalizePrincipal(kind, principal)
	if err != nil {
		return Share{}, false, err
	}
	now := s.now()
	sh := store.ExpertShare{
		ID: uuid.NewString(), ExpertID: t.row.ID, PrincipalType: kind, Principal: principal, Role: role,
		CreatedBy: &c.AccountID, CreatedAt: now, UpdatedAt: now,
	}
	created, err := s.st.UpsertExpertShare(ctx, &sh)
	if err != nil {
		return Share{}, false, err
	}
	return sh, created, nil
}

// Revoke removes a grant; revoking a grant that does not exist succeeds.
func (s *Service) Revoke(ctx context.Context, c Caller, ref, kind, principal string) error {
	t, err := s.managed(ctx, c, ref, "revoke grants")
	if err != nil {
		return err
	}
	if p, err := normalizePrincipal(kind, principal); err == nil {
		principal = p
	}
	return s.st.DeleteExpertShare(ctx, t.row.ID, kind, principal)
}

// SetVisibility makes an expert public (administrators only) or private (owner or administrator).
// Not versioned.
func (s *Service) SetVisibility(ctx context.Context, c Caller, ref string, public bool) (Expert, error) {
	t, err := s.managed(ctx, c, ref, "change the visibility")
	if err != nil {
		return Expert{}, err
	}
	if public && !c.IsAdmin {
		return Expert{}, fmt.Errorf("only service administrators may make an expert public: %w", ErrForbidden)
	}
	if t.row.ArchivedAt != nil {
		return Expert{}, ErrArchived
	}
	if public && t.row.Status != store.ExpertActive {
		return Expert{}, ErrNotActive
	}
	var row store.Expert
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		row, err = tx.ExpertByID(ctx, t.row.ID, true)
		if err != nil || row.IsPublic == public {
			return err
		}
		row.IsPublic = public
		return tx.SaveExpert(ctx, &row)
	})
	if err != nil {
		return Expert{}, err
	}
	return s.view(ctx, s.st, row, t.role)
}
