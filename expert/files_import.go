package expert

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/researchd/researchd/attachments"
)

// Import attaches a file fetched from a public URL (through the attachments' SSRF-guarded client)
// or copied from one of the caller's attachments.
func (s *Service) Import(ctx context.Context, c Caller, ref string, in ImportInput) (StoredFile, error) {
	hasURL, hasAtt := in.SourceURL != nil, in.AttachmentID != nil
	if hasURL == hasAtt {
		return StoredFile{}, fileError("source_url", "validation_error", "send exactly one of source_url and attachment_id")
	}
	t, err := s.fileEditable(ctx, c, ref)
	if err != nil {
		return StoredFile{}, err
	}
	if s.files.attachments == nil {
		return StoredFile{}, errors.New("context file imports are not configured (no attachments service)")
	}
	if in.Filename != nil {
		if _, err := admitName("filename", *in.Filename); err != nil {
			return StoredFile{}, err
		}
	}
	var name string
	var data []byte
	field := "source_url"
	if hasURL {
		if inferred, ok := urlFileName(*in.SourceURL); ok && in.Filename == nil {
			if _, err := admitName("filename", inferred); err != nil {
				return StoredFile{}, err
			}
		}
		f, err := s.files.attachments.Fetch(ctx, *in.SourceURL, in.Filename, maxFileNameRunes)
		if err != nil {
			return StoredFile{}, fileRefusal(err)
		}
		name, data = f.Name, f.Data
	} else {
		field = "attachment_id"
		if name, data, err = s.fromAttachment(ctx, c, *in.AttachmentID, in.Filename); err != nil {
			return StoredFile{}, err
		}
	}
	if err := attachments.CheckContent(field, name, data); err != nil {
		return StoredFile{}, fileRefusal(err)
	}
	return s.attach(ctx, c, t, field, name, data)
}

// urlFileName is the name an import from rawURL takes when no filename is sent, checked before the
// fetch so an archive or a hidden name costs no download; ok is false when the path names no file
// (the fetch then asks for filename).
func urlFileName(rawURL string) (string, bool) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return "", false
	}
	return path.Base(u.Path), true
}

// fromAttachment reads one file of the caller's attachment: its only file, or the one filename names
// when it has several (then filename picks; with one file, filename renames).
func (s *Service) fromAttachment(ctx context.Context, c Caller, id string, filename *string) (string, []byte, error) {
	files, err := s.files.attachments.FilesForJob(ctx, c.AccountID, []string{id})
	var unusable *attachments.UnusableError
	if errors.As(err, &unusable) {
		return "", nil, fileError("attachment_id", "validation_error", "no usable attachment with this id (unknown, deleted, another account's, or its upload has not finished)")
	} else if err != nil {
		return "", nil, err
	}
	var pick *attachments.File
	switch {
	case len(files) == 1:
		pick = &files[0]
	case filename == nil:
		names := make([]string, 0, len(files))
		for _, f := range files {
			names = append(names, f.Name)
		}
		return "", nil, fileError("filename", "validation_error", "the attachment has several files; send filename to pick one of: "+strings.Join(names, ", "))
	default:
		for i := range files {
			if files[i].Name == *filename {
				pick = &files[i]
				break
			}
		}
		if pick == nil {
			return "", nil, fileError("filename", "validation_error", fmt.Sprintf("the attachment has no file named %q", *filename))
		}
	}
	name := pick.Name
	if filename != nil {
		name = *filename
	}
	name, err = admitName("filename", name)
	if err != nil {
		return "", nil, err
	}
	if pick.Size > s.maxFileBytes() {
		return "", nil, fmt.Errorf("%q is larger than %d bytes: %w", name, s.maxFileBytes(), ErrFileTooLarge)
	}
	rc, err := pick.Open(ctx)
	if err != nil {
		return "", nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, s.maxFileBytes()+1))
	if err != nil {
		return "", nil, fmt.Errorf("read attachment file: %w", err)
	}
	return name, data, nil
}
