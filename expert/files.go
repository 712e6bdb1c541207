package expert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/researchd/researchd/attachments"
	"github.com/researchd/researchd/engine/extract"
	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/store"
	"github.com/researchd/researchd/workspace"
)

// Context files: documents attached to an expert, admitted exactly like attachments
// (extension allowlist, signature and UTF-8 checks, size limit), their text mirrored for the engine,
// and committed to the expert's own repository. The row in the database is what lists and downloads
// read.

// Limits of context files (as in openapi/v2.json).
const (
	maxFileNameRunes = 512
	maxMirrorRunes   = 5_000_000
)

// Refusals of the context file operations.
var (
	// ErrFileNotFound: no context file has that name.
	ErrFileNotFound = fault.Missing("context file")
	// ErrFileInUse: the file is the current output_template_file.
	ErrFileInUse = &fault.Error{Kind: fault.Conflict, Code: "context_file_in_use", Msg: "the context file is the current output_template_file; clear that setting first"}
	// ErrFileTooLarge: over the size limit.
	ErrFileTooLarge = &fault.Error{Kind: fault.TooLarge, Msg: "context file over the size limit"}
)

// fileError refuses a context file at admission (nothing was stored) with code:
// unsupported_file_type, archive_not_allowed, url_not_allowed, source_too_large, import_failed or
// validation_error.
func fileError(field, code, msg string) *fault.Error {
	f := fault.InvalidInput(fault.Field{Field: field, Message: msg})
	f.Code = code
	return f
}

// archiveExtensions are refused as archives before the allowlist speaks.
var archiveExtensions = map[string]bool{
	"zip": true, "tar": true, "gz": true, "tgz": true, "bz2": true, "xz": true, "7z": true, "rar": true, "zst": true,
}

// fileDeps are the collaborators of the context file operations.
type fileDeps struct {
	attachments *attachments.Service
	repos       *repos
}

// StoredFile is an uploaded or imported context file.
type StoredFile struct {
	Name         string
	Path         string
	SizeBytes    int64
	TextMirrored bool
	CharCount    int64
	CommitSHA    *string // nil when it was not committed
}

// DeletedFile says what detaching a file removed.
type DeletedFile struct {
	Name                  string
	RemovedFromMirror     bool
	RemovedFromRepository bool
}

// Download is a context file's bytes.
type Download struct {
	Name        string
	ContentType string
	Data        []byte
}

// ImportInput is an import request: exactly one of SourceURL and AttachmentID.
type ImportInput struct {
	SourceURL    *string
	AttachmentID *string
	Filename     *string
}

// maxFileBytes is the size limit of one context file: the attachment limit.
func (s *Service) maxFileBytes() int64 {
	if s.files.attachments != nil {
		return s.files.attachments.MaxBytes()
	}
	return attachments.DefaultMaxBytes
}

// MaxFileBytes is the size limit of one context file (the HTTP layer bounds upload bodies by it).
func (s *Service) MaxFileBytes() int64 { return s.maxFileBytes() }

// ListFiles lists an expert's context files; everyone who can read the expert may. It returns the
// id the files belong to (the registry id of a built-in expert, which has none).
func (s *Service) ListFiles(ctx context.Context, c Caller, ref string) (string, []FileSummary, error) {
	if b, ok := s.registry.Get(ref); ok {
		return b.ID, []FileSummary{}, nil
	}
	t, err := s.find(ctx, c, ref)
	if err != nil {
		return "", nil, err
	}
	rows, err := s.st.ExpertContextFiles(ctx, t.row.ID)
	if err != nil {
		return "", nil, err
	}
	out := make([]FileSummary, 0, len(rows))
	for _, f := range rows {
		out = append(out, FileSummary{Name: f.Name, CharCount: f.CharCount, SizeBytes: f.SizeBytes, InRepository: f.InRepository, TextMirrored: f.TextMirrored})
	}
	return t.row.ID, out, nil
}

// File returns a context file's bytes; everyone who can read the expert may.
func (s *Service) File(ctx context.Context, c Caller, ref, name string) (Download, error) {
	if _, ok := s.registry.Get(ref); ok {
		return Download{}, fmt.Errorf("%q: %w", name, ErrFileNotFound)
	}
	t, err := s.find(ctx, c, ref)
	if err != nil {
		return Download{}, err
	}
	f, err := s.st.ExpertContextFile(ctx, t.row.ID, name)
	if errors.Is(err, store.ErrNotFound) {
		return Download{}, fmt.Errorf("%q: %w", name, ErrFileNotFound)
	} else if err != nil {
		return Download{}, err
	}
	return Download{Name: f.Name, ContentType: f.MediaType, Data: f.Content}, nil
}

// fileEditable resolves an expert whose files the caller may change: 404 unreadable, 403 read-only (built-in
// experts, viewers), 409 archived.
func (s *Service) fileEditable(ctx context.Context, c Caller, ref string) (target, error) {
	if _, ok := s.registry.Get(ref); ok {
		return target{}, fmt.Errorf("built-in experts are read-only: %w", ErrForbidden)
	}
	t, err := s.find(ctx, c, ref)
	if err != nil {
		return target{}, err
	}
	if !t.canEdit(c) {
		return target{}, fmt.Errorf("only the owner and editors may change the expert's context files: %w", ErrForbidden)
	}
	if t.row.ArchivedAt != nil {
		return target{}, ErrArchived
	}
	return t, nil
}

// FormField is the multipart part that carries an uploaded context file.
const FormField = "file"

// Upload attaches the one `file` part of a multipart body, replacing a file of the same name. The
// body is read only after the access checks pass, and at most the size limit + 1 of the file.
func (s *Service) Upload(ctx context.Context, c Caller, ref string, mr *multipart.Reader) (StoredFile, error) {
	t, err := s.fileEditable(ctx, c, ref)
	if err != nil {
		return StoredFile{}, err
	}
	part, err := mr.NextPart()
	if errors.Is(err, io.EOF) {
		return StoredFile{}, fileError(FormField, "validation_error", "send the file as a multipart part named \"file\"")
	} else if err != nil {
		return StoredFile{}, bodyError(err)
	}
	if part.FormName() != FormField || part.FileName() == "" {
		return StoredFile{}, fileError(FormField, "validation_error", fmt.Sprintf("unexpected part %q; send one file part named \"file\" with a filename", part.FormName()))
	}
	name, err := admitName(FormField, part.FileName())
	if err != nil {
		return StoredFile{}, err
	}
	limit := s.maxFileBytes()
	data, err := io.ReadAll(io.LimitReader(part, limit+1))
	if err != nil {
		return StoredFile{}, bodyError(err)
	}
	if int64(len(data)) > limit {
		return StoredFile{}, fmt.Errorf("%q is larger than %d bytes: %w", name, limit, ErrFileTooLarge)
	}
	switch _, err := mr.NextPart(); {
	case err == nil:
		return StoredFile{}, fileError(FormField, "validation_error", "send one file per request")
	case !errors.Is(err, io.EOF):
		return StoredFile{}, bodyError(err)
	}
	if err := attachments.CheckContent(FormField, name, data); err != nil {
		return StoredFile{}, fileRefusal(err)
	}
	return s.attach(ctx, c, t, FormField, name, data)
}

// bodyError classifies a failure to read an upload body: over the request limit is
// ErrFileTooLarge, anything else a malformed body.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fmt.Errorf("request body over %d bytes: %w", mbe.Limit, ErrFileTooLarge)
	}
	return fileError(FormField, "validation_error", "malformed multipart body: "+err.Error())
}

// admitName checks a context file name: not an archive, path-safe, an accepted extension, and not
// hidden (runs skip dot files).
func admitName(field, raw string) (string, error) {
	if err := checkArchive(field, raw); err != nil {
		return "", err
	}
	name, _, err := attachments.CheckName(field, raw, maxFileNameRunes)
	if err != nil {
		return "", fileRefusal(err)
	}
	if strings.HasPrefix(name, ".") {
		return "", fileError(field, "validation_error", fmt.Sprintf("%q: names starting with a dot are hidden from runs", name))
	}
	return name, nil
}

func checkArchive(field, name string) error {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(name), "."))
	if archiveExtensions[ext] {
		return fileError(field, "archive_not_allowed", fmt.Sprintf("%q: archives (.%s) are not accepted; upload the files themselves", name, ext))
	}
	return nil
}

// fileRefusal turns an attachments refusal into a fileError with the context-file problem code.
func fileRefusal(err error) error {
	var fe *attachments.FieldError
	if !errors.As(err, &fe) {
		return err
	}
	code := "validation_error"
	switch {
	case errors.Is(fe.Err, attachments.ErrUnsupportedType), errors.Is(fe.Err, attachments.ErrTypeMismatch):
		code = "unsupported_file_type"
	case errors.Is(fe.Err, attachments.ErrURLNotAllowed):
		code = "url_not_allowed"
	case errors.Is(fe.Err, attachments.ErrSourceTooLarge):
		code = "source_too_large"
	case errors.Is(fe.Err, attachments.ErrImportFailed):
		code = "import_failed"
	}
	return fileError(fe.Field, code, fe.Detail)
}

// mirror is the text of an admitted file given to the engine: text formats are their own mirror
// (nil), PDF and DOCX have their text extracted, images and other binaries none (ok false).
func mirror(field, name string, data []byte) (text *string, chars int64, ok bool, err error) {
	_, isText, err := attachments.CheckName(field, name, maxFileNameRunes)
	if err != nil {
		return nil, 0, false, fileRefusal(err)
	}
	if isText {
		n := utf8.RuneCount(data)
		if n > maxMirrorRunes {
			return nil, 0, false, fileError(field, "validation_error", fmt.Sprintf("%q has %d characters; text context files may have at most %d", name, n, maxMirrorRunes))
		}
		return nil, int64(n), true, nil
	}
	t, ok := extract.Text(name, data)
	if !ok {
		return nil, 0, false, nil
	}
	if utf8.RuneCountInString(t) > maxMirrorRunes {
		t = string([]rune(t)[:maxMirrorRunes])
	}
	return &t, int64(utf8.RuneCountInString(t)), true, nil
}

// mediaType is the Content-Type a context file is downloaded with.
func mediaType(name string, data []byte, text bool) string {
	mt := workspace.ContentType(name, data[:min(len(data), 512)])
	if text {
		if base, params, err := mime.ParseMediaType(mt); err == nil && params["charset"] == "" {
			params["charset"] = "utf-8"
			mt = mime.FormatMediaType(base, params)
		}
	}
	return mt
}

// attach stores an admitted file (replacing one of the same name) and commits it to the expert's
// repository. The row is written first: a failed commit leaves a usable file with in_repository
// false and no commit_sha.
func (s *Service) attach(ctx context.Context, c Caller, t target, field, name string, data []byte) (StoredFile, error) {
	text, chars, mirrored, err := mirror(field, name, data)
	if err != nil {
		return StoredFile{}, err
	}
	now := s.now()
	row := store.ExpertContextFile{
		ID: uuid.NewString(), ExpertID: t.row.ID, Name: name, Content: data, MirrorText: text,
		MediaType: mediaType(name, data, mirrored && text == nil), SizeBytes: int64(len(data)), CharCount: chars,
		TextMirrored: mirrored, CreatedAt: now, UpdatedAt: now,
	}
	unlock := s.files.repos.lock(t.row.ID)
	defer unlock()
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		e, err := tx.ExpertByID(ctx, t.row.ID, true)
		if err != nil {
			return err
		}
		if e.ArchivedAt != nil {
			return ErrArchived
		}
		// Touching the expert makes a concurrent update that validated output_template_file against
		// the old set of files plan again.
		e.UpdatedAt = now
		if err := tx.SaveExpert(ctx, &e); err != nil {
			return err
		}
		return tx.UpsertExpertContextFile(ctx, &row)
	})
	if err != nil {
		return StoredFile{}, err
	}
	out := StoredFile{Name: name, Path: contextDir + name, SizeBytes: row.SizeBytes, TextMirrored: mirrored, CharCount: chars}
	sha, _, err := s.files.repos.commit(t.row.ID, fmt.Sprintf("Add context file %s\n\nBy account %s.", name, c.AccountID), []change{{Name: name, Data: data}})
	if err != nil {
		s.log.WarnContext(ctx, "commit context file", "expert_id", t.row.ID, "name", name, "error", err)
		return out, nil
	}
	if sha != "" {
		if err := s.st.MarkExpertContextFilesInRepository(ctx, t.row.ID, []string{name}); err != nil {
			return StoredFile{}, err
		}
		out.CommitSHA = &sha
	}
	return out, nil
}

// DeleteFile detaches a context file. The current output_template_file cannot be detached.
func (s *Service) DeleteFile(ctx context.Context, c Caller, ref, name string) (DeletedFile, error) {
	t, err := s.fileEditable(ctx, c, ref)
	if err != nil {
		return DeletedFile{}, err
	}
	unlock := s.files.repos.lock(t.row.ID)
	defer unlock()
	var gone store.ExpertContextFile
	err = s.st.InTx(ctx, func(tx *store.Store) error {
		e, err := tx.ExpertByID(ctx, t.row.ID, true)
		if err != nil {
			return err
		}
		if e.ArchivedAt != nil {
			return ErrArchived
		}
		cfg, err := decodeConfig(e.Config)
		if err != nil {
			return err
		}
		if cfg.OutputTemplateFile != nil && *cfg.OutputTemplateFile == name {
			return fmt.Errorf("%q: %w", name, ErrFileInUse)
		}
		files, err := tx.ExpertContextFiles(ctx, e.ID)
		if err != nil {
			return err
		}
		found := false
		for _, f := range files {
			if f.Name == name {
				gone, found = f, true
			}
		}
		if !found {
			return fmt.Errorf("%q: %w", name, ErrFileNotFound)
		}
		e.UpdatedAt = s.now()
		if err := tx.SaveExpert(ctx, &e); err != nil {
			return err
		}
		return tx.DeleteExpertContextFile(ctx, e.ID, name)
	})
	if err != nil {
		return DeletedFile{}, err
	}
	out := DeletedFile{Name: name, RemovedFromMirror: gone.TextMirrored}
	if !gone.InRepository {
		return out, nil
	}
	_, removed, err := s.files.repos.commit(t.row.ID, fmt.Sprintf("Remove context file %s\n\nBy account %s.", name, c.AccountID), []change{{Name: name}})
	if err != nil {
		s.log.WarnContext(ctx, "commit context file removal", "expert_id", t.row.ID, "name", name, "error", err)
		return out, nil
	}
	out.RemovedFromRepository = removed[name]
	return out, nil
}

// commitInline commits the named files as the database holds them now (the inline context_files of
// a create or update) to the expert's repository. A failure is logged: the files stay usable with
// in_repository false.
func (s *Service) commitInline(ctx context.Context, expertID, accountID string, files []FileInput) {
	if len(files) == 0 || !s.files.repos.enabled() {
		return
	}
	want := map[string]bool{}
	for _, f := range files {
		want[f.Name] = true
	}
	unlock := s.files.repos.lock(expertID)
	defer unlock()
	rows, err := s.st.ExpertContextFilesWithContent(ctx, expertID)
	if err != nil {
		s.log.WarnContext(ctx, "read inline context files", "expert_id", expertID, "error", err)
		return
	}
	var changes []change
	var names []string
	for _, r := range rows {
		if want[r.Name] {
			changes = append(changes, change{Name: r.Name, Data: r.Content})
			names = append(names, r.Name)
		}
	}
	if len(changes) == 0 {
		return
	}
	msg := fmt.Sprintf("Add %d inline context file(s)\n\nBy account %s.", len(changes), accountID)
	if _, _, err := s.files.repos.commit(expertID, msg, changes); err != nil {
		s.log.WarnContext(ctx, "commit inline context files", "expert_id", expertID, "error", err)
		return
	}
	if err := s.st.MarkExpertContextFilesInRepository(ctx, expertID, names); err != nil {
		s.log.WarnContext(ctx, "mark inline context files committed", "expert_id", expertID, "error", err)
	}
}
