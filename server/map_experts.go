package server

import (
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"

	"github.com/researchd/researchd/expert"
	"github.com/researchd/researchd/expertbuild"
	"github.com/researchd/researchd/gen"
)

// Experts, their shares, versions, context files, builds and authoring answers, between the
// domain (expert, expertbuild) and the API. The domain keeps absent, null and value apart with
// nil pointers and nullable fields; each mapping below carries that distinction field by field.

func expertOf(e expert.Expert) (gen.Expert, error) {
	out := gen.Expert{
		ExpertId: e.ID, Slug: e.Slug, Name: e.Name, SystemPrompt: e.SystemPrompt, Description: e.Description,
		Domain: nullableOf(e.Domain), ExpertiseAreas: e.ExpertiseAreas, Tags: e.Tags, Icon: nullableOf(e.Icon),
		SkillNames: e.SkillNames, McpToolNames: e.MCPToolNames, RequiredToolCalls: nullableList(e.RequiredToolCalls),
		DefaultDepth: nullableAs[gen.ExpertDepth](e.DefaultDepth), DefaultMode: nullableAs[gen.ExpertMode](e.DefaultMode),
		DefaultModel: nullableOf(e.DefaultModel), DefaultRuntime: nullableOf(e.DefaultRuntime), MaxCostUsd: nullableOf(e.MaxCostUSD),
		OutputType: nullableAs[gen.ExpertOutputType](e.OutputType), OutputSchema: nullableMap(e.OutputSchema),
		OutputSop: nullableMap(e.OutputSOP), OutputTemplate: nullableOf(e.OutputTemplate),
		OutputTemplateSample: nullableMap(e.OutputTemplateSample), OutputTemplateFile: nullableOf(e.OutputTemplateFile),
		InputForm: nullable.NewNullNullable[[]gen.ExpertInputField](), CampaignPlan: nullableMap(e.CampaignPlan),
		RunMode: nullableAs[gen.ExpertRunMode](e.RunMode), PinnedWorkflow: nullableMap(e.PinnedWorkflow),
		RegistryExpertId: nullableOf(e.RegistryExpertID), Status: gen.ExpertStatus(e.Status), IsPublic: e.IsPublic,
		AllowFreeTierUse: e.AllowFreeTierUse, OwnerUserId: nullable.NewNullNullable[uuid.UUID](), IsBuiltin: e.IsBuiltin,
		ArchivedAt: nullableOf(e.ArchivedAt), VersionNum: nullableOf(e.VersionNum), CreatedAt: nullableOf(e.CreatedAt),
		UpdatedAt: nullableOf(e.UpdatedAt),
	}
	if e.ContextFiles != nil {
		out.ContextFiles = mapItems(e.ContextFiles, contextFileOf)
	}
	if e.InputForm != nil {
		out.InputForm = nullable.NewNullableWithValue(mapItems(e.InputForm, inputFieldOf))
	}
	if e.OwnerID != nil {
		id, err := uuid.Parse(*e.OwnerID)
		if err != nil {
			return gen.Expert{}, fmt.Errorf("owner of expert %s: %w", e.ID, err)
		}
		out.OwnerUserId = nullable.NewNullableWithValue(id)
	}
	// caller_role is left out, not null, when the caller reads the expert only as public or built-in.
	if e.CallerRole != nil {
		out.CallerRole = nullable.NewNullableWithValue(gen.ExpertCallerRole(*e.CallerRole))
	}
	return out, nil
}

func expertSummaryOf(e expert.Summary) gen.ExpertSummary {
	return gen.ExpertSummary{
		ExpertId: e.ID, Slug: e.Slug, Name: e.Name, Description: e.Description, Domain: nullableOf(e.Domain),
		ExpertiseAreas: e.ExpertiseAreas, Tags: e.Tags, Icon: nullableOf(e.Icon), Status: gen.ExpertStatus(e.Status),
		IsBuiltin: e.IsBuiltin, IsPublic: e.IsPublic, OutputType: nullableAs[gen.ExpertOutputType](e.OutputType),
		DefaultDepth: nullableAs[gen.ExpertDepth](e.DefaultDepth), RunMode: nullableAs[gen.ExpertRunMode](e.RunMode),
		UpdatedAt: nullableOf(e.UpdatedAt),
	}
}

func contextFileOf(f expert.FileSummary) gen.ContextFileSummary {
	return gen.ContextFileSummary{Name: f.Name, CharCount: int(f.CharCount), SizeBytes: int(f.SizeBytes), InRepository: f.InRepository, TextMirrored: f.TextMirrored}
}

func inputFieldOf(f expert.InputField) gen.ExpertInputField {
	out := gen.ExpertInputField{Key: f.Key, Label: f.Label, Type: gen.ExpertInputFieldType(f.Type), Required: ptr(f.Required)}
	if len(f.Options) > 0 {
		out.Options = ptr(f.Options)
	}
	return out
}

func inputFieldIn(f gen.ExpertInputField) expert.InputField {
	out := expert.InputField{Key: f.Key, Label: f.Label, Type: string(f.Type)}
	if f.Required != nil {
		out.Required = *f.Required
	}
	if f.Options != nil {
		out.Options = *f.Options
	}
	return out
}

func fileInputIn(f gen.ExpertContextFileInput) expert.FileInput {
	return expert.FileInput{Name: f.Name, Content: f.Content}
}

// createInputOf is the domain's create (and apply manifest) from the document's body.
func createInputOf(b gen.CreateExpertV2Request) expert.CreateInput {
	in := expert.CreateInput{
		Config: expert.Config{
			Name: b.Name, SystemPrompt: b.SystemPrompt, Description: orZero(b.Description), Domain: valueOf(b.Domain),
			ExpertiseAreas: orZero(b.ExpertiseAreas), Tags: orZero(b.Tags), Icon: valueOf(b.Icon),
			SkillNames: orZero(b.SkillNames), MCPToolNames: orZero(b.McpToolNames), RequiredToolCalls: orZero(valueOf(b.RequiredToolCalls)),
			DefaultDepth: stringOf(b.DefaultDepth), DefaultMode: stringOf(b.DefaultMode), DefaultModel: valueOf(b.DefaultModel),
			DefaultRuntime: valueOf(b.DefaultRuntime), MaxCostUSD: valueOf(b.MaxCostUsd), OutputType: stringOf(b.OutputType),
			OutputSchema: mapOf(b.OutputSchema), OutputSOP: mapOf(b.OutputSop), OutputTemplate: valueOf(b.OutputTemplate),
			OutputTemplateSample: mapOf(b.OutputTemplateSample), OutputTemplateFile: valueOf(b.OutputTemplateFile),
			CampaignPlan: mapOf(b.CampaignPlan), RunMode: stringOf(b.RunMode), PinnedWorkflow: mapOf(b.PinnedWorkflow),
			RegistryExpertID: valueOf(b.RegistryExpertId),
		},
		IsPublic: b.IsPublic, AllowFreeTierUse: b.AllowFreeTierUse,
	}
	if f := valueOf(b.InputForm); f != nil {
		in.InputForm = mapItems(*f, inputFieldIn)
	}
	if f := valueOf(b.ContextFiles); f != nil {
		in.ContextFiles = mapItems(*f, fileInputIn)
	}
	if b.Status != nil {
		in.Status = ptr(string(*b.Status))
	}
	if b.OwnerEmail != nil {
		in.OwnerEmail = ptr(string(*b.OwnerEmail))
	}
	return in
}

// patchOf is the domain's partial update from the document's body: absent stays absent, null
// clears.
func patchOf(b gen.UpdateExpertRequest) expert.Patch {
	p := expert.Patch{
		Name: b.Name, SystemPrompt: b.SystemPrompt, Description: b.Description, Domain: b.Domain,
		ExpertiseAreas: b.ExpertiseAreas, Tags: b.Tags, Icon: b.Icon, SkillNames: b.SkillNames, MCPToolNames: b.McpToolNames,
		RequiredToolCalls: b.RequiredToolCalls, DefaultDepth: nullableString(b.DefaultDepth), DefaultMode: nullableString(b.DefaultMode),
		DefaultModel: b.DefaultModel, DefaultRuntime: b.DefaultRuntime, MaxCostUSD: b.MaxCostUsd,
		OutputType: nullableString(b.OutputType), OutputSchema: b.OutputSchema, OutputSOP: b.OutputSop,
		OutputTemplate: b.OutputTemplate, OutputTemplateSample: b.OutputTemplateSample, OutputTemplateFile: b.OutputTemplateFile,
		InputForm:    nullableMapped(b.InputForm, func(l []gen.ExpertInputField) []expert.InputField { return mapItems(l, inputFieldIn) }),
		ContextFiles: nullableMapped(b.ContextFiles, func(l []gen.ExpertContextFileInput) []expert.FileInput { return mapItems(l, fileInputIn) }),
		CampaignPlan: b.CampaignPlan, RunMode: nullableString(b.RunMode), PinnedWorkflow: b.PinnedWorkflow,
		RegistryExpertID: b.RegistryExpertId, IsPublic: b.IsPublic, AllowFreeTierUse: b.AllowFreeTierUse,
	}
	if b.Status != nil {
		p.Status = ptr(string(*b.Status))
	}
	if b.OwnerEmail != nil {
		p.OwnerEmail = ptr(string(*b.OwnerEmail))
	}
	return p
}

// decodeBody reads an object the document leaves unchecked on the way in (validate's expert) as
// the domain input it stands for. It is decoding, not mapping: no typed request exists to map from,
// and a hop through one would reject or rewrite what validate must report as it was sent (an
// owner_email the generated type would normalise or refuse).
func decodeBody[T any](m map[string]any) (T, error) {
	var out T
	b, err := json.Marshal(m)
	if err != nil {
		return out, fmt.Errorf("encode body: %w", err)
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return out, fmt.Errorf("decode body as %T: %w", out, err)
	}
	return out, nil
}

func shareOf(sh expert.Share) gen.ExpertShare {
	return gen.ExpertShare{
		PrincipalType: gen.ExpertSharePrincipalType(sh.PrincipalType), Principal: sh.Principal,
		Role: gen.ExpertShareRole(sh.Role), CreatedAt: sh.CreatedAt, CreatedBy: lenientUUID(sh.CreatedBy),
	}
}

func versionSummaryOf(v expert.Version) gen.ExpertVersionSummary {
	return gen.ExpertVersionSummary{VersionNum: v.VersionNum, CreatedAt: v.CreatedAt, Source: gen.ExpertVersionSummarySource(v.Source),
		CreatedBy: lenientUUID(v.CreatedBy)}
}

func versionOf(v expert.Version, snapshot map[string]any) gen.ExpertVersion {
	sum := versionSummaryOf(v)
	src := gen.ExpertVersionSource(v.Source)
	return gen.ExpertVersion{VersionNum: sum.VersionNum, CreatedAt: sum.CreatedAt, CreatedBy: sum.CreatedBy, Source: &src, Snapshot: snapshot}
}

// lenientUUID is null for an absent or malformed recorded actor rather than a failed read.
func lenientUUID(id *string) nullable.Nullable[uuid.UUID] {
	if id != nil {
		if u, err := uuid.Parse(*id); err == nil {
			return nullable.NewNullableWithValue(u)
		}
	}
	return nullable.NewNullNullable[uuid.UUID]()
}

func storedFileOf(f expert.StoredFile) gen.ContextFileUploadResponse {
	return gen.ContextFileUploadResponse{
		Name: f.Name, Path: f.Path, SizeBytes: int(f.SizeBytes), TextMirrored: f.TextMirrored, CharCount: int(f.CharCount),
		CommitSha: nullableOf(f.CommitSHA), Success: true,
	}
}

func buildJobOf(b expertbuild.Build) (gen.ExpertBuildJob, error) {
	id, err := uuid.Parse(b.ID)
	if err != nil {
		return gen.ExpertBuildJob{}, fmt.Errorf("build id %q: %w", b.ID, err)
	}
	out := gen.ExpertBuildJob{JobId: id, Status: gen.ExpertBuildJobStatus(b.Status), CreatedAt: b.CreatedAt,
		FinishedAt: nullableOf(b.FinishedAt)}
	if b.Expert != nil {
		e, err := expertOf(*b.Expert)
		if err != nil {
			return out, err
		}
		out.Expert = nullable.NewNullableWithValue(e)
	}
	if b.ErrorCode != "" {
		out.Error = nullable.NewNullableWithValue(gen.ExpertBuildError{Code: b.ErrorCode, Message: b.ErrorMsg})
	}
	return out, nil
}

func appliedOf(a expert.Applied) (gen.ExpertApplyResponse, error) {
	out := gen.ExpertApplyResponse{Action: gen.ExpertApplyResponseAction(a.Action), DryRun: a.DryRun,
		Changes:  make([]gen.ExpertApplyChange, 0, len(a.Changes)),
		ExpertId: nullable.NewNullNullable[uuid.UUID](), VersionNum: nullableOf(a.VersionNum)}
	for _, ch := range a.Changes {
		out.Changes = append(out.Changes, gen.ExpertApplyChange{Field: ch.Field, Op: gen.ExpertApplyChangeOp(ch.Op)})
	}
	if a.ExpertID != nil {
		id, err := uuid.Parse(*a.ExpertID)
		if err != nil {
			return out, fmt.Errorf("expert id %q: %w", *a.ExpertID, err)
		}
		out.ExpertId = nullable.NewNullableWithValue(id)
	}
	return out, nil
}

// nullableAs is nullableOf for the document's named string types.
func nullableAs[T ~string](v *string) nullable.Nullable[T] {
	if v == nil {
		return nullable.NewNullNullable[T]()
	}
	return nullable.NewNullableWithValue(T(*v))
}

// nullableList is null for a nil list and the list otherwise, empty included.
func nullableList[T any](l []T) nullable.Nullable[[]T] {
	if l == nil {
		return nullable.NewNullNullable[[]T]()
	}
	return nullable.NewNullableWithValue(l)
}

// stringOf is a named string type's value as a plain string, nil when absent or null.
func stringOf[T ~string](n nullable.Nullable[T]) *string {
	if v := valueOf(n); v != nil {
		return ptr(string(*v))
	}
	return nil
}

// nullableString keeps a nullable named string's absent, null or value as a plain string.
func nullableString[T ~string](n nullable.Nullable[T]) nullable.Nullable[string] {
	return nullableMapped(n, func(v T) string { return string(v) })
}

// nullableMapped maps a nullable value's content and keeps whether it was absent or null.
func nullableMapped[T, U any](n nullable.Nullable[T], fn func(T) U) nullable.Nullable[U] {
	switch {
	case !n.IsSpecified():
		return nil
	case n.IsNull():
		return nullable.NewNullNullable[U]()
	}
	return nullable.NewNullableWithValue(fn(n.MustGet()))
}
