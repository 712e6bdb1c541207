package attachments

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/google/uuid"
	"gocloud.dev/blob"
)

// errOverLimit: the stream had more bytes than ingest's limit (callers say what that means).
var errOverLimit = errors.New("more bytes than the limit")

// errEmpty: the stream had no bytes.
var errEmpty = errors.New("empty file")

func blobKey(attachmentID string) string {
	return "attachments/" + attachmentID + "/" + uuid.NewString()
}

// SourceError is a failure reading the incoming stream (the client's body or the fetched file), as
// opposed to a failure of storage.
type SourceError struct{ Err error }

func (e *SourceError) Error() string { return "read: " + e.Err.Error() }
func (e *SourceError) Unwrap() error { return e.Err }

type sourceReader struct{ r io.Reader }

func (s sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		err = &SourceError{Err: err}
	}
	return n, err
}

// ingest streams r into blob storage under key, checking it on the way: at most limit bytes, the
// signature of binary kinds from the first bytes (before anything is written), UTF-8 for text kinds,
// and the Office Open XML structure once stored. On any refusal nothing stays stored. Refusals are
// *FieldError for field; read errors are *SourceError (callers look inside for *http.MaxBytesError or
// the fetch's own errors); errOverLimit and errEmpty say what they say.
func (s *Service) ingest(ctx context.Context, field, name string, k kind, key string, r io.Reader, limit int64) (size int64, err error) {
	r = sourceReader{r}
	head, err := bytesHead(r)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", field, err)
	}
	if len(head) == 0 {
		return 0, errEmpty
	}
	if err := checkMagic(field, name, k, head); err != nil {
		return 0, err
	}

	wctx, abort := context.WithCancel(ctx)
	defer abort()
	w, err := s.bucket.NewWriter(wctx, key, &blob.WriterOptions{ContentType: "application/octet-stream"})
	if err != nil {
		return 0, fmt.Errorf("store %s: %w", field, err)
	}
	committed := false
	defer func() {
		if !committed {
			// Cancelling the writer's context before Close discards the partial object.
			abort()
			_ = w.Close()
		}
	}()
	var text textCheck
	var dst io.Writer = w
	if k.text {
		dst = io.MultiWriter(w, &text)
	}
	src := io.LimitReader(io.MultiReader(bytes.NewReader(head), r), limit+1)
	n, err := io.Copy(dst, src)
	if err != nil {
		return n, fmt.Errorf("copy %s: %w", field, err)
	}
	if n > limit {
		return n, errOverLimit
	}
	if k.text {
		if bad := text.result(); bad != "" {
			return n, refuse(field, ErrTypeMismatch, "%q is not a text file: %s", name, bad)
		}
	}
	committed = true
	if err := w.Close(); err != nil {
		return n, fmt.Errorf("store %s: %w", field, err)
	}
	if k.ooxml != "" {
		if err := checkOOXML(ctx, s.bucket, key, n, k); err != nil {
			s.removeBlob(ctx, key)
			return n, refuse(field, ErrTypeMismatch, "%q is not an Office Open XML file: %v", name, err)
		}
	}
	return n, nil
}
