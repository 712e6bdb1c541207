// Package attachments stores the input files callers attach to research jobs: metadata in the store,
// bytes in blob storage (gocloud.dev/blob). Files arrive three ways — a multipart upload, an import
// from a public URL (through netguard) and a reserved direct upload with a one-time token — and pass
// the same admission checks: an extension allowlist, magic bytes for binary formats, UTF-8 for text
// formats, a size limit and a path-safe name. Jobs get their files through FilesForJob.
package attachments

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"gocloud.dev/blob"

	"github.com/researchd/researchd/fault"
	"github.com/researchd/researchd/netguard"
	"github.com/researchd/researchd/store"
)

// Defaults of Config.
const (
	DefaultMaxBytes      = 50 << 20
	DefaultMaxFiles      = 20
	DefaultUploadTTL     = time.Hour
	DefaultImportTimeout = 30 * time.Second
	// UploadTokenHeader carries the one-time upload token of a reserved upload.
	UploadTokenHeader = "X-Upload-Token"
)

// Config holds the limits and collaborators of a Service; zero fields take the defaults.
type Config struct {
	MaxBytes int64 // per file; also the max_bytes reported to direct uploads
	MaxFiles int   // files per multipart upload
	// MaxRequestBytes caps a whole multipart request; 0 means MaxFiles × MaxBytes plus 1 MiB of
	// multipart framing, i.e. no cap beyond the per-file one.
	MaxRequestBytes int64
	UploadTTL       time.Duration // how long a reservation and its token live
	ImportTimeout   time.Duration // the whole fetch of an import
	// ImportOptions are appended to the shipped import client's options (public http(s) targets
	// only); tests inject a resolver and dialer here, which never lifts the address checks.
	ImportOptions []netguard.Option
	Now           func() time.Time
	Logger        *slog.Logger
}

// Service implements the attachment operations.
type Service struct {
	st     *store.Store
	bucket *blob.Bucket
	cfg    Config
	client *http.Client
}

// New builds a Service over a store and a bucket (see OpenBucket); the caller closes the bucket.
func New(st *store.Store, bucket *blob.Bucket, cfg Config) *Service {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxFiles <= 0 {
		cfg.MaxFiles = DefaultMaxFiles
	}
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = int64(cfg.MaxFiles)*cfg.MaxBytes + 1<<20
	}
	if cfg.UploadTTL <= 0 {
		cfg.UploadTTL = DefaultUploadTTL
	}
	if cfg.ImportTimeout <= 0 {
		cfg.ImportTimeout = DefaultImportTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	opts := append([]netguard.Option{netguard.WithMaxBodyBytes(cfg.MaxBytes)}, cfg.ImportOptions...)
	client := netguard.NewClient(netguard.Policy{AllowHTTP: true}, cfg.ImportTimeout, opts...)
	return &Service{st: st, bucket: bucket, cfg: cfg, client: client}
}

// Bucket is the blob storage the service writes to (RESEARCH_BLOB_URL). Research jobs publish
// their revisions' files and campaigns their deliverables to the same bucket, so one setting makes
// every process share all of them.
func (s *Service) Bucket() *blob.Bucket { return s.bucket }

// MaxBytes is the per-file size limit (and the body limit of a direct upload).
func (s *Service) MaxBytes() int64 { return s.cfg.MaxBytes }

// MaxRequestBytes is the body limit of a multipart upload.
func (s *Service) MaxRequestBytes() int64 { return s.cfg.MaxRequestBytes }

func (s *Service) now() time.Time { return s.cfg.Now().UTC().Truncate(time.Microsecond) }

// Refusals of the operations.
var (
	ErrNotFound      = fault.Missing("attachment")
	ErrTooLarge      = &fault.Error{Kind: fault.TooLarge, Msg: "over the attachment size limit"}
	ErrTokenInvalid  = &fault.Error{Kind: fault.Unauthenticated, Msg: "upload token missing, invalid or used"}
	ErrTokenMismatch = &fault.Error{Kind: fault.Forbidden, Msg: "upload token is for another attachment",
		Detail: "this upload token was issued for a different attachment"}
	// ErrUnusable: the id is unknown, another account's, deleted, or still pending_upload.
	ErrUnusable = errors.New("attachment cannot be used")
)

// What can be wrong with a refused input (FieldError.Err); refusalCodes has their problem codes.
var (
	ErrInvalid         = errors.New("invalid input")
	ErrUnsupportedType = errors.New("file type not accepted")
	ErrTypeMismatch    = errors.New("content does not match the file type")
	ErrSizeMismatch    = errors.New("body length differs from size_bytes")
	ErrURLNotAllowed   = errors.New("URL not allowed")
	ErrImportFailed    = errors.New("import failed")
)

// FieldError is a refusal of one input: Field names it ("files/2", "filename", "source_url"), Err is
// what is wrong with it (ErrInvalid, ErrUnsupportedType, ...) and Detail says why, for people. To
// errors.As it is a fault.Invalid refusal too.
type FieldError struct {
	Field  string
	Err    error
	Detail string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Detail }
func (e *FieldError) Unwrap() error { return e.Err }

// As fills a *fault.Error target with the refusal of the request this input makes.
func (e *FieldError) As(target any) bool { return asFault(target, e.Error(), []*FieldError{e}) }

func refuse(field string, kind error, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Err: kind, Detail: fmt.Sprintf(format, args...)}
}

// RefusedError is a request refused for one or more inputs, in input order.
type RefusedError struct{ Errors []*FieldError }

func (e *RefusedError) Error() string {
	msg := fmt.Sprintf("%d input(s) refused", len(e.Errors))
	for _, fe := range e.Errors {
		msg += "; " + fe.Error()
	}
	return msg
}

// As fills a *fault.Error target with the refusal of the request: every input, in order.
func (e *RefusedError) As(target any) bool { return asFault(target, e.Error(), e.Errors) }

// asFault fills a *fault.Error target with the refusal of inputs (at least one): it has the code of
// the first and, for one, reads as it.
func asFault(target any, msg string, inputs []*FieldError) bool {
	p, ok := target.(**fault.Error)
	if !ok || len(inputs) == 0 {
		return false
	}
	fields := make([]fault.Field, len(inputs))
	for i, fe := range inputs {
		fields[i] = fault.Field{Field: fe.Field, Message: fe.Detail}
	}
	detail := inputs[0].Error()
	if len(inputs) > 1 {
		detail = fmt.Sprintf("%d inputs were refused; nothing was stored (see errors)", len(inputs))
	}
	*p = &fault.Error{Kind: fault.Invalid, Code: refusalCode(inputs[0].Err), Msg: msg, Detail: detail, Fields: fields}
	return true
}

// refusalCodes are the problem codes of what can be wrong with an input; anything else (ErrInvalid)
// is validation_error.
var refusalCodes = []struct {
	kind error
	code string
}{
	{ErrUnsupportedType, "unsupported_file_type"}, {ErrTypeMismatch, "file_type_mismatch"}, {ErrSizeMismatch, "size_mismatch"},
	{ErrURLNotAllowed, "url_not_allowed"}, {ErrImportFailed, "import_failed"},
}

func refusalCode(kind error) string {
	for _, c := range refusalCodes {
		if errors.Is(kind, c.kind) {
			return c.code
		}
	}
	return "validation_error"
}

func (e *RefusedError) Unwrap() []error {
	out := make([]error, len(e.Errors))
	for i, fe := range e.Errors {
		out[i] = fe
	}
	return out
}

// UnusableError says which entry of a job's attachment_ids cannot be used and why; it wraps
// ErrUnusable. errors.As finds it with a target of either UnusableError or *UnusableError.
type UnusableError struct {
	Index  int
	ID     string
	Reason string
}

func (e UnusableError) Error() string {
	return fmt.Sprintf("attachment_ids/%d: attachment %q cannot be used: %s", e.Index, e.ID, e.Reason)
}

func (e UnusableError) Unwrap() error { return ErrUnusable }

// As lets errors.As fill a *UnusableError target too.
func (e UnusableError) As(target any) bool {
	if p, ok := target.(**UnusableError); ok {
		c := e
		*p = &c
		return true
	}
	return false
}

// Get returns an attachment by id; an expired reservation counts as gone. Ownership is the caller's
// rule (the API answers 404 to other accounts).
func (s *Service) Get(ctx context.Context, id string) (store.Attachment, error) {
	a, err := s.st.AttachmentByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && a.Expired(s.now())) {
		return store.Attachment{}, ErrNotFound
	}
	if err != nil {
		return store.Attachment{}, err
	}
	return a, nil
}

// Delete removes an attachment and then its bytes, so no new job can use it. Jobs that already
// copied the files keep their copies.
func (s *Service) Delete(ctx context.Context, id string) error {
	files, err := s.st.DeleteAttachment(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	for _, f := range files {
		s.removeBlob(ctx, f.BlobKey)
	}
	return nil
}

// removeBlob deletes stored bytes whose metadata is gone or was never written. A failure only leaves
// an orphan object (logged), never a dangling reference.
func (s *Service) removeBlob(ctx context.Context, key string) {
	if key == "" {
		return
	}
	if err := s.bucket.Delete(context.WithoutCancel(ctx), key); err != nil && !isNotExist(err) {
		s.cfg.Logger.WarnContext(ctx, "delete attachment blob", "key", key, "error", err)
	}
}
