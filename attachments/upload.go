package attachments

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/researchd/researchd/store"
)

// Reservation is a pending direct upload and everything a client needs to send its bytes.
type Reservation struct {
	Attachment store.Attachment
	Token      string // the one-time upload token; only its hash is stored
	UploadURL  string
	Curl       string
	MaxBytes   int64
}

// tokenPrefix marks upload tokens so they are recognisable in logs and secret scanners.
const tokenPrefix = "rut-"

func newToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// BeginUpload reserves a one-file attachment in pending_upload for a direct upload of exactly size
// bytes. The name's extension and the size are checked now, the content when it arrives. publicURL
// is the service's external base URL (upload_url is built on it).
func (s *Service) BeginUpload(ctx context.Context, accountID, filename string, size int64, contentType *string, publicURL string) (Reservation, error) {
	name, err := safeName("filename", filename)
	if err != nil {
		return Reservation{}, err
	}
	if _, err := kindOf("filename", name); err != nil {
		return Reservation{}, err
	}
	if size < 1 {
		return Reservation{}, refuse("size_bytes", ErrInvalid, "size_bytes must be at least 1")
	}
	if size > s.cfg.MaxBytes {
		return Reservation{}, fmt.Errorf("size_bytes %d is over the %d-byte limit: %w", size, s.cfg.MaxBytes, ErrTooLarge)
	}
	ct := "application/octet-stream"
	if contentType != nil && strings.TrimSpace(*contentType) != "" {
		ct = strings.TrimSpace(*contentType)
	}
	// Reservations whose time ran out are discarded here, lazily, rather than by a timer.
	if n, err := s.st.PurgeExpiredUploads(ctx, s.now()); err != nil {
		s.cfg.Logger.WarnContext(ctx, "purge expired uploads", "error", err)
	} else if n > 0 {
		s.cfg.Logger.InfoContext(ctx, "purged expired uploads", "count", n)
	}

	token := newToken()
	hash := hashToken(token)
	now := s.now()
	expires := now.Add(s.cfg.UploadTTL)
	id := uuid.NewString()
	a := store.Attachment{
		ID: id, AccountID: accountID, Status: store.AttachmentPending, UploadTokenHash: &hash,
		ExpiresAt: &expires, CreatedAt: now, UpdatedAt: now,
		Files: []store.AttachmentFile{{
			ID: uuid.NewString(), AttachmentID: id, Position: 0, Filename: name, ContentType: ct,
			SizeBytes: size, CreatedAt: now,
		}},
	}
	if err := s.st.CreateAttachment(ctx, &a); err != nil {
		return Reservation{}, err
	}
	uploadURL := strings.TrimRight(publicURL, "/") + "/api/v2/attachments/uploads/" + id
	return Reservation{Attachment: a, Token: token, UploadURL: uploadURL, Curl: curlCommand(uploadURL, token, name), MaxBytes: s.cfg.MaxBytes}, nil
}

// curlCommand is a command that works when pasted into a POSIX shell in the file's folder.
func curlCommand(uploadURL, token, filename string) string {
	return "curl -X PUT -H " + shellQuote(UploadTokenHeader+": "+token) +
		" -H 'Content-Type: application/octet-stream' --data-binary @" + shellWord(filename) +
		" " + shellQuote(uploadURL)
}

var plainWord = regexp.MustCompile(`^[A-Za-z0-9._+-]+$`)

func shellWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return shellQuote(s)
}

// shellQuote single-quotes s for a POSIX shell (a quote inside becomes '\”).
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Upload receives the bytes of a reserved attachment, authenticated by its one-time token.
// contentLength is the request's declared length (-1 when unknown). The body must be exactly the
// reserved size and match the file type; a refused body keeps nothing and leaves the reservation
// usable. Success makes the attachment ready and consumes the token.
func (s *Service) Upload(ctx context.Context, id, token string, body io.Reader, contentLength int64) (store.Attachment, error) {
	a, err := s.st.AttachmentByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Attachment{}, ErrNotFound
	}
	if err != nil {
		return store.Attachment{}, err
	}
	if token == "" {
		return store.Attachment{}, fmt.Errorf("send the upload_token in the %s header: %w", UploadTokenHeader, ErrTokenInvalid)
	}
	hash := hashToken(token)
	holder, err := s.st.AttachmentByUploadToken(ctx, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.Attachment{}, fmt.Errorf("the upload token is invalid or was already used: %w", ErrTokenInvalid)
	case err != nil:
		return store.Attachment{}, err
	case holder.ID != a.ID:
		return store.Attachment{}, ErrTokenMismatch
	case a.Expired(s.now()):
		return store.Attachment{}, fmt.Errorf("the reservation expired at %s: %w", a.ExpiresAt.Format(time.RFC3339), ErrTokenInvalid)
	case len(a.Files) != 1:
		return store.Attachment{}, fmt.Errorf("reserved attachment %s has %d files", a.ID, len(a.Files))
	}
	f := a.Files[0]
	if contentLength > s.cfg.MaxBytes {
		return store.Attachment{}, fmt.Errorf("body of %d bytes is over the %d-byte limit: %w", contentLength, s.cfg.MaxBytes, ErrTooLarge)
	}
	if contentLength >= 0 && contentLength != f.SizeBytes {
		return store.Attachment{}, sizeMismatch(contentLength, f.SizeBytes)
	}
	k, err := kindOf("filename", f.Filename)
	if err != nil {
		return store.Attachment{}, err
	}
	key := blobKey(a.ID)
	counted := &countingReader{r: body}
	n, err := s.ingest(ctx, "body", f.Filename, k, key, counted, f.SizeBytes)
	if err != nil {
		return store.Attachment{}, s.uploadRefusal(err, counted, f.SizeBytes)
	}
	if n != f.SizeBytes {
		s.removeBlob(ctx, key)
		return store.Attachment{}, sizeMismatch(n, f.SizeBytes)
	}
	if err := s.st.CompleteUpload(ctx, a.ID, hash, key, s.now()); err != nil {
		s.removeBlob(ctx, key)
		if errors.Is(err, store.ErrConflict) {
			return store.Attachment{}, fmt.Errorf("the upload token was used meanwhile: %w", ErrTokenInvalid)
		}
		return store.Attachment{}, err
	}
	return s.st.AttachmentByID(ctx, a.ID)
}

// uploadRefusal explains a refused body. Length problems outrank content problems (a body of the
// wrong length is reported as such even when its first bytes do not match the type either), so the
// rest of the body is read — bounded by the request limit — to learn its length.
func (s *Service) uploadRefusal(err error, body *countingReader, want int64) error {
	var se *SourceError
	if !errors.As(err, &se) {
		if _, derr := io.Copy(io.Discard, body); derr != nil {
			se = &SourceError{Err: derr}
		}
	}
	var mbe *http.MaxBytesError
	switch {
	case se != nil && errors.As(se, &mbe):
		return fmt.Errorf("body is over the %d-byte limit: %w", s.cfg.MaxBytes, ErrTooLarge)
	case se != nil:
		return refuse("body", ErrInvalid, "the body could not be read: %v", se.Err)
	case body.n != want:
		return sizeMismatch(body.n, want)
	}
	var fe *FieldError
	if errors.As(err, &fe) {
		return fe
	}
	return err
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func sizeMismatch(got, want int64) error {
	return refuse("body", ErrSizeMismatch, "the body has %d bytes; size_bytes reserved %d", got, want)
}
