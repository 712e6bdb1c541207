package attachments

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/researchd/researchd/netguard"
)

// Admission of whole files held in memory, for other owners of documents (expert context files):
// the same allowlist, signature, UTF-8 and Office Open XML checks as attachments, without storage.

// CheckName makes a client-supplied file name path-safe (see safeName; at most maxRunes characters)
// and checks that its extension is accepted. Refusals are *FieldError for field.
func CheckName(field, raw string, maxRunes int) (name string, text bool, err error) {
	name, err = safeNameMax(field, raw, maxRunes)
	if err != nil {
		return "", false, err
	}
	k, err := kindOf(field, name)
	if err != nil {
		return "", false, err
	}
	return name, k.text, nil
}

// CheckContent admits the bytes of a file named name (already through CheckName): not empty, the
// signature of binary formats, UTF-8 without NUL for text formats, and the Office Open XML parts of
// docx, pptx and xlsx. Refusals are *FieldError for field.
func CheckContent(field, name string, data []byte) error {
	k, err := kindOf(field, name)
	if err != nil {
		return err
	}
	if len(data) == 0 {
		return refuse(field, ErrInvalid, "%q is empty", name)
	}
	if err := checkMagic(field, name, k, data[:min(len(data), headerBytes)]); err != nil {
		return err
	}
	if k.text {
		var t textCheck
		_, _ = t.Write(data)
		if bad := t.result(); bad != "" {
			return refuse(field, ErrTypeMismatch, "%q is not a text file: %s", name, bad)
		}
	}
	if k.ooxml != "" {
		if err := checkOOXMLAt(bytes.NewReader(data), int64(len(data)), k); err != nil {
			return refuse(field, ErrTypeMismatch, "%q is not an Office Open XML file: %v", name, err)
		}
	}
	return nil
}

// ErrSourceTooLarge: a fetched file over the size limit. It is an ErrImportFailed too, so callers
// that only know that one keep working.
var ErrSourceTooLarge = fmt.Errorf("%w: the file is over the size limit", ErrImportFailed)

// Fetched is a file downloaded by Fetch.
type Fetched struct {
	Name string // path-safe, with an accepted extension
	Data []byte
}

// Fetch downloads a public http(s) URL through the SSRF-safe client, like Import, and returns the
// admitted bytes instead of storing an attachment. filename (nil: inferred from the URL path, at most
// maxNameRunes characters) decides the file type. Refusals are *FieldError (source_url, filename).
func (s *Service) Fetch(ctx context.Context, sourceURL string, filename *string, maxNameRunes int) (Fetched, error) {
	f, err := s.openImport(ctx, sourceURL, filename, maxNameRunes)
	if err != nil {
		return Fetched{}, err
	}
	defer f.close()
	data, err := io.ReadAll(io.LimitReader(f.resp.Body, s.cfg.MaxBytes+1))
	switch {
	case err != nil:
		return Fetched{}, s.fetchError(err)
	case int64(len(data)) > s.cfg.MaxBytes:
		return Fetched{}, s.fetchError(netguard.ErrBodyTooLarge)
	case len(data) == 0:
		return Fetched{}, refuse("source_url", ErrInvalid, "the fetched file is empty")
	}
	if err := CheckContent("source_url", f.name, data); err != nil {
		return Fetched{}, err
	}
	return Fetched{Name: f.name, Data: data}, nil
}
