package attachments

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/google/uuid"

	"github.com/researchd/researchd/netguard"
	"github.com/researchd/researchd/store"
)

// Import fetches a public http(s) URL through the SSRF-safe client and stores the body as a ready
// one-file attachment. filename (nil: inferred from the URL path) decides the file type. Refused
// targets are ErrURLNotAllowed on source_url; fetches that fail (DNS, connection, status, redirects,
// time, size) are ErrImportFailed.
func (s *Service) Import(ctx context.Context, accountID, sourceURL string, filename *string) (store.Attachment, error) {
	f, err := s.openImport(ctx, sourceURL, filename, maxNameRunes)
	if err != nil {
		return store.Attachment{}, err
	}
	defer f.close()
	name, k, resp := f.name, f.kind, f.resp

	id := uuid.NewString()
	key := blobKey(id)
	size, err := s.ingest(ctx, "filename", name, k, key, resp.Body, s.cfg.MaxBytes)
	switch {
	case errors.Is(err, errEmpty):
		return store.Attachment{}, refuse("source_url", ErrInvalid, "the fetched file is empty")
	case errors.Is(err, errOverLimit):
		return store.Attachment{}, s.fetchError(netguard.ErrBodyTooLarge)
	case err != nil:
		var fe *FieldError
		var se *SourceError
		switch {
		case errors.As(err, &fe):
			return store.Attachment{}, fe
		case errors.As(err, &se):
			return store.Attachment{}, s.fetchError(se.Err)
		}
		return store.Attachment{}, err
	}
	now := s.now()
	a := store.Attachment{
		ID: id, AccountID: accountID, Status: store.AttachmentReady, CreatedAt: now, UpdatedAt: now,
		Files: []store.AttachmentFile{{
			ID: uuid.NewString(), AttachmentID: id, Position: 0, Filename: name,
			ContentType: reportedType(resp.Header.Get("Content-Type")), SizeBytes: size, BlobKey: key, CreatedAt: now,
		}},
	}
	if err := s.st.CreateAttachment(ctx, &a); err != nil {
		s.removeBlob(ctx, key)
		return store.Attachment{}, err
	}
	return a, nil
}

// openedImport is a fetch under way: the admitted name and kind, and the response whose body
// the caller reads before close.
type openedImport struct {
	name   string
	kind   kind
	resp   *http.Response
	cancel context.CancelFunc
}

func (o *openedImport) close() {
	_ = o.resp.Body.Close()
	o.cancel()
}

// openImport checks an import's URL and file name, and starts the fetch: a 2xx response or a
// refusal.
func (s *Service) openImport(ctx context.Context, sourceURL string, filename *string, maxRunes int) (*openedImport, error) {
	u, err := url.Parse(sourceURL)
	if err != nil {
		return nil, refuse("source_url", ErrInvalid, "not a URL: %v", err)
	}
	if err := netguard.CheckURL(netguard.Policy{AllowHTTP: true}, u); err != nil {
		return nil, refuse("source_url", ErrURLNotAllowed, "%v", err)
	}
	raw := ""
	if filename != nil {
		raw = *filename
	} else if raw = path.Base(u.Path); u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return nil, refuse("filename", ErrInvalid, "the URL path names no file; send filename")
	}
	name, err := safeNameMax("filename", raw, maxRunes)
	if err != nil {
		return nil, err
	}
	k, err := kindOf("filename", name)
	if err != nil {
		return nil, err
	}

	ctx, cancel := context.WithTimeout(ctx, s.cfg.ImportTimeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		cancel()
		return nil, refuse("source_url", ErrInvalid, "not a usable URL: %v", err)
	}
	req.Header.Set("User-Agent", "researchd-import/1")
	resp, err := s.client.Do(req)
	if err != nil {
		cancel()
		return nil, s.fetchError(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_ = resp.Body.Close()
		cancel()
		return nil, refuse("source_url", ErrImportFailed, "the server answered %s", resp.Status)
	}
	return &openedImport{name: name, kind: k, resp: resp, cancel: cancel}, nil
}

// fetchError turns a client error into the refusal the caller sees.
func (s *Service) fetchError(err error) error {
	switch {
	case errors.Is(err, netguard.ErrBlocked):
		return refuse("source_url", ErrURLNotAllowed, "%s", unwrapURLError(err))
	case errors.Is(err, netguard.ErrBodyTooLarge):
		return refuse("source_url", ErrSourceTooLarge, "the file is larger than the %d-byte attachment limit", s.cfg.MaxBytes)
	case errors.Is(err, netguard.ErrTooManyRedirects):
		return refuse("source_url", ErrImportFailed, "more than %d redirects", netguard.MaxRedirects)
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return refuse("source_url", ErrImportFailed, "the fetch did not finish within %s", s.cfg.ImportTimeout)
	default:
		return refuse("source_url", ErrImportFailed, "%s", unwrapURLError(err))
	}
}

func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
